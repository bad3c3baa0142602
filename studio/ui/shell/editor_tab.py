"""An editor tab, wired by the shell: the form and the text view (ui/editor) side by side over one
DocumentController, and the validation panel (ui/validation) under them."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from studio.ui.editor.controller import DocumentController
from studio.ui.editor.form import ConfigForm
from studio.ui.editor.text_view import ConfigTextEdit
from studio.ui.validation.findings_panel import ROLE_FINDING, FindingsPanel


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
        outer.setStretchFactor(0, 4)  # a short window (200% scaling) shrinks the panel more than the editor
        outer.setStretchFactor(1, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(outer)
        self.text.sig_text_edited.connect(lambda t: controller.set_text_async(t, source="text"))
        self.text.sig_text_committed.connect(lambda t: controller.set_text(t, source="text"))
        controller.sig_changed.connect(self._on_changed)
        controller.sig_findings.connect(self._on_findings)
        controller.sig_parse_error.connect(self._on_parse_error)
        self.findings.sig_activated.connect(self.jump_to)
        self.findings.fix_button.clicked.connect(self.apply_fix)
        self.form.sig_error.connect(self.sig_status.emit)
        self.form.sig_field_findings.connect(controller.set_form_findings)
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
        try:
            if all(e.on_text for e in f.edits):  # e.g. a misspelt field name: the text does not parse yet
                self.text.flush()
                text = self.controller.text
                for e in f.edits:
                    text = e.apply_to_text(text)
                self.controller.set_text(text, source="fix", description=f"fix: {f.rule}")
                self.text.set_text_preserving_cursor(self.controller.text)
                return

            def fn(doc):
                for e in f.edits:
                    e.apply(doc)

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
