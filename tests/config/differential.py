"""Compare our parser with google.protobuf.text_format on the same text."""

from __future__ import annotations

from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from studio.config import ConfigDocument, ParseError


def compare(text: str) -> str | None:
    """None when both agree (same message, or an error at the same line and column), else a description."""
    expected = model_config_pb2.ModelConfig()
    tf_error = None
    try:
        text_format.Parse(text, expected)
    except text_format.ParseError as e:
        tf_error = e
    try:
        doc = ConfigDocument.parse(text)
    except ParseError as e:
        if tf_error is None:
            return f"we refuse ({e.line}:{e.column} {e.message}) what text_format accepts"
        if (e.line, e.column) != (tf_error.GetLine(), tf_error.GetColumn()):
            return f"error at {e.line}:{e.column} ({e.message}); text_format: {tf_error}"
        return None
    if tf_error is not None:
        return f"we accept what text_format refuses: {tf_error}"
    if doc.text != text:
        return "text changed"
    if doc.to_message() != expected:
        return "message differs"
    return None
