"""The file against the configuration the server resolved (GET /v2/models/<m>/config): what Triton filled in."""

from __future__ import annotations

import json

from google.protobuf import json_format
from tritonclient.grpc import model_config_pb2 as pb

from studio.diff.semantic import Change, semantic_diff


def resolved_config(data: dict | str) -> pb.ModelConfig:
    """The server's JSON (protobuf field names, 64-bit numbers as numbers) as a ModelConfig."""
    if isinstance(data, str):
        data = json.loads(data)
    msg = pb.ModelConfig()
    json_format.ParseDict(data, msg, ignore_unknown_fields=True)
    return msg


def diff_against_server(file_config: pb.ModelConfig, server: dict | str | pb.ModelConfig) -> list[Change]:
    """Changes from the file to the server's view; 'added' ones are what Triton auto-completed."""
    resolved = server if isinstance(server, pb.ModelConfig) else resolved_config(server)
    return semantic_diff(file_config, resolved)
