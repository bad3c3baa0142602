"""New model wizard: framework, name, inputs and outputs, batching; writes a model folder from a template."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
)

from studio.repository.templates import list_templates

DATA_TYPES = ["TYPE_FP32", "TYPE_FP16", "TYPE_BF16", "TYPE_INT64", "TYPE_INT32", "TYPE_INT8", "TYPE_UINT8",
              "TYPE_BOOL", "TYPE_STRING", "TYPE_FP64"]


def parse_tensors(text: str, default_prefix: str) -> list[dict]:
    """'NAME:TYPE_FP32:3,224,224; OTHER:TYPE_INT64:-1' -> tensor dicts (type and dims optional)."""
    out = []
    for i, part in enumerate(p for p in (x.strip() for x in text.split(";")) if p):
        bits = [b.strip() for b in part.split(":")]
        name = bits[0] or f"{default_prefix}{i}"
        dtype = bits[1] if len(bits) > 1 and bits[1] else "TYPE_FP32"
        if not dtype.startswith("TYPE_"):
            dtype = "TYPE_" + dtype.upper()
        if dtype not in DATA_TYPES and dtype not in ("TYPE_UINT16", "TYPE_UINT32", "TYPE_UINT64", "TYPE_INT16"):
            raise ValueError(f"{part}: unknown data type {dtype}")
        dims = [int(d) for d in bits[2].split(",")] if len(bits) > 2 and bits[2] else [-1]
        out.append({"name": name, "data_type": dtype, "dims": dims})
    return out


class NewModelDialog(QDialog):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New model")
        self.templates = list_templates()
        self.template = QComboBox()
        for key, t in self.templates.items():
            self.template.addItem(f"{key} — {t.description}", key)
        self.name = QLineEdit()
        self.name.setPlaceholderText("model name (the folder)")
        self.inputs = QLineEdit("INPUT0:TYPE_FP32:16")
        self.inputs.setToolTip("NAME:TYPE:dims; ... (dims without the batch dimension; -1 = any size)")
        self.outputs = QLineEdit("OUTPUT0:TYPE_FP32:16")
        self.max_batch = QSpinBox()
        self.max_batch.setRange(0, 1 << 20)
        self.max_batch.setValue(8)
        self.dynamic = QCheckBox("dynamic batching")
        self.dynamic.setChecked(True)
        self.delay = QSpinBox()
        self.delay.setRange(0, 10_000_000)
        self.delay.setSuffix(" µs queue delay")
        self.error = QLabel("")
        form = QFormLayout()
        form.addRow("Framework", self.template)
        form.addRow("Name", self.name)
        form.addRow("Inputs", self.inputs)
        form.addRow("Outputs", self.outputs)
        form.addRow("max_batch_size", self.max_batch)
        form.addRow(self.dynamic, self.delay)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.error)
        lay.addWidget(buttons)
        self.template.currentIndexChanged.connect(self._on_template)
        self._on_template()

    def _on_template(self) -> None:
        is_ensemble = self.template.currentData() == "ensemble"
        for w in (self.inputs, self.outputs):
            w.setEnabled(not is_ensemble)

    def values(self) -> tuple[str, str, dict]:
        """(name, template, --set edits) for create_model; ValueError with a message on bad input."""
        name = self.name.text().strip()
        if not name:
            raise ValueError("give the model a name")
        template = self.template.currentData()
        sets: dict = {"max_batch_size": self.max_batch.value()}
        if template != "ensemble":
            sets["input"] = parse_tensors(self.inputs.text(), "INPUT")
            sets["output"] = parse_tensors(self.outputs.text(), "OUTPUT")
            if self.dynamic.isChecked() and self.max_batch.value() > 0:
                sets["dynamic_batching"] = {"max_queue_delay_microseconds": self.delay.value()} if self.delay.value() else {}
            else:
                sets["dynamic_batching"] = None
        return name, template, sets

    def _accept(self) -> None:
        try:
            self.values()
        except ValueError as e:
            self.error.setText(str(e))
            return
        self.accept()
