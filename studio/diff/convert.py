"""'Convert framework' preview: what must change to move a model from one framework to another.

The plan is a target message (apply it to the ConfigDocument for minimal edits), the semantic changes, the
model files to rename, and notes for what the studio cannot decide (tensor names come from the new model).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tritonclient.grpc import model_config_pb2 as pb

from studio.diff.semantic import Change, semantic_diff
from studio.frameworks import Framework, applies, framework_of, frameworks

_TORCH_NAME = re.compile(r"^(.+)__(\d+)$")


@dataclass
class ConversionPlan:
    source: Framework | None
    target: Framework
    message: pb.ModelConfig
    changes: list[Change] = field(default_factory=list)
    renames: list[tuple[str, str]] = field(default_factory=list)  # model file in each version folder
    notes: list[str] = field(default_factory=list)


def _clear_path(msg, path: str) -> bool:
    """Clear a (possibly [*]-indexed) field path in a message; True when something was set."""
    head, _, rest = path.partition(".")
    name = head.split("[", 1)[0]
    fd = msg.DESCRIPTOR.fields_by_name.get(name)
    if fd is None:
        return False
    if not rest:
        if name.startswith("parameters") and '["' in head:
            key = head.split('["', 1)[1].rstrip('"]')
            if key in msg.parameters:
                del msg.parameters[key]
                return True
            return False
        had = bool(len(getattr(msg, name))) if fd.is_repeated else msg.HasField(name) if fd.message_type or fd.containing_oneof else bool(getattr(msg, name))
        msg.ClearField(name)
        return had
    value = getattr(msg, name)
    if fd.is_repeated:
        return any([_clear_path(v, rest) for v in value])
    if fd.message_type is not None and msg.HasField(name):
        return _clear_path(value, rest)
    return False


def plan_conversion(config: pb.ModelConfig, target_key: str) -> ConversionPlan:
    fws = frameworks()
    if target_key not in fws:
        raise ValueError(f"unknown framework {target_key!r}; known: {', '.join(fws)}")
    target = fws[target_key]
    source = framework_of(config)
    if target.key == "ensemble" or (source is not None and source.key == "ensemble"):
        raise ValueError("an ensemble is a pipeline of models, not a framework: it cannot be converted")
    out = pb.ModelConfig()
    out.CopyFrom(config)
    notes: list[str] = []
    out.platform = target.platform
    out.backend = target.backend
    if source is not None and out.default_model_filename == source.default_model_filename:
        out.ClearField("default_model_filename")
    elif out.default_model_filename:
        notes.append(f"default_model_filename '{out.default_model_filename}' is kept: check it names the new model file")
    renames = []
    if source is not None and source.default_model_filename != target.default_model_filename:
        renames.append((source.default_model_filename, target.default_model_filename))
    # fields that belong to the old framework only
    if source is not None:
        for path in source.specific_fields:
            ok, _ = applies(path, target)
            if not ok and _clear_path(out, path):
                notes.append(f"{path} removed: {source.label} only")
    # accelerators that the new framework does not have
    ea = out.optimization.execution_accelerators
    for kind, allowed in (("gpu_execution_accelerator", target.gpu_accelerators), ("cpu_execution_accelerator", target.cpu_accelerators)):
        accs = getattr(ea, kind)
        keep = [a for a in accs if a.name in allowed]
        if len(keep) != len(accs):
            dropped = [a.name for a in accs if a.name not in allowed]
            notes.append(f"{kind} {', '.join(dropped)} removed: not available for {target.label}")
            kept = [type(a)() for a in keep]
            for k, a in zip(kept, keep):
                k.CopyFrom(a)
            del accs[:]
            for k in kept:
                accs.add().CopyFrom(k)
    if out.HasField("optimization") and not out.optimization.ListFields():
        out.ClearField("optimization")
    # backend parameters of the old backend
    if source is not None:
        for key in list(out.parameters):
            if key in source.parameters and key not in target.parameters:
                del out.parameters[key]
                notes.append(f'parameters["{key}"] removed: a {source.label} backend parameter')
    # tensor naming
    if target.io_naming == "index":
        for kind in ("input", "output"):
            for i, io in enumerate(getattr(out, kind)):
                if not _TORCH_NAME.match(io.name):
                    new = f"{io.name or kind.upper()}__{i}"
                    notes.append(f"{kind} '{io.name}' renamed to '{new}' (PyTorch <name>__<index> convention); check the order matches forward()")
                    io.name = new
    elif source is not None and source.io_naming == "index":
        notes.append("tensor names keep the PyTorch __<index> suffix: rename them to the new model's tensor names")
    if target.key == "python":
        notes.append("write model.py (TritonPythonModel) in each version folder")
    if not target.auto_complete and not config.input:
        notes.append(f"{target.label} does not auto-complete: list inputs and outputs with dims")
    plan = ConversionPlan(source, target, out, semantic_diff(config, out), renames, notes)
    return plan
