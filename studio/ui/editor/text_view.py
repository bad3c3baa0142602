"""The text view of a config: pbtxt highlighting, line numbers, current line and bracket matching, inline error
underlines with tooltips, go to line. Typing goes to the controller (debounced) as undoable edits.

Every colour comes from the palette (studio.ui.editor.colors): the highlighter's hues made readable on Base, the
current line and bracket match as tints of Base, the gutter from Window; a palette change (dark mode) recolours
and re-highlights."""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QPainter,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from studio.ui.common.colors import base, current_line, dimmed, mix, readable, severity_color

_RULES = [
    (re.compile(r"\b[a-z_][a-z0-9_]*(?=\s*[:{<\[])"), "field"),
    (re.compile(r"\b[A-Z][A-Z0-9_]+\b"), "enum"),
    (re.compile(r"(?<![\w.])-?(?:0x[0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?f?|inf|nan)\b"), "number"),
    (re.compile(r"\b(?:true|false|True|False)\b"), "bool"),
    (re.compile(r"[{}\[\]<>]"), "bracket"),
    (re.compile(r"\"(?:[^\"\\\n]|\\.)*\"?|'(?:[^'\\\n]|\\.)*'?"), "string"),
    (re.compile(r"#.*$"), "comment"),
]


HUES = {
    "field": "#1f4fa3",
    "enum": "#7a2aa8",
    "number": "#1a7f37",
    "bool": "#b35c00",
    "string": "#a31515",
}
"""The highlighter's hues (as on a white page); each is made readable on the palette's Base colour."""


class PbtxtHighlighter(QSyntaxHighlighter):
    def __init__(self, document, palette: QPalette | None = None) -> None:
        super().__init__(document)
        self.formats: dict[str, QTextCharFormat] = {}
        self.set_palette(palette or QPalette())

    def set_palette(self, palette: QPalette) -> None:
        """Colours for this palette (its Base is the page); re-highlights the document when they change."""
        bg = current_line(palette)  # the darker page on a light palette, the lighter on a dark one: both read
        text = palette.color(QPalette.ColorRole.Text)
        colors = {name: readable(hue, bg) for name, hue in HUES.items()}
        colors["bracket"] = readable(mix(text, bg, 0.25), bg)
        colors["comment"] = readable(mix(text, bg, 0.45), bg)
        old = {n: f.foreground().color().name() for n, f in self.formats.items()}
        for name, color in colors.items():
            f = QTextCharFormat()
            f.setForeground(color)
            if name == "field":
                f.setFontWeight(QFont.Weight.DemiBold)
            if name == "comment":
                f.setFontItalic(True)
            self.formats[name] = f
        if old and old != {n: c.name() for n, c in colors.items()}:
            self.rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        # strings and comments win over everything inside them: paint them last
        for rx, name in _RULES:
            for m in rx.finditer(text):
                self.setFormat(m.start(), m.end() - m.start(), self.formats[name])


class _LineNumbers(QWidget):
    def __init__(self, editor: ConfigTextEdit) -> None:
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(self.editor.line_number_width(), 0)

    def paintEvent(self, event) -> None:  # noqa: N802
        self.editor.paint_line_numbers(event)


