"""Semantic diff of two ModelConfig messages at field-path level.

Repeated messages are matched by what identifies them, not by position: inputs and outputs by name,
instance groups by name, ensemble steps by model name, warmups by name, sequence controls by name, states by
input name; map entries by key. Each difference gets a category from the framework knowledge base.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from google.protobuf import text_format
from google.protobuf.message import Message

from studio.config.descriptors import is_map, is_message, is_repeated
from studio.config.render import format_scalar
from studio.frameworks import Framework, framework_of, specific_to

CATEGORIES = ("framework", "batching", "io", "instances", "versioning", "other")

# repeated message field -> the field that identifies an element
IDENTITY = {
    "input": "name",
    "output": "name",
    "instance_group": "name",
    "step": "model_name",
    "model_warmup": "name",
    "control_input": "name",
    "state": "input_name",
    "batch_input": "kind",
    "gpu_execution_accelerator": "name",
    "cpu_execution_accelerator": "name",
    "metric_control": "metric_identifier",
    "agents": "name",
    "resources": "name",
}
_BATCHING = ("max_batch_size", "dynamic_batching", "sequence_batching")
_IO = ("input", "output", "batch_input", "batch_output")
_INSTANCES = ("instance_group", "optimization", "model_warmup", "response_cache")


@dataclass
class Change:
    path: str
    kind: str  # added | removed | changed
    left: str | None
    right: str | None
    category: str
    frameworks: tuple[str, ...] = ()  # frameworks the field is specific to (labels)

    def to_json(self) -> dict:
        return asdict(self)


def _categorize(path: str) -> tuple[str, tuple[str, ...]]:
    owners = specific_to(path)
    if owners:
        return "framework", tuple(f.label for f in owners)
    top = path.split(".", 1)[0].split("[", 1)[0]
    if top in ("platform", "backend", "runtime", "default_model_filename", "cc_model_filenames", "parameters",
               "ensemble_scheduling", "model_operations"):
        return "framework", ()
    if top in _BATCHING:
        return "batching", ()
    if top in _IO:
        return "io", ()
    if top in _INSTANCES:
        return "instances", ()
    if top == "version_policy":
        return "versioning", ()
    return "other", ()


def _text(fd, value) -> str:
    if isinstance(value, Message):
        return "{ " + text_format.MessageToString(value, as_one_line=True) + " }"
    return format_scalar(fd, value)


def _key_text(value) -> str:
    if isinstance(value, Message):
        return text_format.MessageToString(value, as_one_line=True)
    return str(value)


def _quote(key) -> str:
    return f'"{key}"' if isinstance(key, str) else str(key)


def semantic_diff(a: Message, b: Message, prefix: str = "") -> list[Change]:
    out: list[Change] = []
    _diff(a, b, prefix, out)
    return out


def _add(out, path, kind, left, right):
    cat, fws = _categorize(path)
    out.append(Change(path, kind, left, right, cat, fws))


def _diff(a: Message, b: Message, prefix: str, out: list[Change]) -> None:
    for fd in a.DESCRIPTOR.fields:
        name = fd.name
        path = prefix + name
        va, vb = getattr(a, name), getattr(b, name)
        if is_map(fd):
            vfd = fd.message_type.fields_by_name["value"]
            for key in sorted(set(va) | set(vb), key=str):
                p = f"{path}[{_quote(key)}]"
                if key not in vb:
                    _add(out, p, "removed", _text(vfd, va[key]), None)
                elif key not in va:
                    _add(out, p, "added", None, _text(vfd, vb[key]))
                elif is_message(vfd):
                    _diff(va[key], vb[key], p + ".", out)
                elif va[key] != vb[key]:
                    _add(out, p, "changed", _text(vfd, va[key]), _text(vfd, vb[key]))
        elif is_repeated(fd) and is_message(fd):
            _diff_elements(fd, list(va), list(vb), path, out)
        elif is_repeated(fd):
            if list(va) != list(vb):
                left = "[" + ", ".join(_text(fd, v) for v in va) + "]" if len(va) else None
                right = "[" + ", ".join(_text(fd, v) for v in vb) + "]" if len(vb) else None
                _add(out, path, "added" if left is None else "removed" if right is None else "changed", left, right)
        elif is_message(fd):
            ha, hb = a.HasField(name), b.HasField(name)
            if ha and hb:
                _diff(va, vb, path + ".", out)
            elif ha:
                _add(out, path, "removed", _text(fd, va), None)
            elif hb:
                _add(out, path, "added", None, _text(fd, vb))
        else:
            present_a = a.HasField(name) if fd.containing_oneof is not None else va != type(va)()
            present_b = b.HasField(name) if fd.containing_oneof is not None else vb != type(vb)()
            if va != vb or present_a != present_b:
                left = _text(fd, va) if present_a else None
                right = _text(fd, vb) if present_b else None
                kind = "added" if left is None else "removed" if right is None else "changed"
                _add(out, path, kind, left, right)


def _diff_elements(fd, la: list, lb: list, path: str, out: list[Change]) -> None:
    key_field = IDENTITY.get(fd.name)
    if key_field is None:
        ka = [f"#{i}" for i in range(len(la))]
        kb = [f"#{i}" for i in range(len(lb))]
    else:
        ka = _keys(la, key_field)
        kb = _keys(lb, key_field)
    index_b = {k: i for i, k in enumerate(kb)}
    index_a = {k: i for i, k in enumerate(ka)}
    lone_a = [i for i, k in enumerate(ka) if k not in index_b]
    lone_b = {j for j, k in enumerate(kb) if k not in index_a}
    # an element whose identity changed (a renamed input) at the same position: diff it field by field
    renamed = {i: i for i in lone_a if i in lone_b}
    for i, k in enumerate(ka):
        p = f"{path}[{i}]"
        if i in renamed:
            _diff(la[i], lb[i], p + ".", out)
        elif k not in index_b:
            _add(out, p, "removed", _text(fd, la[i]), None)
        else:
            j = index_b[k]
            if la[i] != lb[j]:
                _diff(la[i], lb[j], p + ".", out)
    for j, k in enumerate(kb):
        if k not in index_a and j not in renamed:
            _add(out, f"{path}[{j}]", "added", None, _text(fd, lb[j]))


def _keys(elems: list, key_field: str) -> list[str]:
    seen: dict[str, int] = {}
    keys = []
    for i, e in enumerate(elems):
        v = getattr(e, key_field)
        k = _key_text(v) if v not in ("", 0) and not (isinstance(v, Message) and not v.ByteSize()) else f"#{i}"
        n = seen.get(k, 0)
        seen[k] = n + 1
        keys.append(k if n == 0 else f"{k}#{n}")
    return keys


def framework_label(msg: Message) -> Framework | None:
    return framework_of(msg)
