"""Text colours computed from the palette and held to WCAG AA contrast (decision 0205).

Every quiet or custom text colour the window paints goes through here: the sidebar's
secondary line and date headers, the transcript's notes, errors, bubbles and cards, the
banners, placeholders and empty states. Each starts from a palette role (or the variant's
table colour in `ui.theme.style`) and is moved towards black or white, in small steps, until it
has the contrast the rule asks for against the surface it is drawn on: 4.5:1 for body text,
3:1 for large text. A user's own theme (a dark GTK theme whose text and base are close)
therefore still gets readable words, only a little less quiet than intended.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType

from PySide6.QtGui import QColor, QPalette

from ui.theme.style import colours, contrast, is_dark

BODY = 4.5  # WCAG 1.4.3, normal text
LARGE = 3.0  # WCAG 1.4.3, large text (and the quiet headers are held to BODY anyway)
QUIET_ALPHA = 0.62  # how much of the text colour a secondary line keeps
HEADER_ALPHA = 0.55

#: Each custom foreground of `ui.theme.style.colours` and the backgrounds it is drawn on ("base":
#: the palette's base, where the transcript's notes and errors sit).
FOREGROUNDS: dict[str, tuple[str, ...]] = {
    "assistant_fg": ("assistant_bg",),
    "heading": ("card_bg", "approval_bg"),
    "detail": ("card_bg", "approval_bg"),
    "tool": ("card_bg", "approval_bg"),
    "note": ("base",),
    "error": ("base",),
    "banner_fg": ("banner_bg",),
    "offline_fg": ("offline_bg",),
    "running": ("base",),
}


def blend(fg: QColor, bg: QColor, alpha: float) -> QColor:
    """`fg` at `alpha` over `bg`, as one opaque colour (what the eye gets)."""
    return QColor.fromRgbF(
        fg.redF() * alpha + bg.redF() * (1 - alpha),
        fg.greenF() * alpha + bg.greenF() * (1 - alpha),
        fg.blueF() * alpha + bg.blueF() * (1 - alpha),
    )


def readable(fg: QColor, backgrounds: tuple[QColor, ...], ratio: float = BODY) -> QColor:
    """`fg` (made opaque), or the nearest step from it towards black or white that has
    `ratio` against every one of `backgrounds`."""
    fg = QColor(fg)
    fg.setAlphaF(1.0)
    surfaces = backgrounds or (QColor("#ffffff"),)

    def worst(color: QColor) -> float:
        return min(contrast(color, surface) for surface in surfaces)

    if worst(fg) >= ratio:
        return fg
    for step in range(1, 21):  # the smallest step towards either end that is enough
        for target in (QColor("#000000"), QColor("#ffffff")):
            candidate = blend(target, fg, step / 20)
            if worst(candidate) >= ratio:
                return candidate
    return max((QColor("#000000"), QColor("#ffffff")), key=worst)


def _group(active: bool) -> QPalette.ColorGroup:
    return QPalette.ColorGroup.Active if active else QPalette.ColorGroup.Inactive


def quiet_text(
    palette: QPalette,
    *,
    selected: bool = False,
    background: QColor | None = None,
    active: bool = True,
    alpha: float = QUIET_ALPHA,
    ratio: float = BODY,
) -> QColor:
    """A secondary line ("2 min ago", "Deleting…") on a list row: the row's text colour
    softened towards `background` (the list's base, or the selected row's accent)."""
    roles = QPalette.ColorRole
    text = palette.color(_group(active), roles.HighlightedText if selected else roles.Text)
    bg = background if background is not None else palette.color(_group(active), roles.Base)
    return readable(blend(text, bg, alpha), (bg,), ratio)


def header_text(palette: QPalette, *, active: bool = True) -> QColor:
    """A date header's colour in the sidebar (on the list's base), held to body contrast:
    it is small, even if bold."""
    return quiet_text(palette, active=active, alpha=HEADER_ALPHA, ratio=BODY)


def window_quiet(palette: QPalette) -> QColor:
    """Quiet words on the window or the base (empty states, a subtitle, a placeholder,
    disabled buttons' labels): readable on both."""
    roles = QPalette.ColorRole
    group = QPalette.ColorGroup.Active
    base, window = palette.color(group, roles.Base), palette.color(group, roles.Window)
    button = palette.color(group, roles.Button)
    text = palette.color(group, roles.Text)
    return readable(blend(text, base, QUIET_ALPHA), (base, window, button), BODY)


def painted_colours(palette: QPalette, dark: bool | None = None) -> Mapping[str, str]:
    """The variant's custom colours (`ui.theme.style.colours`; `dark` by default as the palette
    is) for this palette, each foreground held to body contrast against the surfaces it is
    drawn on. Every painted row asks, so the answer is kept per variant and base colour."""
    base = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.Base)
    return _painted(is_dark(palette) if dark is None else dark, base.rgba())


@functools.lru_cache(maxsize=8)
def _painted(dark: bool, base_rgba: int) -> Mapping[str, str]:
    table = colours(dark)
    base = QColor.fromRgba(base_rgba)
    result = dict(table)
    for key, surfaces in FOREGROUNDS.items():
        backs = tuple(base if name == "base" else QColor(table[name]) for name in surfaces)
        result[key] = readable(QColor(table[key]), backs, BODY).name()
    return MappingProxyType(result)