class ConfigTextEdit(QPlainTextEdit):
    sig_text_edited = Signal(str)
    """The user changed the text (debounced): parse it off the UI thread."""
    sig_text_committed = Signal(str)
    """Pending typing must reach the document now (flush: before save, undo, a fix or a test's assertion)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setUndoRedoEnabled(False)  # undo belongs to the document's QUndoStack
        self.highlighter = PbtxtHighlighter(self.document(), self.palette())
        self.colors: dict[str, QColor] = {}
        self._numbers = _LineNumbers(self)
        self._findings: list = []
        self._updating = False
        self._update_colors()
        self._debounce = QTimer(self, singleShot=True, interval=300)
        self._debounce.timeout.connect(lambda: self.sig_text_edited.emit(self.toPlainText()))
        self.blockCountChanged.connect(lambda _n: self._update_margin())
        self.updateRequest.connect(self._update_numbers)
        self.cursorPositionChanged.connect(self._refresh_selections)
        self.textChanged.connect(self._on_text_changed)
        self._update_margin()
        self.setMouseTracking(True)

    # -- colours ------------------------------------------------------------------------------------------------
    def _update_colors(self) -> None:
        pal = self.palette()
        bg, text = base(pal), pal.color(QPalette.ColorRole.Text)
        window = pal.color(QPalette.ColorRole.Window)
        gutter = mix(bg, window, 0.6)
        self.colors = {
            "current_line": current_line(pal),  # a tint of the page: every highlight colour still reads on it
            "bracket": mix(bg, pal.color(QPalette.ColorRole.Highlight), 0.3),
            "gutter": gutter,
            "line_number": dimmed(pal, QPalette.ColorRole.Window) if gutter == window else readable(mix(text, gutter, 0.45), gutter),
            "error_line_number": readable(severity_color(pal, "error"), gutter),
            **{sev: severity_color(pal, sev, 3.0) for sev in ("error", "warning", "info")},  # underlines: 3:1
        }
        self.highlighter.set_palette(pal)
        self._refresh_selections()
        self._numbers.update()

    def changeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._update_colors()

    # -- text in and out ----------------------------------------------------------------------------------------
    def set_text_preserving_cursor(self, text: str) -> None:
        """Show the document's text after an edit elsewhere (form, undo, disk): only the changed middle is
        replaced, so the cursor, the scroll position and the highlighting of untouched lines stay."""
        old = self.toPlainText()
        if text == old:
            return
        if not old:
            self._updating = True
            try:
                self.setPlainText(text)
            finally:
                self._updating = False
            return
        n = min(len(old), len(text))
        start = 0
        while start < n and old[start] == text[start]:
            start += 1
        end = 0
        while end < n - start and old[len(old) - 1 - end] == text[len(text) - 1 - end]:
            end += 1
        vscroll = self.verticalScrollBar().value()
        self._updating = True
        try:
            c = QTextCursor(self.document())
            c.setPosition(_utf16(old, start))
            c.setPosition(_utf16(old, len(old) - end), QTextCursor.MoveMode.KeepAnchor)
            c.insertText(text[start:len(text) - end])
        finally:
            self._updating = False
        if self.toPlainText() != text:  # a surrogate pair or line separator confused the offsets: start over
            self._updating = True
            try:
                self.setPlainText(text)
            finally:
                self._updating = False
        self.verticalScrollBar().setValue(vscroll)

    def _on_text_changed(self) -> None:
        if not self._updating:
            self._debounce.start()

    def flush(self) -> None:
        """Send pending typing now (before save, undo, or a test's assertion)."""
        self._debounce.stop()
        self.sig_text_committed.emit(self.toPlainText())

    # -- navigation ---------------------------------------------------------------------------------------------
    def go_to(self, line: int, column: int = 1) -> None:
        b = self.document().findBlockByNumber(max(0, line - 1))
        c = QTextCursor(b)
        c.movePosition(QTextCursor.MoveOperation.Right, n=max(0, min(column - 1, b.length() - 1)))
        self.setTextCursor(c)
        self.centerCursor()
        self.setFocus()

    # -- findings -----------------------------------------------------------------------------------------------
    def set_findings(self, findings: list) -> None:
        self._findings = [f for f in findings if f.line is not None]
        self._refresh_selections()

    def _finding_range(self, f) -> tuple[int, int]:
        b = self.document().findBlockByNumber(f.line - 1)
        text = b.text()
        start = max(0, (f.column or 1) - 1)
        m = re.match(r"[\w\"'.\-]+", text[start:])
        length = m.end() if m else max(1, len(text) - start)
        return b.position() + start, length

    def _refresh_selections(self) -> None:
        sels = []
        line = QTextEdit.ExtraSelection()
        line.format.setBackground(self.colors["current_line"])
        line.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        line.cursor = self.textCursor()
        line.cursor.clearSelection()
        sels.append(line)
        sels.extend(self._bracket_selections())
        for f in self._findings:
            if f.line - 1 >= self.document().blockCount():
                continue
            pos, length = self._finding_range(f)
            s = QTextEdit.ExtraSelection()
            s.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            s.format.setUnderlineColor(self.colors.get(f.severity, self.colors["error"]))
            s.format.setToolTip(f"{f.severity}: {f.message}")
            c = QTextCursor(self.document())
            c.setPosition(pos)
            c.setPosition(pos + length, QTextCursor.MoveMode.KeepAnchor)
            s.cursor = c
            sels.append(s)
        self.setExtraSelections(sels)

    def _bracket_selections(self) -> list:
        text = self.toPlainText()
        pos = self.textCursor().position()
        pairs = {"{": "}", "[": "]", "<": ">"}
        closers = {v: k for k, v in pairs.items()}
        for p in (pos, pos - 1):
            if 0 <= p < len(text) and (text[p] in pairs or text[p] in closers):
                match = _match_bracket(text, p)
                if match is None:
                    return []
                out = []
                for q in (p, match):
                    s = QTextEdit.ExtraSelection()
                    s.format.setBackground(self.colors["bracket"])
                    c = QTextCursor(self.document())
                    c.setPosition(q)
                    c.setPosition(q + 1, QTextCursor.MoveMode.KeepAnchor)
                    s.cursor = c
                    out.append(s)
                return out
        return []

    def event(self, e) -> bool:
        if e.type() == e.Type.ToolTip:
            c = self.cursorForPosition(e.pos())
            line, col = c.blockNumber() + 1, c.positionInBlock() + 1
            msgs = []
            for f in self._findings:
                if f.line == line:
                    start = f.column or 1
                    if start <= col <= start + 40:
                        msgs.append(f"{f.severity}: {f.message}" + (f"\nhint: {f.hint}" if f.hint else ""))
            if msgs:
                QToolTip.showText(e.globalPos(), "\n".join(msgs), self)
            else:
                QToolTip.hideText()
            return True
        return super().event(e)

    # -- line numbers -------------------------------------------------------------------------------------------
    def line_number_width(self) -> int:
        digits = max(3, len(str(self.blockCount())))
        return 10 + self.fontMetrics().horizontalAdvance("9") * digits

    def _update_margin(self) -> None:
        self.setViewportMargins(self.line_number_width(), 0, 0, 0)

    def _update_numbers(self, rect, dy) -> None:
        if dy:
            self._numbers.scroll(0, dy)
        else:
            self._numbers.update(0, rect.y(), self._numbers.width(), rect.height())

    def resizeEvent(self, e) -> None:  # noqa: N802
        super().resizeEvent(e)
        cr = self.contentsRect()
        self._numbers.setGeometry(QRect(cr.left(), cr.top(), self.line_number_width(), cr.height()))

    def paint_line_numbers(self, event) -> None:
        painter = QPainter(self._numbers)
        painter.fillRect(event.rect(), self.colors["gutter"])
        error_lines = {f.line for f in self._findings if f.severity == "error"}
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        bottom = top + round(self.blockBoundingRect(block).height())
        h = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and bottom >= event.rect().top():
                color = self.colors["error_line_number"] if (number + 1) in error_lines else self.colors["line_number"]
                painter.setPen(color)
                painter.drawText(0, top, self._numbers.width() - 5, h, Qt.AlignmentFlag.AlignRight, str(number + 1))
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
            number += 1
        painter.end()


def _utf16(text: str, index: int) -> int:
    """A code-point offset as Qt's UTF-16 position."""
    if text.isascii():
        return index
    return len(text[:index].encode("utf-16-le")) // 2


def _match_bracket(text: str, p: int) -> int | None:
    """The position of the bracket that matches the one at p (a plain scan: brackets inside strings count)."""
    pairs = {"{": "}", "[": "]", "<": ">"}
    closers = {v: k for k, v in pairs.items()}
    ch = text[p]
    if ch in pairs:
        want, step, other = pairs[ch], 1, ch
    else:
        want, step, other = closers[ch], -1, ch
    depth = 0
    i = p
    while 0 <= i < len(text):
        c = text[i]
        if c == other:
            depth += 1
        elif c == want:
            depth -= 1
            if depth == 0:
                return i
        i += step
    return None
