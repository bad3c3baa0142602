"""Requests synthesized from a model config (every data type), or read from perf_analyzer's --input-data
JSON, built once as serialized ModelInferRequest bytes so the load generator's hot path does no work."""

from __future__ import annotations

import base64
import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tritonclient.grpc import model_config_pb2 as mc
from tritonclient.grpc import service_pb2

# ModelConfig data type -> (Triton wire name, numpy dtype or None for BYTES)
DTYPES = {
    mc.TYPE_BOOL: ("BOOL", np.bool_),
    mc.TYPE_UINT8: ("UINT8", np.uint8),
    mc.TYPE_UINT16: ("UINT16", np.uint16),
    mc.TYPE_UINT32: ("UINT32", np.uint32),
    mc.TYPE_UINT64: ("UINT64", np.uint64),
    mc.TYPE_INT8: ("INT8", np.int8),
    mc.TYPE_INT16: ("INT16", np.int16),
    mc.TYPE_INT32: ("INT32", np.int32),
    mc.TYPE_INT64: ("INT64", np.int64),
    mc.TYPE_FP16: ("FP16", np.float16),
    mc.TYPE_FP32: ("FP32", np.float32),
    mc.TYPE_FP64: ("FP64", np.float64),
    mc.TYPE_STRING: ("BYTES", None),
    mc.TYPE_BF16: ("BF16", None),
}


class InputError(ValueError):
    pass


@dataclass
class TensorSpec:
    name: str
    datatype: str  # wire name
    shape: list[int]  # full request shape, batch dimension included
    config_type: int


def tensor_specs(config: mc.ModelConfig, batch_size: int = 1, shapes: dict[str, list[int]] | None = None,
                 skip_optional: bool = True) -> list[TensorSpec]:
    shapes = shapes or {}
    out = []
    for io in config.input:
        if io.optional and skip_optional and io.name not in shapes:
            continue
        if io.data_type not in DTYPES:
            raise InputError(f"input '{io.name}' has no data type the load generator knows")
        dims = list(shapes.get(io.name, io.dims))
        if any(d < 0 for d in dims):
            raise InputError(f"input '{io.name}' has variable dimensions {list(io.dims)}: give its shape, e.g. --shape {io.name}:" + ",".join("16" if d < 0 else str(d) for d in io.dims))
        full = ([batch_size] if config.max_batch_size > 0 else []) + dims
        out.append(TensorSpec(io.name, DTYPES[io.data_type][0], full, io.data_type))
    if not out:
        raise InputError(f"model '{config.name}' has no inputs in its config: pass the server's resolved config")
    return out


def _bytes_tensor(values: list[bytes]) -> bytes:
    return b"".join(struct.pack("<I", len(v)) + v for v in values)


def synth_raw(spec: TensorSpec, rng: np.random.Generator) -> bytes:
    n = int(np.prod(spec.shape)) if spec.shape else 1
    if spec.datatype == "BYTES":
        return _bytes_tensor([f"sample-{i:04d}".encode() for i in range(n)])
    if spec.datatype == "BF16":
        return (rng.random(n, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes()
    dtype = DTYPES[spec.config_type][1]
    if dtype is np.bool_:
        return (rng.random(n) > 0.5).tobytes()
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 100, n).astype(dtype).tobytes()
    return rng.random(n).astype(dtype).tobytes()


def build_request(model: str, specs: list[TensorSpec], raws: list[bytes], version: str = "") -> bytes:
    req = service_pb2.ModelInferRequest(model_name=model, model_version=version)
    for s in specs:
        t = req.inputs.add()
        t.name = s.name
        t.datatype = s.datatype
        t.shape.extend(s.shape)
    req.raw_input_contents.extend(raws)
    return req.SerializeToString()


def synthesize(model: str, config: mc.ModelConfig, batch_size: int = 1, shapes: dict[str, list[int]] | None = None,
               variants: int = 4, seed: int = 0) -> list[bytes]:
    """A few serialized requests with random data (cycled by the load generator)."""
    specs = tensor_specs(config, batch_size, shapes)
    rng = np.random.default_rng(seed)
    return [build_request(model, specs, [synth_raw(s, rng) for s in specs]) for _ in range(variants)]


def from_input_data(model: str, config: mc.ModelConfig, path: str | Path, batch_size: int = 1) -> list[bytes]:
    """Requests from perf_analyzer's --input-data JSON: {"data": [{"IN": [..] | {"content": [..], "shape": [..]}
    | {"b64": "..."}}, ...]}."""
    data = json.loads(Path(path).read_text())
    steps = data.get("data")
    if not isinstance(steps, list) or not steps:
        raise InputError(f"{path}: expected {{\"data\": [ {{...}}, ... ]}} as perf_analyzer reads it")
    by_name = {io.name: io for io in config.input}
    out = []
    for k, step in enumerate(steps):
        specs, raws = [], []
        for name, value in step.items():
            if name not in by_name:
                raise InputError(f"{path}: step {k} names input '{name}', which model '{model}' does not have")
            io = by_name[name]
            wire, dtype = DTYPES[io.data_type]
            shape = None
            if isinstance(value, dict):
                shape = value.get("shape")
                if "b64" in value:
                    raw = base64.b64decode(value["b64"])
                    values = None
                else:
                    values = value.get("content")
            else:
                values = value
            if values is not None:
                if wire == "BYTES":
                    raw = _bytes_tensor([str(v).encode() if not isinstance(v, bytes) else v for v in values])
                    n = len(values)
                else:
                    arr = np.asarray(values, dtype=dtype if dtype is not None else np.float32)
                    raw = arr.tobytes()
                    n = arr.size
            else:
                n = None
            dims = list(shape) if shape is not None else list(io.dims)
            if any(d < 0 for d in dims):
                if n is None:
                    raise InputError(f"{path}: step {k}, input '{name}': give \"shape\" for a variable-size input")
                dims = [n]
            full = ([batch_size] if config.max_batch_size > 0 else []) + dims
            if batch_size > 1 and config.max_batch_size > 0:
                raw = raw * batch_size
            specs.append(TensorSpec(name, wire, full, io.data_type))
            raws.append(raw)
        out.append(build_request(model, specs, raws))
    return out


def parse_shapes(items: list[str] | None) -> dict[str, list[int]]:
    """--shape NAME:d1,d2 (perf_analyzer's form)."""
    out = {}
    for item in items or []:
        name, _, dims = item.rpartition(":")
        if not name:
            raise InputError(f"--shape {item}: expected NAME:d1,d2")
        out[name] = [int(d) for d in dims.split(",") if d]
    return out
