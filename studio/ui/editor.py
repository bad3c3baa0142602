"""A config editor: form and text side by side over one DocumentController, and the validation panel."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.ui.controller import DocumentController
from studio.ui.form import ConfigForm
from studio.ui.text_editor import ConfigTextEdit

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


class ConfigEditor(QWidget):
    sig_status = Signal(str)
    """A message for the status bar."""

    def __init__(self, controller: DocumentController, parent=None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.form = ConfigForm(controller)
        self.text = ConfigTextEdit()
        self.text.set_text_preserving_cursor(controller.text)
        self.findings = FindingsPanel()
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.form)
        top.addWidget(self.text)
        top.setSizes([520, 640])
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(top)
        outer.addWidget(self.findings)
        outer.setSizes([600, 160])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(outer)
        self.text.sig_text_edited.connect(lambda t: controller.set_text(t, source="text"))
        controller.sig_changed.connect(self._on_changed)
        controller.sig_findings.connect(self._on_findings)
        controller.sig_parse_error.connect(self._on_parse_error)
        self.findings.sig_activated.connect(self.jump_to)
        self.findings.fix_button.clicked.connect(self.apply_fix)
        self.form.sig_error.connect(self.sig_status.emit)
        if controller.parse_error is not None:
            self._on_parse_error(controller.parse_error)

    def _on_changed(self, source: str) -> None:
        if source != "text":
            self.text.set_text_preserving_cursor(self.controller.text)

    def _on_findings(self, findings: list) -> None:
        self.text.set_findings(findings)
        self.findings.set_findings(findings)

    def _on_parse_error(self, e) -> None:
        if e is not None:
            self.sig_status.emit(e.format(self.controller.path).splitlines()[0])

    def jump_to(self, finding) -> None:
        if finding is None:
            return
        if finding.line:
            self.text.go_to(finding.line, finding.column or 1)
        if finding.path:
            self.form.find_field(finding.path)

    def apply_fix(self) -> None:
        f = self.findings.current_finding()
        if f is None or not f.edits:
            return

        def fn(doc):
            for e in f.edits:
                e.apply(doc)

        try:
            self.controller.edit(f"fix: {f.rule}", fn)
        except Exception as e:  # noqa: BLE001 - shown to the user
            self.sig_status.emit(f"the fix could not be applied: {e}")

    def next_error(self) -> None:
        tree = self.findings.tree
        n = tree.topLevelItemCount()
        if not n:
            return
        cur = tree.indexOfTopLevelItem(tree.currentItem()) if tree.currentItem() else -1
        item = tree.topLevelItem((cur + 1) % n)
        tree.setCurrentItem(item)
        self.jump_to(item.data(0, ROLE_FINDING))
