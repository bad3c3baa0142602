"""Config controls generated from studio.tuning.controls.ControlSpec (one widget class per control kind): a
toggle, a logarithmic slider with a typed value box, an editable chip list, an int box, a checkbox, an enum
combo. Each commits through a callback that checks the value first (the validator's refusal is shown at the
control and the control goes back to the serving value); nothing reaches the server from here.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIntValidator
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSlider,
    QSpinBox,
    QToolButton,
    QWidget,
)

from studio.tuning.controls import ControlSpec

INT32_MAX = 2**31 - 1
# commit(spec, edits) -> None when accepted, else the refusal message
Commit = Callable[[ControlSpec, dict], "str | None"]


class ConfigControl(QWidget):
    """Base: a row's editor for one ControlSpec."""

    sig_refused = Signal(str)
    """A value was refused before it reached the server: the validator's message."""

    def __init__(self, spec: ControlSpec, commit: Commit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        self._commit = commit
        self._value = None
        self.setToolTip(spec.help or spec.path)
        self.lay = QHBoxLayout(self)
        self.lay.setContentsMargins(0, 0, 0, 0)
        self.lay.setSpacing(4)

    def value(self):
        return self._value

    def set_value(self, value) -> None:
        """Show a value (no commit)."""
        self._value = value
        self._show(value)

    def _show(self, value) -> None:  # pragma: no cover - each kind overrides
        raise NotImplementedError

    def commit(self, value) -> bool:
        if value == self._value:
            self._show(value)
            return True
        message = self._commit(self.spec, {self.spec.path: value})
        if message:
            self._show(self._value)  # back to what serves
            self.sig_refused.emit(message)
            return False
        self._value = value
        self._show(value)
        return True


class ToggleControl(ConfigControl):
    def __init__(self, spec, commit, parent=None):
        super().__init__(spec, commit, parent)
        self.box = QCheckBox(spec.label)
        self.box.setObjectName("toggle_" + spec.path)
        self.lay.addWidget(self.box)
        self.box.clicked.connect(lambda on: self.commit(bool(on)))

    def commit(self, value) -> bool:
        if value == self._value:
            return True
        message = self._commit(self.spec, {self.spec.path: {} if value else None})
        if message:
            self._show(self._value)
            self.sig_refused.emit(message)
            return False
        self._value = bool(value)
        self._show(self._value)
        return True

    def _show(self, value) -> None:
        self.box.setChecked(bool(value))


class LogSliderControl(ConfigControl):
    """0, then 1 .. slider_max on a log scale (1000 steps); the box takes any value of the field's range."""

    STEPS = 1000

    def __init__(self, spec, commit, parent=None):
        super().__init__(spec, commit, parent)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("slider_" + spec.path)
        self.slider.setRange(0, self.STEPS)
        self.slider.setPageStep(50)
        self.box = QLineEdit()
        self.box.setObjectName("box_" + spec.path)
        self.box.setValidator(QIntValidator(0, INT32_MAX))
        self.box.setFixedWidth(72)
        self.box.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.lay.addWidget(self.slider, 1)
        self.lay.addWidget(self.box)
        self.lay.addWidget(QLabel(spec.unit))
        self._hi = spec.slider_max or 100_000
        self.slider.valueChanged.connect(self._moved)
        self.slider.sliderReleased.connect(lambda: self.commit(self.to_value(self.slider.value())))
        self.box.returnPressed.connect(self._typed)

    def to_value(self, pos: int) -> int:
        if pos <= 0:
            return 0
        return int(round(10 ** (pos / self.STEPS * math.log10(self._hi))))

    def to_pos(self, value: int) -> int:
        if value <= 0:
            return 0
        return int(round(min(1.0, math.log10(max(1, value)) / math.log10(self._hi)) * self.STEPS))

    def _moved(self, pos: int) -> None:
        self.box.setText(str(self.to_value(pos)))
        if not self.slider.isSliderDown() and self.to_value(pos) != self._value and not self._showing:
            self.commit(self.to_value(pos))  # keyboard or wheel: no release event; the coordinator debounces

    def _typed(self) -> None:
        text = self.box.text().strip()
        try:
            v = int(text)
        except ValueError:
            self.sig_refused.emit(f"{self.spec.label}: not a whole number: {text!r}")
            self._show(self._value)
            return
        self.commit(v)

    _showing = False

    def _show(self, value) -> None:
        self._showing = True
        try:
            v = int(value or 0)
            self.slider.setValue(self.to_pos(v))
            self.box.setText(str(v))
        finally:
            self._showing = False


class ChipsControl(ConfigControl):
    """A repeated int as chips (click a chip to remove it) and a box to add one (Enter)."""

    def __init__(self, spec, commit, parent=None):
        super().__init__(spec, commit, parent)
        self.chips = QWidget()
        self.chip_lay = QHBoxLayout(self.chips)
        self.chip_lay.setContentsMargins(0, 0, 0, 0)
        self.chip_lay.setSpacing(2)
        self.box = QLineEdit()
        self.box.setObjectName("add_" + spec.path)
        self.box.setPlaceholderText("add…")
        self.box.setValidator(QIntValidator(0, INT32_MAX))
        self.box.setFixedWidth(56)
        self.lay.addWidget(self.chips)
        self.lay.addWidget(self.box)
        self.lay.addStretch(1)
        self.box.returnPressed.connect(self._add)
        self._value = []

    def _add(self) -> None:
        text = self.box.text().strip()
        if not text:
            return
        v = int(text)
        if v in (self._value or []):
            self.box.clear()
            return
        if self.commit(sorted([*(self._value or []), v])):
            self.box.clear()

    def _show(self, value) -> None:
        while self.chip_lay.count():
            w = self.chip_lay.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        for v in value or []:
            b = QToolButton()
            b.setText(f"{v} ×")
            b.setObjectName(f"chip_{v}")
            b.setToolTip(f"remove {v}")
            b.setStyleSheet("QToolButton { border: 1px solid palette(mid); border-radius: 8px; padding: 0 6px; }")
            b.clicked.connect(lambda _=False, v=v: self.commit([x for x in self._value if x != v]))
            self.chip_lay.addWidget(b)


class IntControl(ConfigControl):
    def __init__(self, spec, commit, parent=None):
        super().__init__(spec, commit, parent)
        self.spin = QSpinBox()
        self.spin.setObjectName("spin_" + spec.path)
        lo = spec.minimum if spec.minimum is not None else 0
        hi = min(INT32_MAX, spec.maximum if spec.maximum is not None else INT32_MAX)
        self.spin.setRange(max(-INT32_MAX, lo), hi)
        self.spin.setKeyboardTracking(False)
        self.lay.addWidget(self.spin)
        self.lay.addStretch(1)
        self.spin.editingFinished.connect(lambda: self.commit(self.spin.value()))

    def _show(self, value) -> None:
        self.spin.blockSignals(True)
        self.spin.setValue(int(value or 0))
        self.spin.blockSignals(False)


class BoolControl(ConfigControl):
    def __init__(self, spec, commit, parent=None):
        super().__init__(spec, commit, parent)
        self.box = QCheckBox()
        self.box.setObjectName("check_" + spec.path)
        self.lay.addWidget(self.box)
        self.lay.addStretch(1)
        self.box.clicked.connect(lambda on: self.commit(bool(on)))

    def _show(self, value) -> None:
        self.box.setChecked(bool(value))


class EnumControl(ConfigControl):
    def __init__(self, spec, commit, parent=None):
        super().__init__(spec, commit, parent)
        self.combo = QComboBox()
        self.combo.setObjectName("combo_" + spec.path)
        self.combo.addItems(list(spec.enum_values))
        self.lay.addWidget(self.combo)
        self.lay.addStretch(1)
        self.combo.activated.connect(lambda i: self.commit(self.combo.itemText(i)))

    def _show(self, value) -> None:
        i = self.combo.findText(str(value))
        self.combo.setCurrentIndex(max(0, i))


KINDS = {"toggle": ToggleControl, "log_slider": LogSliderControl, "chips": ChipsControl, "int": IntControl,
         "bool": BoolControl, "enum": EnumControl}


def make_control(spec: ControlSpec, commit: Commit, parent: QWidget | None = None) -> ConfigControl:
    return KINDS[spec.widget](spec, commit, parent)
