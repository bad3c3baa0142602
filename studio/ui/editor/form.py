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
"""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.config import EditError, PathError
from studio.config.schema import FieldSpec, schema_tree
from studio.frameworks import applies, framework_of

COMMON = ["name", "platform", "backend", "max_batch_size", "input", "output", "instance_group", "dynamic_batching",
          "version_policy", "parameters", "sequence_batching", "ensemble_scheduling"]


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

    def __init__(self, controller, parent=None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setWidgetResizable(True)
        self.widgets: dict[str, QWidget] = {}
        self.expanded: set[str] = set()
        self._focus_path: str | None = None
        self._rebuild_timer = QTimer(self, singleShot=True, interval=60)
        self._rebuild_timer.timeout.connect(self.rebuild)
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
        self.rebuild()

    # -- building -----------------------------------------------------------------------------------------------
    def rebuild(self) -> None:
        scroll = self.verticalScrollBar().value()
        old = self.takeWidget()  # deleted later: a signal from one of its widgets may still be on the stack
        self.widgets = {}
        root = QWidget()
        lay = QVBoxLayout(root)
        lay.addWidget(self.find_box_holder())
        doc = self.controller.document
        if doc is None or self.controller.parse_error is not None:
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
        self.message = doc.to_message()
        self.framework = framework_of(self.message)
        tree = schema_tree()
        common = QGroupBox("Common fields")
        cl = QFormLayout(common)
        for name in COMMON:
            self._add_field(cl, tree.child(name), self.message, "")
        lay.addWidget(common)
        rest = QGroupBox("All fields")
        rest.setCheckable(True)
        rest.setChecked("__all__" in self.expanded)
        rl = QFormLayout(rest)
        if "__all__" in self.expanded:
            for spec in tree.children:
                if spec.name not in COMMON:
                    self._add_field(rl, spec, self.message, "")
        rest.toggled.connect(lambda on: (self.expanded.add("__all__") if on else self.expanded.discard("__all__"), self._rebuild_timer.start()))
        lay.addWidget(rest)
        lay.addStretch(1)
        self.setWidget(root)
        if old is not None:
            old.deleteLater()
        self.verticalScrollBar().setValue(scroll)
        self._completer.setModel(QStringListModel(sorted(self._all_paths()), self._completer))
        if self._focus_path and self._focus_path in self.widgets:
            self.widgets[self._focus_path].setFocus()

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
        lab = QLabel(spec.name)
        tip = spec.help or spec.type_name
        ok, why = applies(path, self.framework)
        if not ok:
            pal = lab.palette()
            pal.setColor(QPalette.ColorRole.WindowText, pal.color(QPalette.ColorRole.PlaceholderText))
            lab.setPalette(pal)
            tip = f"{tip}\n\nDoes not apply: {why}"
        if present:
            f = lab.font()
            f.setWeight(QFont.Weight.Bold)
            lab.setFont(f)
        lab.setToolTip(tip)
        return lab

    def _add_field(self, layout: QFormLayout, spec: FieldSpec, msg, prefix: str) -> None:
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
        ok, why = applies(path, self.framework)
        if not ok:
            w.setToolTip(f"Does not apply: {why}")
        self.widgets[path] = w
        layout.addRow(self._label(spec, path, present), w)

    def _children(self, spec: FieldSpec, msg, path: str) -> QWidget:
        box = QWidget()
        fl = QFormLayout(box)
        fl.setContentsMargins(8, 0, 0, 0)
        groups = spec.oneof_members
        done: set[str] = set()
        for child in spec.children:
            if child.oneof and child.oneof not in done:
                done.add(child.oneof)
                fl.addRow(QLabel(child.oneof), self._oneof(spec, child.oneof, groups[child.oneof], msg, path))
            elif not child.oneof:
                self._add_field(fl, child, msg, path + ".")
        return box

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
            w.addItem("")
            w.addItems(list(spec.enum_values))
            fd = msg.DESCRIPTOR.fields_by_name[spec.name]
            name = fd.enum_type.values_by_number[value].name if value in fd.enum_type.values_by_number else str(value)
            w.setCurrentText(name if present or value else "")
            w.activated.connect(lambda _i, p=path, box=w: self._set(p, box.currentText()) if box.currentText() else self._clear(p))
            return w
        w = QLineEdit(_text_of(spec, value) if present or value else "")
        w.setPlaceholderText(f"default: {_text_of(spec, spec.default) or chr(34) * 2}")
        w.setClearButtonEnabled(True)

        def done(p=path, box=w, s=spec):
            text = box.text()
            if text.strip() == "":
                self._clear(p)
            else:
                try:
                    self._set(p, _parse_scalar(s, text))
                except EditError as e:
                    self.sig_error.emit(str(e))

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
            card = QGroupBox(f"{title}  {label}".strip())
            cl = QVBoxLayout(card)
            bar = QHBoxLayout()
            for text, tip, fn in (("▲", "move up", lambda _c=False, k=i: self._move(path, k, -1)),
                                  ("▼", "move down", lambda _c=False, k=i: self._move(path, k, 1)),
                                  ("✕", "remove", lambda _c=False, k=i: self._remove(f"{path}[{k}]"))):
                b = QToolButton()
                b.setText(text)
                b.setToolTip(tip)
                b.clicked.connect(fn)
                bar.addWidget(b)
            bar.addStretch(1)
            cl.addLayout(bar)
            cl.addWidget(self._children(spec, item, f"{path}[{i}]"))
            self.widgets[f"{path}[{i}]"] = card
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
            table.horizontalHeader().setStretchLastSection(True)
            table.verticalHeader().setVisible(False)
            keys = sorted(container, key=str)
            for r, k in enumerate(keys):
                val = container[k].string_value if single_string else container[k]
                table.setItem(r, 0, QTableWidgetItem(str(k)))
                table.setItem(r, 1, QTableWidgetItem(str(val)))
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
        try:
            self.controller.edit(description, fn, source="form")
        except (EditError, PathError, ValueError) as e:
            self.sig_error.emit(str(e))
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
