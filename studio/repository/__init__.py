"""The model repository: `<repo>/<model>/config.pbtxt` and numbered version folders (no Qt).

    repo = Repository("models/")
    repo.scan()                 # every model; reads folder listings and config.pbtxt, never model binaries
    changed = repo.refresh()    # rescan only the models whose files changed since the last scan

Handles without crashing: missing config.pbtxt, non-numeric or 0-prefixed version folders (Triton ignores
them), empty version folders, folder name != `name:`, unreadable files, symlinks that leave the repository
(not followed, reported), `--model-config-name` alternatives under `<model>/configs/<name>.pbtxt`, a
config.pbtxt inside a version folder (Triton ignores it; listed in `misplaced_configs`).

    open_repository("s3://bucket/models")   # object stores, read-only (studio.repository.storage; extra `cloud`)
    config_only_checkout(repo.models)   # most models have no version folder: configs without model files
    repository_candidates("parent/")    # a folder of repositories (or a model folder): the repositories in it
"""

from __future__ import annotations

import errno
import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from studio.config import ConfigDocument, ParseError


@dataclass
class VersionDir:
    name: str  # the folder name, e.g. "1"
    files: list[str]  # entries inside (names only; never read)
    dirs: set[str]  # which of them are folders
    error: str | None = None  # the folder could not be listed (permission denied, ...)


@dataclass
class ModelEntry:
    name: str
    path: Path
    config: Path | None  # config.pbtxt when present
    document: ConfigDocument | None = None
    error: ParseError | None = None  # config.pbtxt that does not parse
    read_error: str | None = None  # config.pbtxt that cannot be read
    versions: list[str] = field(default_factory=list)  # numeric folders Triton serves, in numeric order
    version_dirs: dict[str, VersionDir] = field(default_factory=dict)
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (folder, why Triton ignores it)
    subdirs: list[str] = field(default_factory=list)  # every subfolder, sorted as Triton sorts them
    outside_links: list[str] = field(default_factory=list)  # symlinks that leave the repository
    alt_configs: dict[str, Path] = field(default_factory=dict)  # --model-config-name NAME -> configs/NAME.pbtxt
    top_files: list[str] = field(default_factory=list)  # files beside config.pbtxt
    misplaced_configs: list[str] = field(default_factory=list)  # "1/config.pbtxt": configs Triton never reads

    @property
    def files(self) -> dict[str, list[str]]:
        return {v: d.files for v, d in self.version_dirs.items()}

    def first_version_dir(self) -> VersionDir | None:
        """The folder Triton's auto-fill inspects: the first subfolder in byte order."""
        if not self.subdirs:
            return None
        first = self.subdirs[0]
        return self.version_dirs.get(first) or _list_dir(self.path / first, self.path)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small, long-lived objects (syntax trees):
    its generational passes otherwise cost more than the parsing itself. Afterwards the new objects are
    moved to the permanent generation (gc.freeze), so that no single full collection later walks them all at
    once (a stall of 100 ms and more in whichever thread triggers it, the UI thread included)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


def _inside(root: Path, p: Path) -> bool:
    try:
        p.resolve().relative_to(root)
        return True
    except (ValueError, OSError, RuntimeError):
        return False


def _list_dir(path: Path, root: Path, outside: list[str] | None = None) -> VersionDir:
    files, dirs = [], set()
    try:
        with os.scandir(path) as it:
            for f in it:
                if f.is_symlink() and not _inside(root, Path(f.path)):
                    if outside is not None:
                        outside.append(f"{path.name}/{f.name}")
                    continue
                files.append(f.name)
                try:
                    if f.is_dir():
                        dirs.add(f.name)
                except OSError:
                    pass
    except OSError as e:
        return VersionDir(path.name, sorted(files, key=_byte_order), dirs, f"{e.strerror or e}")
    return VersionDir(path.name, sorted(files, key=_byte_order), dirs)


def version_ignored_reason(name: str) -> str | None:
    """Why Triton does not treat a subfolder as a version (None: it is a version)."""
    if not name.lstrip("-").isdigit():
        return f"Triton ignores version folder '{display_name(name)}': the name is not a number"
    if len(name) > 1 and name.startswith("0"):
        return f"Triton ignores version folder '{name}': the name has leading zeros"
    return None


