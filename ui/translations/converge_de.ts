<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>AppearanceRows</name>
    <message>
        <source>Theme</source>
        <translation>Farbschema</translation>
    </message>
    <message>
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>Hell</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>Dunkel</translation>
    </message>
    <message>
        <source>Font size</source>
        <translation>Schriftgröße</translation>
    </message>
    <message>
        <source>System default</source>
        <translation>Systemvorgabe</translation>
    </message>
    <message>
        <source>{0} pt</source>
        <translation>{0} pt</translation>
    </message>
    <message>
        <source>T&amp;heme:</source>
        <translation>&amp;Farbschema:</translation>
    </message>
    <message>
        <source>&amp;Font size:</source>
        <translation>&amp;Schriftgröße:</translation>
    </message>
</context>
<context>
    <name>ConversationPane</name>
    <message>
        <source>Send the message (Enter; Shift+Enter for a new line)</source>
        <translation>Nachricht senden (Eingabe; Umschalt+Eingabe für eine neue Zeile)</translation>
    </message>
    <message>
        <source>Can&apos;t send while offline: the message would not reach the server.</source>
        <translation>Offline kann nicht gesendet werden: Die Nachricht würde den Server nicht erreichen.</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Nachricht</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Senden</translation>
    </message>
    <message>
        <source>Send message</source>
        <translation>Nachricht senden</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Stopp</translation>
    </message>
    <message>
        <source>Stop the running reply</source>
        <translation>Laufende Antwort stoppen</translation>
    </message>
    <message>
        <source>Reply status</source>
        <translation>Status der Antwort</translation>
    </message>
    <message>
        <source>●  Replying…</source>
        <translation>●  Antwortet…</translation>
    </message>
    <message>
        <source>●  Replying… {0} s</source>
        <translation>●  Antwortet… {0} s</translation>
    </message>
    <message>
        <source>Write a message…  (Enter to send, Shift+Enter for a new line)</source>
        <translation>Nachricht schreiben…  (Eingabe sendet, Umschalt+Eingabe: neue Zeile)</translation>
    </message>
    <message>
        <source>Write a message…  (Ctrl+Enter to send)</source>
        <translation>Nachricht schreiben…  (Strg+Eingabe sendet)</translation>
    </message>
    <message>
        <source>a tool</source>
        <translation>ein Werkzeug</translation>
    </message>
    <message>
        <source>Approval needed: run “{0}”?</source>
        <translation>Freigabe nötig: „{0}“ ausführen?</translation>
    </message>
    <message>
        <source>The reply is waiting for your decision.</source>
        <translation>Die Antwort wartet auf Ihre Entscheidung.</translation>
    </message>
    <message>
        <source>File: {0}</source>
        <translation>Datei: {0}</translation>
    </message>
    <message>
        <source>Approve</source>
        <translation>Erlauben</translation>
    </message>
    <message>
        <source>Approve running {0}</source>
        <translation>Ausführen von {0} erlauben</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>Ablehnen</translation>
    </message>
    <message>
        <source>Deny running {0}</source>
        <translation>Ausführen von {0} ablehnen</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>Öffnen</translation>
    </message>
    <message>
        <source>Open {0}</source>
        <translation>{0} öffnen</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>Speichern…</translation>
    </message>
    <message>
        <source>Save {0}</source>
        <translation>{0} speichern</translation>
    </message>
    <message>
        <source>This conversation was deleted on another device. It is no longer on the server or in this device&apos;s history.</source>
        <translation>Diese Unterhaltung wurde auf einem anderen Gerät gelöscht. Sie ist weder auf dem Server noch im Verlauf dieses Geräts vorhanden.</translation>
    </message>
    <message>
        <source>Select a conversation on the left, or start a new one.</source>
        <translation>Wählen Sie links eine Unterhaltung aus oder beginnen Sie eine neue.</translation>
    </message>
    <message>
        <source>Stop the reply</source>
        <translation>Antwort stoppen</translation>
    </message>
    <message>
        <source>Converge</source>
        <translation>Converge</translation>
    </message>
    <message>
        <source>Your conversation history, the same on every device.</source>
        <translation>Ihr Unterhaltungsverlauf, auf jedem Gerät derselbe.</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>Neue Unterhaltung</translation>
    </message>
    <message>
        <source>Your first message becomes the title.</source>
        <translation>Ihre erste Nachricht wird zum Titel.</translation>
    </message>
    <message>
        <source>Write your first message below.</source>
        <translation>Schreiben Sie unten Ihre erste Nachricht.</translation>
    </message>
    <message>
        <source>Last activity {0}</source>
        <translation>Letzte Aktivität: {0}</translation>
    </message>
    <message>
        <source>Open Settings</source>
        <extracomment>The operating system&apos;s reasons that mean &quot;this device has no network&quot;, not &quot;that host&quot;. The fixes&apos; words for lupdate: they are translated where shown (ui/pane/notice.py).</extracomment>
        <translation>Einstellungen öffnen</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <source>Notice</source>
        <translation>Hinweis</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>Details</translation>
    </message>
    <message>
        <source>Show the details of the failure</source>
        <translation>Details des Fehlers anzeigen</translation>
    </message>
    <message>
        <source>Dismiss the notice</source>
        <translation>Hinweis schließen</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <source>Skill published</source>
        <extracomment>A streaming reply keeps at most this many characters; the rest of its pieces is dropped and the row says so, until the whole message comes (it is then shown as any message). Each piece lays the row&apos;s document out again, so this bounds what one piece costs.</extracomment>
        <translation>Fähigkeit veröffentlicht</translation>
    </message>
    <message>
        <source>Remembered again: “{0}”</source>
        <translation>Erneut gemerkt: „{0}“</translation>
    </message>
    <message>
        <source>Remembered: “{0}”</source>
        <translation>Gemerkt: „{0}“</translation>
    </message>
    <message>
        <source>The reply ended before a decision.</source>
        <translation>Die Antwort endete vor einer Entscheidung.</translation>
    </message>
    <message>
        <source>The reply failed.</source>
        <translation>Die Antwort ist fehlgeschlagen.</translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation>Gestoppt.</translation>
    </message>
    <message>
        <source>Cancelled: the reply was stopped.</source>
        <translation>Abgebrochen: Die Antwort wurde gestoppt.</translation>
    </message>
    <message>
        <source>This reply is too long to show in full here.</source>
        <extracomment>The delegate&apos;s measure: (epoch, version, height, ideal width, exact).</extracomment>
        <translation>Diese Antwort ist zu lang, um sie hier vollständig anzuzeigen.</translation>
    </message>
    <message>
        <source>Memory reinforced</source>
        <translation>Erinnerung bestärkt</translation>
    </message>
    <message>
        <source>Memory formed</source>
        <translation>Erinnerung angelegt</translation>
    </message>
    <message>
        <source>You</source>
        <translation>Sie</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>Assistent</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>Werkzeug</translation>
    </message>
    <message>
        <source>Approval</source>
        <translation>Freigabe</translation>
    </message>
    <message>
        <source>File</source>
        <translation>Datei</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>Hinweis</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>Erinnerung</translation>
    </message>
    <message>
        <source>Your message</source>
        <translation>Ihre Nachricht</translation>
    </message>
    <message>
        <source>Assistant&apos;s reply</source>
        <translation>Antwort des Assistenten</translation>
    </message>
    <message>
        <source>Transcript</source>
        <translation>Verlauf</translation>
    </message>
    <message>
        <source>Jump to latest ↓</source>
        <translation>Zum Neuesten ↓</translation>
    </message>
    <message>
        <source>Jump to latest</source>
        <translation>Zum Neuesten springen</translation>
    </message>
    <message>
        <source>Copy message</source>
        <translation>Nachricht kopieren</translation>
    </message>
    <message>
        <source>Select words</source>
        <translation>Wörter auswählen</translation>
    </message>
    <message>
        <source>Copy this code</source>
        <translation>Diesen Code kopieren</translation>
    </message>
    <message>
        <source>Code, {0}: {1}</source>
        <translation>Code, {0}: {1}</translation>
    </message>
    <message>
        <source>Code: {0}</source>
        <translation>Code: {0}</translation>
    </message>
    <message>
        <source>Image: {0}</source>
        <translation>Bild: {0}</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>Bild</translation>
    </message>
    <message>
        <source>Copy</source>
        <extracomment>Deeper nesting than this (block quotes, lists, emphasis) is not rendered as Markdown: the parser stops nesting there and drops the rest, so the caller shows plain text. More tokens than this (well above what a rich long reply has) are shown as plain text: each styled fragment costs Qt&apos;s layout, and tens of thousands of them freeze the window (decision 0176 has the figures). More &quot;[&quot; than this are shown as plain text without parsing: each one costs the parser&apos;s link and image rules a look ahead in pure Python, so a reply made of &quot;![&quot; would hold the window for seconds (decision 0176). The font families tried in order for code, inline and in blocks.</extracomment>
        <translation>Kopieren</translation>
    </message>
</context>
<context>
    <name>CopiedFlash</name>
    <message>
        <source>Copied</source>
        <translation>Kopiert</translation>
    </message>
</context>
<context>
    <name>DamageBanner</name>
    <message>
        <source>The saved copy of your conversations is damaged. Rebuild it from the server: nothing on the server is affected.</source>
        <translation>Die gespeicherte Kopie Ihrer Unterhaltungen ist beschädigt. Stellen Sie sie vom Server wieder her: Auf dem Server ändert sich nichts.</translation>
    </message>
    <message>
        <source>Rebuilding from the server…</source>
        <translation>Wird vom Server wiederhergestellt…</translation>
    </message>
    <message>
        <source>The rebuild did not finish; nothing was changed. Try again.</source>
        <translation>Die Wiederherstellung wurde nicht abgeschlossen; nichts wurde geändert. Versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>Saved conversations damaged</source>
        <translation>Gespeicherte Unterhaltungen beschädigt</translation>
    </message>
    <message>
        <source>Rebuild</source>
        <translation>Wiederherstellen</translation>
    </message>
    <message>
        <source>Rebuild the saved conversations from the server</source>
        <translation>Gespeicherte Unterhaltungen vom Server wiederherstellen</translation>
    </message>
</context>
<context>
    <name>DemoTokenField</name>
    <message>
        <source>Demo server token</source>
        <translation>Token des Demo-Servers</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>Anzeigen</translation>
    </message>
    <message>
        <source>Show the demo server token</source>
        <translation>Token des Demo-Servers anzeigen</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <source>Copy the demo server token</source>
        <translation>Token des Demo-Servers kopieren</translation>
    </message>
    <message>
        <source>Hide</source>
        <translation>Verbergen</translation>
    </message>
</context>
<context>
    <name>Dialogs</name>
    <message>
        <source>Stop Run and Delete</source>
        <translation>Lauf stoppen und löschen</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>Exportieren…</translation>
    </message>
    <message>
        <source>Couldn&apos;t reach the server. Nothing was deleted.</source>
        <translation>Der Server war nicht erreichbar. Nichts wurde gelöscht.</translation>
    </message>
    <message>
        <source>The server didn&apos;t confirm the delete.</source>
        <translation>Der Server hat das Löschen nicht bestätigt.</translation>
    </message>
    <message>
        <source>Delete conversations?</source>
        <translation>Unterhaltungen löschen?</translation>
    </message>
    <message numerus="yes">
        <source>Deleted %n conversations everywhere.</source>
        <extracomment>A word longer than this gets break opportunities (a zero-width space every so often).</extracomment>
        <translation>
            <numerusform>%n Unterhaltung überall gelöscht.</numerusform>
            <numerusform>%n Unterhaltungen überall gelöscht.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>{0} of %n conversations deleted. The others are kept.</source>
        <translation>
            <numerusform>{0} von %n Unterhaltung gelöscht. Die anderen bleiben erhalten.</numerusform>
            <numerusform>{0} von %n Unterhaltungen gelöscht. Die anderen bleiben erhalten.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>…and %n more not deleted</source>
        <translation>
            <numerusform>…und %n weitere nicht gelöscht</numerusform>
            <numerusform>…und %n weitere nicht gelöscht</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n deleted</source>
        <translation>
            <numerusform>%n gelöscht</numerusform>
            <numerusform>%n gelöscht</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete conversation?</source>
        <translation>Unterhaltung löschen?</translation>
    </message>
    <message>
        <source>Delete Everywhere</source>
        <translation>Überall löschen</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <source>The conversation and its associated data (its messages and files, and the memories and knowledge derived from it) will be removed from the server and from every synchronized client. This cannot be undone.</source>
        <translation>Die Unterhaltung und die zugehörigen Daten (ihre Nachrichten und Dateien sowie die daraus abgeleiteten Erinnerungen und Kenntnisse) werden vom Server und von jedem synchronisierten Client entfernt. Das lässt sich nicht rückgängig machen.</translation>
    </message>
    <message>
        <source>These conversations and their associated data (their messages and files, and the memories and knowledge derived from them) will be removed from the server and from every synchronized client. This cannot be undone.</source>
        <translation>Diese Unterhaltungen und die zugehörigen Daten (ihre Nachrichten und Dateien sowie die daraus abgeleiteten Erinnerungen und Kenntnisse) werden vom Server und von jedem synchronisierten Client entfernt. Das lässt sich nicht rückgängig machen.</translation>
    </message>
    <message numerus="yes">
        <source>Delete %n conversations?</source>
        <translation>
            <numerusform>%Ln Unterhaltung löschen?</numerusform>
            <numerusform>%Ln Unterhaltungen löschen?</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete “{0}”?</source>
        <translation>„{0}“ löschen?</translation>
    </message>
    <message>
        <source>Delete this untitled conversation?</source>
        <translation>Diese Unterhaltung ohne Titel löschen?</translation>
    </message>
    <message>
        <source>Run in progress</source>
        <translation>Lauf aktiv</translation>
    </message>
    <message>
        <source>Delete not confirmed</source>
        <translation>Löschen nicht bestätigt</translation>
    </message>
    <message>
        <source>Delete failed</source>
        <translation>Löschen fehlgeschlagen</translation>
    </message>
    <message>
        <source>A conversation can&apos;t be deleted while a run is in progress in it. Stop Run and Delete stops the run first; once it has ended, the conversation is deleted everywhere.</source>
        <translation>Eine Unterhaltung kann nicht gelöscht werden, solange in ihr ein Lauf aktiv ist. „Lauf stoppen und löschen“ stoppt zuerst den Lauf; sobald er beendet ist, wird die Unterhaltung überall gelöscht.</translation>
    </message>
    <message>
        <source>Delete the conversation from the server and every device</source>
        <extracomment>The buttons&apos; descriptions for assistive technology, by their English.</extracomment>
        <translation>Die Unterhaltung vom Server und von jedem Gerät löschen</translation>
    </message>
    <message>
        <source>Keep the conversation</source>
        <translation>Die Unterhaltung behalten</translation>
    </message>
    <message>
        <source>Save a copy of the conversation and its files first</source>
        <translation>Zuerst eine Kopie der Unterhaltung und ihrer Dateien speichern</translation>
    </message>
    <message>
        <source>Stop the run, wait for it to end, then delete the conversation everywhere</source>
        <translation>Den Lauf stoppen, sein Ende abwarten und dann die Unterhaltung überall löschen</translation>
    </message>
    <message>
        <source>Keep the conversation and let the run continue</source>
        <translation>Die Unterhaltung behalten und den Lauf fortsetzen lassen</translation>
    </message>
    <message>
        <source>Try the delete again</source>
        <translation>Das Löschen erneut versuchen</translation>
    </message>
    <message>
        <source>A reply is running in it now. Stop Run and Delete stops the run first; once it has ended, the conversation is deleted.</source>
        <translation>Darin läuft gerade eine Antwort. „Lauf stoppen und löschen“ stoppt zuerst den Lauf; sobald er beendet ist, wird die Unterhaltung gelöscht.</translation>
    </message>
    <message>
        <source>{0} is still running. Nothing was deleted.</source>
        <translation>{0} läuft noch. Nichts wurde gelöscht.</translation>
    </message>
    <message>
        <source>{0} is kept. Deleting again is safe.</source>
        <translation>{0} bleibt erhalten. Erneutes Löschen ist unbedenklich.</translation>
    </message>
    <message numerus="yes">
        <source>%n conversations are kept. Deleting again is safe.</source>
        <translation>
            <numerusform>%Ln Unterhaltung bleibt erhalten. Erneutes Löschen ist unbedenklich.</numerusform>
            <numerusform>%Ln Unterhaltungen bleiben erhalten. Erneutes Löschen ist unbedenklich.</numerusform>
        </translation>
    </message>
    <message>
        <source>Deleted “{0}” everywhere.</source>
        <translation>„{0}“ überall gelöscht.</translation>
    </message>
</context>
<context>
    <name>FailureWords</name>
    <message>
        <source>the server</source>
        <translation>dem Server</translation>
    </message>
    <message>
        <source>The server refused this device&apos;s token</source>
        <translation>Der Server hat das Token dieses Geräts abgelehnt</translation>
    </message>
    <message>
        <source>This device&apos;s token is read-only for this (it needs the “{0}” permission)</source>
        <translation>Das Token dieses Geräts darf hierfür nur lesen (nötig ist die Berechtigung „{0}“)</translation>
    </message>
    <message>
        <source>This device&apos;s token is read-only for this</source>
        <translation>Das Token dieses Geräts darf hierfür nur lesen</translation>
    </message>
    <message>
        <source>The certificate of {0} could not be verified</source>
        <translation>Das Zertifikat von {0} konnte nicht überprüft werden</translation>
    </message>
    <message>
        <source>A secure connection to {0} could not be set up</source>
        <translation>Eine sichere Verbindung zu {0} konnte nicht aufgebaut werden</translation>
    </message>
    <message>
        <source>You&apos;re offline</source>
        <translation>Sie sind offline</translation>
    </message>
    <message>
        <source>Can&apos;t reach {0}</source>
        <translation>Keine Verbindung zu {0}</translation>
    </message>
    <message>
        <source>{0} didn&apos;t answer in time</source>
        <translation>Keine rechtzeitige Antwort von {0}</translation>
    </message>
    <message>
        <source>The connection to {0} was lost</source>
        <translation>Die Verbindung zu {0} wurde unterbrochen</translation>
    </message>
    <message>
        <source>The server is having trouble; retrying…</source>
        <translation>Der Server hat Probleme; neuer Versuch folgt…</translation>
    </message>
    <message>
        <source>A reply is still running here. Stop it or wait for it to end</source>
        <translation>Hier läuft noch eine Antwort. Stoppen Sie sie oder warten Sie, bis sie endet</translation>
    </message>
    <message>
        <source>It conflicts with what the server has now</source>
        <translation>Es widerspricht dem aktuellen Stand auf dem Server</translation>
    </message>
    <message>
        <source>It is larger than the server accepts</source>
        <translation>Es ist größer, als der Server annimmt</translation>
    </message>
    <message>
        <source>The server did not accept it</source>
        <translation>Der Server hat es nicht angenommen</translation>
    </message>
    <message>
        <source>It is no longer on the server</source>
        <translation>Es ist nicht mehr auf dem Server</translation>
    </message>
    <message>
        <source>The server had a problem</source>
        <translation>Auf dem Server ist ein Fehler aufgetreten</translation>
    </message>
    <message>
        <source>{0} answered something unexpected</source>
        <translation>Unerwartete Antwort von {0}</translation>
    </message>
    <message>
        <source>An internal error happened (details are in the log)</source>
        <translation>Ein interner Fehler ist aufgetreten (Details stehen im Protokoll)</translation>
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
        <translation>Die Unterhaltungen konnten nicht aufgelistet werden</translation>
    </message>
</context>
<context>
    <name>Grouping</name>
    <message>
        <source>Today</source>
        <extracomment>Where the header sorts in the mirror&apos;s order (`updated_at` DESC, `id` DESC): as the key (`before`, &quot;&quot;), i.e. after every row of newer sections and before its own rows.</extracomment>
        <translation>Heute</translation>
    </message>
    <message>
        <source>Yesterday</source>
        <translation>Gestern</translation>
    </message>
    <message numerus="yes">
        <source>Previous %Ln days</source>
        <translation>
            <numerusform>Letzter %Ln Tag</numerusform>
            <numerusform>Letzte %Ln Tage</numerusform>
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
        <translation>Älter</translation>
    </message>
</context>
<context>
    <name>LanguageRow</name>
    <message>
        <source>Language</source>
        <extracomment>(code, the language&apos;s own name); &quot;&quot; is the system&apos;s language.</extracomment>
        <translation>Sprache</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>Systemsprache</translation>
    </message>
    <message>
        <source>A new language applies the next time Converge starts.</source>
        <translation>Eine neue Sprache gilt ab dem nächsten Start von Converge.</translation>
    </message>
    <message>
        <source>&amp;Language:</source>
        <translation>Sp&amp;rache:</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Loading conversations…</source>
        <translation>Unterhaltungen werden geladen…</translation>
    </message>
    <message>
        <source>No conversations yet.
Start one with “New Conversation”.</source>
        <translation>Noch keine Unterhaltungen.
Beginnen Sie eine mit „Neue Unterhaltung“.</translation>
    </message>
    <message>
        <source>The saved conversations are damaged: press Rebuild.</source>
        <translation>Die gespeicherten Unterhaltungen sind beschädigt: Klicken Sie auf „Wiederherstellen“.</translation>
    </message>
    <message>
        <source>Delete the selected conversations everywhere (Delete)</source>
        <translation>Ausgewählte Unterhaltungen überall löschen (Entf)</translation>
    </message>
    <message>
        <source>Can&apos;t delete while offline: the server must confirm a delete.</source>
        <translation>Offline kann nicht gelöscht werden: Der Server muss das Löschen bestätigen.</translation>
    </message>
    <message>
        <source>You&apos;re offline. Showing the history saved on this device; sending and deleting come back when the server can be reached.</source>
        <translation>Sie sind offline. Angezeigt wird der auf diesem Gerät gespeicherte Verlauf; Senden und Löschen sind wieder möglich, sobald der Server erreichbar ist.</translation>
    </message>
    <message>
        <source>Can&apos;t reach {host}. Showing the history saved on this device; sending and deleting come back when the server can be reached.</source>
        <translation>Keine Verbindung zu {host}. Angezeigt wird der auf diesem Gerät gespeicherte Verlauf; Senden und Löschen sind wieder möglich, sobald der Server erreichbar ist.</translation>
    </message>
    <message>
        <source>Converge</source>
        <translation>Converge</translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation>Unterhaltungen durchsuchen</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>Unterhaltungen</translation>
    </message>
    <message>
        <source>Offline</source>
        <extracomment>States whose sentence stays on the status line while the next pass runs.</extracomment>
        <translation>Offline</translation>
    </message>
    <message>
        <source>Connection not encrypted</source>
        <translation>Verbindung nicht verschlüsselt</translation>
    </message>
    <message>
        <source>New Conversation</source>
        <translation>Neue Unterhaltung</translation>
    </message>
    <message>
        <source>Start a new conversation (Ctrl+N)</source>
        <translation>Neue Unterhaltung beginnen (Strg+N)</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <source>Sync with the server now (F5)</source>
        <translation>Jetzt mit dem Server abgleichen (F5)</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>Löschen</translation>
    </message>
    <message>
        <source>Settings…</source>
        <translation>Einstellungen…</translation>
    </message>
    <message>
        <source>Connection, appearance and sending (Ctrl+,)</source>
        <translation>Verbindung, Darstellung und Senden (Strg+,)</translation>
    </message>
    <message>
        <source>Keyboard Shortcuts</source>
        <translation>Tastenkürzel</translation>
    </message>
    <message>
        <source>Keyboard shortcuts (F1)</source>
        <translation>Tastenkürzel (F1)</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>Suchen</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>Beenden</translation>
    </message>
    <message>
        <source>Next conversation</source>
        <translation>Nächste Unterhaltung</translation>
    </message>
    <message>
        <source>Previous conversation</source>
        <translation>Vorherige Unterhaltung</translation>
    </message>
    <message>
        <source>Main</source>
        <translation>Hauptleiste</translation>
    </message>
    <message>
        <source>Main toolbar</source>
        <translation>Hauptsymbolleiste</translation>
    </message>
    <message>
        <source>Conversation actions</source>
        <translation>Aktionen für die Unterhaltung</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>Exportieren…</translation>
    </message>
    <message>
        <source>Copy ID</source>
        <translation>ID kopieren</translation>
    </message>
    <message>
        <source>Sync status</source>
        <translation>Synchronisierungsstatus</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>Details</translation>
    </message>
    <message>
        <source>Show the details</source>
        <translation>Details anzeigen</translation>
    </message>
    <message>
        <source>Account and server</source>
        <translation>Konto und Server</translation>
    </message>
    <message>
        <source>Converge — {0} on {1}</source>
        <translation>Converge — {0} auf {1}</translation>
    </message>
    <message>
        <source>{0} · {1}</source>
        <translation>{0} · {1}</translation>
    </message>
    <message>
        <source>Signed in as {0} on {1}</source>
        <translation>Angemeldet als {0} auf {1}</translation>
    </message>
    <message>
        <source>{0} · profile {1}</source>
        <translation>{0} · Profil {1}</translation>
    </message>
    <message>
        <source>{0}
Profile: {1}</source>
        <translation>{0}
Profil: {1}</translation>
    </message>
    <message>
        <source>Syncing…</source>
        <translation>Wird synchronisiert…</translation>
    </message>
    <message>
        <source>Offline – showing saved history</source>
        <translation>Offline – gespeicherter Verlauf wird angezeigt</translation>
    </message>
    <message>
        <source>Can&apos;t reach {host} – showing saved history</source>
        <translation>Keine Verbindung zu {host} – gespeicherter Verlauf wird angezeigt</translation>
    </message>
    <message>
        <source>The server is having trouble; Converge will try again.</source>
        <translation>Der Server hat Probleme; Converge versucht es erneut.</translation>
    </message>
    <message>
        <source>Open Settings to check the server address and token.</source>
        <translation>Öffnen Sie die Einstellungen, um Serveradresse und Token zu prüfen.</translation>
    </message>
    <message>
        <source>The conversations can&apos;t be listed until the server can be reached; Converge will try again.</source>
        <translation>Die Unterhaltungen können erst aufgelistet werden, wenn der Server erreichbar ist; Converge versucht es erneut.</translation>
    </message>
    <message>
        <source>{0} – this conversation isn&apos;t saved on this device, so it can&apos;t be shown until the connection is back.</source>
        <translation>{0} – diese Unterhaltung ist auf diesem Gerät nicht gespeichert und kann erst angezeigt werden, wenn die Verbindung wieder steht.</translation>
    </message>
    <message>
        <source>earlier</source>
        <translation>früher</translation>
    </message>
    <message>
        <source>{0} – showing the copy saved on this device (last message: {1}).</source>
        <translation>{0} – angezeigt wird die auf diesem Gerät gespeicherte Kopie (letzte Nachricht: {1}).</translation>
    </message>
    <message>
        <source>It may lack the latest messages.</source>
        <translation>Die neuesten Nachrichten fehlen dort eventuell.</translation>
    </message>
    <message>
        <source>Synced just now</source>
        <translation>Gerade eben synchronisiert</translation>
    </message>
    <message numerus="yes">
        <source>Synced %Ln min ago</source>
        <translation>
            <numerusform>Vor %Ln Min. synchronisiert</numerusform>
            <numerusform>Vor %Ln Min. synchronisiert</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Synced %Ln h ago</source>
        <translation>
            <numerusform>Vor %Ln Std. synchronisiert</numerusform>
            <numerusform>Vor %Ln Std. synchronisiert</numerusform>
        </translation>
    </message>
    <message>
        <source>{0} · reconnecting…</source>
        <extracomment>Why the conversation list could not be read (a refused token, a host it can&apos;t reach): the sidebar&apos;s empty state and an empty pane say it, with Open Settings.</extracomment>
        <translation>{0} · neue Verbindung…</translation>
    </message>
    <message>
        <source>No conversations match “{0}”.</source>
        <translation>Keine Unterhaltung passt zu „{0}“.</translation>
    </message>
    <message>
        <source>{0} (built-in demo server)</source>
        <translation>{0} (eingebauter Demo-Server)</translation>
    </message>
</context>
<context>
    <name>RelativeTime</name>
    <message>
        <source>Just now</source>
        <translation>Gerade eben</translation>
    </message>
    <message numerus="yes">
        <source>%Ln min ago</source>
        <translation>
            <numerusform>vor %Ln Min.</numerusform>
            <numerusform>vor %Ln Min.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%Ln h ago</source>
        <translation>
            <numerusform>vor %Ln Std.</numerusform>
            <numerusform>vor %Ln Std.</numerusform>
        </translation>
    </message>
    <message>
        <source>Yesterday</source>
        <translation>Gestern</translation>
    </message>
    <message>
        <source>d MMM</source>
        <translation>d. MMM</translation>
    </message>
    <message>
        <source>d MMM yyyy</source>
        <translation>d. MMM yyyy</translation>
    </message>
    <message>
        <source>d MMM yyyy, HH:mm</source>
        <translation>d. MMM yyyy, HH:mm</translation>
    </message>
</context>
<context>
    <name>SessionDelegate</name>
    <message>
        <source>Deleting…</source>
        <translation>Wird gelöscht…</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>Läuft</translation>
    </message>
</context>
<context>
    <name>SessionList</name>
    <message>
        <source>Untitled conversation</source>
        <translation>Unterhaltung ohne Titel</translation>
    </message>
    <message>
        <source>last activity {0}</source>
        <extracomment>The server keeps at most 64 code points of the first message, with no ellipsis (CONTRACT, title rule); a cluster boundary or a trailing space can shorten the cut by one or two, so a title this long is taken to be cut. How far back a cut title may lose its partial last word.</extracomment>
        <translation>letzte Aktivität {0}</translation>
    </message>
    <message>
        <source>running</source>
        <translation>läuft</translation>
    </message>
    <message>
        <source>deleting</source>
        <translation>wird gelöscht</translation>
    </message>
    <message>
        <source>, </source>
        <translation>, </translation>
    </message>
    <message>
        <source>{0}
Last activity: {1}</source>
        <translation>{0}
Letzte Aktivität: {1}</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>{0} as {1} (the built-in demo server)</source>
        <translation>{0} als {1} (der eingebaute Demo-Server)</translation>
    </message>
    <message>
        <source>{0} as {1}</source>
        <translation>{0} als {1}</translation>
    </message>
    <message>
        <source>profile {0}</source>
        <translation>Profil {0}</translation>
    </message>
    <message>
        <source>The token in use was given on the command line ({0}); it overrides the token saved here until Converge is started without it.</source>
        <translation>Das verwendete Token wurde auf der Befehlszeile angegeben ({0}); es hat Vorrang vor dem hier gespeicherten Token, bis Converge ohne es gestartet wird.</translation>
    </message>
    <message>
        <source>The token in use comes from the environment variable {0}; it overrides the token saved here. Unset {0} for the saved token to be used.</source>
        <translation>Das verwendete Token stammt aus der Umgebungsvariable {0}; es hat Vorrang vor dem hier gespeicherten Token. Entfernen Sie {0}, damit das gespeicherte Token verwendet wird.</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <source>Empty: use the built-in demo server</source>
        <translation>Leer: eingebauten Demo-Server verwenden</translation>
    </message>
    <message>
        <source>Server URL</source>
        <translation>Server-URL</translation>
    </message>
    <message>
        <source>Bearer token, e.g. dev-alice</source>
        <translation>Bearer-Token, z. B. dev-alice</translation>
    </message>
    <message>
        <source>Token</source>
        <translation>Token</translation>
    </message>
    <message>
        <source>Not connected</source>
        <translation>Nicht verbunden</translation>
    </message>
    <message>
        <source>Server in use</source>
        <translation>Verwendeter Server</translation>
    </message>
    <message>
        <source>In use now:</source>
        <translation>Jetzt verwendet:</translation>
    </message>
    <message>
        <source>Demo token:</source>
        <translation>Demo-Token:</translation>
    </message>
    <message>
        <source>A second device joins the demo server with the address above and this token, also kept in this profile&apos;s file bundled-server/token.</source>
        <translation>Ein zweites Gerät verbindet sich mit dem Demo-Server über die Adresse oben und dieses Token, das auch in der Datei bundled-server/token dieses Profils liegt.</translation>
    </message>
    <message>
        <source>&amp;Server URL:</source>
        <translation>&amp;Server-URL:</translation>
    </message>
    <message>
        <source>&amp;Token:</source>
        <translation>&amp;Token:</translation>
    </message>
    <message>
        <source>Token in use</source>
        <translation>Verwendetes Token</translation>
    </message>
    <message>
        <source>&amp;Enter sends a message (Shift+Enter: new line)</source>
        <translation>&amp;Eingabe sendet die Nachricht (Umschalt+Eingabe: neue Zeile)</translation>
    </message>
    <message>
        <source>Enter sends a message</source>
        <translation>Eingabe sendet die Nachricht</translation>
    </message>
    <message>
        <source>Saved in this profile. Saving reconnects with these settings.</source>
        <translation>Wird in diesem Profil gespeichert. Beim Speichern wird mit diesen Einstellungen neu verbunden.</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Send the message</source>
        <translation>Nachricht senden</translation>
    </message>
    <message>
        <source>New line in the message</source>
        <translation>Neue Zeile in der Nachricht</translation>
    </message>
    <message>
        <source>Clear the search, close a dialog</source>
        <translation>Suche leeren, Dialog schließen</translation>
    </message>
    <message>
        <source>Copy the selected messages</source>
        <translation>Ausgewählte Nachrichten kopieren</translation>
    </message>
    <message>
        <source>Keyboard Shortcuts</source>
        <translation>Tastenkürzel</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>Tastenkürzel</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>Aktion</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>Tasten</translation>
    </message>
</context>
<context>
    <name>StatusPresenter</name>
    <message numerus="yes">
        <source>A search can hold at most %n words.</source>
        <translation>
            <numerusform>Eine Suche kann höchstens %n Wort enthalten.</numerusform>
            <numerusform>Eine Suche kann höchstens %n Wörter enthalten.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>TrustRows</name>
    <message>
        <source>Not saved yet.</source>
        <translation>Noch nicht gespeichert.</translation>
    </message>
    <message>
        <source>Where the token is kept</source>
        <translation>Wo das Token aufbewahrt wird</translation>
    </message>
    <message>
        <source>Empty: system certificates only</source>
        <translation>Leer: nur Systemzertifikate</translation>
    </message>
    <message>
        <source>CA bundle file</source>
        <translation>CA-Zertifikatsdatei</translation>
    </message>
    <message>
        <source>&amp;Browse…</source>
        <translation>&amp;Durchsuchen…</translation>
    </message>
    <message>
        <source>&amp;CA bundle:</source>
        <translation>&amp;CA-Zertifikate:</translation>
    </message>
    <message>
        <source>Connection not encrypted</source>
        <translation>Verbindung nicht verschlüsselt</translation>
    </message>
    <message>
        <source>Choose a CA bundle (PEM)</source>
        <translation>CA-Zertifikatsdatei wählen (PEM)</translation>
    </message>
    <message>
        <source>Certificates (*.pem *.crt *.cer)</source>
        <translation>Zertifikate (*.pem *.crt *.cer)</translation>
    </message>
    <message>
        <source>All (*)</source>
        <translation>Alle (*)</translation>
    </message>
    <message>
        <source>Stored in the system keychain.</source>
        <translation>Im Schlüsselbund des Systems gespeichert.</translation>
    </message>
    <message>
        <source>Stored in a file readable only by you: {0}</source>
        <translation>In einer Datei gespeichert, die nur Sie lesen können: {0}</translation>
    </message>
</context>
<context>
    <name>WindowAction</name>
    <message>
        <source>Couldn&apos;t open the conversation</source>
        <translation>Die Unterhaltung konnte nicht geöffnet werden</translation>
    </message>
    <message>
        <source>Couldn&apos;t follow the live reply (it continues on the server)</source>
        <translation>Der laufenden Antwort konnte nicht gefolgt werden (sie läuft auf dem Server weiter)</translation>
    </message>
    <message>
        <source>Couldn&apos;t send the message</source>
        <translation>Die Nachricht konnte nicht gesendet werden</translation>
    </message>
    <message>
        <source>Couldn&apos;t stop the reply</source>
        <translation>Die Antwort konnte nicht gestoppt werden</translation>
    </message>
    <message>
        <source>Couldn&apos;t send the decision</source>
        <translation>Die Entscheidung konnte nicht gesendet werden</translation>
    </message>
    <message>
        <source>Couldn&apos;t read the memory</source>
        <translation>Die Erinnerung konnte nicht gelesen werden</translation>
    </message>
    <message>
        <source>Couldn&apos;t list the conversations</source>
        <translation>Die Unterhaltungen konnten nicht aufgelistet werden</translation>
    </message>
    <message>
        <source>Couldn&apos;t delete the conversation</source>
        <translation>Die Unterhaltung konnte nicht gelöscht werden</translation>
    </message>
    <message>
        <source>Couldn&apos;t open {0}</source>
        <translation>{0} konnte nicht geöffnet werden</translation>
    </message>
    <message>
        <source>Couldn&apos;t save {0}</source>
        <translation>{0} konnte nicht gespeichert werden</translation>
    </message>
</context>
<context>
    <name>WindowController</name>
    <message>
        <source>Conversation deleted</source>
        <translation>Unterhaltung gelöscht</translation>
    </message>
    <message>
        <source>“{0}” was deleted on another device.</source>
        <translation>„{0}“ wurde auf einem anderen Gerät gelöscht.</translation>
    </message>
    <message>
        <source>The open conversation was deleted on another device.</source>
        <translation>Die geöffnete Unterhaltung wurde auf einem anderen Gerät gelöscht.</translation>
    </message>
    <message>
        <source>Reply finished</source>
        <translation>Antwort fertig</translation>
    </message>
    <message>
        <source>The reply in “{0}” has finished.</source>
        <translation>Die Antwort in „{0}“ ist fertig.</translation>
    </message>
    <message>
        <source>The reply has finished.</source>
        <translation>Die Antwort ist fertig.</translation>
    </message>
</context>
</TS>
