"""The form view: widgets generated from Triton's schema (studio.config.schema), one class per field kind.

    kind            widget
    int / float     line edit with range checking (64-bit integers included), empty = unset
    bool            check box
    enum            combo box ("" = unset)
    string / bytes  line edit
    repeated scalar line edit of comma-separated values (dims: 3, 224, 224)
    message         checkable group (checked = set), children built when expanded
    oneof           selector driven by WhichOneof, a stacked page per branch
    repeated msg    cards with add / remove / move up / move down
    map             key/value table (message values: cards per key)

Every widget edits through the DocumentController (minimal text edits, undoable); the form rebuilds when the
document changes elsewhere. Fields that do not apply to the model's framework are dimmed with the reason.
Colours follow the palette (dark mode): dimmed labels and unset placeholders use the form's PlaceholderText,
set from the palette's text and window colours; the refused-value border and message are a red readable on it.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QCompleter,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.config import ConfigDocument, EditError, ParseError, PathError
from studio.config.schema import FieldSpec, schema_tree
from studio.frameworks import applies, framework_of
from studio.ui.common.colors import dimmed, readable, severity_color
from studio.validate import Finding, Options, validate_config

COMMON = ["name", "platform", "backend", "max_batch_size", "input", "output", "instance_group", "dynamic_batching",
          "version_policy", "parameters", "sequence_batching", "ensemble_scheduling"]


CARDS_OPEN = 3
"""Repeated-message lists longer than this show their cards collapsed (a title each; built when opened)."""

_APPLIES: dict[tuple[str, str | None], tuple[bool, str]] = {}


def _applies(path: str, framework) -> tuple[bool, str]:
    """frameworks.applies, memoized on the index-free path (the form asks for every widget of every rebuild)."""
    key = (re.sub(r"\[[^\]]*\]", "[*]", path), framework.key if framework is not None else None)
    hit = _APPLIES.get(key)
    if hit is None:
        hit = _APPLIES[key] = applies(path, framework)
    return hit


def error_color(palette: QPalette):
    """A red that reads on this palette's base colour (light or dark)."""
    return severity_color(palette, "error")


