"""Which tuning control each config field gets, derived from the schema's field specs (studio.config.schema),
and the checks a control runs before a value may go to the server.

    specs = control_specs(doc)                        # ordered ControlSpec list: batching, model, instances, more
    message = refusal(doc, {"dynamic_batching.preferred_batch_size": [64]}, "m")   # Triton's words, or None
    apply_edits(doc, edits)                           # the same edits, on a document (None clears a field)
    describe(before_doc, after_doc)                   # "max_queue_delay 100->2000 us" (a marker's label)

An edit is a field path -> value; None removes the field ("dynamic_batching": None turns batching off, {} turns
it on with Triton's defaults).
"""

from __future__ import annotations

from dataclasses import dataclass

from studio.config import ConfigDocument
from studio.config.schema import FieldSpec, find_spec

BATCHING = "dynamic_batching"
# the slider's span for *_microseconds fields (logarithmic); the typed box takes the schema's full range
MICROSECONDS_SLIDER_MAX = 100_000
# dynamic_batching scalars shown in the main rows; the rest of its scalars go under "more..."
PRIMARY = ("max_queue_delay_microseconds", "preferred_batch_size", "preserve_ordering", "priority_levels",
           "default_priority_level")


@dataclass(frozen=True)
class ControlSpec:
    path: str  # document path
    label: str
    widget: str  # toggle | log_slider | chips | int | enum | bool
    group: str  # batching | model | instances | more
    minimum: int | None = None
    maximum: int | None = None
    slider_max: int | None = None
    enum_values: tuple[str, ...] = ()
    unit: str = ""
    help: str | None = None
    needs_batching: bool = False  # only meaningful while dynamic_batching is on


def _label(name: str) -> str:
    return name.removesuffix("_microseconds").replace("_", " ")


def _for_scalar(spec: FieldSpec, path: str, group: str, needs_batching: bool) -> ControlSpec | None:
    lo, hi = spec.int_range or (None, None)
    if spec.kind == "int" and spec.repeated:
        return ControlSpec(path, _label(spec.name), "chips", group, max(1, lo or 1), hi, help=spec.help,
                           needs_batching=needs_batching)
    if spec.repeated:
        return None
    if spec.kind == "int":
        if spec.name.endswith("_microseconds"):
            return ControlSpec(path, _label(spec.name), "log_slider", group, max(0, lo or 0), hi,
                               slider_max=MICROSECONDS_SLIDER_MAX, unit="us", help=spec.help,
                               needs_batching=needs_batching)
        return ControlSpec(path, _label(spec.name), "int", group, lo, hi, help=spec.help, needs_batching=needs_batching)
    if spec.kind == "bool":
        return ControlSpec(path, _label(spec.name), "bool", group, help=spec.help, needs_batching=needs_batching)
    if spec.kind == "enum":
        return ControlSpec(path, _label(spec.name), "enum", group, enum_values=spec.enum_values, help=spec.help,
                           needs_batching=needs_batching)
    return None


def control_specs(doc: ConfigDocument | None = None) -> list[ControlSpec]:
    """The dashboard's config controls, in display order. Ranges come from the schema and the current config
    (a batching model keeps max_batch_size >= 1: its requests carry a batch dimension)."""
    out: list[ControlSpec] = []
    db = find_spec(BATCHING)
    out.append(ControlSpec(BATCHING, "dynamic batching", "toggle", "batching", help=db.help))
    children = {c.name: c for c in db.children}
    for name in PRIMARY:
        c = _for_scalar(children[name], f"{BATCHING}.{name}", "batching", True)
        if c is not None:
            out.append(c)
    mbs = find_spec("max_batch_size")
    lo = 1 if doc is None or (doc.get("max_batch_size") or 0) > 0 else 0
    hi = mbs.int_range[1] if mbs.int_range else None
    out.append(ControlSpec("max_batch_size", "max batch size", "int", "model", lo, hi, help=mbs.help))
    ig = find_spec("instance_group")
    for name in ("count", "kind"):
        c = _for_scalar(ig.child(name), f"instance_group[0].{name}", "instances", False)
        if c is not None:
            if name == "count":
                c = ControlSpec(c.path, "instances", c.widget, c.group, 1, c.maximum, help=c.help)
            else:
                c = ControlSpec(c.path, "instance kind", c.widget, c.group, enum_values=c.enum_values, help=c.help)
            out.append(c)
    for name, spec in children.items():
        if name in PRIMARY:
            continue
        c = _for_scalar(spec, f"{BATCHING}.{name}", "more", True)
        if c is not None:
            out.append(c)
    return out


def current_value(doc: ConfigDocument, spec: ControlSpec):
    if spec.widget == "toggle":
        return doc.has(spec.path)
    if spec.path.startswith("instance_group[0]") and not doc.has("instance_group[0]"):
        return 1 if spec.path.endswith("count") else "KIND_AUTO"
    v = doc.get(spec.path)
    if spec.path.endswith(".count") and not v:
        return 1  # Triton's default count
    if spec.widget == "chips":
        return list(v or [])
    return v


def apply_edits(doc: ConfigDocument, edits: dict) -> None:
    """Apply path -> value edits to a document (None: remove the field; {} for a message: an empty block)."""
    for path, value in edits.items():
        if value is None:
            if doc.has(path):
                doc.clear(path)
        elif path.startswith("instance_group[0]") and not doc.has("instance_group[0]"):
            doc.set("instance_group", [{path.rsplit(".", 1)[1]: value}])
        elif isinstance(value, list) and not value:
            if doc.has(path):
                doc.clear(path)
        else:
            doc.set(path, value)


def refusal(doc: ConfigDocument, edits: dict, model_name: str | None = None) -> str | None:
    """Why Triton would reject the document with these edits (its own words and the hint), or None."""
    from studio.validate import validate_config

    trial = ConfigDocument.parse(doc.text)
    before = {f.message for f in validate_config(trial, model_name=model_name) if f.severity == "error"}
    try:
        apply_edits(trial, edits)
    except Exception as e:  # noqa: BLE001 - a value the field cannot hold (negative uint, bad enum)
        return str(e).splitlines()[0]
    errors = [f for f in validate_config(trial, model_name=model_name)
              if f.severity == "error" and f.message not in before]
    if not errors:
        return None
    f = errors[0]
    return f.message + (f" ({f.hint})" if f.hint else "")


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(map(str, v)) + "]"
    return str(v)


def describe(before: ConfigDocument, after: ConfigDocument, specs: list[ControlSpec] | None = None) -> str:
    """The change between two configs over the dashboard's fields, short enough for a marker's label."""
    specs = specs or control_specs(before)
    parts = []
    switched_on = after.has(BATCHING) and not before.has(BATCHING)
    base = before
    if switched_on:
        # batching switched on: its settings other than Triton's defaults are part of the change
        base = ConfigDocument.parse(before.text)
        base.set(BATCHING, {})
    for s in specs:
        a, b = current_value(base if s.needs_batching else before, s), current_value(after, s)
        if s.needs_batching and not after.has(BATCHING):
            continue  # batching switched off: the toggle says it
        if s.widget == "toggle":
            a = current_value(before, s)
        if a != b:
            name = "batching" if s.widget == "toggle" else s.label.replace(" ", "_") if s.group == "more" else s.label
            if s.path == f"{BATCHING}.max_queue_delay_microseconds":
                name = "max_queue_delay"
            unit = f" {s.unit}" if s.unit else ""
            parts.append(f"{name} {_fmt(a)}->{_fmt(b)}{unit}")
    return ", ".join(parts) or "no change"
