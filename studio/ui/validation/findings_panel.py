"""The validation panel: the findings of one document (severity, message, where, rule) with "apply fix".
It observes the findings the document controller publishes; activating a finding is a signal the shell wires.
Colours come from the palette: the summary and each row's "where" take a severity colour made readable on the
panel's background, recomputed when the palette changes (dark mode)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QIcon, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.ui.common.colors import severity_on

ROLE_FINDING = Qt.ItemDataRole.UserRole + 2



class FindingsPanel(QWidget):
    sig_activated = Signal(object)
    """A finding was double-clicked (jump to it)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["", "message", "where", "rule"])
        self.tree.setRootIsDecorated(False)
        header = self.tree.header()  # the message takes the width left (elided, whole in its tooltip): no scrollbar
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree.itemDoubleClicked.connect(lambda item, _c: self.sig_activated.emit(item.data(0, ROLE_FINDING)))
        self.tree.currentItemChanged.connect(self._on_current)
        self.fix_button = QPushButton("Apply fix")
        self.fix_button.setEnabled(False)
        self.summary = QLabel("")
        self.summary.setObjectName("findings_summary")
        self._counts = {"error": 0, "warning": 0, "info": 0}
        bar = QHBoxLayout()
        bar.addWidget(self.summary, 1)
        bar.addWidget(self.fix_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(bar)
        lay.addWidget(self.tree)
        style = self.style()
        self.icons = {
            "error": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical),
            "warning": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning),
            "info": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxInformation),
        }

    def set_findings(self, findings: list) -> None:
        self.tree.clear()
        order = {"error": 0, "warning": 1, "info": 2}
        for f in sorted(findings, key=lambda f: (order.get(f.severity, 3), f.line or 0)):
            where = (f"{f.line}:{f.column}" if f.column else str(f.line)) if f.line else (f.path or "")
            item = QTreeWidgetItem(["", f.message + (f"  — {f.hint}" if f.hint else ""), where, f.rule])
            item.setIcon(0, self.icons.get(f.severity, QIcon()))
            item.setToolTip(1, f.message + (f"\nhint: {f.hint}" if f.hint else ""))
            item.setData(0, ROLE_FINDING, f)
            self.tree.addTopLevelItem(item)
        c = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
        self._counts = c
        self.summary.setText(f"{c['error']} error(s), {c['warning']} warning(s), {c['info']} note(s)")
        self._recolor()

    def changeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._recolor()

    def _recolor(self) -> None:
        """The summary in the worst severity's colour (the palette's text colour when there is none), each row's
        "where" in its severity's colour: readable on this palette's window and base colours."""
        pal = self.palette()
        worst = next((s for s in ("error", "warning") if self._counts.get(s)), None)
        own = QPalette()
        own.setResolveMask(0)
        if worst is not None:
            own.setColor(QPalette.ColorRole.WindowText, severity_on(worst, pal.color(QPalette.ColorRole.Window)))
        self.summary.setPalette(own)
        base = self.tree.palette().color(QPalette.ColorRole.Base)
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            f = item.data(0, ROLE_FINDING)
            item.setForeground(2, QBrush(severity_on(f.severity, base)) if f is not None else QBrush())

    def summary_color(self) -> QColor:
        return self.summary.palette().color(QPalette.ColorRole.WindowText)

    def current_finding(self):
        item = self.tree.currentItem()
        return item.data(0, ROLE_FINDING) if item else None

    def _on_current(self, item, _prev) -> None:
        f = item.data(0, ROLE_FINDING) if item else None
        self.fix_button.setEnabled(bool(f is not None and f.edits))
