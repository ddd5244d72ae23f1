"""A message's Markdown is inert (CONTRACT §10.1): raw HTML is text, images are words and
are never loaded, only web and mail links are anchors and each shows where it goes,
control and bidirectional characters cannot reach the reader, and a hostile message
falls back to plain text within its bounds."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QColor, QImage, QPainter, QTextDocument

from tests.hostile_content import HOSTILE, hostile_server
from tests.ui.rich_doc import anchors, format_at, has_image, load
from ui.text.markdown_html import MAX_BRACKETS, MAX_NESTING, MAX_TOKENS
from ui.text.plain import EXPLICIT_BIDI
from ui.text.rich_text import COPY_SCHEME, MAX_MARKDOWN_CHARS, InertDocument, link_target
from ui.text.spoken import spoken

pytestmark = pytest.mark.usefixtures("qapp")


def _web_anchors(doc: QTextDocument) -> list[tuple[str, str]]:
    return [(href, text) for href, text in anchors(doc) if not href.startswith(COPY_SCHEME)]


def _paint(doc: QTextDocument, markup: str | None = None) -> QImage:
    if markup is not None:
        doc.setHtml(markup)
    doc.setTextWidth(200 if markup is not None else 700)
    image = QImage(
        int(doc.idealWidth()) + 20, max(1, int(doc.size().height())), QImage.Format.Format_ARGB32
    )
    image.fill(QColor("white"))
    painter = QPainter(image)
    doc.drawContents(painter)
    painter.end()
    return image


@pytest.mark.parametrize(
    "raw",
    [
        "<img src=file:///etc/passwd>",
        '<img src="http://127.0.0.1:9/x.png">',
        "<script>alert(1)</script>",
        '<a href="javascript:alert(1)">click</a>',
        "<b>bold?</b> <i>it?</i>",
        "<div>\n<img src=/etc/passwd>\n</div>",
        '<style>p { color: red }</style><p style="font-size:99px">big</p>',
    ],
)
def test_raw_html_is_shown_as_its_literal_text(raw: str) -> None:
    doc, rendered = load(f"before\n\n{raw}\n\nafter")
    assert raw.replace("\n", "") in doc.toPlainText().replace("\n", "")
    assert _web_anchors(doc) == []
    assert not has_image(doc)
    assert "<img" not in rendered.html and "<script" not in rendered.html


def test_an_image_is_its_alt_text_and_nothing_is_fetched() -> None:
    with hostile_server() as server:
        doc, rendered = load(f"see ![a chart]({server.url}/chart.png) and ![]({server.url}/x)")
        _paint(doc)
    assert "[image: a chart]" in doc.toPlainText() and "[image]" in doc.toPlainText()
    assert not has_image(doc) and "<img" not in rendered.html
    assert server.requests == []


def test_the_inert_document_loads_no_image_its_html_names(tmp_path: Path) -> None:
    """Qt's image handler loads an image file by itself (`QImage.load(src)`) when the
    document's resource is empty, so returning nothing from `loadResource` is not enough:
    the inert document answers every image with its own blank one."""
    picture = tmp_path / "secret.png"
    red = QImage(8, 8, QImage.Format.Format_ARGB32)
    red.fill(QColor("red"))
    assert red.save(str(picture))
    with hostile_server() as server:
        for src in (
            str(picture),
            QUrl.fromLocalFile(str(picture)).toString(),
            f"{server.url}/r.png",
        ):
            markup = f'<p>a <img src="{src}" width="8" height="8"> b</p>'
            plain_qt, inert = QTextDocument(), InertDocument()
            shown = {id(doc): _paint(doc, markup) for doc in (plain_qt, inert)}
            if not src.startswith("http"):
                assert _has_red(shown[id(plain_qt)]), src  # what a plain document does
            assert not _has_red(shown[id(inert)]), src
    assert server.requests == []


def test_the_inert_document_loads_no_style_sheet_its_html_names(tmp_path: Path) -> None:
    sheet = tmp_path / "evil.css"
    sheet.write_text("p { color: #ff0000; }")
    for href in (str(sheet), QUrl.fromLocalFile(str(sheet)).toString()):
        markup = (
            f'<html><head><link rel="stylesheet" type="text/css" href="{href}"></head>'
            "<body><p>hello</p></body></html>"
        )
        colours = {}
        for doc in (QTextDocument(), InertDocument()):
            doc.setHtml(markup)
            colours[type(doc)] = format_at(doc, "hello").foreground().color()
        assert colours[QTextDocument] == QColor("#ff0000")  # a plain document reads the file
        assert colours[InertDocument] != QColor("#ff0000"), href


def _has_red(image: QImage) -> bool:
    return any(
        image.pixelColor(x, y) == QColor("red")
        for x in range(image.width())
        for y in range(image.height())
    )


@pytest.mark.parametrize(
    "href",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "file:///etc/passwd",
        "data:text/html;base64,PHNjcmlwdD4=",
        "vbscript:msgbox(1)",
        "./relative/path.md",
        "/etc/passwd",
        "ftp://example.com/file",
        "https:no-host",
    ],
)
def test_links_other_than_web_and_mail_are_not_anchors(href: str) -> None:
    doc, _ = load(f"a [label]({href}) b <{href}>")
    assert _web_anchors(doc) == []
    assert "label" in doc.toPlainText()


def test_a_web_link_shows_its_target_beside_its_text() -> None:
    doc, _ = load("Read [the docs](https://example.com/guide/intro) now.")
    assert doc.toPlainText() == "Read the docs (example.com/guide/intro) now."
    assert _web_anchors(doc) == [("https://example.com/guide/intro", "the docs")]
    assert link_target("https://example.com/guide/intro") is not None


def test_a_link_whose_text_names_another_site_shows_the_real_one() -> None:
    doc, _ = load("[https://bank.example/login](https://evil.example/login)")
    assert "(evil.example/login)" in doc.toPlainText()
    doc, _ = load("[me](https://bank.example@evil.example/)")
    assert "(https://bank.example@evil.example)" in doc.toPlainText()


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        # A Cyrillic "а" in a Latin name: the host as the browser sends it.
        ("[paypal.com](https://p\u0430ypal.com/login)", "paypal.com (xn--pypal-4ve.com/login)"),
        ("<https://p\u0430ypal.com>", "https://pаypal.com (xn--pypal-4ve.com)"),
        # A user part is not the host, and "user@host" reads as a mail address.
        (
            "[user@host.example](http://user@host.example)",
            "user@host.example (http://user@host.example)",
        ),
        # Every recipient and parameter a mail link would send.
        (
            "[write](mailto:a@x.example?to=b@y.example&attach=/etc/passwd)",
            "write (a@x.example?to=b@y.example&attach=/etc/passwd)",
        ),
    ],
)
def test_a_link_shows_what_it_really_opens_to_the_eye_and_to_a_screen_reader(
    source: str, shown: str
) -> None:
    doc, _ = load(source)
    assert doc.toPlainText() == shown
    said = spoken(source)
    assert said.endswith(")") and shown.split(" (")[-1].rstrip(")").split("/")[0] in said


def test_a_mail_link_too_long_to_show_whole_is_not_a_link() -> None:
    href = "mailto:a@x.example?" + "&".join(f"cc=n{i}@y.example" for i in range(12))
    doc, _ = load(f"[write]({href})")
    assert doc.toPlainText() == "write" and _web_anchors(doc) == []
    assert link_target(href) is None


@pytest.mark.parametrize(
    ("source", "shown", "href"),
    [
        ("<https://example.com/a>", "https://example.com/a", "https://example.com/a"),
        ("[https://example.com/](https://example.com/)", "https://example.com/", None),
        ("<someone@example.com>", "someone@example.com", "mailto:someone@example.com"),
    ],
)
def test_a_link_that_is_its_own_target_is_not_repeated(
    source: str, shown: str, href: str | None
) -> None:
    doc, _ = load(source)
    assert doc.toPlainText() == shown
    (anchor,) = _web_anchors(doc)
    assert anchor[0] == (href or shown)


def test_hostile_text_renders_without_controls_or_bidi_overrides() -> None:
    for text in (HOSTILE, f"# {HOSTILE}\n\n- {HOSTILE}\n\n```\n{HOSTILE}\n```\n| {HOSTILE} |"):
        doc, rendered = load(text)
        for shown in (doc.toPlainText(), rendered.plain, *rendered.code_blocks):
            bad = [c for c in shown if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]
            assert bad == [], bad
            assert not EXPLICIT_BIDI & set(shown)
        assert "end" in doc.toPlainText()


def test_entities_cannot_bring_back_a_bidi_override_or_a_control() -> None:
    doc, _ = load("abc &#x202E; def &#8238; &#27;[2J &#x9b; `&#x202E;`")
    assert not EXPLICIT_BIDI & set(doc.toPlainText())
    assert "\x1b" not in doc.toPlainText() and "\x9b" not in doc.toPlainText()


def test_a_bidi_override_is_removed_from_text_links_and_code() -> None:
    override = "\u202e"
    doc, rendered = load(
        f"abc{override}def [x{override}y](https://e.example/{override}) `a{override}b`\n\n"
        f"```\nif access {override}admin\n```"
    )
    assert override not in doc.toPlainText() + rendered.plain + "".join(rendered.code_blocks)
    assert all(override not in href for href, _ in anchors(doc))


def test_a_lone_surrogate_is_replaced_not_fatal() -> None:
    doc, rendered = load("half \ud800 a pair")
    assert "half" in doc.toPlainText() and "\ud800" not in rendered.plain


def test_deep_nesting_falls_back_to_the_whole_text_as_plain_paragraphs() -> None:
    deep = ">" * (MAX_NESTING + 5) + " the end"
    doc, _ = load(deep)
    assert doc.toPlainText() == deep  # nothing dropped, nothing quoted
    lists = "\n".join("  " * i + "- item" for i in range(MAX_NESTING + 5)) + "\n\nlast"
    doc, _ = load(lists)
    assert "last" in doc.toPlainText()


def test_a_message_over_the_size_bound_is_plain_text() -> None:
    big = "# not a heading\n\n" + "x" * MAX_MARKDOWN_CHARS
    doc, rendered = load(big)
    assert rendered.code_blocks == ()
    assert doc.toPlainText().startswith("# not a heading")
    assert doc.begin().blockFormat().headingLevel() == 0


def test_a_message_of_too_many_brackets_is_plain_text_unparsed() -> None:
    links = "[a](https://e.example) " * (MAX_BRACKETS + 1)
    doc, _ = load(links)
    assert _web_anchors(doc) == []
    assert doc.toPlainText() == links


def test_a_message_of_too_many_tokens_is_plain_text() -> None:
    spans = "`a` " * (MAX_TOKENS // 2)
    doc, rendered = load(spans)
    assert "<code" not in rendered.html
    assert doc.toPlainText() == spans


@pytest.mark.parametrize(
    "pathological",
    # A line of only "*" is a rule and one of only "`" opens a fence: a letter first.
    ["[" * 10_000, ">" * 10_000, "a" + "*" * 5_000, "*a " * 3_000, "![" * 5_000, "a" + "`" * 5_000],
)
def test_pathological_markdown_renders_its_text(pathological: str) -> None:
    doc, rendered = load(pathological)
    assert rendered.plain == pathological
    assert doc.toPlainText().replace("\n", "").replace(" ", "") == pathological.replace(" ", "")