class ElidedLabel(QLabel):
    """A field name that shrinks with an ellipsis instead of widening the form; the full name in the tooltip."""

    def __init__(self, text: str, parent=None) -> None:
        super().__init__(text, parent)
        self._full = text
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(QFontMetrics(self.font()).horizontalAdvance("max_batch…") // 2)

    def full_text(self) -> str:
        return self._full

    def sizeHint(self):  # noqa: N802 - Qt's name
        sh = super().sizeHint()
        sh.setWidth(min(sh.width(), QFontMetrics(self.font()).horizontalAdvance("M" * 16)))
        return sh

    def minimumSizeHint(self):  # noqa: N802 - Qt's name
        sh = super().minimumSizeHint()
        sh.setWidth(self.minimumWidth())
        return sh

    def resizeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(e)
        self._elide()

    def changeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(e)
        if e.type() == QEvent.Type.FontChange:
            self._elide()

    def _elide(self) -> None:
        shown = QFontMetrics(self.font()).elidedText(self._full, Qt.TextElideMode.ElideMiddle, max(10, self.width()))
        if shown != self.text():
            super().setText(shown)


def _text_of(spec: FieldSpec, value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _parse_scalar(spec: FieldSpec, text: str):
    text = text.strip()
    if spec.kind == "int":
        try:
            v = int(text, 0)
        except ValueError:
            raise EditError(f"{spec.name} takes an integer, got {text!r}") from None
        lo, hi = spec.int_range or (-(2**63), 2**64 - 1)
        if not lo <= v <= hi:
            raise EditError(f"{spec.name} takes {lo} to {hi}, got {v}")
        return v
    if spec.kind == "float":
        try:
            return float(text)
        except ValueError:
            raise EditError(f"{spec.name} takes a number, got {text!r}") from None
    if spec.kind == "bool":
        return text.lower() in ("true", "1", "t")
    if spec.kind == "bytes":
        return text.encode()
    return text


class ConfigForm(QScrollArea):
    sig_error = Signal(str)
    """An edit was refused (the message for the status bar)."""
    sig_field_findings = Signal(list)
    """Values typed in form fields that were refused (Finding objects, rule "form.invalid-value"), for the
    validation panel; an empty list once every field holds a value the document took."""

    def __init__(self, controller, parent=None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        # the contents shrink to the width (labels elide, long rows wrap): never a horizontal scrollbar
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.widgets: dict[str, QWidget] = {}
        self.expanded: set[str] = set()
        self.field_errors: dict[str, Finding] = {}
        self._focus_path: str | None = None
        self._rows: dict[str, tuple[QFormLayout, QWidget, QWidget]] = {}
        self._sigs: dict[str, object] = {}
        self._available = False
        self._rest_built = False
        self.message = None
        self.framework = None
        self._rebuild_timer = QTimer(self, singleShot=True, interval=60)
        self._rebuild_timer.timeout.connect(self.update_from_document)
        controller.sig_changed.connect(lambda _src: self._rebuild_timer.start())
        controller.sig_parse_error.connect(lambda _e: self._rebuild_timer.start())
        self.find_box = QLineEdit()
        self.find_box.setPlaceholderText("Find field (name or path), Ctrl+F")
        self._completer = QCompleter(self)
        self._completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self._completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.find_box.setCompleter(self._completer)
        self._completer.activated.connect(self.find_field)
        self.find_box.returnPressed.connect(lambda: self.find_field(self.find_box.text()))
        self._follow_palette()
        self.rebuild()

    # -- colours --------------------------------------------------------------------------------------------------
    def changeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(e)
        if e.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._follow_palette()

    def _follow_palette(self) -> None:
        """Dimmed text (unset placeholders, fields that do not apply) from this palette's text and window colours
        (a custom dark palette often leaves PlaceholderText as the light one's), and refused values' red."""
        dim = dimmed(self.palette())
        if self.palette().color(QPalette.ColorRole.PlaceholderText) != dim:
            own = QPalette()  # only PlaceholderText is the form's own; every other role follows the application
            own.setResolveMask(0)
            for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive, QPalette.ColorGroup.Disabled):
                own.setColor(group, QPalette.ColorRole.PlaceholderText, dim)
            self.setPalette(own)
        for w in self.widgets.values():
            if w.property("studio_invalid"):
                self._style_invalid(w)

    # -- building -----------------------------------------------------------------------------------------------
    def update_from_document(self) -> None:
        """After a change: only the rows whose value changed are built again (typing in a comment builds none);
        a change of framework (fields that apply) or of parse state builds the whole form."""
        doc = self.controller.document
        if doc is None or self.controller.parse_error is not None or not self._available:
            self.rebuild()
            return
        msg = doc.to_message()
        fw = framework_of(msg)
        if (fw.key if fw else None) != (self.framework.key if self.framework else None):
            self.message = msg
            self.rebuild()
            return
        self.message = msg
        changed = [name for name in self._rows if _sig(msg, name) != self._sigs.get(name)]
        for name in changed:
            self._replace_row(name)
        if changed:
            self._completer.setModel(QStringListModel(sorted(self._all_paths()), self._completer))
        self._restore_focus()

    def _restore_focus(self) -> None:
        if self._focus_path and self._focus_path in self.widgets:
            w = self.widgets[self._focus_path]
            if not w.hasFocus():
                w.setFocus()

    def rebuild(self) -> None:
        scroll = self.verticalScrollBar().value()
        old = self.takeWidget()  # deleted later: a signal from one of its widgets may still be on the stack
        self.widgets = {}
        self._rows = {}
        self._sigs = {}
        self._rest_built = False
        self._drop_field_errors(None)
        root = QWidget()
        root.setObjectName("form_root")
        lay = QVBoxLayout(root)
        lay.setContentsMargins(2, 2, 2, 2)  # the width goes to the fields (a narrow window, 200% scaling)
        lay.addWidget(self.find_box_holder())
        doc = self.controller.document
        if doc is None or self.controller.parse_error is not None:
            self._available = False
            e = self.controller.parse_error
            msg = QLabel(f"The form is unavailable: the text does not parse.\n\n{e.format() if e else ''}")
            msg.setWordWrap(True)
            msg.setObjectName("form_unavailable")
            lay.addWidget(msg)
            lay.addStretch(1)
            self.setWidget(root)
            if old is not None:
                old.deleteLater()
            return
        self._available = True
        self.message = doc.to_message()
        self.framework = framework_of(self.message)
        tree = schema_tree()
        common = QGroupBox("Common fields")
        cl = self._form_layout(common)
        for name in COMMON:
            self._add_field(cl, tree.child(name), self.message, "")
        lay.addWidget(common)
        rest = QGroupBox("All fields")
        rest.setObjectName("all_fields")
        rest.setCheckable(True)
        rest.setChecked("__all__" in self.expanded)
        rest_lay = QVBoxLayout(rest)
        rest_lay.setContentsMargins(0, 0, 0, 0)
        self._rest_body = QWidget()
        self._rest_layout = self._form_layout(self._rest_body)
        rest_lay.addWidget(self._rest_body)
        self._rest_body.setVisible("__all__" in self.expanded)
        if "__all__" in self.expanded:
            self._build_rest()
        rest.toggled.connect(self._toggle_rest)
        lay.addWidget(rest)
        lay.addStretch(1)
        self.setWidget(root)
        if old is not None:
            old.hide()
            old.deleteLater()
        self.verticalScrollBar().setValue(scroll)
        self._completer.setModel(QStringListModel(sorted(self._all_paths()), self._completer))
        self._restore_focus()

    def _form_layout(self, parent: QWidget) -> QFormLayout:
        fl = QFormLayout(parent)
        # labels elide instead of wrapping rows: a wrapping QFormLayout's height-for-width squeezes the cards
        fl.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
        fl.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        return fl

    def _build_rest(self) -> None:
        if self._rest_built or self.message is None:
            return
        self._rest_built = True
        for spec in schema_tree().children:
            if spec.name not in COMMON:
                self._add_field(self._rest_layout, spec, self.message, "")
        self._completer.setModel(QStringListModel(sorted(self._all_paths()), self._completer))

    def _toggle_rest(self, on: bool) -> None:
        """"All fields": built the first time it opens (that group only), then shown or hidden."""
        if on:
            self.expanded.add("__all__")
            self._build_rest()
        else:
            self.expanded.discard("__all__")
        self._rest_body.setVisible(on)

    def _replace_row(self, name: str) -> None:
        layout, label, container = self._rows.pop(name)
        row, _role = layout.getWidgetPosition(container)
        layout.takeRow(row)
        for w in (label, container):
            w.hide()
            w.deleteLater()
        for p in [p for p in self.widgets if p == name or p.startswith((name + ".", name + "["))]:
            del self.widgets[p]
        self._drop_field_errors(name)
        self._add_field(layout, schema_tree().child(name), self.message, "", row=row)

    def find_box_holder(self) -> QWidget:
        w = QWidget()
        h = QHBoxLayout(w)
        h.setContentsMargins(0, 0, 0, 0)
        self.find_box.setParent(w)
        h.addWidget(self.find_box)
        return w

    def _all_paths(self) -> list[str]:
        return [s.path for s in schema_tree().walk() if s.path] + list(self.widgets)

    def _label(self, spec: FieldSpec, path: str, present: bool) -> QLabel:
        lab = ElidedLabel(spec.name)
        tip = spec.name + "\n\n" + (spec.help or spec.type_name)
        ok, why = _applies(path, self.framework)
        if not ok:
            lab.setProperty("studio_unset", True)
            lab.setForegroundRole(QPalette.ColorRole.PlaceholderText)  # follows the palette (dark mode too)
            tip = f"{tip}\n\nDoes not apply: {why}"
        if present:
            f = lab.font()
            f.setWeight(QFont.Weight.Bold)
            lab.setFont(f)
        lab.setToolTip(tip)
        return lab

    def _add_field(self, layout: QFormLayout, spec: FieldSpec, msg, prefix: str, row: int | None = None) -> None:
        path = prefix + spec.name
        present = _present(msg, spec)
        if spec.kind == "map":
            w = self._map(spec, msg, path)
        elif spec.kind == "message" and spec.repeated:
            w = self._repeated_message(spec, msg, path)
        elif spec.kind == "message":
            w = self._message(spec, msg, path, present)
        elif spec.repeated:
            w = self._repeated_scalar(spec, msg, path)
        else:
            w = self._scalar(spec, msg, path, present)
        ok, why = _applies(path, self.framework)
        if not ok:
            w.setToolTip(f"Does not apply: {why}")
        self.widgets[path] = w
        container = getattr(w, "_studio_holder", None) or w
        label = self._label(spec, path, present)
        if row is None:
            layout.addRow(label, container)
        else:
            layout.insertRow(row, label, container)
        if not prefix:
            self._rows[path] = (layout, label, container)
            self._sigs[path] = _sig(msg, path)

    def _children(self, spec: FieldSpec, msg, path: str) -> QWidget:
        box = QWidget()
        fl = self._form_layout(box)
        fl.setContentsMargins(6, 0, 0, 0)
        groups = spec.oneof_members
        done: set[str] = set()
        for child in spec.children:
            if child.oneof and child.oneof not in done:
                done.add(child.oneof)
                fl.addRow(ElidedLabel(child.oneof), self._oneof(spec, child.oneof, groups[child.oneof], msg, path))
            elif not child.oneof:
                self._add_field(fl, child, msg, path + ".")
        return box

    # -- refused values at the field ------------------------------------------------------------------------------
    def _with_message(self, w: QWidget) -> QWidget:
        """A field with a message line under it (hidden until a value is refused)."""
        holder = QWidget()
        v = QVBoxLayout(holder)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(2)
        v.addWidget(w)
        msg = QLabel()
        msg.setObjectName("field_error")
        msg.hide()
        v.addWidget(msg)
        w.setProperty("studio_container", True)
        w._studio_message = msg  # noqa: SLF001 - the form's own bookkeeping
        w._studio_holder = holder  # noqa: SLF001 - kept alive until the row is laid out
        return holder

    def show_field_error(self, path: str, w: QWidget, text: str, message: str) -> None:
        """A value typed at `path` was refused: red border and the message under the field, a finding in the panel.
        The document keeps its value."""
        w.setProperty("studio_invalid", True)
        self._style_invalid(w)
        label = getattr(w, "_studio_message", None)
        if label is not None:
            label.setText(message)
            label.setToolTip(message)
            label.show()
        line = None
        doc = self.controller.document
        if doc is not None:
            try:
                pos = doc.position(path)
                line = pos[0] if pos else None
            except Exception:  # noqa: BLE001 - a location is a nicety
                line = None
        self.field_errors[path] = Finding("error", "form.invalid-value", f"{path}: {text!r} refused: {message}", path,
                                          "the document keeps its value until the field holds one it can take",
                                          file=self.controller.path, line=line)
        self.sig_field_findings.emit(list(self.field_errors.values()))
        self.sig_error.emit(message)

    def _style_invalid(self, w: QWidget) -> None:
        """The refused value's red border, and its message in a red readable on the window colour."""
        pal = self.palette()
        color = error_color(pal)
        w.setStyleSheet(f"QLineEdit {{ border: 2px solid {color.name()}; border-radius: 3px; padding: 1px 3px; }}")
        label = getattr(w, "_studio_message", None)
        if label is not None:
            own = QPalette()
            own.setResolveMask(0)
            own.setColor(QPalette.ColorRole.WindowText, readable(color, pal.color(QPalette.ColorRole.Window)))
            label.setPalette(own)

    def clear_field_error(self, path: str, w: QWidget | None = None) -> None:
        if w is not None and w.property("studio_invalid"):
            w.setStyleSheet("")
            w.setProperty("studio_invalid", False)
            label = getattr(w, "_studio_message", None)
            if label is not None:
                label.hide()
        if self.field_errors.pop(path, None) is not None:
            self.sig_field_findings.emit(list(self.field_errors.values()))

    def _drop_field_errors(self, prefix: str | None) -> None:
        gone = [p for p in self.field_errors if prefix is None or p == prefix or p.startswith((prefix + ".", prefix + "["))]
        for p in gone:
            del self.field_errors[p]
        if gone:
            self.sig_field_findings.emit(list(self.field_errors.values()))

    def _refusal(self, path: str, value) -> str | None:
        """Why the document cannot take this value (Triton's own rule for that field), or None."""
        doc = self.controller.document
        if doc is None:
            return None
        try:
            trial = ConfigDocument.parse(doc.text)
            trial.set(path, value)
        except (EditError, PathError, ValueError, ParseError) as e:
            return str(e).splitlines()[0]
        before = {(f.rule, f.message) for f in self.controller.findings if f.severity == "error"}
        name = self.controller.model_name
        for f in validate_config(trial, model_name=name, options=Options(config_only=True)):
            if f.severity == "error" and (f.rule, f.message) not in before and f.path and (
                    f.path == path or f.path.startswith(path + ".")):
                return f.message + (f" ({f.hint})" if f.hint else "")
        return None

    # -- kinds ----------------------------------------------------------------------------------------------------
    def _scalar(self, spec: FieldSpec, msg, path: str, present: bool) -> QWidget:
        value = getattr(msg, spec.name)
        if spec.kind == "bool":
            w = QCheckBox()
            w.setChecked(bool(value))
            w.toggled.connect(lambda on, p=path: self._set(p, True) if on else self._clear(p))
            return w
        if spec.kind == "enum":
            w = QComboBox()
            w.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            w.setMinimumContentsLength(8)
            w.addItem("")
            w.addItems(list(spec.enum_values))
            fd = msg.DESCRIPTOR.fields_by_name[spec.name]
            name = fd.enum_type.values_by_number[value].name if value in fd.enum_type.values_by_number else str(value)
            w.setCurrentText(name if present or value else "")
            w.setToolTip(w.currentText())
            w.activated.connect(lambda _i, p=path, box=w: self._set(p, box.currentText()) if box.currentText() else self._clear(p))
            return w
        w = QLineEdit(_text_of(spec, value) if present or value else "")
        w.setPlaceholderText(f"default: {_text_of(spec, spec.default) or chr(34) * 2}")
        w.setClearButtonEnabled(True)
        w.setMinimumWidth(60)
        if len(w.text()) > 24:
            w.setToolTip(w.text())
        self._with_message(w)

        def done(p=path, box=w, s=spec):
            if not box.isModified() and not box.property("studio_invalid"):
                return  # focus left without an edit
            box.setModified(False)
            text = box.text()
            if text.strip() == "":
                self.clear_field_error(p, box)
                self._clear(p)
                return
            try:
                value = _parse_scalar(s, text)
            except EditError as e:
                self.show_field_error(p, box, text, str(e))
                return
            why = self._refusal(p, value)
            if why is not None:
                self.show_field_error(p, box, text, why)
                return
            self.clear_field_error(p, box)
            self._set(p, value)

        w.editingFinished.connect(done)
        return w

    def _repeated_scalar(self, spec: FieldSpec, msg, path: str) -> QWidget:
        values = list(getattr(msg, spec.name))
        fd = msg.DESCRIPTOR.fields_by_name[spec.name]
        if spec.kind == "enum":
            values = [fd.enum_type.values_by_number[v].name if v in fd.enum_type.values_by_number else v for v in values]
        w = QLineEdit(", ".join(_text_of(spec, v) for v in values))
        w.setPlaceholderText("comma-separated values")

        def done(p=path, box=w, s=spec):
            parts = [x for x in (t.strip() for t in box.text().split(",")) if x]
            try:
                vals = [_parse_scalar(s, x) for x in parts]
            except EditError as e:
                self.sig_error.emit(str(e))
                return
            if vals:
                self._set(p, vals)
            else:
                self._clear(p)

        w.editingFinished.connect(done)
        return w

    def _message(self, spec: FieldSpec, msg, path: str, present: bool) -> QWidget:
        g = QGroupBox()
        g.setCheckable(True)
        g.setChecked(present)
        g.setFlat(True)
        lay = QVBoxLayout(g)
        lay.setContentsMargins(4, 4, 4, 4)
        if present or path in self.expanded:
            lay.addWidget(self._children(spec, getattr(msg, spec.name), path))
        else:
            hint = QLabel("(not set: tick to add)")
            hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
            hint.setWordWrap(True)  # wraps rather than widening the form (a narrow window, 200% scaling)
            lay.addWidget(hint)
        g.toggled.connect(lambda on, p=path: self._set(p, {}) if on else self._clear(p))
        return g

    def _oneof(self, parent: FieldSpec, group: str, members: list[str], msg, path: str) -> QWidget:
        w = QWidget()
        v = QVBoxLayout(w)
        v.setContentsMargins(0, 0, 0, 0)
        combo = QComboBox()
        combo.addItem("")
        combo.addItems(members)
        active = msg.WhichOneof(group)
        combo.setCurrentText(active or "")
        v.addWidget(combo)
        # one page per branch (the first, empty, for none); only the active branch's page has widgets
        pages = QStackedWidget()
        pages.addWidget(QWidget())
        for member in members:
            page = QWidget()
            if member == active:
                fl = QFormLayout(page)
                fl.setContentsMargins(0, 0, 0, 0)
                self._add_field(fl, parent.child(member), msg, (path + "." if path else ""))
            pages.addWidget(page)
        pages.setCurrentIndex(members.index(active) + 1 if active else 0)
        v.addWidget(pages)

        def choose(_i, box=combo):
            name = box.currentText()
            prefix = path + "." if path else ""
            if not name:
                if active:
                    self._clear(prefix + active)
                return
            spec = parent.child(name)
            self._set(prefix + name, {} if spec.kind == "message" else (spec.default if spec.kind != "bool" else True))

        combo.activated.connect(choose)
        return w

    def _repeated_message(self, spec: FieldSpec, msg, path: str) -> QWidget:
        w = QWidget()
        v = QVBoxLayout(w)
        v.setContentsMargins(0, 0, 0, 0)
        items = list(getattr(msg, spec.name))
        for i, item in enumerate(items):
            title = f"{spec.name}[{i}]"
            fields = item.DESCRIPTOR.fields_by_name
            label = item.name if "name" in fields else (item.model_name if "model_name" in fields else "")
            card_path = f"{path}[{i}]"
            card = QGroupBox()
            card.setToolTip(f"{title}  {label}".strip())
            cl = QVBoxLayout(card)
            cl.setContentsMargins(4, 4, 4, 4)
            bar = QHBoxLayout()
            opener = QToolButton()
            opener.setObjectName("card_opener")
            opener.setCheckable(True)
            opener.setAutoRaise(True)
            opener.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            opener.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
            opener.setText(f"{title}  {label}".strip())
            bar.addWidget(opener, 1)
            for text, tip, fn in (("▲", "move up", lambda _c=False, k=i: self._move(path, k, -1)),
                                  ("▼", "move down", lambda _c=False, k=i: self._move(path, k, 1)),
                                  ("✕", "remove", lambda _c=False, k=i: self._remove(f"{path}[{k}]"))):
                b = QToolButton()
                b.setText(text)
                b.setToolTip(tip)
                b.clicked.connect(fn)
                bar.addWidget(b)
            cl.addLayout(bar)
            is_open = len(items) <= CARDS_OPEN or card_path in self.expanded

            def open_card(on, c=card, lay=cl, sp=spec, it=item, cp=card_path, op=opener):
                op.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
                body = c.findChild(QWidget, "card_body")
                if on:
                    self.expanded.add(cp)
                    if body is None:  # built the first time the card opens
                        body = self._children(sp, it, cp)
                        body.setObjectName("card_body")
                        lay.addWidget(body)
                    else:
                        body.show()
                else:
                    self.expanded.discard(cp)
                    if body is not None:
                        body.hide()

            opener.setChecked(is_open)
            open_card(is_open)
            opener.toggled.connect(open_card)
            self.widgets[card_path] = card
            v.addWidget(card)
        add = QPushButton(f"Add {spec.name}")
        add.clicked.connect(lambda _c=False, s=spec: self._append(path, s))
        v.addWidget(add)
        return w

    def _map(self, spec: FieldSpec, msg, path: str) -> QWidget:
        container = getattr(msg, spec.name)
        w = QWidget()
        v = QVBoxLayout(w)
        v.setContentsMargins(0, 0, 0, 0)
        scalar_values = spec.map_value_kind != "message"
        single_string = not scalar_values and [c.name for c in spec.children] == ["string_value"]
        if scalar_values or single_string:
            table = QTableWidget(len(container), 2)
            table.setHorizontalHeaderLabels(["key", "value"])
            header = table.horizontalHeader()
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)  # keys by their content
            header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)  # values take the rest, elided
            table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
            table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
            table.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            table.verticalHeader().setVisible(False)
            keys = sorted(container, key=str)
            for r, k in enumerate(keys):
                val = container[k].string_value if single_string else container[k]
                for c, t in ((0, str(k)), (1, str(val))):
                    item = QTableWidgetItem(t)
                    item.setToolTip(t)  # the whole value when the cell elides it
                    table.setItem(r, c, item)
            table.setMinimumHeight(min(200, 30 + 26 * max(1, len(keys))))
            table.setMaximumHeight(30 + 26 * max(2, len(keys) + 1))

            def changed(item, t=table, ks=keys):
                r = item.row()
                key = t.item(r, 0).text() if t.item(r, 0) else ""
                val = t.item(r, 1).text() if t.item(r, 1) else ""
                old = ks[r] if r < len(ks) else None
                if not key:
                    return
                kp = _key(spec, key)
                sub = f"{path}[{kp}]" + (".string_value" if single_string else "")

                def fn(d, old=old, key=key):
                    if old is not None and str(old) != key:
                        d.remove(f"{path}[{_key(spec, str(old))}]")
                    d.set(sub, val if spec.map_value_kind in ("string", "message") else _parse_scalar(_value_spec(spec), val))

                self._edit(f"set {sub}", fn)

            table.itemChanged.connect(changed)
            v.addWidget(table)
        else:
            for k in sorted(container, key=str):
                kp = _key(spec, str(k))
                card = QGroupBox(f"{spec.name}[{kp}]")
                cl = QVBoxLayout(card)
                rm = QToolButton()
                rm.setText("✕")
                rm.setToolTip("remove")
                rm.clicked.connect(lambda _c=False, p=f"{path}[{kp}]": self._remove(p))
                cl.addWidget(rm)
                cl.addWidget(self._children(spec, container[k], f"{path}[{kp}]"))
                v.addWidget(card)
        row = QHBoxLayout()
        key_edit = QLineEdit()
        key_edit.setPlaceholderText("new key")
        add = QPushButton("Add")
        row.addWidget(key_edit)
        row.addWidget(add)

        def add_key(_c=False, box=key_edit):
            key = box.text().strip()
            if not key:
                return
            kp = _key(spec, key)
            if scalar_values:
                self._set(f"{path}[{kp}]", _value_spec(spec).default if spec.map_value_kind != "string" else "")
            else:
                self._set(f"{path}[{kp}]", {})

        add.clicked.connect(add_key)
        key_edit.returnPressed.connect(add_key)
        v.addLayout(row)
        return w

    # -- edits ----------------------------------------------------------------------------------------------------
    def _edit(self, description: str, fn) -> None:
        self._focus_path = None
        m = re.match(r"\w+ ([A-Za-z_]\w*)", description)
        if m:  # the row's widgets show what was typed, not what was built: build it again, whatever comes next
            self._sigs.pop(m.group(1), None)
        try:
            self.controller.edit(description, fn, source="form")
        except (EditError, PathError, ValueError) as e:
            self.sig_error.emit(str(e))
            self._sigs.clear()  # the widgets show what was refused: build them again from the document
            self._rebuild_timer.start()

    def _set(self, path: str, value) -> None:
        self._edit(f"set {path}", lambda d: d.set(path, value))
        self._focus_path = path

    def _clear(self, path: str) -> None:
        self._edit(f"clear {path}", lambda d: d.clear(path))

    def _remove(self, path: str) -> None:
        self._edit(f"remove {path}", lambda d: d.remove(path))

    def _append(self, path: str, spec: FieldSpec) -> None:
        n = len(getattr(self._owner(path), spec.name))
        value: dict = {}
        if any(c.name == "name" for c in spec.children) and spec.name in ("input", "output"):
            value = {"name": f"{spec.name.upper()}{n}", "data_type": "TYPE_FP32", "dims": [1]}
        elif spec.name == "instance_group":
            value = {"kind": "KIND_AUTO", "count": 1}
        self._edit(f"add {path}", lambda d: d.append(path, value))

    def _move(self, path: str, index: int, step: int) -> None:
        def fn(d):
            msg = d.to_message()
            owner, name = _resolve_owner(msg, path)
            items = list(getattr(owner, name))
            j = index + step
            if not 0 <= j < len(items):
                return
            copies = [type(x)() for x in items]
            for c, x in zip(copies, items):
                c.CopyFrom(x)
            copies[index], copies[j] = copies[j], copies[index]
            del getattr(owner, name)[:]
            for c in copies:
                getattr(owner, name).add().CopyFrom(c)
            d.apply(msg)

        self._edit(f"move {path}[{index}]", fn)

    def _owner(self, path: str):
        owner, _ = _resolve_owner(self.message, path)
        return owner

    # -- find field -----------------------------------------------------------------------------------------------
    def find_field(self, text: str) -> bool:
        text = text.strip()
        if not text:
            return False
        target = text if text in self.widgets else next((p for p in self.widgets if p.split(".")[-1] == text or p.endswith("." + text)), None)
        if target is None:
            # a field inside an unset or collapsed part: open the way to it
            if "__all__" not in self.expanded:
                self.expanded.add("__all__")
            parts = text.split(".")
            for i in range(1, len(parts)):
                self.expanded.add(".".join(parts[:i]))
            self.rebuild()
            target = text if text in self.widgets else next((p for p in self.widgets if p.endswith(text)), None)
        if target is None:
            return False
        w = self.widgets[target]
        self.ensureWidgetVisible(w)
        w.setFocus()
        return True


