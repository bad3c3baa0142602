"""The validation panel: the findings of one document (severity, message, where, rule) with "apply fix".
It observes the findings the document controller publishes; activating a finding is a signal the shell wires."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

ROLE_FINDING = Qt.ItemDataRole.UserRole + 2


class FindingsPanel(QWidget):
    sig_activated = Signal(object)
    """A finding was double-clicked (jump to it)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["", "message", "where", "rule"])
        self.tree.setRootIsDecorated(False)
        self.tree.setColumnWidth(0, 28)
        self.tree.setColumnWidth(1, 520)
        self.tree.itemDoubleClicked.connect(lambda item, _c: self.sig_activated.emit(item.data(0, ROLE_FINDING)))
        self.tree.currentItemChanged.connect(self._on_current)
        self.fix_button = QPushButton("Apply fix")
        self.fix_button.setEnabled(False)
        self.summary = QLabel("")
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
            where = f"{f.line}:{f.column}" if f.line else (f.path or "")
            item = QTreeWidgetItem(["", f.message + (f"  — {f.hint}" if f.hint else ""), where, f.rule])
            item.setIcon(0, self.icons.get(f.severity, QIcon()))
            item.setToolTip(1, f.message + (f"\nhint: {f.hint}" if f.hint else ""))
            item.setData(0, ROLE_FINDING, f)
            self.tree.addTopLevelItem(item)
        c = {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}
        self.summary.setText(f"{c['error']} error(s), {c['warning']} warning(s), {c['info']} note(s)")

    def current_finding(self):
        item = self.tree.currentItem()
        return item.data(0, ROLE_FINDING) if item else None

    def _on_current(self, item, _prev) -> None:
        f = item.data(0, ROLE_FINDING) if item else None
        self.fix_button.setEnabled(bool(f is not None and f.edits))
