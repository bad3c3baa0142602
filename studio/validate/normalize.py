"""What Triton does to a config before it validates it (model_config_utils.cc), replayed in Python.

- AutoCompleteBackendFields: always (also with --disable-auto-complete-config): fills name, backend, platform
  and default_model_filename from each other and from the first version folder's files.
- NormalizeModelConfig: version policy (latest 1), preferred batch sizes, sequence idle time, pinned memory.
- NormalizeInstanceGroup: one group when none, names `<model>_<index>`, KIND_AUTO resolved, default counts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tritonclient.grpc import model_config_pb2 as pb

SEQUENCE_IDLE_DEFAULT_MICROSECONDS = 1_000_000

TF_SAVEDMODEL = "model.savedmodel"
TF_GRAPHDEF = "model.graphdef"
TRT_PLAN = "model.plan"
ONNX = "model.onnx"
OPENVINO = "model.xml"
PYTORCH = "model.pt"
PYTORCH_AOTI = "model.pt2"
PYTHON = "model.py"


class AutoCompleteError(ValueError):
    """Triton refuses the model while filling in its backend (the message is Triton's)."""


@dataclass
class VersionFolder:
    """What AutoCompleteBackendFields sees of the first version folder: names, and which are folders."""

    names: set[str]
    is_dir: Callable[[str], bool]


def auto_complete_backend_fields(
    model_name: str, config: pb.ModelConfig, first_version: VersionFolder | None
) -> None:
    """Triton's server-side auto-fill of name/backend/platform/default_model_filename (in place)."""
    has_version = first_version is not None
    content = first_version.names if first_version else set()

    def isdir(name: str) -> bool:
        return bool(first_version and first_version.is_dir(name))

    if not config.name:
        config.name = model_name

    if not config.platform:
        if not config.backend or config.backend == "tensorflow":
            if config.default_model_filename == TF_SAVEDMODEL:
                config.platform = "tensorflow_savedmodel"
            elif config.default_model_filename == TF_GRAPHDEF:
                config.platform = "tensorflow_graphdef"
            elif not config.default_model_filename and has_version:
                if TF_SAVEDMODEL in content and isdir(TF_SAVEDMODEL):
                    config.platform = "tensorflow_savedmodel"
                if TF_GRAPHDEF in content and not isdir(TF_GRAPHDEF):
                    config.platform = "tensorflow_graphdef"

    if config.platform in ("tensorflow_savedmodel", "tensorflow_graphdef"):
        if not config.backend:
            config.backend = "tensorflow"
        if not config.default_model_filename:
            config.default_model_filename = (
                TF_SAVEDMODEL if config.platform == "tensorflow_savedmodel" else TF_GRAPHDEF
            )
        return

    if not config.backend:
        if config.platform == "tensorrt_plan" or config.default_model_filename == TRT_PLAN:
            config.backend = "tensorrt"
        elif not config.platform and not config.default_model_filename and has_version:
            if TRT_PLAN in content and not isdir(TRT_PLAN):
                config.backend = "tensorrt"
    if config.backend == "tensorrt":
        config.platform = config.platform or "tensorrt_plan"
        config.default_model_filename = config.default_model_filename or TRT_PLAN
        return

    if not config.backend:
        if config.platform == "onnxruntime_onnx" or config.default_model_filename == ONNX:
            config.backend = "onnxruntime"
        elif not config.platform and not config.default_model_filename and has_version:
            if ONNX in content:
                config.backend = "onnxruntime"
    if config.backend == "onnxruntime":
        config.platform = config.platform or "onnxruntime_onnx"
        config.default_model_filename = config.default_model_filename or ONNX
        return

    if not config.backend:
        if config.default_model_filename == OPENVINO:
            config.backend = "openvino"
        elif not config.platform and not config.default_model_filename and has_version:
            if OPENVINO in content:
                config.backend = "openvino"
    if config.backend == "openvino":
        config.default_model_filename = config.default_model_filename or OPENVINO
        return

    if not config.backend:
        if config.platform in ("pytorch_libtorch", "pytorch") or config.default_model_filename == PYTORCH:
            config.backend = "pytorch"
        elif config.platform == "torch_aoti" or config.default_model_filename == PYTORCH_AOTI:
            config.backend = "pytorch_aoti"
        elif has_version and not config.default_model_filename and not config.platform:
            if PYTORCH in content and not isdir(PYTORCH):
                config.backend = "pytorch"
                config.platform = "pytorch_libtorch"
            elif PYTORCH_AOTI in content and not isdir(PYTORCH_AOTI):
                config.backend = "pytorch_aoti"
                config.platform = "torch_aoti"
    if config.backend == "pytorch":
        if not config.platform:
            config.platform = "pytorch_libtorch"
            config.default_model_filename = config.default_model_filename or PYTORCH
        elif config.platform == "torch_aoti" and not config.default_model_filename:
            config.default_model_filename = PYTORCH_AOTI
        return

    if not config.backend:
        if config.default_model_filename == PYTHON:
            config.backend = "python"
        elif not config.platform and not config.default_model_filename and has_version:
            if PYTHON in content:
                config.backend = "python"
    if config.backend == "python":
        config.default_model_filename = config.default_model_filename or PYTHON
        return

    if not config.backend and not config.platform and not config.default_model_filename:
        if "." not in model_name:
            raise AutoCompleteError(
                f"Invalid model name: Could not determine backend for model '{model_name}' with no backend "
                "in model configuration. Expected model name of the form 'model.<backend_name>'."
            )
        backend = model_name.split(".", 1)[1]
        config.backend = backend
        config.default_model_filename = f"model.{backend}"


def normalize_model_config(config: pb.ModelConfig) -> None:
    """Triton's NormalizeModelConfig (in place)."""
    if not config.HasField("version_policy"):
        config.version_policy.latest.num_versions = 1
    if config.HasField("dynamic_batching"):
        if not config.dynamic_batching.preferred_batch_size and config.max_batch_size > 0:
            config.dynamic_batching.preferred_batch_size.append(config.max_batch_size)
    if config.HasField("sequence_batching"):
        sb = config.sequence_batching
        if sb.max_sequence_idle_microseconds == 0:
            sb.max_sequence_idle_microseconds = SEQUENCE_IDLE_DEFAULT_MICROSECONDS
        if sb.HasField("oldest") and not sb.oldest.preferred_batch_size and config.max_batch_size > 0:
            sb.oldest.preferred_batch_size.append(config.max_batch_size)
    if not config.HasField("ensemble_scheduling"):
        opt = config.optimization
        if not opt.HasField("input_pinned_memory"):
            opt.input_pinned_memory.enable = True
        if not opt.HasField("output_pinned_memory"):
            opt.output_pinned_memory.enable = True


def normalize_instance_groups(config: pb.ModelConfig, gpus: set[int]) -> list[int]:
    """Triton's NormalizeInstanceGroup without preferred groups (in place). Returns, for each group after
    normalization, the index of the group in the written config (-1 for one Triton added)."""
    if config.HasField("ensemble_scheduling"):
        return []
    origin = list(range(len(config.instance_group)))
    if not config.instance_group:
        g = config.instance_group.add()
        g.name = config.name
        origin = [-1]
    G = pb.ModelInstanceGroup
    for cnt, group in enumerate(config.instance_group):
        if not group.name:
            group.name = f"{config.name}_{cnt}"
        if group.kind == G.KIND_AUTO:
            if not gpus or any(g not in gpus for g in group.gpus):
                group.kind = G.KIND_CPU
            else:
                group.kind = G.KIND_GPU
        if group.count < 1:
            group.count = 2 if group.kind == G.KIND_CPU and config.backend in ("tensorflow", "onnxruntime") else 1
        if group.kind == G.KIND_GPU and not group.gpus:
            group.gpus.extend(sorted(gpus))
    return origin
