"""Talk to any Triton by URL (embedded, Docker, remote): its model config, and a ready-made client."""

from __future__ import annotations

from google.protobuf import json_format
from tritonclient.grpc import model_config_pb2

from studio.runtime.base import Endpoints


def grpc_target(url: str) -> str:
    return url.removeprefix("grpc://").removeprefix("http://").rstrip("/")


def fetch_config(target: str, model: str) -> model_config_pb2.ModelConfig:
    import tritonclient.grpc as grpcclient

    client = grpcclient.InferenceServerClient(target)
    try:
        data = client.get_model_config(model, as_json=True)
    finally:
        client.close()
    msg = model_config_pb2.ModelConfig()
    json_format.ParseDict(data.get("config", data), msg, ignore_unknown_fields=True)
    return msg


def endpoints_for(target: str) -> Endpoints:
    """Endpoints for a gRPC-only address: HTTP and metrics are guessed at Triton's default offsets
    (gRPC 8001 -> HTTP 8000, metrics 8002), used only for metrics and the resolved config."""
    host, _, port = target.rpartition(":")
    p = int(port)
    return Endpoints(f"http://{host}:{p - 1}", f"grpc://{target}", f"http://{host}:{p + 1}")
