"""One test inference on a loaded model: inputs synthesized from its config (studio.tuning.inputs) or read from
a .npy / .npz / JSON file, one gRPC call, outputs with shape, dtype and values, and the call's latency. No Qt.

    inputs = synthesize_inputs(config)                 # {name: np.ndarray}, batch dimension included
    result = run_inference(endpoints, "add_sub", inputs)
    result.outputs["OUTPUT0"], result.latency_ms
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tritonclient.grpc import model_config_pb2 as pb

from studio.runtime.models import _as_message
from studio.tuning.inputs import DTYPES, InputError, synth_raw, tensor_specs

__all__ = ["InferenceResult", "InputError", "load_inputs", "run_inference", "summarize", "synthesize_inputs"]


def _np_dtype(config_type: int):
    wire, dtype = DTYPES[config_type]
    if wire == "BYTES":
        return np.object_
    if wire == "BF16":
        raise InputError("BF16 inputs cannot be shown as numpy arrays: use --input-data with b64 values")
    return dtype


def synthesize_inputs(config, shapes: dict[str, list[int]] | None = None, seed: int = 0) -> dict[str, np.ndarray]:
    """Random inputs for every required input of the config (a ModelConfig, a ConfigDocument or the server's
    resolved JSON), batch size 1."""
    cfg = _as_message(config)
    rng = np.random.default_rng(seed)
    out = {}
    for spec in tensor_specs(cfg, 1, shapes):
        raw = synth_raw(spec, rng)
        if spec.datatype == "BYTES":
            n = int(np.prod(spec.shape)) if spec.shape else 1
            out[spec.name] = np.array([f"sample-{i:04d}".encode() for i in range(n)], dtype=np.object_).reshape(spec.shape)
        else:
            out[spec.name] = np.frombuffer(raw, dtype=_np_dtype(spec.config_type)).reshape(spec.shape).copy()
    return out


def load_inputs(path: str | Path, config) -> dict[str, np.ndarray]:
    """Inputs from a file: .npy (the model's only required input), .npz (arrays named like the inputs), or JSON
    ({"INPUT0": [...], ...} or perf_analyzer's {"data": [{...}]}, first step). Arrays get the config's dtype and,
    when they lack it, the batch dimension."""
    cfg = _as_message(config)
    p = Path(path)
    by_name = {io.name: io for io in cfg.input}
    required = [io.name for io in cfg.input if not io.optional]
    if p.suffix == ".npy":
        if len(required) != 1:
            raise InputError(f"{p.name}: a .npy file holds one array, but the model has inputs {required}: use .npz or JSON")
        raw = {required[0]: np.load(p, allow_pickle=False)}
    elif p.suffix == ".npz":
        with np.load(p, allow_pickle=False) as z:
            raw = {k: z[k] for k in z.files}
    else:
        try:
            data = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise InputError(f"{p.name}: not readable as JSON: {e}") from None
        if isinstance(data, dict) and isinstance(data.get("data"), list) and data["data"]:
            data = data["data"][0]
        if not isinstance(data, dict):
            raise InputError(f"{p.name}: expected {{\"INPUT\": [values], ...}}")
        raw = {k: (v.get("content") if isinstance(v, dict) else v) for k, v in data.items()}
    out = {}
    for name, value in raw.items():
        if name not in by_name:
            raise InputError(f"{p.name}: model '{cfg.name}' has no input '{name}' (inputs: {', '.join(by_name)})")
        io = by_name[name]
        arr = np.asarray(value, dtype=_np_dtype(io.data_type))
        want = len(io.dims) + (1 if cfg.max_batch_size > 0 else 0)
        if cfg.max_batch_size > 0 and arr.ndim == want - 1:
            arr = arr[np.newaxis, ...]
        out[name] = arr
    missing = [n for n in required if n not in out]
    if missing:
        raise InputError(f"{p.name}: no values for input(s) {', '.join(missing)}")
    return out


@dataclass
class InferenceResult:
    outputs: dict[str, np.ndarray]
    latency_ms: float  # the one call, client side
    inputs: dict[str, np.ndarray] | None = None  # what was sent


def run_inference(endpoints, model: str, inputs: dict[str, np.ndarray], version: str = "",
                  timeout_s: float = 30.0) -> InferenceResult:
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import np_to_triton_dtype

    client = grpcclient.InferenceServerClient(endpoints.grpc_target)
    try:
        tensors = []
        for name, arr in inputs.items():
            t = grpcclient.InferInput(name, list(arr.shape), np_to_triton_dtype(arr.dtype))
            t.set_data_from_numpy(arr)
            tensors.append(t)
        t0 = time.perf_counter()
        result = client.infer(model, tensors, model_version=version, client_timeout=timeout_s)
        latency = (time.perf_counter() - t0) * 1000.0
        response = result.get_response()
        outputs = {o.name: result.as_numpy(o.name) for o in response.outputs}
    finally:
        client.close()
    return InferenceResult(outputs, latency, inputs)


def summarize(arr: np.ndarray, limit: int = 16) -> str:
    """'shape [1, 16] FP32: [0.1, 0.2, …]' (the first `limit` values)."""
    flat = arr.reshape(-1)
    vals = ", ".join(_fmt(v) for v in flat[:limit]) + (", …" if flat.size > limit else "")
    from tritonclient.utils import np_to_triton_dtype

    return f"shape {list(arr.shape)} {np_to_triton_dtype(arr.dtype)}: [{vals}]"


def _fmt(v) -> str:
    if isinstance(v, bytes):
        return repr(v.decode("utf-8", "replace"))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    return str(v.item() if hasattr(v, "item") else v)


def io_config(config) -> pb.ModelConfig:
    return _as_message(config)
