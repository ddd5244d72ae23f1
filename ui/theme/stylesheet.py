"""The window's stylesheet: quiet surfaces, readable bubbles, one accent colour, in a light
and a dark variant (`ui.theme.style`), slim overlay-style scrollbars, and every quiet text colour
computed from the palette and held to contrast (`ui.theme.palette_text`, decision 0205).

Only the custom pieces are styled (bubbles, cards, header, banners, status line, the
sidebar's and the transcript's scrollbars), plus the push buttons and toolbar buttons, so
that every one of them can draw the focus ring (decision 0186); other standard widgets keep
the platform's look and palette. Sizes follow the application font (the font-size setting,
`ui.theme.theme`): the conversation title is relative to it.
"""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication, QPalette

from ui.theme.palette_text import LARGE, blend, painted_colours, readable, window_quiet
from ui.theme.style import ACCENT, FOCUS_WIDTH, focus_ring, is_dark

SCROLLBAR_WIDTH = 10  # px: the bar's whole breadth; the handle is inset within it
TITLE_SCALE = 1.4  # the conversation title against the body text


def scrollbars(palette: QPalette) -> str:
    """Thin bars with a rounded handle over a transparent groove and no arrow buttons, for
    the sidebar and the transcript (the handle keeps 3:1 against the base: WCAG 1.4.11)."""
    roles = QPalette.ColorRole
    base = palette.color(QPalette.ColorGroup.Active, roles.Base)
    text = palette.color(QPalette.ColorGroup.Active, roles.Text)
    handle = readable(blend(text, base, 0.35), (base,), LARGE).name()
    hover = readable(blend(text, base, 0.55), (base,), LARGE).name()
    bars = ("#sessionList QScrollBar", "#transcript QScrollBar")

    def each(suffix: str) -> str:
        return ", ".join(bar + suffix for bar in bars)

    return f"""
{each(":vertical")} {{
    background: transparent; width: {SCROLLBAR_WIDTH}px; margin: 2px 1px; border: none;
}}
{each(":horizontal")} {{
    background: transparent; height: {SCROLLBAR_WIDTH}px; margin: 1px 2px; border: none;
}}
{each("::handle:vertical")} {{ background: {handle}; border-radius: 3px; min-height: 32px; }}
{each("::handle:horizontal")} {{ background: {handle}; border-radius: 3px; min-width: 32px; }}
{each("::handle:hover")}, {each("::handle:pressed")} {{ background: {hover}; }}
{each("::add-line")}, {each("::sub-line")} {{
    width: 0; height: 0; border: none; background: none;
}}
{each("::add-page")}, {each("::sub-page")} {{ background: transparent; }}
"""


