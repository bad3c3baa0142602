"""Operations on the models of a repository (no Qt): duplicate, rename, move to the trash.

Each keeps `name:` in config.pbtxt equal to the folder (Triton refuses a mismatch) and refuses, with an
OperationError that says why, a name that is not a plain folder name or a target that already exists.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from studio.config import ConfigDocument


class OperationError(Exception):
    """A repository operation was refused or failed: the message is for the user."""


def check_model_name(name: str) -> None:
    """A model name must be a plain folder name (Triton's repository layout)."""
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise OperationError(f"{name!r} is not a valid model name (a plain folder name)")
    if any(ord(c) < 32 for c in name):
        raise OperationError(f"{name!r} is not a valid model name (control characters)")


def _check_writable(repository: str | os.PathLike) -> None:
    from studio.repository.storage import ReadOnlyError, check_writable

    try:
        check_writable(repository)
    except ReadOnlyError as e:
        raise OperationError(str(e)) from None


def _source_and_target(repository: str | os.PathLike, model: str, new_name: str) -> tuple[Path, Path]:
    _check_writable(repository)
    check_model_name(new_name)
    src, dst = Path(repository) / model, Path(repository) / new_name
    if not src.is_dir():
        raise OperationError(f"{src}: no such model folder")
    if dst.exists() or dst.is_symlink():
        raise OperationError(f"{dst} already exists")
    return src, dst


def set_config_name(model_dir: Path, name: str) -> None:
    """Keep `name:` equal to the folder; a config without `name:` needs nothing."""
    cfg = model_dir / "config.pbtxt"
    if cfg.exists():
        doc = ConfigDocument.load(cfg)
        if doc.has("name"):
            doc.set("name", name)
            doc.save()


def duplicate_model(repository: str | os.PathLike, model: str, new_name: str) -> Path:
    """Copy a model folder (symlinks copied as links) under a new name; returns the new folder."""
    src, dst = _source_and_target(repository, model, new_name)
    shutil.copytree(src, dst, symlinks=True)
    set_config_name(dst, new_name)
    return dst


def rename_model(repository: str | os.PathLike, model: str, new_name: str) -> Path:
    """Rename the folder and the config's `name:` together; returns the new folder."""
    src, dst = _source_and_target(repository, model, new_name)
    src.rename(dst)
    set_config_name(dst, new_name)
    return dst


def trash_dir() -> Path:
    """The studio's own folder in the freedesktop trash."""
    d = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "Trash" / "triton-config-studio"
    d.mkdir(parents=True, exist_ok=True)
    return d


def trash_model(repository: str | os.PathLike, model: str) -> Path:
    """Move a model folder to the trash (it can be restored from there); returns where it went."""
    _check_writable(repository)
    path = Path(repository) / model
    if not path.is_dir():
        raise OperationError(f"{path}: no such model folder")
    target = trash_dir() / f"{model}-{int(time.time())}"
    shutil.move(str(path), str(target))
    return target
