"""Triton's rules for one model's config, checked on the normalized message.

Each check follows Triton's own (model_config_utils.cc: ValidateModelConfig, ValidateModelIOConfig,
ValidateBatchIO, ValidateInstanceGroup, ValidateEnsembleSchedulingConfig; the backends' model loading) and
uses Triton's wording. Triton stops at the first error; we report every one we find.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections import deque
from dataclasses import dataclass, field

from tritonclient.grpc import model_config_pb2 as pb

from studio.frameworks import framework_of, known_backends, known_platforms, python_based_backends
from studio.validate.findings import Edit, Finding
from studio.validate.python_model import read_model_py

WILDCARD = -1
SB = pb.ModelSequenceBatching
CONTROL = SB.Control
G = pb.ModelInstanceGroup
DT = pb.DataType


@dataclass
class Context:
    name: str
    cfg: pb.ModelConfig  # normalized: what Triton validates
    written: pb.ModelConfig  # as written in the file
    auto_complete: bool = True  # Triton's default; False mirrors --disable-auto-complete-config
    gpus: set[int] = field(default_factory=set)  # GPUs of this machine (info only: the target may differ)
    extra_backends: set[str] = field(default_factory=set)
    group_origin: list[int] = field(default_factory=list)
    triton_version: str = "2.51"  # the release whose rules apply (see version_at_least)
    config_only: bool = False  # no files, no server: the server's backends are unknown
    findings: list[Finding] = field(default_factory=list)

    def at_least(self, version: str) -> bool:
        return version_at_least(self.triton_version, version)

    def add(self, severity, rule, message, path=None, hint=None, edits=()):
        self.findings.append(
            Finding(severity, rule, message, path=path, hint=hint, model=self.name, edits=tuple(edits))
        )

    def error(self, rule, message, path=None, hint=None, edits=()):
        self.add("error", rule, message, path, hint, edits)

    def warning(self, rule, message, path=None, hint=None, edits=()):
        self.add("warning", rule, message, path, hint, edits)

    def info(self, rule, message, path=None, hint=None, edits=()):
        self.add("info", rule, message, path, hint, edits)

    @property
    def autocompletes(self) -> bool:
        """With auto-complete on, backends that read the model fill in IO, dims and max_batch_size."""
        fw = framework_of(self.cfg)
        return self.auto_complete and fw is not None and fw.auto_complete


def version_at_least(have: str, want: str) -> bool:
    """'2.51' >= '2.50' (Triton's server version; a container tag such as '24.10' maps to 2.51)."""

    def key(v: str) -> tuple[int, ...]:
        parts = [int(x) for x in re.findall(r"\d+", v)[:3]] or [0]
        if parts[0] >= 20:  # NGC container YY.MM: 24.10 is Triton 2.51 (one release a month since 23.01 = 2.30)
            parts = [2, 30 + (parts[0] - 23) * 12 + (parts[1] if len(parts) > 1 else 1) - 1]
        return tuple(parts)

    return key(have) >= key(want)


def check_config(ctx: Context) -> list[Finding]:
    check_release_fields(ctx)
    check_platform_backend(ctx)
    check_batching(ctx)
    check_dynamic_batching(ctx)
    check_sequence_batching(ctx)
    check_ensemble_scheduling(ctx)
    check_cache_and_metrics(ctx)
    check_io(ctx)
    check_batch_io(ctx)
    check_instance_groups(ctx)
    check_backend_files_and_runtime(ctx)
    check_warmup(ctx)
    check_conventions(ctx)
    return ctx.findings


# -- ValidateModelConfig -----------------------------------------------------------------------------------
def check_release_fields(ctx: Context) -> None:
    """Fields and enum values newer than the chosen Triton release (resources/validate/triton-fields.json, from
    model_config.proto's history): that release's parser refuses the whole file with protobuf's message."""
    from studio.validate.release_fields import unknown_to

    def walk(msg, prefix: str) -> None:
        for fd, value in msg.ListFields():
            path = f"{prefix}.{fd.name}" if prefix else fd.name
            rel = unknown_to(ctx.triton_version, f"{fd.containing_type.full_name}.{fd.name}")
            if rel is not None:
                ctx.error("release.unknown-field",
                          f'Message type "{fd.containing_type.full_name}" has no field named "{fd.name}". (Triton '
                          f"{ctx.triton_version} does not know field {fd.name}: added in {rel})", path,
                          hint=f"remove it, or validate for the server you run (--triton-version {rel} or newer)",
                          edits=(Edit("clear", path),))
                continue
            rep = getattr(fd, "is_repeated", None)  # protobuf >= 6 deprecates label
            repeated = bool(rep() if callable(rep) else rep) if rep is not None else fd.label == fd.LABEL_REPEATED
            items = list(value) if repeated else [value]
            if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
                for key in value:
                    v = value[key]
                    if hasattr(v, "ListFields"):
                        walk(v, f'{path}["{key}"]')
                continue
            for i, item in enumerate(items):
                where = f"{path}[{i}]" if repeated else path
                if fd.message_type is not None:
                    walk(item, where)
                elif fd.enum_type is not None:
                    name = fd.enum_type.values_by_number[item].name if item in fd.enum_type.values_by_number else None
                    rel = unknown_to(ctx.triton_version, f"{fd.enum_type.full_name}.{name}") if name else None
                    if rel is not None:
                        ctx.error("release.unknown-enum-value",
                                  f'Unknown enumeration value of "{name}" for field "{fd.name}". (Triton '
                                  f"{ctx.triton_version} does not know {name}: added in {rel})", where)

    walk(ctx.written, "")


def check_platform_backend(ctx: Context) -> None:
    c, n = ctx.cfg, ctx.name
    if not c.name:
        ctx.error("name.missing", "model configuration must specify 'name'", "name")
    if not c.backend:
        if c.platform != "ensemble" and c.platform:
            close = difflib.get_close_matches(c.platform, sorted(known_platforms()), n=1)
            ctx.error(
                "platform.unknown",
                f"unexpected platform type '{c.platform}' for {n}",
                "platform",
                hint=f"did you mean {close[0]}?" if close else f"known platforms: {', '.join(sorted(known_platforms()))}",
                edits=(Edit("set", "platform", close[0]),) if close else (),
            )
    elif c.platform == "ensemble":
        ctx.error(
            "ensemble.backend",
            f"Ensemble model '{n}' must have platform type '{c.platform}' and empty backend type",
            "backend",
            edits=(Edit("clear", "backend"),),
        )
    if not c.platform and not c.backend:
        ctx.error(
            "platform.missing",
            f"must specify 'platform' or 'backend' for '{n}'",
            None,
            hint="for example backend: \"python\" or platform: \"onnxruntime_onnx\"",
        )
    backend_type = _backend_type(c.backend)
    if backend_type is not None and backend_type != _backend_type_of_platform(c.platform):
        ctx.error(
            "platform.backend-pair",
            f"unexpected 'platform' and 'backend' pair, got:{c.platform}, {c.backend}",
            "platform" if ctx.written.platform else "backend",
            hint="platform and backend name different frameworks: keep one of them",
        )
    if c.backend == "python" and c.platform == "tensorflow_savedmodel":
        # the python backend serves platform tensorflow_savedmodel through its TensorFlow platform handler, which
        # wants a python file: the default file name Triton derives from the platform is not one
        fname = c.default_model_filename or "model.savedmodel"
        if not fname.endswith(".py"):
            ctx.error(
                "python.platform-handler",
                f'Model name must end with \'.py\'. Model name is "{fname}".',
                "platform",
                hint="backend python with platform tensorflow_savedmodel runs the python backend's TensorFlow "
                     "handler; for a TensorFlow model drop backend (or use backend: \"tensorflow\")",
            )
    if c.max_batch_size < 0:
        ctx.error(
            "batching.max-batch-size-negative",
            f"'max_batch_size' must be non-negative value for {n}",
            "max_batch_size",
            edits=(Edit("set", "max_batch_size", 0),),
        )


def _backend_type(backend: str) -> str | None:
    return {"tensorflow": "tf", "tensorrt": "trt", "onnxruntime": "ort", "pytorch": "pt"}.get(backend)


def _backend_type_of_platform(platform: str) -> str | None:
    return {
        "tensorflow_graphdef": "tf",
        "tensorflow_savedmodel": "tf",
        "tensorrt_plan": "trt",
        "onnxruntime_onnx": "ort",
        "pytorch_libtorch": "pt",
    }.get(platform)


def check_batching(ctx: Context) -> None:
    c, w = ctx.cfg, ctx.written
    if c.max_batch_size == 0 and w.HasField("dynamic_batching"):
        ctx.warning(
            "batching.dynamic-without-batch-dim",
            f"dynamic_batching has no effect on {ctx.name}: max_batch_size is 0, so requests carry no batch "
            "dimension to batch along",
            "dynamic_batching",
            hint="set max_batch_size > 0 (and leave the batch dimension out of dims), or remove dynamic_batching",
        )


def check_dynamic_batching(ctx: Context) -> None:
    c, n = ctx.cfg, ctx.name
    if not c.HasField("dynamic_batching"):
        return
    db = c.dynamic_batching
    written = list(ctx.written.dynamic_batching.preferred_batch_size)
    for i, size in enumerate(db.preferred_batch_size):
        path = f"dynamic_batching.preferred_batch_size[{i}]" if written else "max_batch_size"
        if size <= 0:
            ctx.error(
                "dynamic-batching.preferred-positive",
                f"dynamic batching preferred size must be positive for {n}",
                path,
                edits=(Edit("remove", path),) if written else (),
            )
        if size > c.max_batch_size:
            ctx.error(
                "dynamic-batching.preferred-le-max",
                f"dynamic batching preferred size must be <= max batch size for {n}",
                path,
                hint=f"preferred_batch_size {size} exceeds max_batch_size {c.max_batch_size}",
                edits=(Edit("set", "max_batch_size", max(written)),) if written else (),
            )
    if written and written == [c.max_batch_size]:
        ctx.info(
            "dynamic-batching.preferred-redundant",
            "preferred_batch_size equal to max_batch_size is what Triton uses when it is empty; Triton's "
            "batcher guide advises most models not to set it",
            "dynamic_batching.preferred_batch_size",
            edits=(Edit("clear", "dynamic_batching.preferred_batch_size"),),
        )
    levels = db.priority_levels
    if levels != 0:
        if db.default_priority_level == 0 or db.default_priority_level > levels:
            ctx.error(
                "dynamic-batching.default-priority-range",
                f"default priority level must be in range [1, {levels}] for {n}",
                "dynamic_batching.default_priority_level"
                if ctx.written.dynamic_batching.default_priority_level
                else "dynamic_batching.priority_levels",
                edits=(Edit("set", "dynamic_batching.default_priority_level", levels),),
            )
        for key in db.priority_queue_policy:
            if key == 0 or key > levels:
                ctx.error(
                    "dynamic-batching.priority-policy-range",
                    f"priority queue policy must have priority level in range [1, {levels}] for {n}",
                    f"dynamic_batching.priority_queue_policy[{key}]",
                )
    if db.preserve_ordering:
        if levels > 1:
            ctx.error(
                "dynamic-batching.preserve-ordering-priorities",
                f"Only one priority level is allowed when 'preserve_ordering' is true for {n}",
                "dynamic_batching.preserve_ordering",
            )
        policies = [("dynamic_batching.default_queue_policy", db.default_queue_policy)]
        policies += [(f"dynamic_batching.priority_queue_policy[{k}]", v) for k, v in db.priority_queue_policy.items()]
        for path, policy in policies:
            if policy.default_timeout_microseconds != 0 and policy.timeout_action == pb.ModelQueuePolicy.DELAY:
                ctx.error(
                    "dynamic-batching.preserve-ordering-delay",
                    f"Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for {n}",
                    f"{path}.timeout_action",
                    edits=(Edit("set", f"{path}.timeout_action", "REJECT"),),
                )


def check_sequence_batching(ctx: Context) -> None:
    c, n = ctx.cfg, ctx.name
    if not c.HasField("sequence_batching"):
        return
    sb = c.sequence_batching
    if c.response_cache.enable:
        from studio.validate.release_fields import rule_added_in, rule_known_to

        fragment = "with sequence batching scheduler. Please disable the response"
        message = (f"Response Cache does not currently support model {n} with sequence batching scheduler. Please "
                   "disable the response cache.")
        if rule_known_to(ctx.triton_version, fragment):
            ctx.error("cache.sequence", message, "response_cache.enable", edits=(Edit("clear", "response_cache"),))
        else:  # the check came later (model_config_utils.cc history): this release loads it
            ctx.warning("cache.sequence",
                        f"Triton {ctx.triton_version} loads this, but Triton {rule_added_in(fragment)} and later refuse "
                        f"it: {message}", "response_cache.enable", edits=(Edit("clear", "response_cache"),))
    for kind in (CONTROL.CONTROL_SEQUENCE_START, CONTROL.CONTROL_SEQUENCE_END, CONTROL.CONTROL_SEQUENCE_READY):
        _check_control(ctx, sb, kind, typed=False)
    corrid = _check_control(ctx, sb, CONTROL.CONTROL_SEQUENCE_CORRID, typed=True)
    if corrid is not None and corrid[1] not in (DT.TYPE_UINT64, DT.TYPE_INT64, DT.TYPE_UINT32, DT.TYPE_INT32, DT.TYPE_STRING):
        ctx.error(
            "sequence.corrid-type",
            f"unexpected data type for control CONTROL_SEQUENCE_CORRID for {n}. Allowed data types are "
            "TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING",
            corrid[2],
        )
    if sb.HasField("oldest"):
        written = list(ctx.written.sequence_batching.oldest.preferred_batch_size)
        for i, size in enumerate(sb.oldest.preferred_batch_size):
            path = f"sequence_batching.oldest.preferred_batch_size[{i}]" if written else "max_batch_size"
            if size <= 0:
                ctx.error("sequence.preferred-positive", f"sequence batching preferred batch size must be positive for {n}", path)
            if size > c.max_batch_size:
                ctx.error(
                    "sequence.preferred-le-max",
                    f"sequence batching preferred batch size must be <= max batch size for {n}",
                    path,
                )
    if sb.HasField("direct"):
        u = sb.direct.minimum_slot_utilization
        if u < 0.0 or u > 1.0:
            ctx.error(
                "sequence.slot-utilization",
                f"sequence batching minimum slot utilization must be in range (0.0, 1.0] for {n}",
                "sequence_batching.direct.minimum_slot_utilization",
            )
    for i, state in enumerate(sb.state):
        base = f"sequence_batching.state[{i}]"
        if not state.input_name or not state.output_name:
            ctx.warning("sequence.state-names", f"sequence batching state must specify 'input_name' and 'output_name' for {n}", base)
        if state.data_type == DT.TYPE_INVALID:
            ctx.warning("sequence.state-type", f"sequence batching state '{state.input_name}' must specify 'data_type' for {n}", base)
        if not state.dims:
            ctx.warning("sequence.state-dims", f"sequence batching state '{state.input_name}' must specify 'dims' for {n}", base)


def _check_control(ctx: Context, sb, kind, typed: bool):
    """GetBooleanSequenceControlProperties / GetTypedSequenceControlProperties, reporting every problem."""
    n = ctx.name
    kind_name = CONTROL.Kind.Name(kind)
    seen_tensors: set[str] = set()
    found = None
    for i, ci in enumerate(sb.control_input):
        base = f"sequence_batching.control_input[{i}]"
        if not ci.name:
            ctx.error("sequence.control-name", f"sequence batching control tensor must have a name for {n}", base)
            continue
        if ci.name in seen_tensors and kind == CONTROL.CONTROL_SEQUENCE_START:
            ctx.error(
                "sequence.control-tensor-reused",
                f"sequence batching control tensor '{ci.name}' is specified for multiple control kinds for {n}",
                base,
            )
        seen_tensors.add(ci.name)
        for j, ctl in enumerate(ci.control):
            if ctl.kind != kind:
                continue
            path = f"{base}.control[{j}]"
            if found is not None:
                ctx.error("sequence.control-multiple", f"sequence batching specifies multiple {kind_name} tensors for {n}", path)
                continue
            found = (ci.name, ctl.data_type, path)
            sizes = {
                "int32_false_true": len(ctl.int32_false_true),
                "fp32_false_true": len(ctl.fp32_false_true),
                "bool_false_true": len(ctl.bool_false_true),
            }
            given = [k for k, v in sizes.items() if v]
            if typed:
                if given:
                    ctx.error(
                        "sequence.control-values",
                        "sequence batching must not specify either 'int32_false_true', 'fp32_false_true' or "
                        f"'bool_false_true' for {kind_name} for {n}",
                        path,
                    )
                continue
            if not given:
                ctx.error(
                    "sequence.control-values",
                    "sequence batching must specify either 'int32_false_true', 'fp32_false_true' or "
                    f"'bool_false_true' for {kind_name} for {n}",
                    path,
                    hint="for example int32_false_true: [ 0, 1 ]",
                    edits=(Edit("set", f"{path}.int32_false_true", [0, 1]),),
                )
            elif len(given) > 1:
                ctx.error(
                    "sequence.control-values",
                    "sequence batching specifies more than one from 'int32_false_true', 'fp32_false_true' and "
                    f"'bool_false_true' for {kind_name} for {n}",
                    path,
                )
            elif sizes[given[0]] != 2:
                ctx.error(
                    "sequence.control-values",
                    f"sequence batching control '{given[0]}' must have exactly 2 entries for {kind_name} for {n}",
                    f"{path}.{given[0]}",
                )
    return found


def check_ensemble_scheduling(ctx: Context) -> None:
    c, n = ctx.cfg, ctx.name
    if c.HasField("ensemble_scheduling"):
        if c.platform != "ensemble":
            ctx.error(
                "ensemble.platform",
                f"ensemble scheduling cannot be set for model '{n}' whose platform is not ensemble",
                "ensemble_scheduling",
            )
            return
        if len(c.instance_group):
            ctx.error(
                "ensemble.instance-group",
                f"instance group should not be specified for ensemble '{n}'",
                "instance_group",
                edits=(Edit("clear", "instance_group"),),
            )
        if ctx.written.HasField("optimization"):
            ctx.error(
                "ensemble.optimization",
                f"optimization should not be specified for ensemble '{n}'",
                "optimization",
                edits=(Edit("clear", "optimization"),),
            )
        if len(c.model_warmup):
            ctx.error(
                "ensemble.warmup",
                f"model_warmup can not be specified for ensemble '{n}'",
                "model_warmup",
                edits=(Edit("clear", "model_warmup"),),
            )
        steps = c.ensemble_scheduling.step
        if not steps:
            ctx.error("ensemble.no-step", f"must specify 'step' for ensemble '{n}'", "ensemble_scheduling")
            return
        check_ensemble_graph(ctx)
    elif c.platform == "ensemble":
        ctx.error(
            "ensemble.scheduling-missing",
            f"ensemble scheduling must be set for ensemble {n} whose platform is ensemble",
            "platform",
        )


@dataclass
class _Tensor:
    name: str
    is_output: bool = False
    ready: bool = False
    prev: list = field(default_factory=list)
    next: list = field(default_factory=list)


def check_ensemble_graph(ctx: Context) -> None:
    """BuildEnsembleGraph + the data-flow part of ValidateEnsembleSchedulingConfig."""
    c, n = ctx.cfg, ctx.name
    tensors: dict[str, _Tensor] = {}
    for idx, step in enumerate(c.ensemble_scheduling.step):
        base = f"ensemble_scheduling.step[{idx}]"
        missing = False
        for fname in ("model_name", "input_map", "output_map"):
            v = getattr(step, fname)
            if (fname == "model_name" and not v) or (fname != "model_name" and len(v) == 0):
                ctx.error(f"ensemble.step-{fname.replace('_', '-')}", f"must specify '{fname}' in step {idx} of ensemble '{n}'", base)
                missing = True
        if missing:
            return
        if step.model_version == 0:
            ctx.warning(
                "ensemble.step-version-unset",
                f"step {idx} of ensemble '{n}' does not set model_version; write -1 to use the latest version",
                base,
                edits=(Edit("set", f"{base}.model_version", -1),),
            )
        outs = []
        for key, tname in step.output_map.items():
            t = tensors.get(tname)
            if t is not None:
                if t.is_output:
                    ctx.error(
                        "ensemble.tensor-written-twice",
                        f"ensemble tensor '{tname}' can appear in an output map only once for ensemble '{n}' step {idx}",
                        f'{base}.output_map["{key}"]',
                    )
                    return
                t.is_output = True
            else:
                t = tensors.setdefault(tname, _Tensor(tname, is_output=True))
            outs.append(t)
        for tname in step.input_map.values():
            t = tensors.setdefault(tname, _Tensor(tname))
            for o in outs:
                o.prev.append(t)
                t.next.append(o)
    queue: deque[_Tensor] = deque()
    for i, inp in enumerate(c.input):
        t = tensors.get(inp.name)
        if t is None:
            ctx.error(
                "ensemble.input-unused",
                f"ensemble input '{inp.name}' for ensemble {n}' is not used",
                f"input[{i}]",
                hint="map it to a step's input in input_map, or remove it",
            )
            continue
        t.ready = True
        queue.append(t)
    while queue:
        node = queue.popleft()
        for nxt in node.next:
            if nxt.ready:
                continue
            if all(p.ready for p in nxt.prev):
                nxt.ready = True
                queue.append(nxt)
    outputs = set()
    for i, out in enumerate(c.output):
        t = tensors.get(out.name)
        if t is None:
            ctx.error(
                "ensemble.output-unused",
                f"ensemble output '{out.name}' for ensemble {n}' is not used",
                f"output[{i}]",
                hint="write it from a step's output_map, or remove it",
            )
            continue
        if not t.ready:
            msg = f"output '{out.name}' for ensemble '{n}' is not written"
            last = t
            seen: set[str] = set()
            prev = t.prev
            while prev:
                nodes, prev = prev, []
                for node in nodes:
                    if not node.ready and node.name not in seen:
                        seen.add(node.name)
                        last = node
                        prev = node.prev
                        break
            if last.name != t.name:
                msg += f": at least one of its depending tensors, '{last.name}', is not connected"
            ctx.error("ensemble.output-not-written", msg, f"output[{i}]")
        else:
            outputs.add(out.name)
    for name, t in tensors.items():
        if name in outputs:
            continue
        if not t.ready or not t.next:
            ctx.error(
                "ensemble.tensor-unused",
                f"ensemble tensor '{name}' is unused in ensemble '{n}'",
                _tensor_path(c, name),
                hint="every ensemble tensor must be read by a later step or be an ensemble output",
            )


def _tensor_path(c: pb.ModelConfig, tensor: str) -> str:
    for idx, step in enumerate(c.ensemble_scheduling.step):
        for key, v in step.output_map.items():
            if v == tensor:
                return f'ensemble_scheduling.step[{idx}].output_map["{key}"]'
        for key, v in step.input_map.items():
            if v == tensor:
                return f'ensemble_scheduling.step[{idx}].input_map["{key}"]'
    return "ensemble_scheduling"


def check_cache_and_metrics(ctx: Context) -> None:
    c, n = ctx.cfg, ctx.name
    if c.model_transaction_policy.decoupled and c.response_cache.enable:
        ctx.error(
            "cache.decoupled",
            f"Response Cache does not currently support model {n} with 'decoupled' transaction policy. Please "
            "disable the response cache.",
            "response_cache.enable",
            edits=(Edit("clear", "response_cache"),),
        )
    if c.HasField("model_metrics"):
        for i, mc in enumerate(c.model_metrics.metric_control):
            base = f"model_metrics.metric_control[{i}]"
            if not mc.HasField("metric_identifier"):
                ctx.error("metrics.identifier", "metric control must specify 'metric_identifier'", base)
            elif not mc.metric_identifier.family:
                ctx.error("metrics.family", "metric identifier must specify non-empty 'family'", f"{base}.metric_identifier")
            if not mc.HasField("histogram_options"):
                ctx.error("metrics.histogram", "metric control must specify 'histogram_options'", base)
            elif not mc.histogram_options.buckets:
                ctx.error("metrics.buckets", "histogram options must specify non-empty 'buckets'", f"{base}.histogram_options")


# -- ValidateModelIOConfig ---------------------------------------------------------------------------------
def _element_count(dims) -> int:
    """triton::common::GetElementCount: 0 for no dims, -1 with a variable-size dimension."""
    n = 0
    for d in dims:
        if d == WILDCARD:
            return -1
        n = d if n == 0 else n * d
    return n


def _io_shape(ctx: Context, io, kind: str, i: int) -> None:
    n = ctx.name
    base = f"{kind}[{i}]"
    prefix = f"model {kind} "
    lenient = ctx.autocompletes
    if not io.name:
        ctx.error(f"io.{kind}-name", f"{prefix}must specify 'name' for {n}", base)
        return
    p = f"{prefix}'{io.name}' "
    if io.data_type == DT.TYPE_INVALID:
        if lenient:
            ctx.info("io.autocomplete", f"{p}has no 'data_type': the backend fills it in from the model (auto-complete)", base)
        else:
            ctx.error(f"io.{kind}-data-type", f"{p}must specify 'data_type' for {n}", base)
    if not io.dims:
        if lenient:
            ctx.info("io.autocomplete", f"{p}has no 'dims': the backend fills them in from the model (auto-complete)", base)
            return
        ctx.error(f"io.{kind}-dims", f"{p}must specify 'dims' for {n}", base, hint="dims: [ -1 ] for a variable-size 1-D tensor")
        return
    has_reshape = io.HasField("reshape")
    if has_reshape and not io.reshape.shape and ctx.cfg.max_batch_size == 0:
        ctx.error(
            "io.reshape-empty-nobatch",
            f"{p}cannot have empty reshape for non-batching model as scalar tensors are not supported for {n}",
            f"{base}.reshape",
        )
    for j, d in enumerate(io.dims):
        if d < 1 and d != WILDCARD:
            ctx.error(
                "io.dims-positive",
                f"{p}dimension must be integer >= 1, or -1 to indicate a variable-size dimension for {n}",
                f"{base}.dims[{j}]",
            )
    if has_reshape:
        bad = False
        for j, d in enumerate(io.reshape.shape):
            if d < 1 and d != WILDCARD:
                bad = True
                ctx.error(
                    "io.reshape-positive",
                    f"{p}reshape dimensions must be integer >= 1, or -1 to indicate a variable-size dimension for {n}",
                    f"{base}.reshape.shape[{j}]",
                )
        if bad or any(d < 1 and d != WILDCARD for d in io.dims):
            return
        dims_size = _element_count(io.dims)
        reshape_size = _element_count(io.reshape.shape)
        if dims_size != reshape_size and (reshape_size != 0 or dims_size != 1):
            ctx.error("io.reshape-size", f"{p}has different size for dims and reshape for {n}", f"{base}.reshape")
            return
        if dims_size == -1:
            a, b = _chunks(io.dims), _chunks(io.reshape.shape)
            if len(a) != len(b):
                ctx.error(
                    "io.reshape-variable",
                    f"{p}has different number of variable-size dimensions for dims and reshape for {n}",
                    f"{base}.reshape",
                )
            elif a != b:
                ctx.error("io.reshape-size", f"{p}has different size for dims and reshape for {n}", f"{base}.reshape")


def _chunks(dims) -> list[int]:
    out, cur = [], 1
    for d in dims:
        if d != WILDCARD:
            cur *= d
        else:
            out.append(cur)
            cur = 1
    out.append(cur)
    return out


def check_io(ctx: Context) -> None:
    c, n = ctx.cfg, ctx.name
    if c.platform == "ensemble" or c.HasField("ensemble_scheduling"):
        lenient = False
    else:
        lenient = ctx.autocompletes
    for kind, ios in (("input", c.input), ("output", c.output)):
        names: dict[str, int] = {}
        for i, io in enumerate(ios):
            _io_shape(ctx, io, kind, i)
            if io.name in names and io.name:
                ctx.warning(
                    f"io.{kind}-duplicate",
                    f"model {kind} '{io.name}' is declared more than once in {n}: Triton {ctx.triton_version} loads "
                    "the model and uses the first declaration",
                    f"{kind}[{i}]",
                    edits=(Edit("remove", f"{kind}[{i}]"),),
                )
            names.setdefault(io.name, i)
            if kind == "input" and io.format in (pb.ModelInput.FORMAT_NHWC, pb.ModelInput.FORMAT_NCHW) and len(io.dims) != 3:
                if io.dims or not lenient:
                    ctx.error("io.format-dims", f"model input NHWC/NCHW require 3 dims for {n}", f"input[{i}].format")
            if c.platform != "tensorrt_plan" and io.is_shape_tensor:
                ctx.error("io.shape-tensor", f"shape tensors are only supported for TensorRT platform for {n}", f"{kind}[{i}].is_shape_tensor")
            if io.is_non_linear_format_io:
                if c.platform != "tensorrt_plan":
                    ctx.error(
                        "io.non-linear-format",
                        f"Non-linear IO format is only supported for the TensorRT platform for {n}",
                        f"{kind}[{i}].is_non_linear_format_io",
                    )
                elif len(io.dims) != 3:
                    ctx.error("io.non-linear-format", f"Non-linear IO format {kind} requires 3 dims for {n}", f"{kind}[{i}].dims")
    if not c.input and not lenient and c.platform != "ensemble" and not ctx.auto_complete:
        ctx.warning("io.no-inputs", f"model {n} declares no inputs", "input")


def check_batch_io(ctx: Context) -> None:
    c, n = ctx.cfg, ctx.name
    inputs = {io.name for io in c.input}
    outputs = {io.name for io in c.output}
    BI, BO = pb.BatchInput, pb.BatchOutput
    for i, bi in enumerate(c.batch_input):
        base = f"batch_input[{i}]"
        if len(bi.source_input) != 1:
            ctx.error(
                "batch-io.source-count",
                f"batch input kind '{BI.Kind.Name(bi.kind)}' expects 1 source input, got {len(bi.source_input)} for {n}",
                base,
            )
        if bi.data_type not in (DT.TYPE_INT32, DT.TYPE_FP32):
            ctx.error("batch-io.data-type", f"batch input data type must be TYPE_INT32 or TYPE_FP32 for {n}", f"{base}.data_type")
        for s in bi.source_input:
            if s not in inputs:
                ctx.error("batch-io.unknown-source", f"unknown source input name '{s}' for {n}", f"{base}.source_input")
    for i, bo in enumerate(c.batch_output):
        base = f"batch_output[{i}]"
        if len(bo.source_input) != 1:
            ctx.error(
                "batch-io.source-count",
                f"batch output kind '{BO.Kind.Name(bo.kind)}' expects 1 source input, got {len(bo.source_input)} for {n}",
                base,
            )
        for s in bo.source_input:
            if s not in inputs:
                ctx.error("batch-io.unknown-source", f"unknown source input name '{s}' for {n}", f"{base}.source_input")
        seen: set[str] = set()
        for t in bo.target_name:
            if t not in outputs:
                ctx.error("batch-io.unknown-target", f"unknown target output name '{t}' for {n}", f"{base}.target_name")
            if t in seen:
                ctx.error("batch-io.target-twice", f"target output name '{t}' can only be specified once for {n}", f"{base}.target_name")
            seen.add(t)
    if (len(c.batch_input) or len(c.batch_output)) and c.backend in ("onnxruntime", "pytorch", "tensorflow", "openvino"):
        ctx.error(
            "batch-io.unsupported",
            "batch inputs and batch outputs are only supported for custom platform and TensorRT platform",
            "batch_input" if len(c.batch_input) else "batch_output",
        )


# -- ValidateInstanceGroup ---------------------------------------------------------------------------------
def check_instance_groups(ctx: Context) -> None:
    c, n = ctx.cfg, ctx.name
    if c.HasField("ensemble_scheduling"):
        return
    for k, group in enumerate(c.instance_group):
        origin = ctx.group_origin[k] if k < len(ctx.group_origin) else k
        base = f"instance_group[{origin}]" if origin >= 0 else None
        gname = group.name
        if group.kind == G.KIND_MODEL and group.gpus:
            ctx.error("instance-group.model-gpus", f"instance group {gname} of model {n} has kind KIND_MODEL but specifies one or more GPUs", f"{base}.gpus")
        elif group.kind == G.KIND_GPU:
            bad = [g for g in group.gpus if g < 0]
            for g in bad:
                ctx.error(
                    "instance-group.gpu-id",
                    f"instance group {gname} of model {n} specifies invalid or unsupported gpu id {g}. GPUs with at "
                    "least the minimum required CUDA compute compatibility of 6.000000 are: "
                    + (", ".join(map(str, sorted(ctx.gpus))) or "(none on this machine)"),
                    f"{base}.gpus",
                    hint="GPU ids are 0, 1, ...; leave gpus empty for every GPU",
                )
            if not group.gpus and not ctx.gpus:
                ctx.info(
                    "instance-group.no-gpu-here",
                    f"instance group {gname} of model {n} has kind KIND_GPU but no GPUs are available on this "
                    "machine: Triton here would refuse it; a GPU server will take it",
                    f"{base}.kind" if base else "instance_group",
                    hint="use kind: KIND_CPU to run it here, or deploy to a machine with GPUs",
                )
            elif group.gpus and not ctx.gpus and not bad:
                for g in group.gpus:
                    ctx.info(
                        "instance-group.no-gpu-here",
                        f"instance group {gname} of model {n} specifies invalid or unsupported gpu id {g}. GPUs with at "
                        "least the minimum required CUDA compute compatibility of 6.000000 are: (Triton on this "
                        "machine, which has no GPU; a GPU server will take it)",
                        f"{base}.gpus" if base else "instance_group",
                    )
            elif ctx.gpus and not bad:
                for g in group.gpus:
                    if g not in ctx.gpus:
                        ctx.info("instance-group.gpu-absent-here", f"instance group {gname} of model {n} names GPU {g}, which this machine does not have", f"{base}.gpus")
        elif group.kind == G.KIND_CPU and group.gpus:
            ctx.error(
                "instance-group.cpu-gpus",
                f"instance group {gname} of model {n} has kind KIND_CPU but specifies one or more GPUs",
                f"{base}.gpus",
                edits=(Edit("clear", f"{base}.gpus"),) if base else (),
            )
        if base and ctx.written.instance_group[origin].count < 0:
            # Triton (2.51 and later) replaces a count below 1 with the default count (SetDefaultInstanceCount)
            ctx.warning(
                "instance-group.count",
                f"instance group {gname} of model {n} has count {ctx.written.instance_group[origin].count}: Triton "
                f"{ctx.triton_version} loads it with the default count ({group.count})",
                f"{base}.count",
                edits=(Edit("set", f"{base}.count", group.count),),
            )
        if c.platform != "tensorrt_plan" and group.profile:
            ctx.error(
                "instance-group.profile",
                f"instance group {gname} of model {n} and platform {c.platform}specifies profile field which is only "
                "supported for TensorRT models",
                f"{base}.profile",
                edits=(Edit("clear", f"{base}.profile"),) if base else (),
            )
        elif group.profile:
            for p in group.profile:
                if not p:
                    ctx.error("instance-group.profile", "profile name must not be empty", f"{base}.profile")
                elif not re.fullmatch(r"\s*[+-]?\d+.*", p):
                    ctx.error("instance-group.profile", f"unable to parse '{p}': stoi", f"{base}.profile")
                elif int(re.match(r"\s*([+-]?\d+)", p).group(1)) < 0:
                    ctx.error(
                        "instance-group.profile",
                        f"instance group {gname} of model {n} and platform {c.platform} specifies invalid profile {p}. "
                        "The field should contain the string representation of a non-negative integer.",
                        f"{base}.profile",
                    )


# -- backend loading ---------------------------------------------------------------------------------------
def check_backend_files_and_runtime(ctx: Context) -> None:
    c, n = ctx.cfg, ctx.name
    if not c.backend:
        return
    runtime = c.runtime
    if runtime:
        base = runtime.replace("\\", "/").rsplit("/", 1)[-1]
        if runtime.endswith(".py") and c.backend == "python":
            # a Python-based backend's runtime is <backend folder>/model.py; the python backend itself has none
            ctx.error(
                "backend.runtime-python",
                f"unable to find Python backend based backend library '{runtime}' for model '{n}'"
                if base == "model.py" else f"unable to find backend library '{runtime}' for model '{n}'",
                "runtime",
                hint="remove runtime (the python backend runs <version>/model.py by itself), or name the backend "
                "library, libtriton_python.so",
                edits=(Edit("clear", "runtime"),),
            )
        elif runtime.endswith(".py") and c.backend not in python_based_backends():
            ctx.warning(
                "backend.runtime-python",
                f"runtime '{runtime}' is a Python file, but backend '{c.backend}' is not Python-based",
                "runtime",
            )
        elif not runtime.startswith("/") and not posixpath.normpath(f"{c.backend}/{runtime.replace(chr(92), '/')}").startswith(f"{c.backend}/"):
            # IsChildPathEscapingParentPath: the library must resolve inside the backend's own folder
            # ("../python/libtriton_python.so" of backend python stays inside it and loads)
            ctx.error(
                "backend.runtime-escape",
                f"backend library name '{runtime}' escapes backend directory",
                "runtime",
                hint=f"runtime names a file inside the backend's folder ({c.backend}/), e.g. libtriton_{c.backend}.so",
            )
        elif runtime.startswith("/"):
            ctx.warning(
                "backend.runtime-path",
                f"runtime '{runtime}' is an absolute path: the server must have that file, else Triton refuses the "
                f"model with \"unable to find backend library '{runtime}' for model '{n}'\"",
                "runtime",
            )
        elif c.backend == "python" and base != "libtriton_python.so":
            ctx.warning(
                "backend.runtime-unknown",
                f"the server must have backend library '{runtime}': without it Triton refuses the model with "
                f"\"unable to find backend library '{runtime}' for model '{n}'\"",
                "runtime",
                hint="the python backend's library is libtriton_python.so",
            )
        return
    if c.backend not in known_backends() | ctx.extra_backends:
        close = difflib.get_close_matches(c.backend, sorted(known_backends()), n=1)
        # a custom backend is legitimate: only the server knows whether it has it (never an error here)
        ctx.warning(
            "backend.unknown",
            f"the server must have backend '{c.backend}': without it Triton refuses the model with \"unable to find "
            f"backend library for backend '{c.backend}', try specifying runtime on the model configuration.\"",
            "backend" if ctx.written.backend else None,
            hint=(f"did you mean {close[0]}? " if close else "")
            + "for your own backend, install libtriton_<name>.so under the server's backend directory (and tell "
            "the studio with --backend NAME)",
            edits=(Edit("set", "backend", close[0]),) if close and ctx.written.backend else (),
        )


def _dt_name(dt) -> str:
    if dt == DT.TYPE_INVALID:
        return "<invalid>"
    return "BYTES" if dt == DT.TYPE_STRING else DT.Name(dt)[5:]


def check_warmup(ctx: Context) -> None:
    """TritonModelInstance::GenerateWarmupData and the request checks each warmup request goes through."""
    c, n = ctx.cfg, ctx.name
    inputs = {io.name: io for io in c.input}
    for i, w in enumerate(c.model_warmup):
        base = f"model_warmup[{i}]"
        if w.batch_size == 0:
            continue  # Triton skips a batch-0 sample
        if c.max_batch_size == 0 and w.batch_size > 1:
            group = c.instance_group[0].name if c.instance_group else n
            ctx.error("warmup.batch-size",
                      f"failed to run warmup sample '{w.name}': batch size {w.batch_size} for '{group}_0', max allowed is 0",
                      f"{base}.batch_size", hint=f"model {n} does not batch (max_batch_size 0): use batch_size 1",
                      edits=(Edit("set", f"{base}.batch_size", 1),))
        elif c.max_batch_size > 0 and w.batch_size > c.max_batch_size:
            ctx.error(
                "warmup.batch-size",
                f"warmup setting '{w.name}' has batch size {w.batch_size} > max_batch_size {c.max_batch_size} of {n}: "
                f"Triton {ctx.triton_version} crashes (segmentation fault) loading this model",
                f"{base}.batch_size",
                edits=(Edit("set", f"{base}.batch_size", c.max_batch_size),),
            )
        for key, inp in w.inputs.items():
            p = f'{base}.inputs["{key}"]'
            if any(d < 0 for d in inp.dims):
                ctx.error("warmup.dims", f"warmup setting expects all variable-size dimensions are specified for input '{key}'", f"{p}.dims")
                continue
            if inp.WhichOneof("input_data_type") is None:
                ctx.error("warmup.input-data", f"warmup setting expects input '{key}' to have input_data_type set", p,
                          hint="add zero_data: true, random_data: true or input_data_file: \"<file in warmup/>\"",
                          edits=(Edit("set", f"{p}.zero_data", True),))
            io = inputs.get(key)
            if io is None:
                if inputs:
                    ctx.warning("warmup.unknown-input",
                                f"warmup setting '{w.name}' names input '{key}', which model {n} does not have: Triton "
                                f"{ctx.triton_version} passes it as an extra tensor", p)
                continue
            if inp.data_type != io.data_type and io.data_type != DT.TYPE_INVALID:
                ctx.error("warmup.data-type",
                          f"inference input '{key}' data-type is '{_dt_name(inp.data_type)}', but model '{n}' expects "
                          f"'{_dt_name(io.data_type)}'", f"{p}.data_type",
                          edits=(Edit("set", f"{p}.data_type", DT.Name(io.data_type)),))
            if io.dims and not io.HasField("reshape"):
                want = ([-1] if c.max_batch_size > 0 else []) + list(io.dims)
                got = ([1] if c.max_batch_size > 0 else []) + list(inp.dims)
                if len(want) != len(got) or any(a != -1 and a != b for a, b in zip(want, got)):
                    ctx.error("warmup.shape",
                              f"unexpected shape for input '{key}' for model '{n}'. Expected "
                              f"[{','.join(map(str, want))}], got [{','.join(map(str, got))}]", f"{p}.dims",
                              hint="warmup dims leave out the batch dimension" if c.max_batch_size > 0 else None)
        if inputs:
            given = [k for k in w.inputs if k in inputs]
            required = [io.name for io in c.input if not io.optional]
            missing = [k for k in required if k not in w.inputs]
            if missing:
                def lst(xs):
                    return "[" + ", ".join(f"'{x}'" for x in xs) + "]"
                ctx.error("warmup.missing-input",
                          f"expected {len(required)} inputs but got {len(given)} inputs for model '{n}'. Got input(s) "
                          f"{lst(given)}, but missing required input(s) {lst(missing)}. Please provide all required input(s).",
                          f"{base}.inputs" if w.inputs else base)


# -- framework conventions ---------------------------------------------------------------------------------
_TORCH_NAME = re.compile(r".+__\d+$")


def check_conventions(ctx: Context) -> None:
    c, n = ctx.cfg, ctx.name
    fw = framework_of(c)
    if fw is not None and fw.io_naming == "index":
        for kind, ios in (("input", c.input), ("output", c.output)):
            for i, io in enumerate(ios):
                if io.name and not _TORCH_NAME.match(io.name):
                    msg = (
                        f"{kind} '{io.name}' of PyTorch model {n} does not follow the <name>__<index> naming "
                        "convention (e.g. INPUT__0)"
                    )
                    if kind == "input":
                        msg += "; the backend then expects it to be a forward() argument name"
                    ctx.warning("pytorch.io-naming", msg, f"{kind}[{i}].name")
        sb = c.sequence_batching
        for i, ci in enumerate(sb.control_input):
            if ci.name and not _TORCH_NAME.match(ci.name):
                ctx.error(
                    "pytorch.control-naming",
                    f"sequence control input '{ci.name}' of PyTorch model {n} must follow the <name>__<index> "
                    "naming convention: the PyTorch backend refuses other names for control inputs",
                    f"sequence_batching.control_input[{i}].name",
                )
        for i, st in enumerate(sb.state):
            for attr in ("input_name", "output_name"):
                v = getattr(st, attr)
                if v and not _TORCH_NAME.match(v):
                    ctx.error(
                        "pytorch.state-naming",
                        f"sequence state {attr} '{v}' of PyTorch model {n} must follow the <name>__<index> naming "
                        "convention: the PyTorch backend refuses other names for state tensors",
                        f"sequence_batching.state[{i}].{attr}",
                    )
    if fw is not None and fw.key == "tensorflow_savedmodel" and len(c.input) and not ctx.autocompletes:
        ctx.info(
            "tensorflow.signature",
            f"TensorFlow SavedModel {n}: input and output names must match the serving signature's keys "
            "(see saved_model_cli show --dir <version>/model.savedmodel --all)",
            "input",
        )
    for kind, accels, allowed in (
        ("gpu_execution_accelerator", c.optimization.execution_accelerators.gpu_execution_accelerator, fw.gpu_accelerators if fw else ()),
        ("cpu_execution_accelerator", c.optimization.execution_accelerators.cpu_execution_accelerator, fw.cpu_accelerators if fw else ()),
    ):
        for i, acc in enumerate(accels):
            if fw is not None and acc.name not in allowed:
                ok = ", ".join(allowed) or "none"
                ctx.warning(
                    "optimization.accelerator",
                    f"{kind} '{acc.name}' does not apply to {fw.label} models (valid: {ok})",
                    f"optimization.execution_accelerators.{kind}[{i}].name",
                )


# -- checks that read the model folder (Triton's model loading, the python backend) ---------------------------


def check_model_folder(model_dir, name: str, cfg: pb.ModelConfig, written: pb.ModelConfig, *, auto_complete: bool = True,
                       triton_version: str = "2.51", file: str | None = None, config_only: bool = False) -> list[Finding]:
    """What Triton finds wrong while loading the model from its folder: python auto-complete without
    auto_complete_config, warmup data files, label files, EXECUTION_ENV_PATH. model_dir: the model's folder."""
    from pathlib import Path

    out: list[Finding] = []
    if model_dir is None or config_only:
        return out
    model_dir = Path(model_dir)

    def add(sev, rule, msg, path=None, hint=None):
        out.append(Finding(sev, rule, msg, path=path, hint=hint, file=file, model=name))

    # python backend: with no auto_complete_config in model.py, nothing fills in data_type and dims
    if cfg.backend == "python" and auto_complete and cfg.platform != "ensemble":
        versions = sorted((p for p in model_dir.iterdir() if p.is_dir() and p.name.isdigit() and not p.name.startswith("0")),
                          key=lambda p: int(p.name)) if model_dir.is_dir() else []
        src = None
        for v in versions[::-1][:1]:
            f = v / (cfg.default_model_filename or "model.py")
            try:
                src = f.read_text(errors="replace")
            except OSError:
                src = None
        info = read_model_py(src, Path(cfg.default_model_filename or "model.py").name) if src is not None else None
        if info is not None and info.syntax_error:
            add("error", "python.model-syntax", info.syntax_error, None,
                hint=f"the python backend imports {versions[-1].name}/{cfg.default_model_filename or 'model.py'} "
                     f"when it loads the model (line {info.line})")
        elif info is not None and info.auto_complete in (None, "fills-nothing"):
            why = ("model.py defines no auto_complete_config, so the python backend fills in nothing"
                   if info.auto_complete is None else
                   "model.py's auto_complete_config adds no input or output (add_input/add_output), so nothing "
                   "fills in data_type and dims")
            strict = Context(name=cfg.name, cfg=cfg, written=written, auto_complete=False)
            check_io(strict)
            for f in strict.findings:
                if f.severity == "error" and f.rule.split("-")[-1] in ("type", "dims") and f.rule.startswith("io."):
                    f.file = file
                    f.hint = (f.hint + "; " if f.hint else "") + why
                    out.append(f)
    # warmup data files (Triton reads <model>/warmup/<file> when it creates each instance)
    for i, w in enumerate(cfg.model_warmup):
        for key, inp in w.inputs.items():
            if inp.WhichOneof("input_data_type") != "input_data_file":
                continue
            p = f'model_warmup[{i}].inputs["{key}"].input_data_file'
            path = model_dir / "warmup" / inp.input_data_file
            if not path.is_file():
                add("error", "warmup.data-file",
                    f"failed to open text file for read {name}/warmup/{inp.input_data_file}: No such file or directory", p,
                    hint=f"put the raw bytes in {name}/warmup/{inp.input_data_file}")
                continue
            size = _byte_size(inp.data_type, inp.dims)
            if inp.data_type != DT.TYPE_STRING and size is not None and size > path.stat().st_size:
                add("error", "warmup.data-file",
                    f"warmup setting expects {size} bytes, but the data provided from {inp.input_data_file}only has "
                    f"{path.stat().st_size} bytes", p)
    # label files: Triton reads <model>/<label_filename> when it loads the model
    for i, io in enumerate(cfg.output):
        if io.label_filename and not (model_dir / io.label_filename).is_file():
            add("error", "io.label-file",
                f"failed to open text file for read {name}/{io.label_filename}: No such file or directory",
                f"output[{i}].label_filename", hint=f"put the labels, one a line, in {name}/{io.label_filename}")
    # EXECUTION_ENV_PATH: an absolute path that does not exist
    env = cfg.parameters["EXECUTION_ENV_PATH"].string_value if "EXECUTION_ENV_PATH" in cfg.parameters else ""
    if env.startswith("/") and not Path(env).exists():
        add("error", "python.execution-env", f"Failed to get the canonical path for {env}.",
            'parameters["EXECUTION_ENV_PATH"]', hint="the path is read on the server's machine: check it exists there")
    return out


_DT_SIZE = {DT.TYPE_BOOL: 1, DT.TYPE_UINT8: 1, DT.TYPE_INT8: 1, DT.TYPE_UINT16: 2, DT.TYPE_INT16: 2, DT.TYPE_FP16: 2,
            DT.TYPE_BF16: 2, DT.TYPE_UINT32: 4, DT.TYPE_INT32: 4, DT.TYPE_FP32: 4, DT.TYPE_UINT64: 8, DT.TYPE_INT64: 8,
            DT.TYPE_FP64: 8}


def _byte_size(dt, dims) -> int | None:
    if dt not in _DT_SIZE or any(d < 0 for d in dims):
        return None
    n = _DT_SIZE[dt]
    for d in dims:
        n *= d
    return n