def _ser(v):
    return v.SerializeToString(deterministic=True) if hasattr(v, "SerializeToString") else v


def _sig(msg, name: str):
    """What a top-level row shows of the message: equal signatures, nothing to build again."""
    fd = msg.DESCRIPTOR.fields_by_name[name]
    v = getattr(msg, name)
    if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        return tuple(sorted((str(k), _ser(v[k])) for k in v))
    if fd.is_repeated if hasattr(fd, "is_repeated") else fd.label == fd.LABEL_REPEATED:
        return tuple(_ser(x) for x in v)
    if fd.message_type is not None or fd.containing_oneof is not None:
        return (msg.HasField(name), _ser(v))
    return v


def _present(msg, spec: FieldSpec) -> bool:
    v = getattr(msg, spec.name)
    if spec.repeated or spec.kind == "map":
        return len(v) > 0
    fd = msg.DESCRIPTOR.fields_by_name[spec.name]
    if spec.kind == "message" or fd.containing_oneof is not None:
        return msg.HasField(spec.name)
    return v != type(v)()


def _value_spec(spec: FieldSpec) -> FieldSpec:
    return FieldSpec(name="value", path=spec.path + "[*]", kind=spec.map_value_kind or "string",
                     default="" if spec.map_value_kind == "string" else 0)


def _key(spec: FieldSpec, key: str) -> str:
    if spec.map_key_kind == "string":
        return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(int(key))


def _resolve_owner(msg, path: str):
    """(message that holds the last field, its name) for a document path."""
    from studio.config import parse_path

    segs = parse_path(path)
    obj = msg
    for name, sel in segs[:-1]:
        obj = getattr(obj, name)
        if sel is not None:
            obj = obj[sel]
    return obj, segs[-1][0]