def _byte_order(name: str) -> bytes:
    """Sort key of a file name in byte order, as Triton sorts; undecodable names (surrogate escapes) included."""
    return os.fsencode(name)


def display_name(name: str) -> str:
    """A file name for people: bytes that are not UTF-8 (kept as surrogate escapes by os.listdir) shown as \\xNN."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "backslashreplace")


def _is_file(p: Path) -> bool | None:
    """Whether p is a file; None when it cannot be told (permission denied on the folder)."""
    try:
        return p.is_file()
    except OSError:
        return None


def scan_model(path: Path, root: Path) -> ModelEntry:
    cfg = path / "config.pbtxt"
    is_cfg = _is_file(cfg)
    entry = ModelEntry(path.name, path, cfg if is_cfg else None)
    if is_cfg is None:  # the folder cannot be searched (no x permission): a finding on this model
        entry.read_error = f"{display_name(str(path))}: cannot read the model folder: {os.strerror(errno.EACCES)}"
        try:
            os.stat(cfg)
        except OSError as e:
            entry.read_error = f"{display_name(str(path))}: cannot read the model folder: {e.strerror or e}"
        return entry
    try:
        link = cfg.is_symlink()
    except OSError:
        link = False
    if link and not _inside(root, cfg):
        entry.outside_links.append("config.pbtxt")
        entry.config = None
    if entry.config is not None:
        try:
            entry.document = ConfigDocument.load(entry.config)
        except ParseError as e:
            entry.error = e
        except OSError as e:
            entry.read_error = f"{display_name(str(entry.config))}: {e.strerror or e}"
    try:
        with os.scandir(path) as it:
            children = sorted(it, key=lambda e: _byte_order(e.name))
    except OSError as e:
        entry.read_error = f"{display_name(str(path))}: cannot read the model folder: {e.strerror or e}"
        return entry
    for c in children:
        cpath = Path(c.path)
        if c.is_symlink() and not _inside(root, cpath):
            entry.outside_links.append(c.name)
            continue
        try:
            is_dir = c.is_dir()
        except OSError:
            continue
        if not is_dir:
            if c.name != "config.pbtxt":
                entry.top_files.append(c.name)
            continue
        entry.subdirs.append(c.name)
        if c.name == "configs":
            try:
                for alt in sorted(cpath.glob("*.pbtxt"), key=lambda a: _byte_order(a.name)):
                    entry.alt_configs[alt.stem] = alt
            except OSError:
                pass
        why = version_ignored_reason(c.name)
        if why is not None:
            if c.name != "configs":
                entry.ignored.append((c.name, why))
            continue
        vd = entry.version_dirs[c.name] = _list_dir(cpath, root, entry.outside_links)
        if vd.error and entry.read_error is None:
            entry.read_error = f"{display_name(str(cpath))}: cannot read the version folder: {vd.error}"
        entry.versions.append(c.name)
        if "config.pbtxt" in vd.files and "config.pbtxt" not in vd.dirs:
            entry.misplaced_configs.append(f"{c.name}/config.pbtxt")
    entry.versions.sort(key=int)
    entry.misplaced_configs.sort(key=lambda r: int(r.split("/", 1)[0]))
    return entry


def config_only_checkout(models: dict[str, ModelEntry] | list[ModelEntry]) -> bool:
    """Whether a repository holds configs without model files (a git checkout of the configs, the weights
    fetched at deploy time): more than half of its models have no version folder at all. One model without
    a version folder among models that have theirs is a mistake, not a checkout of that kind."""
    entries = list(models.values()) if isinstance(models, dict) else list(models)
    if not entries:
        return False
    bare = sum(1 for e in entries if not e.versions)
    return bare * 2 > len(entries)


def _looks_like_model(path: Path) -> bool:
    """A folder Triton would take for a model: a config.pbtxt, or a numeric version folder."""
    try:
        if (path / "config.pbtxt").is_file():
            return True
        with os.scandir(path) as it:
            return any(c.name.isdigit() and c.is_dir() for c in it)
    except OSError:
        return False


def _subfolders(path: Path) -> list[Path]:
    try:
        with os.scandir(path) as it:
            return sorted((Path(c.path) for c in it if not c.name.startswith(".") and c.is_dir()), key=lambda p: _byte_order(p.name))
    except OSError:
        return []


def repository_candidates(path: str | os.PathLike, max_depth: int = 3, limit: int = 50) -> list[Path]:
    """The repositories to offer when PATH is not one itself (empty: PATH is a repository, or nothing better).

    - PATH is a model folder (its own config.pbtxt): its parent.
    - PATH holds no model (no subfolder with a config.pbtxt or a version folder) but folders below it do
      (`parent/models/<model>/config.pbtxt`, `qa/L0_x/addsub_repo/...`): those folders, nearest first,
      searched at most `max_depth` levels down, at most `limit` of them. Opening such a folder as a
      repository would make each of its subfolders a bogus model."""
    p = Path(path)
    if not p.is_dir():
        return []
    if (p / "config.pbtxt").is_file():
        return [p.parent]
    children = _subfolders(p)
    if any(_looks_like_model(c) for c in children):
        return []
    found: list[Path] = []
    level = children
    for _ in range(max_depth):
        below: list[Path] = []
        for d in level:
            subs = _subfolders(d)
            if any((s / "config.pbtxt").is_file() for s in subs):
                found.append(d)
            else:
                below.extend(subs)
            if len(found) >= limit:
                return found
        if found or not below:
            break
        level = below[:2000]
    return found


def _signature(path: Path) -> tuple:
    """What changes when a model's files change: mtimes of the folder, its config and its subfolders."""
    sig = []
    try:
        st = path.stat()
        sig.append(st.st_mtime_ns)
        with os.scandir(path) as it:
            for c in sorted(it, key=lambda e: _byte_order(e.name)):
                try:
                    s = c.stat(follow_symlinks=False)
                    sig.append((c.name, s.st_mtime_ns, s.st_size))
                except OSError:
                    sig.append((c.name, None))
    except OSError:
        return ("missing",)
    return tuple(sig)


