"""The config document: format-preserving config.pbtxt bound to Triton's ModelConfig schema (no Qt)."""

from studio.config.document import ConfigDocument, EditError, PathError, atomic_write, parse_path
from studio.config.saving import (
    FileChangedOnDisk,
    FileStamp,
    ReadOnlyFile,
    SaveError,
    changed_on_disk,
    read_file,
    safe_write,
)
from studio.config.syntax import ParseError

__all__ = [
    "ConfigDocument",
    "EditError",
    "FileChangedOnDisk",
    "FileStamp",
    "ParseError",
    "PathError",
    "ReadOnlyFile",
    "SaveError",
    "atomic_write",
    "changed_on_disk",
    "parse_path",
    "read_file",
    "safe_write",
]