def stylesheet(dark: bool | None = None, palette: QPalette | None = None) -> str:
    if palette is None:
        palette = QGuiApplication.palette() if QGuiApplication.instance() else QPalette()
    c = painted_colours(palette, is_dark(palette) if dark is None else dark)
    ring = focus_ring(palette).name()
    quiet = window_quiet(palette).name()
    font = QGuiApplication.font() if QGuiApplication.instance() else None
    body_pt = font.pointSizeF() if font is not None and font.pointSizeF() > 0 else 10.0
    title_pt = round(body_pt * TITLE_SCALE, 1)
    return f"""
QPushButton {{
    border: 1px solid palette(mid);
    border-radius: 6px;
    padding: 5px 14px;
    background: palette(button);
    color: palette(button-text);
}}
QPushButton:hover {{ background: palette(midlight); }}
QPushButton:pressed {{ background: palette(mid); }}
QPushButton:disabled {{ color: {quiet}; }}
QPushButton:focus {{ border: {FOCUS_WIDTH}px solid {ring}; padding: 4px 13px; }}
QToolButton:focus {{ border: {FOCUS_WIDTH}px solid {ring}; border-radius: 4px; }}
#sidebar {{ background: palette(window); }}
#toolbar {{ spacing: 4px; padding: 3px 8px; border-bottom: 1px solid palette(midlight); }}
#toolbar QToolButton {{
    padding: 4px 10px;
    spacing: 6px;
    border: 1px solid transparent;
    border-radius: 6px;
}}
#toolbar QToolButton:hover {{ background: palette(midlight); }}
#toolbar QToolButton:pressed {{ background: palette(mid); }}
#toolbar QToolButton:disabled {{ color: {quiet}; }}
#toolbar QToolButton:focus {{ border: {FOCUS_WIDTH}px solid {ring}; padding: 3px 9px; }}
#bannerBox {{ background: palette(base); }}
#sessionList {{
    border: 1px solid transparent;
    background: palette(base);
    border-radius: 8px;
    outline: 0;
}}
#sessionList:focus {{ border: 1px solid {ring}; }}
#sessionList::item:hover {{ background: palette(alternate-base); border-radius: 6px; }}
#sessionList::item:selected {{ background: {ACCENT}; border-radius: 6px; }}
#sidebarEmpty {{ color: {quiet}; padding: 24px; }}
QLineEdit, QPlainTextEdit {{ placeholder-text-color: {quiet}; }}
QLabel:disabled {{ color: {quiet}; }}
#filter {{
    padding: 5px 8px;
    border: 1px solid palette(mid);
    border-radius: 6px;
    background: palette(base);
}}
#filter:focus {{ border: {FOCUS_WIDTH}px solid {ring}; padding: 4px 7px; }}
#paneHeader {{ border-bottom: 1px solid palette(midlight); background: palette(base); }}
#paneTitle {{ font-size: {title_pt}pt; font-weight: 600; }}
#paneSubtitle {{ color: {quiet}; }}
#paneSlot, #conversationPane, #transcript, #transcriptScroll {{ background: palette(base); }}
#emptyState {{ color: {quiet}; background: palette(base); }}
#banner {{
    background: {c["banner_bg"]};
    color: {c["banner_fg"]};
    border: 1px solid {c["banner_border"]};
    border-radius: 6px;
    padding: 8px 10px;
}}
#offlineBanner, #insecureBanner, #damageBanner {{
    background: {c["offline_bg"]};
    color: {c["offline_fg"]};
    font-weight: 600;
    padding: 8px 16px;
}}
#userBubble {{ background: {ACCENT}; border-radius: 12px; }}
#userBubble QLabel {{ color: white; }}
#assistantBubble {{ background: {c["assistant_bg"]}; border-radius: 12px; }}
#assistantBubble QLabel {{ color: {c["assistant_fg"]}; }}
#toolCard, #approvalCard, #artifactCard {{
    border: 1px solid {c["card_border"]};
    border-radius: 8px;
    background: {c["card_bg"]};
}}
#approvalCard {{ border-color: {c["approval_border"]}; background: {c["approval_bg"]}; }}
#cardHeading {{ font-weight: 600; color: {c["heading"]}; }}
#cardDetail {{ color: {c["detail"]}; }}
#toolOutput {{ font-family: monospace; color: {c["tool"]}; }}
#note {{ color: {c["note"]}; font-style: italic; }}
#errorNote {{ color: {c["error"]}; }}
#jumpToLatest {{
    background: {ACCENT};
    color: white;
    border-radius: 14px;
    padding: 5px 14px;
    font-weight: 600;
}}
#runIndicator {{ color: {c["running"]}; font-weight: 600; }}
#composerBar {{ border-top: 1px solid palette(midlight); background: palette(window); }}
#composer {{
    border: 1px solid palette(mid);
    border-radius: 8px;
    padding: 4px;
    background: palette(base);
}}
#composer:focus {{ border: {FOCUS_WIDTH}px solid {ring}; padding: 3px; }}
#sendButton, #stopButton {{ min-width: 76px; padding: 6px 12px; }}
#sendButton:focus, #stopButton:focus {{ padding: 5px 11px; }}
#syncStatus {{ color: palette(window-text); padding: 2px 6px; }}
#syncStatus[error="true"] {{ color: {c["error"]}; }}
#whereLabel {{ color: palette(window-text); padding: 2px 8px; }}
{scrollbars(palette)}"""
