"""Diff view: side-by-side text (linked scrolling, full-width line backgrounds, intra-line highlights) and the
semantic table (field path, left, right, category; framework-specific rows highlighted; category filter;
columns sized to their content, long values elided in the middle with the whole value as a tooltip).
The diff itself comes from studio.diff; this module only paints it. For the file against the server, the shell
passes both sides through studio.diff.server.server_diff_texts (one canonical layout) and its changes."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontDatabase, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from studio.config import ConfigDocument, ParseError
from studio.diff import CATEGORIES, semantic_diff, side_by_side

COLORS = {"delete": QColor(255, 80, 80, 60), "insert": QColor(80, 200, 80, 60), "replace": QColor(255, 200, 60, 60)}
SPAN = {"delete": QColor(255, 80, 80, 130), "insert": QColor(80, 200, 80, 130), "replace": QColor(255, 170, 0, 130)}


def _utf16(text: str, offset: int) -> int:
    """Qt counts UTF-16 code units; the diff counts code points."""
    return len(text[:offset].encode("utf-16-le")) // 2


class DiffView(QWidget):
    MAX_VALUE_COLUMN = 420  # px: a longer value is elided (its tooltip has all of it)

    def __init__(self, left: str, right: str, left_name: str = "left", right_name: str = "right", parent=None,
                 changes: list | None = None) -> None:
        super().__init__(parent)
        self.rows = side_by_side(left, right)
        self.left = self._pane()
        self.right = self._pane()
        self.left.verticalScrollBar().valueChanged.connect(self.right.verticalScrollBar().setValue)
        self.right.verticalScrollBar().valueChanged.connect(self.left.verticalScrollBar().setValue)
        self._fill()
        try:
            if changes is not None:  # computed by the caller over parsed messages (file vs server)
                self.changes = list(changes)
            else:
                self.changes = semantic_diff(ConfigDocument.parse(left).to_message(), ConfigDocument.parse(right).to_message())
            note = ""
        except ParseError as e:
            self.changes = []
            note = f"semantic diff unavailable: {e.message} (line {e.line})"
        self.category = QComboBox()
        self.category.addItem("all categories")
        self.category.addItems(list(CATEGORIES))
        self.category.currentTextChanged.connect(self._fill_table)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["field", left_name, right_name, "category"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self._fill_table()
        head = QHBoxLayout()
        head.addWidget(QLabel(f"{left_name}  ↔  {right_name}   {note}"), 1)
        self.notes = QLabel("")
        self.notes.setWordWrap(True)
        self.apply_button = QPushButton("Apply to the config")
        self.apply_button.setVisible(False)
        head.addWidget(self.apply_button)
        head.addWidget(self.category)
        texts = QSplitter(Qt.Orientation.Horizontal)
        texts.addWidget(self.left)
        texts.addWidget(self.right)
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(texts)
        outer.addWidget(self.table)
        outer.setSizes([500, 220])
        lay = QVBoxLayout(self)
        lay.addLayout(head)
        lay.addWidget(self.notes)
        lay.addWidget(outer)

    def set_plan(self, plan, apply) -> None:
        """A framework conversion: show its notes and renames, and offer to apply it as edits."""
        lines = [f"• {n}" for n in plan.notes] + [f"• rename {a} to {b} in each version folder" for a, b in plan.renames]
        self.notes.setText("\n".join(lines))
        self.apply_button.setVisible(True)
        self.apply_button.clicked.connect(lambda: (apply(), self.apply_button.setEnabled(False)))

    def _pane(self) -> QPlainTextEdit:
        p = QPlainTextEdit()
        p.setReadOnly(True)
        p.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        p.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        return p

    def _fill(self) -> None:
        left_lines, right_lines = [], []
        left_sel, right_sel = [], []
        for r in self.rows:
            left_lines.append(r.left if r.left is not None else "")
            right_lines.append(r.right if r.right is not None else "")
        self.left.setPlainText("\n".join(left_lines))
        self.right.setPlainText("\n".join(right_lines))
        for i, r in enumerate(self.rows):
            if r.tag == "equal":
                continue
            for pane, text, spans, sels, present in (
                (self.left, r.left, r.left_spans, left_sel, r.left is not None),
                (self.right, r.right, r.right_spans, right_sel, r.right is not None),
            ):
                block = pane.document().findBlockByNumber(i)
                s = QTextEdit.ExtraSelection()
                s.format.setBackground(COLORS[r.tag] if present else QColor(128, 128, 128, 40))
                s.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
                s.cursor = QTextCursor(block)
                sels.append(s)
                for a, b in spans:
                    span = QTextEdit.ExtraSelection()
                    fmt = QTextCharFormat()
                    fmt.setBackground(SPAN[r.tag])
                    span.format = fmt
                    c = QTextCursor(block)
                    c.setPosition(block.position() + _utf16(text, a))
                    c.setPosition(block.position() + _utf16(text, b), QTextCursor.MoveMode.KeepAnchor)
                    span.cursor = c
                    sels.append(span)
        self.left.setExtraSelections(left_sel)
        self.right.setExtraSelections(right_sel)

    def _fill_table(self, *_args) -> None:
        cat = self.category.currentText()
        rows = [c for c in self.changes if cat == "all categories" or c.category == cat]
        self.table.setRowCount(len(rows))
        for i, c in enumerate(rows):
            cells = [c.path, c.left or "(unset)", c.right or "(unset)",
                     c.category + (f" ({', '.join(c.frameworks)})" if c.frameworks else "")]
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if c.category == "framework":
                    item.setBackground(QColor(142, 68, 173, 50))
                self.table.setItem(i, j, item)
        self._size_columns()

    def _size_columns(self) -> None:
        """Columns as wide as their content (field path and category whole; values up to MAX_VALUE_COLUMN, then
        elided with a tooltip); the user may still drag them."""
        header = self.table.horizontalHeader()
        self.table.resizeColumnsToContents()
        for j in (1, 2):
            if self.table.columnWidth(j) > self.MAX_VALUE_COLUMN:
                self.table.setColumnWidth(j, self.MAX_VALUE_COLUMN)
        for j in range(self.table.columnCount()):
            header.setSectionResizeMode(j, QHeaderView.ResizeMode.Interactive)
