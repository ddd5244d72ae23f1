"""The window's colours: one accent, the light and dark variants' custom colours (the
stylesheet, `ui.theme.stylesheet`, and the transcript's delegate paint with them), a dark palette,
and the contrast arithmetic. Which variant applies follows the theme setting (`ui.theme.theme`:
System follows the system's colour scheme, Light and Dark force one).

Keyboard focus is always visible (decision 0186): a 2 px ring in `focus_ring`'s colour on
buttons, toolbar buttons, the search box, the composer and the sidebar list (whose current
row gets its own ring from `ui.sidebar.delegate`). The colour comes from the palette (its
highlight) and is checked for 3:1 against the surfaces it is drawn on (WCAG 2.2, non-text
contrast); a palette whose highlight is too faint falls back to its text colour.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette

ACCENT = "#2863cf"  # white on it: 5.6:1 (small text on a selected row stays AA)
#: The least contrast a focus indicator needs against what surrounds it (WCAG 1.4.11).
FOCUS_CONTRAST = 3.0
FOCUS_WIDTH = 2

_LIGHT = {
    "assistant_bg": "#eef0f4",
    "assistant_fg": "#1d2330",
    "card_border": "#d5d9e0",
    "card_bg": "#fafbfc",
    "approval_border": "#e3b341",
    "approval_bg": "#fffaf0",
    "heading": "#1d2330",
    "detail": "#4a5261",
    "tool": "#333a46",
    "note": "#6b7280",
    "error": "#b42318",
    "banner_bg": "#fff4e5",
    "banner_fg": "#6b3d00",
    "banner_border": "#f0c36d",
    "offline_bg": "#b42318",
    "offline_fg": "#ffffff",
    "running": "#2e9d5b",
}
_DARK = {
    "assistant_bg": "#2b2f38",
    "assistant_fg": "#e6e8ec",
    "card_border": "#3b414d",
    "card_bg": "#23272e",
    "approval_border": "#b8902e",
    "approval_bg": "#2e2a1f",
    "heading": "#e6e8ec",
    "detail": "#b4bac6",
    "tool": "#cfd4dc",
    "note": "#9aa1ad",
    "error": "#ff8a80",
    "banner_bg": "#3a2f1c",
    "banner_fg": "#f5d9a8",
    "banner_border": "#7a5b22",
    "offline_bg": "#8c1d18",
    "offline_fg": "#ffffff",
    "running": "#5fd08f",
}


#: The application property naming the theme chosen in the settings ("light", "dark";
#: unset or "system": follow the system). Set by `ui.theme.theme.apply_appearance`.
THEME_PROPERTY = "convergeTheme"


def is_dark(palette: QPalette | None = None) -> bool:
    """Dark when the user chose Dark; with System, when the system says so, or when the
    palette's window colour is dark."""
    app = QGuiApplication.instance()
    if isinstance(app, QGuiApplication):
        chosen = app.property(THEME_PROPERTY)
        if chosen in ("light", "dark"):
            return bool(chosen == "dark")
        scheme = app.styleHints().colorScheme()
        if scheme == Qt.ColorScheme.Dark:
            return True
        if scheme == Qt.ColorScheme.Light:
            return False
        palette = palette or app.palette()
    if palette is None:
        return False
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def luminance(color: QColor) -> float:
    """WCAG 2's relative luminance of an sRGB colour."""

    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2's contrast ratio of two colours, 1 to 21."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def focus_ring(palette: QPalette, *backgrounds: QColor) -> QColor:
    """The focus ring's colour on `backgrounds` (default: the window, base and button
    colours): the palette's highlight when it has 3:1 against each of them, else its text
    colour, else whichever of black and white contrasts most."""
    roles = QPalette.ColorRole
    group = QPalette.ColorGroup.Active
    surfaces = backgrounds or tuple(
        palette.color(group, role) for role in (roles.Window, roles.Base, roles.Button)
    )
    candidates = [palette.color(group, roles.Highlight), palette.color(group, roles.WindowText)]
    for color in candidates:
        if min(contrast(color, surface) for surface in surfaces) >= FOCUS_CONTRAST:
            return QColor(color)
    black, white = QColor("#000000"), QColor("#ffffff")
    return max(
        (black, white), key=lambda color: min(contrast(color, surface) for surface in surfaces)
    )


def row_focus_ring(palette: QPalette, selected: bool) -> QColor:
    """The ring around the sidebar's current row: on a selected row (the accent) the
    highlighted-text colour, on another row `focus_ring` against the list's base."""
    if selected:
        accent = QColor(ACCENT)
        light = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.HighlightedText)
        return (
            QColor(light)
            if contrast(light, accent) >= FOCUS_CONTRAST
            else focus_ring(palette, accent)
        )
    return focus_ring(palette, palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.Base))


def dark_palette() -> QPalette:
    """A dark palette for platforms that report no colour scheme (and the screenshots)."""
    palette = QPalette()
    roles = QPalette.ColorRole
    for role, color in (
        (roles.Window, "#1e2127"),
        (roles.WindowText, "#e6e8ec"),
        (roles.Base, "#181a1f"),
        (roles.AlternateBase, "#262a31"),
        (roles.Text, "#e6e8ec"),
        (roles.Button, "#2a2e36"),
        (roles.ButtonText, "#e6e8ec"),
        (roles.Highlight, ACCENT),
        (roles.HighlightedText, "#ffffff"),
        (roles.ToolTipBase, "#2a2e36"),
        (roles.ToolTipText, "#e6e8ec"),
        (roles.PlaceholderText, "#8a909c"),
        (roles.Light, "#3a3f48"),
        (roles.Midlight, "#30343c"),
        (roles.Mid, "#6b717d"),
        (roles.Dark, "#121418"),
        (roles.Shadow, "#000000"),
        (roles.Link, "#7aa7ff"),
    ):
        palette.setColor(role, QColor(color))
    disabled = QPalette.ColorGroup.Disabled
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        palette.setColor(disabled, role, QColor("#6b717d"))
    return palette


def colours(dark: bool) -> dict[str, str]:
    """The custom colours of one variant (the transcript's delegate paints with them)."""
    return dict(_DARK if dark else _LIGHT)
