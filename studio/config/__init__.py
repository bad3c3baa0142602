"""The config document: format-preserving config.pbtxt bound to Triton's ModelConfig schema (no Qt)."""

from studio.config.document import ConfigDocument, EditError, PathError, atomic_write, parse_path
from studio.config.syntax import ParseError

__all__ = ["ConfigDocument", "EditError", "ParseError", "PathError", "atomic_write", "parse_path"]
