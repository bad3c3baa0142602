"""The server log: streams lines (from any thread) into a bounded view that follows the tail, with a filter box,
severity colours (Triton's E/W/I prefixes, the studio's own notes) and copy. Memory is bounded twice: the view
keeps at most `max_lines` blocks and the history used for re-filtering keeps at most `history` lines."""

from __future__ import annotations

import collections
import threading

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontDatabase, QGuiApplication, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


def severity(line: str) -> str:
    """error | warning | studio | info, from Triton's glog prefix (E1203 …, W1203 …) or the studio's notes."""
    if line[:1] == "E" and line[1:5].isdigit() or "Traceback" in line or line.startswith(("ERROR", "Error")):
        return "error"
    if line[:1] == "W" and line[1:5].isdigit():
        return "warning"
    if line.startswith("studio:") or line.startswith("pull:"):
        return "studio"
    return "info"


class LogView(QWidget):
    sig_line_count = Signal(int)
    """Lines shown after a flush (for tests and a status bar)."""

    def __init__(self, parent=None, max_lines: int = 5000, history: int = 20000) -> None:
        super().__init__(parent)
        self._pending: collections.deque[str] = collections.deque(maxlen=history)
        self._history: collections.deque[str] = collections.deque(maxlen=history)
        self._lock = threading.Lock()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("filter the log (text, case-insensitive)")
        self.filter.setClearButtonEnabled(True)
        self.follow = QCheckBox("follow")
        self.follow.setChecked(True)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("copy the selected lines, or all shown lines when nothing is selected")
        self.clear_button = QPushButton("Clear")
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(max_lines)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.filter, 1)
        row.addWidget(self.follow)
        row.addWidget(self.copy_button)
        row.addWidget(self.clear_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.text, 1)
        self._timer = QTimer(self)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self.flush)
        self._timer.start()
        self.filter.textChanged.connect(lambda _t: self._refilter())
        self.copy_button.clicked.connect(self.copy)
        self.clear_button.clicked.connect(self.clear)

    # -- feeding -------------------------------------------------------------------------------------------
    def append_line(self, line: str) -> None:
        """Any thread: queued, shown at the next flush (every 100 ms), so a chatty server never floods the UI."""
        with self._lock:
            self._pending.append(line)

    def flush(self) -> None:
        with self._lock:
            if not self._pending:
                return
            lines = list(self._pending)
            self._pending.clear()
        self._history.extend(lines)
        needle = self.filter.text().strip().lower()
        self._write([ln for ln in lines if not needle or needle in ln.lower()])

    def _formats(self) -> dict[str, QTextCharFormat]:
        dark = self.palette().color(QPalette.ColorRole.Base).lightness() < 128
        colours = {
            "error": QColor("#ff6b6b" if dark else "#c62828"),
            "warning": QColor("#ffb74d" if dark else "#a15c00"),
            "studio": QColor("#64b5f6" if dark else "#1565c0"),
        }
        out = {}
        for k in ("error", "warning", "studio", "info"):
            f = QTextCharFormat()
            if k in colours:
                f.setForeground(colours[k])
            else:
                f.setForeground(self.palette().color(QPalette.ColorRole.Text))
            out[k] = f
        return out

    def _write(self, lines: list[str]) -> None:
        if not lines:
            return
        bar = self.text.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 2
        formats = self._formats()
        cursor = QTextCursor(self.text.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        for ln in lines:
            if not self.text.document().isEmpty():
                cursor.insertBlock()
            cursor.insertText(ln, formats[severity(ln)])
        cursor.endEditBlock()
        if self.follow.isChecked() or at_end:
            bar.setValue(bar.maximum())
        self.sig_line_count.emit(self.text.blockCount())

    def _refilter(self) -> None:
        self.flush()
        self.text.clear()
        needle = self.filter.text().strip().lower()
        self._write([ln for ln in self._history if not needle or needle in ln.lower()])

    # -- user actions ----------------------------------------------------------------------------------------
    def shown_text(self) -> str:
        return self.text.toPlainText()

    def toPlainText(self) -> str:  # noqa: N802 - the QPlainTextEdit name callers know
        """The shown lines, pending ones included."""
        self.flush()
        return self.text.toPlainText()

    def copy(self) -> None:
        sel = self.text.textCursor().selectedText().replace("\u2029", "\n")
        QGuiApplication.clipboard().setText(sel or self.shown_text())

    def clear(self) -> None:
        with self._lock:
            self._pending.clear()
        self._history.clear()
        self.text.clear()

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if event.key() == Qt.Key.Key_F and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.filter.setFocus()
            return
        super().keyPressEvent(event)
