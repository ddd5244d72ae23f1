<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ar_EG">
<context>
    <name>AppearanceRows</name>
    <message>
        <source>Theme</source>
        <translation>السمة</translation>
    </message>
    <message>
        <source>System</source>
        <translation>النظام</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>فاتح</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>داكن</translation>
    </message>
    <message>
        <source>Font size</source>
        <translation>حجم الخط</translation>
    </message>
    <message>
        <source>System default</source>
        <translation>افتراضي النظام</translation>
    </message>
    <message>
        <source>{0} pt</source>
        <translation>{0} نقطة</translation>
    </message>
    <message>
        <source>T&amp;heme:</source>
        <translation>السمة (&amp;H):</translation>
    </message>
    <message>
        <source>&amp;Font size:</source>
        <translation>حجم الخط (&amp;F):</translation>
    </message>
</context>
<context>
    <name>ConversationPane</name>
    <message>
        <source>Send the message (Enter; Shift+Enter for a new line)</source>
        <translation>إرسال الرسالة (Enter؛ Shift+Enter لسطر جديد)</translation>
    </message>
    <message>
        <source>Can&apos;t send while offline: the message would not reach the server.</source>
        <translation>لا يمكن الإرسال دون اتصال: لن تصل الرسالة إلى الخادم.</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>الرسالة</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>إرسال</translation>
    </message>
    <message>
        <source>Send message</source>
        <translation>إرسال الرسالة</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>إيقاف</translation>
    </message>
    <message>
        <source>Stop the running reply</source>
        <translation>إيقاف الرد الجاري</translation>
    </message>
    <message>
        <source>Reply status</source>
        <translation>حالة الرد</translation>
    </message>
    <message>
        <source>●  Replying…</source>
        <translation>●  جارٍ الرد…</translation>
    </message>
    <message>
        <source>●  Replying… {0} s</source>
        <translation>●  جارٍ الرد… {0} ث</translation>
    </message>
    <message>
        <source>Write a message…  (Enter to send, Shift+Enter for a new line)</source>
        <translation>اكتب رسالة…  (Enter للإرسال، Shift+Enter لسطر جديد)</translation>
    </message>
    <message>
        <source>Write a message…  (Ctrl+Enter to send)</source>
        <translation>اكتب رسالة…  (Ctrl+Enter للإرسال)</translation>
    </message>
    <message>
        <source>a tool</source>
        <translation>أداة</translation>
    </message>
    <message>
        <source>Approval needed: run “{0}”?</source>
        <translation>مطلوب إذن: هل يُشغَّل «{0}»؟</translation>
    </message>
    <message>
        <source>The reply is waiting for your decision.</source>
        <translation>الرد بانتظار قرارك.</translation>
    </message>
    <message>
        <source>File: {0}</source>
        <translation>ملف: {0}</translation>
    </message>
    <message>
        <source>Approve</source>
        <translation>موافقة</translation>
    </message>
    <message>
        <source>Approve running {0}</source>
        <translation>الموافقة على تشغيل {0}</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>رفض</translation>
    </message>
    <message>
        <source>Deny running {0}</source>
        <translation>رفض تشغيل {0}</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>فتح</translation>
    </message>
    <message>
        <source>Open {0}</source>
        <translation>فتح {0}</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>حفظ…</translation>
    </message>
    <message>
        <source>Save {0}</source>
        <translation>حفظ {0}</translation>
    </message>
    <message>
        <source>This conversation was deleted on another device. It is no longer on the server or in this device&apos;s history.</source>
        <translation>حُذفت هذه المحادثة على جهاز آخر. لم تعد موجودة على الخادم ولا في سجل هذا الجهاز.</translation>
    </message>
    <message>
        <source>Select a conversation on the left, or start a new one.</source>
        <translation>اختر محادثة من القائمة على اليمين، أو ابدأ محادثة جديدة.</translation>
    </message>
    <message>
        <source>Stop the reply</source>
        <translation>إيقاف الرد</translation>
    </message>
    <message>
        <source>Converge</source>
        <translation>Converge</translation>
    </message>
    <message>
        <source>Your conversation history, the same on every device.</source>
        <translation>سجل محادثاتك، نفسه على كل جهاز.</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>محادثة جديدة</translation>
    </message>
    <message>
        <source>Your first message becomes the title.</source>
        <translation>تصبح رسالتك الأولى عنوانًا للمحادثة.</translation>
    </message>
    <message>
        <source>Write your first message below.</source>
        <translation>اكتب رسالتك الأولى في الأسفل.</translation>
    </message>
    <message>
        <source>Last activity {0}</source>
        <translation>آخر نشاط: {0}</translation>
    </message>
    <message>
        <source>Open Settings</source>
        <extracomment>The operating system&apos;s reasons that mean &quot;this device has no network&quot;, not &quot;that host&quot;. The fixes&apos; words for lupdate: they are translated where shown (ui/pane/notice.py).</extracomment>
        <translation>فتح الإعدادات</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>إعادة المحاولة</translation>
    </message>
    <message>
        <source>Notice</source>
        <translation>تنبيه</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>التفاصيل</translation>
    </message>
    <message>
        <source>Show the details of the failure</source>
        <translation>عرض تفاصيل الخطأ</translation>
    </message>
    <message>
        <source>Dismiss the notice</source>
        <translation>إغلاق التنبيه</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>إغلاق</translation>
    </message>
    <message>
        <source>Skill published</source>
        <extracomment>A streaming reply keeps at most this many characters; the rest of its pieces is dropped and the row says so, until the whole message comes (it is then shown as any message). Each piece lays the row&apos;s document out again, so this bounds what one piece costs.</extracomment>
        <translation>نُشرت المهارة</translation>
    </message>
    <message>
        <source>Remembered again: “{0}”</source>
        <translation>حُفظ مجددًا في الذاكرة: «{0}»</translation>
    </message>
    <message>
        <source>Remembered: “{0}”</source>
        <translation>حُفظ في الذاكرة: «{0}»</translation>
    </message>
    <message>
        <source>The reply ended before a decision.</source>
        <translation>انتهى الرد قبل اتخاذ قرار.</translation>
    </message>
    <message>
        <source>The reply failed.</source>
        <translation>فشل الرد.</translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation>أُوقف.</translation>
    </message>
    <message>
        <source>Cancelled: the reply was stopped.</source>
        <translation>أُلغي: أُوقف الرد.</translation>
    </message>
    <message>
        <source>This reply is too long to show in full here.</source>
        <extracomment>The delegate&apos;s measure: (epoch, version, height, ideal width, exact).</extracomment>
        <translation>هذا الرد أطول من أن يُعرض هنا كاملًا.</translation>
    </message>
    <message>
        <source>Memory reinforced</source>
        <translation>تعزّزت ذكرى</translation>
    </message>
    <message>
        <source>Memory formed</source>
        <translation>تكوّنت ذكرى جديدة</translation>
    </message>
    <message>
        <source>You</source>
        <translation>أنت</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>المساعد</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>أداة</translation>
    </message>
    <message>
        <source>Approval</source>
        <translation>موافقة</translation>
    </message>
    <message>
        <source>File</source>
        <translation>ملف</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>ملاحظة</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>ذاكرة</translation>
    </message>
    <message>
        <source>Your message</source>
        <translation>رسالتك</translation>
    </message>
    <message>
        <source>Assistant&apos;s reply</source>
        <translation>رد المساعد</translation>
    </message>
    <message>
        <source>Transcript</source>
        <translation>نص المحادثة</translation>
    </message>
    <message>
        <source>Jump to latest ↓</source>
        <translation>الانتقال إلى الأحدث ↓</translation>
    </message>
    <message>
        <source>Jump to latest</source>
        <translation>الانتقال إلى الأحدث</translation>
    </message>
    <message>
        <source>Copy message</source>
        <translation>نسخ الرسالة</translation>
    </message>
    <message>
        <source>Select words</source>
        <translation>تحديد الكلمات</translation>
    </message>
    <message>
        <source>Copy this code</source>
        <translation>نسخ هذه الشيفرة</translation>
    </message>
    <message>
        <source>Code, {0}: {1}</source>
        <translation>شيفرة، {0}: {1}</translation>
    </message>
    <message>
        <source>Code: {0}</source>
        <translation>شيفرة: {0}</translation>
    </message>
    <message>
        <source>Image: {0}</source>
        <translation>صورة: {0}</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>صورة</translation>
    </message>
    <message>
        <source>Copy</source>
        <extracomment>Deeper nesting than this (block quotes, lists, emphasis) is not rendered as Markdown: the parser stops nesting there and drops the rest, so the caller shows plain text. More tokens than this (well above what a rich long reply has) are shown as plain text: each styled fragment costs Qt&apos;s layout, and tens of thousands of them freeze the window (decision 0176 has the figures). More &quot;[&quot; than this are shown as plain text without parsing: each one costs the parser&apos;s link and image rules a look ahead in pure Python, so a reply made of &quot;![&quot; would hold the window for seconds (decision 0176). The font families tried in order for code, inline and in blocks.</extracomment>
        <translation>نسخ</translation>
    </message>
</context>
<context>
    <name>CopiedFlash</name>
    <message>
        <source>Copied</source>
        <translation>تم النسخ</translation>
    </message>
</context>
<context>
    <name>DamageBanner</name>
    <message>
        <source>The saved copy of your conversations is damaged. Rebuild it from the server: nothing on the server is affected.</source>
        <translation>النسخة المحفوظة من محادثاتك تالفة. أعد بناءها من الخادم: لن يتأثر شيء على الخادم.</translation>
    </message>
    <message>
        <source>Rebuilding from the server…</source>
        <translation>جارٍ إعادة البناء من الخادم…</translation>
    </message>
    <message>
        <source>The rebuild did not finish; nothing was changed. Try again.</source>
        <translation>لم تكتمل إعادة البناء ولم يتغير شيء. حاول مرة أخرى.</translation>
    </message>
    <message>
        <source>Saved conversations damaged</source>
        <translation>المحادثات المحفوظة تالفة</translation>
    </message>
    <message>
        <source>Rebuild</source>
        <translation>إعادة البناء</translation>
    </message>
    <message>
        <source>Rebuild the saved conversations from the server</source>
        <translation>إعادة بناء المحادثات المحفوظة من الخادم</translation>
    </message>
</context>
<context>
    <name>DemoTokenField</name>
    <message>
        <source>Demo server token</source>
        <translation>رمز الخادم التجريبي</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>إظهار</translation>
    </message>
    <message>
        <source>Show the demo server token</source>
        <translation>إظهار رمز الخادم التجريبي</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>نسخ</translation>
    </message>
    <message>
        <source>Copy the demo server token</source>
        <translation>نسخ رمز الخادم التجريبي</translation>
    </message>
    <message>
        <source>Hide</source>
        <translation>إخفاء</translation>
    </message>
</context>
<context>
    <name>Dialogs</name>
    <message>
        <source>Stop Run and Delete</source>
        <translation>إيقاف التشغيل والحذف</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>إعادة المحاولة</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>تصدير…</translation>
    </message>
    <message>
        <source>Couldn&apos;t reach the server. Nothing was deleted.</source>
        <translation>تعذّر الوصول إلى الخادم. لم يُحذف شيء.</translation>
    </message>
    <message>
        <source>The server didn&apos;t confirm the delete.</source>
        <translation>لم يؤكد الخادم الحذف.</translation>
    </message>
    <message>
        <source>Delete conversations?</source>
        <translation>حذف المحادثات؟</translation>
    </message>
    <message numerus="yes">
        <source>Deleted %n conversations everywhere.</source>
        <extracomment>A word longer than this gets break opportunities (a zero-width space every so often).</extracomment>
        <translation>
            <numerusform>لم تُحذف أي محادثة.</numerusform>
            <numerusform>حُذفت محادثة واحدة من كل مكان.</numerusform>
            <numerusform>حُذفت محادثتان من كل مكان.</numerusform>
            <numerusform>حُذفت %n محادثات من كل مكان.</numerusform>
            <numerusform>حُذفت %n محادثة من كل مكان.</numerusform>
            <numerusform>حُذفت %n محادثة من كل مكان.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>{0} of %n conversations deleted. The others are kept.</source>
        <translation>
            <numerusform>حُذفت {0} من %n محادثة. وبقيت الأخرى.</numerusform>
            <numerusform>حُذفت {0} من محادثة واحدة. وبقيت الأخرى.</numerusform>
            <numerusform>حُذفت {0} من محادثتين. وبقيت الأخرى.</numerusform>
            <numerusform>حُذفت {0} من %n محادثات. وبقيت الأخرى.</numerusform>
            <numerusform>حُذفت {0} من %n محادثة. وبقيت الأخرى.</numerusform>
            <numerusform>حُذفت {0} من %n محادثة. وبقيت الأخرى.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>…and %n more not deleted</source>
        <translation>
            <numerusform>…ولم تُحذف أي محادثة أخرى</numerusform>
            <numerusform>…ومحادثة أخرى لم تُحذف</numerusform>
            <numerusform>…ومحادثتان أخريان لم تُحذفا</numerusform>
            <numerusform>…و%n محادثات أخرى لم تُحذف</numerusform>
            <numerusform>…و%n محادثة أخرى لم تُحذف</numerusform>
            <numerusform>…و%n محادثة أخرى لم تُحذف</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n deleted</source>
        <translation>
            <numerusform>لم يُحذف شيء</numerusform>
            <numerusform>حُذفت واحدة</numerusform>
            <numerusform>حُذفت اثنتان</numerusform>
            <numerusform>حُذفت %n</numerusform>
            <numerusform>حُذفت %n</numerusform>
            <numerusform>حُذفت %n</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete conversation?</source>
        <translation>حذف المحادثة؟</translation>
    </message>
    <message>
        <source>Delete Everywhere</source>
        <translation>حذف من كل مكان</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>إلغاء</translation>
    </message>
    <message>
        <source>The conversation and its associated data (its messages and files, and the memories and knowledge derived from it) will be removed from the server and from every synchronized client. This cannot be undone.</source>
        <translation>ستُزال المحادثة وبياناتها المرتبطة بها (رسائلها وملفاتها، والذكريات والمعارف المستمدة منها) من الخادم ومن كل عميل متزامن. لا يمكن التراجع عن ذلك.</translation>
    </message>
    <message>
        <source>These conversations and their associated data (their messages and files, and the memories and knowledge derived from them) will be removed from the server and from every synchronized client. This cannot be undone.</source>
        <translation>ستُزال هذه المحادثات وبياناتها المرتبطة بها (رسائلها وملفاتها، والذكريات والمعارف المستمدة منها) من الخادم ومن كل عميل متزامن. لا يمكن التراجع عن ذلك.</translation>
    </message>
    <message numerus="yes">
        <source>Delete %n conversations?</source>
        <translation>
            <numerusform>حذف %Ln محادثة؟</numerusform>
            <numerusform>حذف محادثة واحدة؟</numerusform>
            <numerusform>حذف محادثتين؟</numerusform>
            <numerusform>حذف %Ln محادثات؟</numerusform>
            <numerusform>حذف %Ln محادثة؟</numerusform>
            <numerusform>حذف %Ln محادثة؟</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete “{0}”?</source>
        <translation>حذف «{0}»؟</translation>
    </message>
    <message>
        <source>Delete this untitled conversation?</source>
        <translation>حذف هذه المحادثة غير المعنونة؟</translation>
    </message>
    <message>
        <source>Run in progress</source>
        <translation>تشغيل جارٍ</translation>
    </message>
    <message>
        <source>Delete not confirmed</source>
        <translation>لم يُؤكَّد الحذف</translation>
    </message>
    <message>
        <source>Delete failed</source>
        <translation>فشل الحذف</translation>
    </message>
    <message>
        <source>A conversation can&apos;t be deleted while a run is in progress in it. Stop Run and Delete stops the run first; once it has ended, the conversation is deleted everywhere.</source>
        <translation>لا يمكن حذف محادثة أثناء تشغيل جارٍ فيها. «إيقاف التشغيل والحذف» يوقف التشغيل أولًا، وبعد انتهائه تُحذف المحادثة من كل مكان.</translation>
    </message>
    <message>
        <source>Delete the conversation from the server and every device</source>
        <extracomment>The buttons&apos; descriptions for assistive technology, by their English.</extracomment>
        <translation>حذف المحادثة من الخادم ومن كل جهاز</translation>
    </message>
    <message>
        <source>Keep the conversation</source>
        <translation>الإبقاء على المحادثة</translation>
    </message>
    <message>
        <source>Save a copy of the conversation and its files first</source>
        <translation>حفظ نسخة من المحادثة وملفاتها أولًا</translation>
    </message>
    <message>
        <source>Stop the run, wait for it to end, then delete the conversation everywhere</source>
        <translation>إيقاف التشغيل وانتظار انتهائه، ثم حذف المحادثة من كل مكان</translation>
    </message>
    <message>
        <source>Keep the conversation and let the run continue</source>
        <translation>الإبقاء على المحادثة وترك التشغيل يستمر</translation>
    </message>
    <message>
        <source>Try the delete again</source>
        <translation>محاولة الحذف مرة أخرى</translation>
    </message>
    <message>
        <source>A reply is running in it now. Stop Run and Delete stops the run first; once it has ended, the conversation is deleted.</source>
        <translation>يجري فيها رد الآن. «إيقاف التشغيل والحذف» يوقف التشغيل أولًا، وبعد انتهائه تُحذف المحادثة.</translation>
    </message>
    <message>
        <source>{0} is still running. Nothing was deleted.</source>
        <translation>لا تزال {0} قيد التشغيل. لم يُحذف شيء.</translation>
    </message>
    <message>
        <source>{0} is kept. Deleting again is safe.</source>
        <translation>بقيت {0}. إعادة الحذف آمنة.</translation>
    </message>
    <message numerus="yes">
        <source>%n conversations are kept. Deleting again is safe.</source>
        <translation>
            <numerusform>بقيت %Ln محادثة. إعادة الحذف آمنة.</numerusform>
            <numerusform>بقيت محادثة واحدة. إعادة الحذف آمنة.</numerusform>
            <numerusform>بقيت محادثتان. إعادة الحذف آمنة.</numerusform>
            <numerusform>بقيت %Ln محادثات. إعادة الحذف آمنة.</numerusform>
            <numerusform>بقيت %Ln محادثة. إعادة الحذف آمنة.</numerusform>
            <numerusform>بقيت %Ln محادثة. إعادة الحذف آمنة.</numerusform>
        </translation>
    </message>
    <message>
        <source>Deleted “{0}” everywhere.</source>
        <translation>حُذفت «{0}» في كل مكان.</translation>
    </message>
</context>
<context>
    <name>FailureWords</name>
    <message>
        <source>the server</source>
        <translation>الخادم</translation>
    </message>
    <message>
        <source>The server refused this device&apos;s token</source>
        <translation>رفض الخادم رمز هذا الجهاز</translation>
    </message>
    <message>
        <source>This device&apos;s token is read-only for this (it needs the “{0}” permission)</source>
        <translation>رمز هذا الجهاز للقراءة فقط في هذا الإجراء (يلزم إذن «{0}»)</translation>
    </message>
    <message>
        <source>This device&apos;s token is read-only for this</source>
        <translation>رمز هذا الجهاز للقراءة فقط في هذا الإجراء</translation>
    </message>
    <message>
        <source>The certificate of {0} could not be verified</source>
        <translation>تعذّر التحقق من شهادة {0}</translation>
    </message>
    <message>
        <source>A secure connection to {0} could not be set up</source>
        <translation>تعذّر إنشاء اتصال آمن مع {0}</translation>
    </message>
    <message>
        <source>You&apos;re offline</source>
        <translation>أنت غير متصل</translation>
    </message>
    <message>
        <source>Can&apos;t reach {0}</source>
        <translation>تعذّر الوصول إلى {0}</translation>
    </message>
    <message>
        <source>{0} didn&apos;t answer in time</source>
        <translation>لم يُجب {0} في الوقت المحدد</translation>
    </message>
    <message>
        <source>The connection to {0} was lost</source>
        <translation>انقطع الاتصال مع {0}</translation>
    </message>
    <message>
        <source>The server is having trouble; retrying…</source>
        <translation>يواجه الخادم مشكلة؛ جارٍ إعادة المحاولة…</translation>
    </message>
    <message>
        <source>A reply is still running here. Stop it or wait for it to end</source>
        <translation>لا يزال هناك رد جارٍ هنا. أوقفه أو انتظر حتى ينتهي</translation>
    </message>
    <message>
        <source>It conflicts with what the server has now</source>
        <translation>يتعارض مع ما لدى الخادم الآن</translation>
    </message>
    <message>
        <source>It is larger than the server accepts</source>
        <translation>إنه أكبر مما يقبله الخادم</translation>
    </message>
    <message>
        <source>The server did not accept it</source>
        <translation>لم يقبله الخادم</translation>
    </message>
    <message>
        <source>It is no longer on the server</source>
        <translation>لم يعد موجودًا على الخادم</translation>
    </message>
    <message>
        <source>The server had a problem</source>
        <translation>حدثت مشكلة في الخادم</translation>
    </message>
    <message>
        <source>{0} answered something unexpected</source>
        <translation>أرسل {0} ردًا غير متوقع</translation>
    </message>
    <message>
        <source>An internal error happened (details are in the log)</source>
        <translation>حدث خطأ داخلي (التفاصيل في السجل)</translation>
    </message>
    <message>
        <source>{0}. {1}.</source>
        <translation>{0}. {1}.</translation>
    </message>
    <message>
        <source>{0}.</source>
        <translation>{0}.</translation>
    </message>
    <message>
        <source>Couldn&apos;t list the conversations</source>
        <translation>تعذّر عرض قائمة المحادثات</translation>
    </message>
</context>
<context>
    <name>Grouping</name>
    <message>
        <source>Today</source>
        <extracomment>Where the header sorts in the mirror&apos;s order (`updated_at` DESC, `id` DESC): as the key (`before`, &quot;&quot;), i.e. after every row of newer sections and before its own rows.</extracomment>
        <translation>اليوم</translation>
    </message>
    <message>
        <source>Yesterday</source>
        <translation>أمس</translation>
    </message>
    <message numerus="yes">
        <source>Previous %Ln days</source>
        <translation>
            <numerusform>آخر %Ln يوم</numerusform>
            <numerusform>آخر يوم</numerusform>
            <numerusform>آخر يومين</numerusform>
            <numerusform>آخر %Ln أيام</numerusform>
            <numerusform>آخر %Ln يومًا</numerusform>
            <numerusform>آخر %Ln يوم</numerusform>
        </translation>
    </message>
    <message>
        <source>MMMM</source>
        <translation>MMMM</translation>
    </message>
    <message>
        <source>MMMM yyyy</source>
        <translation>MMMM yyyy</translation>
    </message>
    <message>
        <source>Older</source>
        <translation>أقدم</translation>
    </message>
</context>
<context>
    <name>LanguageRow</name>
    <message>
        <source>Language</source>
        <extracomment>(code, the language&apos;s own name); &quot;&quot; is the system&apos;s language.</extracomment>
        <translation>اللغة</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>لغة النظام</translation>
    </message>
    <message>
        <source>A new language applies the next time Converge starts.</source>
        <translation>تُطبَّق اللغة الجديدة عند تشغيل Converge في المرة القادمة.</translation>
    </message>
    <message>
        <source>&amp;Language:</source>
        <translation>اللغة (&amp;L):</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Loading conversations…</source>
        <translation>جارٍ تحميل المحادثات…</translation>
    </message>
    <message>
        <source>No conversations yet.
Start one with “New Conversation”.</source>
        <translation>لا توجد محادثات بعد.
ابدأ واحدة بزر «محادثة جديدة».</translation>
    </message>
    <message>
        <source>The saved conversations are damaged: press Rebuild.</source>
        <translation>المحادثات المحفوظة تالفة: اضغط «إعادة البناء».</translation>
    </message>
    <message>
        <source>Delete the selected conversations everywhere (Delete)</source>
        <translation>حذف المحادثات المحددة في كل مكان (Delete)</translation>
    </message>
    <message>
        <source>Can&apos;t delete while offline: the server must confirm a delete.</source>
        <translation>لا يمكن الحذف دون اتصال: يجب أن يؤكد الخادم الحذف.</translation>
    </message>
    <message>
        <source>You&apos;re offline. Showing the history saved on this device; sending and deleting come back when the server can be reached.</source>
        <translation>أنت غير متصل. يُعرض السجل المحفوظ على هذا الجهاز؛ يعود الإرسال والحذف حين يمكن الوصول إلى الخادم.</translation>
    </message>
    <message>
        <source>Can&apos;t reach {host}. Showing the history saved on this device; sending and deleting come back when the server can be reached.</source>
        <translation>تعذّر الوصول إلى {host}. يُعرض السجل المحفوظ على هذا الجهاز؛ يعود الإرسال والحذف حين يمكن الوصول إلى الخادم.</translation>
    </message>
    <message>
        <source>Converge</source>
        <translation>Converge</translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation>البحث في المحادثات</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>المحادثات</translation>
    </message>
    <message>
        <source>Offline</source>
        <extracomment>States whose sentence stays on the status line while the next pass runs.</extracomment>
        <translation>غير متصل</translation>
    </message>
    <message>
        <source>Connection not encrypted</source>
        <translation>الاتصال غير مشفّر</translation>
    </message>
    <message>
        <source>New Conversation</source>
        <translation>محادثة جديدة</translation>
    </message>
    <message>
        <source>Start a new conversation (Ctrl+N)</source>
        <translation>بدء محادثة جديدة (Ctrl+N)</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>تحديث</translation>
    </message>
    <message>
        <source>Sync with the server now (F5)</source>
        <translation>المزامنة مع الخادم الآن (F5)</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>حذف</translation>
    </message>
    <message>
        <source>Settings…</source>
        <translation>الإعدادات…</translation>
    </message>
    <message>
        <source>Connection, appearance and sending (Ctrl+,)</source>
        <translation>الاتصال والمظهر والإرسال (Ctrl+,)</translation>
    </message>
    <message>
        <source>Keyboard Shortcuts</source>
        <translation>اختصارات لوحة المفاتيح</translation>
    </message>
    <message>
        <source>Keyboard shortcuts (F1)</source>
        <translation>اختصارات لوحة المفاتيح (F1)</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>بحث</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>إنهاء</translation>
    </message>
    <message>
        <source>Next conversation</source>
        <translation>المحادثة التالية</translation>
    </message>
    <message>
        <source>Previous conversation</source>
        <translation>المحادثة السابقة</translation>
    </message>
    <message>
        <source>Main</source>
        <translation>الشريط الرئيسي</translation>
    </message>
    <message>
        <source>Main toolbar</source>
        <translation>شريط الأدوات الرئيسي</translation>
    </message>
    <message>
        <source>Conversation actions</source>
        <translation>إجراءات المحادثة</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>تصدير…</translation>
    </message>
    <message>
        <source>Copy ID</source>
        <translation>نسخ المعرّف</translation>
    </message>
    <message>
        <source>Sync status</source>
        <translation>حالة المزامنة</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>التفاصيل</translation>
    </message>
    <message>
        <source>Show the details</source>
        <translation>عرض التفاصيل</translation>
    </message>
    <message>
        <source>Account and server</source>
        <translation>الحساب والخادم</translation>
    </message>
    <message>
        <source>Converge — {0} on {1}</source>
        <translation>Converge — {0} على {1}</translation>
    </message>
    <message>
        <source>{0} · {1}</source>
        <translation>{0} · {1}</translation>
    </message>
    <message>
        <source>Signed in as {0} on {1}</source>
        <translation>مسجّل الدخول باسم {0} على {1}</translation>
    </message>
    <message>
        <source>{0} · profile {1}</source>
        <translation>{0} · الملف الشخصي {1}</translation>
    </message>
    <message>
        <source>{0}
Profile: {1}</source>
        <translation>{0}
الملف الشخصي: {1}</translation>
    </message>
    <message>
        <source>Syncing…</source>
        <translation>جارٍ المزامنة…</translation>
    </message>
    <message>
        <source>Offline – showing saved history</source>
        <translation>غير متصل – يُعرض السجل المحفوظ</translation>
    </message>
    <message>
        <source>Can&apos;t reach {host} – showing saved history</source>
        <translation>تعذّر الوصول إلى {host} – يُعرض السجل المحفوظ</translation>
    </message>
    <message>
        <source>The server is having trouble; Converge will try again.</source>
        <translation>يواجه الخادم مشكلة؛ سيحاول Converge مجددًا.</translation>
    </message>
    <message>
        <source>Open Settings to check the server address and token.</source>
        <translation>افتح الإعدادات للتحقق من عنوان الخادم والرمز.</translation>
    </message>
    <message>
        <source>The conversations can&apos;t be listed until the server can be reached; Converge will try again.</source>
        <translation>لا يمكن عرض المحادثات قبل أن يمكن الوصول إلى الخادم؛ سيحاول Converge مجددًا.</translation>
    </message>
    <message>
        <source>{0} – this conversation isn&apos;t saved on this device, so it can&apos;t be shown until the connection is back.</source>
        <translation>{0} – هذه المحادثة غير محفوظة على هذا الجهاز، فلا يمكن عرضها حتى يعود الاتصال.</translation>
    </message>
    <message>
        <source>earlier</source>
        <translation>في وقت سابق</translation>
    </message>
    <message>
        <source>{0} – showing the copy saved on this device (last message: {1}).</source>
        <translation>{0} – تُعرض النسخة المحفوظة على هذا الجهاز (آخر رسالة: {1}).</translation>
    </message>
    <message>
        <source>It may lack the latest messages.</source>
        <translation>قد تنقصها أحدث الرسائل.</translation>
    </message>
    <message>
        <source>Synced just now</source>
        <translation>تمت المزامنة الآن</translation>
    </message>
    <message numerus="yes">
        <source>Synced %Ln min ago</source>
        <translation>
            <numerusform>تمت المزامنة قبل %Ln دقيقة</numerusform>
            <numerusform>تمت المزامنة قبل دقيقة</numerusform>
            <numerusform>تمت المزامنة قبل دقيقتين</numerusform>
            <numerusform>تمت المزامنة قبل %Ln دقائق</numerusform>
            <numerusform>تمت المزامنة قبل %Ln دقيقة</numerusform>
            <numerusform>تمت المزامنة قبل %Ln دقيقة</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Synced %Ln h ago</source>
        <translation>
            <numerusform>تمت المزامنة قبل %Ln ساعة</numerusform>
            <numerusform>تمت المزامنة قبل ساعة</numerusform>
            <numerusform>تمت المزامنة قبل ساعتين</numerusform>
            <numerusform>تمت المزامنة قبل %Ln ساعات</numerusform>
            <numerusform>تمت المزامنة قبل %Ln ساعة</numerusform>
            <numerusform>تمت المزامنة قبل %Ln ساعة</numerusform>
        </translation>
    </message>
    <message>
        <source>{0} · reconnecting…</source>
        <extracomment>Why the conversation list could not be read (a refused token, a host it can&apos;t reach): the sidebar&apos;s empty state and an empty pane say it, with Open Settings.</extracomment>
        <translation>{0} · جارٍ إعادة الاتصال…</translation>
    </message>
    <message>
        <source>No conversations match “{0}”.</source>
        <translation>لا توجد محادثات تطابق «{0}».</translation>
    </message>
    <message>
        <source>{0} (built-in demo server)</source>
        <translation>{0} (خادم العرض المدمج)</translation>
    </message>
</context>
<context>
    <name>RelativeTime</name>
    <message>
        <source>Just now</source>
        <translation>الآن</translation>
    </message>
    <message numerus="yes">
        <source>%Ln min ago</source>
        <translation>
            <numerusform>قبل %Ln دقيقة</numerusform>
            <numerusform>قبل دقيقة</numerusform>
            <numerusform>قبل دقيقتين</numerusform>
            <numerusform>قبل %Ln دقائق</numerusform>
            <numerusform>قبل %Ln دقيقة</numerusform>
            <numerusform>قبل %Ln دقيقة</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%Ln h ago</source>
        <translation>
            <numerusform>قبل %Ln ساعة</numerusform>
            <numerusform>قبل ساعة</numerusform>
            <numerusform>قبل ساعتين</numerusform>
            <numerusform>قبل %Ln ساعات</numerusform>
            <numerusform>قبل %Ln ساعة</numerusform>
            <numerusform>قبل %Ln ساعة</numerusform>
        </translation>
    </message>
    <message>
        <source>Yesterday</source>
        <translation>أمس</translation>
    </message>
    <message>
        <source>d MMM</source>
        <translation>d MMMM</translation>
    </message>
    <message>
        <source>d MMM yyyy</source>
        <translation>d MMMM yyyy</translation>
    </message>
    <message>
        <source>d MMM yyyy, HH:mm</source>
        <translation>d MMMM yyyy، HH:mm</translation>
    </message>
</context>
<context>
    <name>SessionDelegate</name>
    <message>
        <source>Deleting…</source>
        <translation>جارٍ الحذف…</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>قيد التشغيل</translation>
    </message>
</context>
<context>
    <name>SessionList</name>
    <message>
        <source>Untitled conversation</source>
        <translation>محادثة بلا عنوان</translation>
    </message>
    <message>
        <source>last activity {0}</source>
        <extracomment>The server keeps at most 64 code points of the first message, with no ellipsis (CONTRACT, title rule); a cluster boundary or a trailing space can shorten the cut by one or two, so a title this long is taken to be cut. How far back a cut title may lose its partial last word.</extracomment>
        <translation>آخر نشاط {0}</translation>
    </message>
    <message>
        <source>running</source>
        <translation>قيد التشغيل</translation>
    </message>
    <message>
        <source>deleting</source>
        <translation>جارٍ الحذف</translation>
    </message>
    <message>
        <source>, </source>
        <translation>، </translation>
    </message>
    <message>
        <source>{0}
Last activity: {1}</source>
        <translation>{0}
آخر نشاط: {1}</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>{0} as {1} (the built-in demo server)</source>
        <translation>{0} باسم {1} (الخادم التجريبي المدمج)</translation>
    </message>
    <message>
        <source>{0} as {1}</source>
        <translation>{0} باسم {1}</translation>
    </message>
    <message>
        <source>profile {0}</source>
        <translation>الملف الشخصي {0}</translation>
    </message>
    <message>
        <source>The token in use was given on the command line ({0}); it overrides the token saved here until Converge is started without it.</source>
        <translation>الرمز المستخدم أُعطي في سطر الأوامر ({0})؛ وهو يتقدّم على الرمز المحفوظ هنا إلى أن يُشغَّل Converge من دونه.</translation>
    </message>
    <message>
        <source>The token in use comes from the environment variable {0}; it overrides the token saved here. Unset {0} for the saved token to be used.</source>
        <translation>الرمز المستخدم مأخوذ من متغير البيئة {0}؛ وهو يتقدّم على الرمز المحفوظ هنا. أزل {0} ليُستخدم الرمز المحفوظ.</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>الإعدادات</translation>
    </message>
    <message>
        <source>Empty: use the built-in demo server</source>
        <translation>فارغ: استخدام الخادم التجريبي المدمج</translation>
    </message>
    <message>
        <source>Server URL</source>
        <translation>عنوان الخادم</translation>
    </message>
    <message>
        <source>Bearer token, e.g. dev-alice</source>
        <translation>رمز Bearer، مثل dev-alice</translation>
    </message>
    <message>
        <source>Token</source>
        <translation>الرمز</translation>
    </message>
    <message>
        <source>Not connected</source>
        <translation>غير متصل</translation>
    </message>
    <message>
        <source>Server in use</source>
        <translation>الخادم المستخدم</translation>
    </message>
    <message>
        <source>In use now:</source>
        <translation>المستخدم الآن:</translation>
    </message>
    <message>
        <source>Demo token:</source>
        <translation>الرمز التجريبي:</translation>
    </message>
    <message>
        <source>A second device joins the demo server with the address above and this token, also kept in this profile&apos;s file bundled-server/token.</source>
        <translation>ينضم جهاز ثانٍ إلى الخادم التجريبي بالعنوان أعلاه وهذا الرمز، المحفوظ أيضًا في الملف bundled-server/token لهذا الملف الشخصي.</translation>
    </message>
    <message>
        <source>&amp;Server URL:</source>
        <translation>عنوان الخادم (&amp;S):</translation>
    </message>
    <message>
        <source>&amp;Token:</source>
        <translation>الرمز (&amp;T):</translation>
    </message>
    <message>
        <source>Token in use</source>
        <translation>الرمز المستخدم</translation>
    </message>
    <message>
        <source>&amp;Enter sends a message (Shift+Enter: new line)</source>
        <translation>مفتاح Enter يرسل الرسالة (&amp;E) (Shift+Enter: سطر جديد)</translation>
    </message>
    <message>
        <source>Enter sends a message</source>
        <translation>مفتاح Enter يرسل الرسالة</translation>
    </message>
    <message>
        <source>Saved in this profile. Saving reconnects with these settings.</source>
        <translation>تُحفظ في هذا الملف الشخصي، والحفظ يعيد الاتصال بهذه الإعدادات.</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Send the message</source>
        <translation>إرسال الرسالة</translation>
    </message>
    <message>
        <source>New line in the message</source>
        <translation>سطر جديد في الرسالة</translation>
    </message>
    <message>
        <source>Clear the search, close a dialog</source>
        <translation>مسح البحث، إغلاق نافذة حوار</translation>
    </message>
    <message>
        <source>Copy the selected messages</source>
        <translation>نسخ الرسائل المحددة</translation>
    </message>
    <message>
        <source>Keyboard Shortcuts</source>
        <translation>اختصارات لوحة المفاتيح</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>اختصارات لوحة المفاتيح</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>الإجراء</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>المفاتيح</translation>
    </message>
</context>
<context>
    <name>StatusPresenter</name>
    <message numerus="yes">
        <source>A search can hold at most %n words.</source>
        <translation>
            <numerusform>لا يمكن أن يحتوي البحث على أي كلمة.</numerusform>
            <numerusform>يمكن أن يحتوي البحث على كلمة واحدة على الأكثر.</numerusform>
            <numerusform>يمكن أن يحتوي البحث على كلمتين على الأكثر.</numerusform>
            <numerusform>يمكن أن يحتوي البحث على %n كلمات على الأكثر.</numerusform>
            <numerusform>يمكن أن يحتوي البحث على %n كلمة على الأكثر.</numerusform>
            <numerusform>يمكن أن يحتوي البحث على %n كلمة على الأكثر.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>TrustRows</name>
    <message>
        <source>Not saved yet.</source>
        <translation>لم يُحفظ بعد.</translation>
    </message>
    <message>
        <source>Where the token is kept</source>
        <translation>مكان حفظ الرمز</translation>
    </message>
    <message>
        <source>Empty: system certificates only</source>
        <translation>فارغ: شهادات النظام فقط</translation>
    </message>
    <message>
        <source>CA bundle file</source>
        <translation>ملف شهادات CA</translation>
    </message>
    <message>
        <source>&amp;Browse…</source>
        <translation>استعراض (&amp;B)…</translation>
    </message>
    <message>
        <source>&amp;CA bundle:</source>
        <translation>شهادات CA (&amp;C):</translation>
    </message>
    <message>
        <source>Connection not encrypted</source>
        <translation>الاتصال غير مشفّر</translation>
    </message>
    <message>
        <source>Choose a CA bundle (PEM)</source>
        <translation>اختيار ملف شهادات CA (PEM)</translation>
    </message>
    <message>
        <source>Certificates (*.pem *.crt *.cer)</source>
        <translation>الشهادات (*.pem *.crt *.cer)</translation>
    </message>
    <message>
        <source>All (*)</source>
        <translation>الكل (*)</translation>
    </message>
    <message>
        <source>Stored in the system keychain.</source>
        <translation>محفوظ في سلسلة مفاتيح النظام.</translation>
    </message>
    <message>
        <source>Stored in a file readable only by you: {0}</source>
        <translation>محفوظ في ملف لا يقرؤه غيرك: {0}</translation>
    </message>
</context>
<context>
    <name>WindowAction</name>
    <message>
        <source>Couldn&apos;t open the conversation</source>
        <translation>تعذّر فتح المحادثة</translation>
    </message>
    <message>
        <source>Couldn&apos;t follow the live reply (it continues on the server)</source>
        <translation>تعذّرت متابعة الرد المباشر (يستمر على الخادم)</translation>
    </message>
    <message>
        <source>Couldn&apos;t send the message</source>
        <translation>تعذّر إرسال الرسالة</translation>
    </message>
    <message>
        <source>Couldn&apos;t stop the reply</source>
        <translation>تعذّر إيقاف الرد</translation>
    </message>
    <message>
        <source>Couldn&apos;t send the decision</source>
        <translation>تعذّر إرسال القرار</translation>
    </message>
    <message>
        <source>Couldn&apos;t read the memory</source>
        <translation>تعذّرت قراءة الذكرى</translation>
    </message>
    <message>
        <source>Couldn&apos;t list the conversations</source>
        <translation>تعذّر عرض قائمة المحادثات</translation>
    </message>
    <message>
        <source>Couldn&apos;t delete the conversation</source>
        <translation>تعذّر حذف المحادثة</translation>
    </message>
    <message>
        <source>Couldn&apos;t open {0}</source>
        <translation>تعذّر فتح {0}</translation>
    </message>
    <message>
        <source>Couldn&apos;t save {0}</source>
        <translation>تعذّر حفظ {0}</translation>
    </message>
</context>
<context>
    <name>WindowController</name>
    <message>
        <source>Conversation deleted</source>
        <translation>حُذفت المحادثة</translation>
    </message>
    <message>
        <source>“{0}” was deleted on another device.</source>
        <translation>حُذفت «{0}» على جهاز آخر.</translation>
    </message>
    <message>
        <source>The open conversation was deleted on another device.</source>
        <translation>حُذفت المحادثة المفتوحة على جهاز آخر.</translation>
    </message>
    <message>
        <source>Reply finished</source>
        <translation>اكتمل الرد</translation>
    </message>
    <message>
        <source>The reply in “{0}” has finished.</source>
        <translation>اكتمل الرد في «{0}».</translation>
    </message>
    <message>
        <source>The reply has finished.</source>
        <translation>اكتمل الرد.</translation>
    </message>
</context>
</TS>
