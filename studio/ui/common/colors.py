"""Colours derived from the widget's QPalette (light or dark): a hue the studio chooses, made
readable on the palette's background (WCAG contrast ratio), so every colour follows a palette change."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette


def luminance(c: QColor) -> float:
    def ch(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * ch(c.redF()) + 0.7152 * ch(c.greenF()) + 0.0722 * ch(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two opaque colours (1 to 21)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """a blended towards b by t (0: a, 1: b), opaque."""
    return QColor.fromRgbF(a.redF() + (b.redF() - a.redF()) * t, a.greenF() + (b.greenF() - a.greenF()) * t,
                           a.blueF() + (b.blueF() - a.blueF()) * t)


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def readable(color: str | QColor, background: QColor, ratio: float = 4.5) -> QColor:
    """`color`'s hue, lightened (on a dark background) or darkened (on a light one) until it reaches `ratio`."""
    c = QColor(color)
    if contrast(c, background) >= ratio:
        return c
    h, s, lightness, _a = c.getHslF()
    h = max(h, 0.0)
    up = luminance(background) < 0.18
    step = 0.02 if up else -0.02
    while 0.0 <= lightness <= 1.0:
        lightness = min(1.0, max(0.0, lightness + step))
        c = QColor.fromHslF(h, s, lightness)
        if contrast(c, background) >= ratio or lightness in (0.0, 1.0):
            break
    return c


def base(palette: QPalette) -> QColor:
    return palette.color(QPalette.ColorRole.Base)


def dimmed(palette: QPalette, role_bg: QPalette.ColorRole = QPalette.ColorRole.Window) -> QColor:
    """Text that says "unset" or "does not apply": between the text and its background, still readable."""
    bg = palette.color(role_bg)
    fg = palette.color(QPalette.ColorRole.WindowText if role_bg == QPalette.ColorRole.Window else QPalette.ColorRole.Text)
    return readable(mix(fg, bg, 0.4), bg, 4.5)


def current_line(palette: QPalette) -> QColor:
    """The current line's background: a tint of Base towards Text (the highlighter's colours read on it too)."""
    return mix(base(palette), palette.color(QPalette.ColorRole.Text), 0.07)


SEVERITY_HUES = {"error": "#d0302a", "warning": "#b57900", "info": "#2f6fd6"}


def severity_on(severity: str, background: QColor, ratio: float = 4.5) -> QColor:
    """The severity's hue made readable on `background`."""
    return readable(SEVERITY_HUES.get(severity, SEVERITY_HUES["error"]), background, ratio)


def severity_color(palette: QPalette, severity: str, ratio: float = 4.5) -> QColor:
    """The severity's hue made readable on the palette's Base (text fields, tables)."""
    return severity_on(severity, base(palette), ratio)
