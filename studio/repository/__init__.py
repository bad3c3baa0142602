"""The model repository: `<repo>/<model>/config.pbtxt` and numbered version folders (no Qt).

This is the first, light scan the window uses; the repository issue grows it into the full model with
frameworks, alternative configs and incremental rescans.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ModelEntry:
    name: str
    path: Path
    config: Path | None  # config.pbtxt when present
    versions: list[str] = field(default_factory=list)  # numeric folders Triton serves, in numeric order
    ignored: list[str] = field(default_factory=list)  # folders Triton ignores (non-numeric, 0-prefixed)
    files: dict[str, list[str]] = field(default_factory=dict)  # version -> file names (not read)
    outside_links: list[str] = field(default_factory=list)  # symlinks that leave the repository (not followed)


def _inside(root: Path, p: Path) -> bool:
    try:
        p.resolve().relative_to(root)
        return True
    except (ValueError, OSError):
        return False


def scan_repository(repo: str | os.PathLike) -> list[ModelEntry]:
    """Models of a repository, sorted by name. Reads folder listings only, never model files."""
    root = Path(repo).resolve()
    models: list[ModelEntry] = []
    with os.scandir(root) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        if e.name.startswith(".") or not e.is_dir(follow_symlinks=True):
            continue
        path = Path(e.path)
        if e.is_symlink() and not _inside(root, path):
            continue
        cfg = path / "config.pbtxt"
        m = ModelEntry(e.name, path, cfg if cfg.is_file() else None)
        with os.scandir(path) as sub:
            for v in sorted(sub, key=lambda x: x.name):
                vpath = Path(v.path)
                if v.is_symlink() and not _inside(root, vpath):
                    m.outside_links.append(v.name)
                    continue
                if not v.is_dir():
                    continue
                if v.name.isdigit() and (v.name == "0" or not v.name.startswith("0")):
                    m.versions.append(v.name)
                    names = []
                    with os.scandir(vpath) as files:
                        for f in files:
                            if f.is_symlink() and not _inside(root, Path(f.path)):
                                m.outside_links.append(f"{v.name}/{f.name}")
                                continue
                            names.append(f.name)
                    m.files[v.name] = sorted(names)
                elif v.name not in ("configs",):
                    m.ignored.append(v.name)
        m.versions.sort(key=int)
        if m.config is not None or m.versions:
            models.append(m)
    return models