class Repository:
    """A model repository folder and its models, rescanned incrementally."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.root = self.path.resolve()
        self.models: dict[str, ModelEntry] = {}
        self.outside_links: list[str] = []
        self._signatures: dict[str, tuple] = {}
        # an object-store repository (studio.repository.storage.open_repository): its URL, the local snapshot
        self.location: str = str(path)
        self.snapshot = None
        self.read_only = False

    def _model_dirs(self) -> list[Path]:
        if not self.root.is_dir():
            raise FileNotFoundError(f"{self.path}: no such folder")
        out = []
        self.outside_links = []
        with os.scandir(self.root) as it:
            for e in sorted(it, key=lambda x: _byte_order(x.name)):
                if e.name.startswith("."):
                    continue
                p = Path(e.path)
                if e.is_symlink() and not _inside(self.root, p):
                    self.outside_links.append(e.name)
                    continue
                try:
                    if e.is_dir():
                        out.append(p)
                except OSError:
                    continue
        return out

    def scan(self) -> dict[str, ModelEntry]:
        self.models = {}
        self._signatures = {}
        with gc_paused():
            for p in self._model_dirs():
                self.models[p.name] = scan_model(p, self.root)
                self._signatures[p.name] = _signature(p)
        return self.models

    def refresh(self) -> set[str]:
        """Rescan what changed on disk; returns the names of added, removed and changed models."""
        changed: set[str] = set()
        dirs = {p.name: p for p in self._model_dirs()}
        for name in list(self.models):
            if name not in dirs:
                del self.models[name]
                self._signatures.pop(name, None)
                changed.add(name)
        with gc_paused():
            for name, p in dirs.items():
                sig = _signature(p)
                if self._signatures.get(name) != sig:
                    self.models[name] = scan_model(p, self.root)
                    self._signatures[name] = sig
                    changed.add(name)
        return changed


def scan_repository(repo: str | os.PathLike) -> list[ModelEntry]:
    """Models of a repository, sorted by name. Reads folder listings and configs, never model files."""
    return list(Repository(repo).scan().values())
