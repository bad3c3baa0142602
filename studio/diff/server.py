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


def canonical_text(msg: pb.ModelConfig) -> str:
    """One layout for any ModelConfig: protobuf's text format, fields in schema order, one per line, map
    entries by key. Both sides of a file-vs-server diff go through it, so only real differences show."""
    from google.protobuf import text_format

    return text_format.MessageToString(msg)


def server_diff_texts(file_text: str, server: dict | str | pb.ModelConfig) -> tuple[str, str, list[Change]]:
    """(file side, server side, semantic changes) for the file-vs-server diff: the parsed file and the server's
    resolved config rendered through the same canonical formatter (a compact file and the server's expanded
    JSON no longer differ on every line), and the semantic diff of the two messages. A file that does not parse
    is shown as written (and has no semantic diff)."""
    from studio.config import ConfigDocument, ParseError

    resolved = server if isinstance(server, pb.ModelConfig) else resolved_config(server)
    try:
        file_msg = ConfigDocument.parse(file_text).to_message()
    except ParseError:
        return file_text, canonical_text(resolved), []
    return canonical_text(file_msg), canonical_text(resolved), diff_against_server(file_msg, resolved)
