"""Ensembles across models: the called models exist with the versions asked for, no cycles, tensors wired to
real inputs and outputs with consistent types and shapes, batch sizes, decoupled branches.

Follows Triton's model_repository_manager.cc (dependency graph) and ensemble_utils.cc (ValidateEnsembleConfig).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from tritonclient.grpc import model_config_pb2 as pb

from studio.repository import ModelEntry
from studio.validate.findings import Finding

WILDCARD = -1


@dataclass
class _Node:
    model: str
    dtype: int = 0
    dims: list[int] = field(default_factory=list)
    full: list[int] = field(default_factory=list)
    decoupled: bool = False
    label: int = 0
    visited: bool = False
    prev: list = field(default_factory=list)
    next: list = field(default_factory=list)
    sibling: _Node | None = None

    @classmethod
    def of(cls, model: str, batching: bool, dtype: int, dims) -> _Node:
        d = list(dims)
        return cls(model, dtype, d, ([-1] if batching else []) + d)


def _dims_match(a: list[int], b: list[int]) -> bool:
    if len(a) != len(b):
        return False
    return all(x == y or x == WILDCARD or y == WILDCARD for x, y in zip(a, b))


def _shape(dims: list[int]) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"


class _Stop(Exception):
    pass


def check_ensembles(entries: dict[str, ModelEntry], configs: dict[str, pb.ModelConfig], options) -> list[Finding]:
    findings: list[Finding] = []
    ensembles = {n: c for n, c in configs.items() if c.HasField("ensemble_scheduling")}
    for name, cfg in ensembles.items():
        entry = entries.get(name)
        file = str(entry.config) if entry is not None and entry.config else None
        doc = entry.document if entry is not None else None

        def err(rule, msg, path=None, hint=None, _name=name, _file=file, _doc=doc, severity="error"):
            f = Finding(severity, rule, msg, path, hint, file=_file, model=_name)
            if _doc is not None and path is not None:
                from studio.validate import _locate

                _locate([f], _doc, _file)
            findings.append(f)

        steps = cfg.ensemble_scheduling.step
        missing = [s.model_name for s in steps if s.model_name and s.model_name not in entries]
        if missing and not options.config_only:
            err(
                "ensemble.missing-models",
                f"ensemble {name} contains models that are not available: {', '.join(dict.fromkeys(missing))} (loading "
                f"it, Triton says: failed to poll model '{missing[0]}': model not found in any model repository.)",
                "ensemble_scheduling",
                hint="every step's model_name must be a model folder of the same repository",
            )
            continue
        cycle = _cycle(name, configs)
        if cycle:
            err("ensemble.circular", f"circular dependency between ensembles: {name} -> ... -> {cycle} -> {name}", "ensemble_scheduling")
            continue
        stop = False
        for i, s in enumerate(steps):
            if s.model_version <= 0 or s.model_name not in entries or options.config_only:
                continue
            target = configs.get(s.model_name)
            existing = [int(v) for v in entries[s.model_name].versions]
            if target is not None:
                from studio.validate import _versions_to_load

                loaded = _versions_to_load(target, existing)
            else:
                loaded = existing
            if s.model_version not in loaded and not existing and getattr(options, "config_only_checkout", False):
                err(
                    "ensemble.required-version",
                    f"ensemble '{name}' depends on version {s.model_version} of '{s.model_name}', which has no version "
                    "folders: Triton will not load it until model files are present",
                    f"ensemble_scheduling.step[{i}].model_version",
                    severity="warning",
                )
                stop = True
            elif s.model_version not in loaded:
                err(
                    "ensemble.required-version",
                    f"ensemble '{name}' depends on '{s.model_name}' whose required version {s.model_version} is not loaded",
                    f"ensemble_scheduling.step[{i}].model_version",
                    hint=f"versions loaded under its version policy: {', '.join(map(str, loaded)) or 'none'}",
                )
                stop = True
        if stop:
            continue
        try:
            _validate_ensemble(name, cfg, configs, err)
        except _Stop:
            pass
    return findings


def _cycle(start: str, configs: dict[str, pb.ModelConfig]) -> str | None:
    """The ensemble through which `start` calls itself again, if any."""
    seen: set[str] = set()
    stack = [(start, start)]
    while stack:
        current, via = stack.pop()
        cfg = configs.get(current)
        if cfg is None or not cfg.HasField("ensemble_scheduling"):
            continue
        for s in cfg.ensemble_scheduling.step:
            if s.model_name == start:
                return current
            if s.model_name not in seen:
                seen.add(s.model_name)
                stack.append((s.model_name, current))
    return None


def _validate_ensemble(name: str, cfg: pb.ModelConfig, configs, err) -> None:
    batching = cfg.max_batch_size > 0
    tensors: dict[str, _Node] = {}
    for io in cfg.input:
        dims = io.reshape.shape if io.HasField("reshape") else io.dims
        tensors[io.name] = _Node.of(name, batching, io.data_type, dims)
    sink = _Node(name)
    for io in cfg.output:
        dims = io.reshape.shape if io.HasField("reshape") else io.dims
        node = tensors.setdefault(io.name, _Node.of(name, batching, io.data_type, dims))
        sink.prev.append(node)
        node.next.append(sink)

    def consistent(lhs: _Node, rhs: _Node, prefix: str, path: str) -> None:
        if lhs.dtype != rhs.dtype:
            err("ensemble.tensor-type",
                prefix + f"inconsistent data type: {pb.DataType.Name(lhs.dtype)} is inferred from model {lhs.model} "
                f"while {pb.DataType.Name(rhs.dtype)} is inferred from model {rhs.model}", path)
            raise _Stop
        if not _dims_match(lhs.dims, rhs.dims) and not _dims_match(lhs.full, rhs.full):
            err("ensemble.tensor-shape",
                prefix + f"inconsistent shape: {_shape(lhs.full)} is inferred from model {lhs.model} while "
                f"{_shape(rhs.full)} is inferred from model {rhs.model}", path)
            raise _Stop

    for idx, step in enumerate(cfg.ensemble_scheduling.step):
        base = f"ensemble_scheduling.step[{idx}]"
        mc = configs.get(step.model_name)
        if mc is None:
            continue  # config-only validation: the called model is not at hand
        if mc.max_batch_size != 0 and mc.max_batch_size < cfg.max_batch_size:
            err("ensemble.batch-size",
                f"ensemble {name} allows maximum batch size {cfg.max_batch_size}, but it contains model "
                f"{step.model_name} which only allows maximum batch size to be {mc.max_batch_size}",
                "max_batch_size", hint=f"lower max_batch_size to {mc.max_batch_size} or raise it in {step.model_name}")
            raise _Stop
        if not mc.input and not mc.output:
            continue  # IO comes from the backend's auto-complete: nothing to check here
        step_batching = mc.max_batch_size > 0
        inputs = {io.name for io in mc.input}
        for key, tname in step.input_map.items():
            if key not in inputs:
                err("ensemble.unknown-input",
                    f"in ensemble {name}, ensemble tensor {tname} is mapping to non-existing input {key} in model {step.model_name}",
                    f'{base}.input_map["{key}"]', hint=f"{step.model_name} has the inputs: {', '.join(sorted(inputs))}")
                raise _Stop
        for io in mc.input:
            mapped = [t for k, t in step.input_map.items() if k == io.name]
            for tname in mapped:
                node = _Node.of(step.model_name, step_batching, io.data_type, io.dims)
                if tname in tensors:
                    consistent(tensors[tname], node, f"in ensemble {name}, ensemble tensor {tname}: ", f'{base}.input_map["{io.name}"]')
                else:
                    tensors[tname] = node
            if not mapped and not io.optional:
                err("ensemble.unmapped-input",
                    f"in ensemble {name}, input {io.name} in model {step.model_name} is not mapped to any ensemble tensors",
                    f"{base}.input_map", hint=f'add input_map {{ key: "{io.name}" value: "<tensor>" }}')
                raise _Stop
        outputs = {io.name for io in mc.output}
        for key, tname in step.output_map.items():
            if key not in outputs:
                err("ensemble.unknown-output",
                    f"in ensemble {name}, ensemble tensor {tname} is mapped from non-existing output {key} in model {step.model_name}",
                    f'{base}.output_map["{key}"]', hint=f"{step.model_name} has the outputs: {', '.join(sorted(outputs))}")
                raise _Stop
        sibling = _Node(step.model_name)
        for key, tname in step.output_map.items():
            io = next(o for o in mc.output if o.name == key)
            node = _Node.of(step.model_name, step_batching, io.data_type, io.dims)
            if tname in tensors:
                consistent(tensors[tname], node, f"in ensemble {name}, ensemble tensor {tname}: ", f'{base}.output_map["{key}"]')
            else:
                tensors[tname] = node
            tensors[tname].sibling = sibling
        decoupled = mc.model_transaction_policy.decoupled
        for tname in step.output_map.values():
            node = tensors[tname]
            node.decoupled = decoupled
            for _, iname in step.input_map.items():
                prev = tensors.get(iname)
                if prev is None:
                    prev = tensors.setdefault(iname, _Node(step.model_name))
                node.prev.append(prev)
                prev.next.append(node)

    label = 0
    queue: deque[_Node] = deque()
    for io in cfg.input:
        t = tensors[io.name]
        t.visited = True
        queue.append(t)
    while queue:
        cur = queue.popleft()
        for nxt in cur.next:
            if nxt.visited or not all(p.visited for p in nxt.prev):
                continue
            if not nxt.prev:
                continue
            first = nxt.prev[0].label
            if any(p.label != first for p in nxt.prev):
                err("ensemble.decoupled-branches",
                    f"in ensemble {name}, step of model '{nxt.model}' receives inputs originated from different decoupled models",
                    "ensemble_scheduling")
                raise _Stop
            if nxt.sibling is not None:
                if nxt.sibling.visited:
                    nxt.label = nxt.sibling.label
                else:
                    if nxt.decoupled:
                        label += 1
                        nxt.label = label
                    else:
                        nxt.label = first
                    nxt.sibling.label = nxt.label
                    nxt.sibling.visited = True
            else:
                if nxt.decoupled:
                    label += 1
                    nxt.label = label
                else:
                    nxt.label = first
            nxt.visited = True
            queue.append(nxt)
