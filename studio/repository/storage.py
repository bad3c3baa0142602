"""Where a repository lives: a local folder, or an object store (s3:// gs:// az://) read through fsspec (no Qt).

    is_url("s3://bucket/models")            # True: an object-store repository
    repo = open_repository("s3://bucket/models")   # a Repository over a read-only snapshot of the tree
    repo.snapshot.to_url(finding.file)      # local snapshot paths back to s3:// URLs for people
    doc = read_config("s3://bucket/models/m")      # one config (a file URL, or a model folder's config.pbtxt)

Local paths never come here: the scanner reads them with os.scandir as before. An object-store repository is
listed with one recursive listing (S3: one request per 1000 objects) into a local snapshot in a temporary
folder: the same folders, the files the studio reads downloaded (`<model>/config.pbtxt`, `<model>/configs/*.pbtxt`,
`<model>/<version>/*.py`), every other object a sparse file of its size (no bytes downloaded, no disk used). The
scanner and the validator then run unchanged on it: a repository in S3 gets exactly the findings of the same
repository on disk. The snapshot is read-only (files 0444), deleted on close(); writing refuses (ReadOnlyError).

Credentials and endpoints come from each backend's usual configuration (AWS_* variables and ~/.aws for s3fs,
including AWS_ENDPOINT_URL for S3-compatible servers; gcloud credentials for gcsfs; AZURE_STORAGE_* for adlfs).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

SCHEMES = {"s3": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs", "memory": None}
"""URL schemes read as object-store repositories, and the fsspec backend package each needs ("memory": fsspec's
own in-memory file system, for tests and embedding)."""

MAX_OBJECTS = 200_000
"""The most objects a repository snapshot lists (a bucket prefix with more is not a model repository)."""
MAX_DOWNLOAD = 16 * 2**20
"""The largest file the snapshot downloads (as ConfigDocument refuses larger configs)."""

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_live: set[Path] = set()  # snapshot folders in use: writing below them is refused
_live_lock = threading.Lock()


class StorageError(Exception):
    """An object-store location cannot be read; the message is one line for people. exit_code: 1 failure, 2 usage."""

    exit_code = 1


class ReadOnlyError(StorageError):
    """A write to an object-store repository (the studio opens those read-only)."""


def scheme(text: str | os.PathLike) -> str | None:
    m = _URL.match(os.fspath(text)) if isinstance(text, (str, os.PathLike)) else None
    return m.group(1).lower() if m else None


def is_url(text: str | os.PathLike) -> bool:
    """Whether `text` names an object-store location (s3:// gs:// gcs:// az:// abfs://), not a local path."""
    return scheme(text) in SCHEMES


def read_only_message(location: str | os.PathLike) -> str:
    return (f"{location}: object-store repositories are read-only in the studio "
            "(copy the model to a local folder to edit it, then upload it)")


def check_writable(path: str | os.PathLike) -> None:
    """Raise ReadOnlyError for an object-store URL or a path inside an open object-store snapshot."""
    if is_url(path):
        raise ReadOnlyError(read_only_message(path))
    with _live_lock:
        live = list(_live)
    if not live:
        return
    p = Path(os.path.abspath(path))
    for root in live:
        if p == root or root in p.parents:
            raise ReadOnlyError(read_only_message(path))


def _install_hint() -> str:
    """How to get the cloud backends: pip for an installed studio, a rebuild for a PyInstaller bundle."""
    import sys

    if getattr(sys, "frozen", False):
        return "this bundle was built without them: rebuild it with packaging/pyinstaller/build.sh --with-cloud"
    return "pip install 'triton-config-studio[cloud]'"


def _filesystem(url: str):
    """(fsspec file system, path inside it) for a URL; StorageError (one line) when the backend is missing."""
    s = scheme(url)
    backend = SCHEMES.get(s or "")
    try:
        import fsspec  # noqa: F401
        from fsspec.core import url_to_fs
    except ImportError:
        raise StorageError(f"{url}: reading {s}:// repositories needs fsspec and {backend or 'its backend'}: "
                           f"{_install_hint()}") from None
    try:
        fs, path = url_to_fs(url)
    except ImportError:
        raise StorageError(f"{url}: reading {s}:// repositories needs the {backend} package: "
                           f"{_install_hint()}") from None
    except (ValueError, TypeError) as e:
        raise StorageError(f"{url}: not a valid {s}:// location: {_one_line(e)}") from None
    return fs, path.rstrip("/")


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) < 300 else text[:297] + "..."


def _failure(url: str, e: BaseException) -> StorageError:
    if isinstance(e, FileNotFoundError):
        return StorageError(f"{url}: no such repository (nothing stored under it)")
    if isinstance(e, PermissionError):
        return StorageError(f"{url}: access denied ({_one_line(e)}); check the credentials")
    return StorageError(f"{url}: cannot read the object store: {type(e).__name__}: {_one_line(e)}")


def _safe_parts(rel: str) -> list[str] | None:
    """The folder names of an object key below the repository, or None for a key that is no path on disk."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") or "\0" in p or len(os.fsencode(p)) > 255 for p in parts):
        return None
    return parts


def _wanted(parts: list[str]) -> bool:
    """Whether the scanner or the validator reads this file's bytes (others only need to exist with their size).
    Below a repository: <model>/config.pbtxt, <model>/configs/*.pbtxt, <model>/<version>/*.py; below a model
    folder the same one level up."""
    n, name = len(parts), parts[-1]
    if name == "config.pbtxt":
        return n <= 2
    if n >= 2 and parts[-2] == "configs" and name.endswith(".pbtxt"):
        return n <= 3
    return 2 <= n <= 3 and parts[-2].isdigit() and name.endswith(".py")


class Snapshot:
    """A local read-only copy of an object-store repository's tree (see the module's doc). A context manager."""

    def __init__(self, url: str, local: Path, holder: Path, skipped: list[str]) -> None:
        self.url = url.rstrip("/")
        self.local = local
        self._holder = holder
        self.skipped = skipped  # keys that are no path on disk ('a//b', '../x'): left out

    def to_url(self, text):
        """A local path (or a message naming one) in the snapshot, as the object-store URL."""
        if not isinstance(text, str):
            return text
        return text.replace(str(self.local), self.url)

    def close(self) -> None:
        with _live_lock:
            _live.discard(self.local)
        shutil.rmtree(self._holder, ignore_errors=True)

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def snapshot(url: str) -> Snapshot:
    """List an object-store repository and build its local snapshot; StorageError says why it cannot."""
    url = url.rstrip("/")
    fs, root = _filesystem(url)
    try:
        fs.invalidate_cache(root)  # fsspec keeps listings per file system instance: read the store as it is now
        listing = fs.find(root, withdirs=True, detail=True, maxdepth=None)
    except Exception as e:  # noqa: BLE001 - every backend has its own errors: one line each
        raise _failure(url, e) from None
    if not listing:
        try:
            exists = fs.isdir(root)
        except Exception as e:  # noqa: BLE001
            raise _failure(url, e) from None
        if not exists:
            raise StorageError(f"{url}: no such repository (nothing stored under it)")
    if len(listing) > MAX_OBJECTS:
        raise StorageError(f"{url}: more than {MAX_OBJECTS} objects: not a model repository (open the folder of "
                           "the repository itself)")
    holder = Path(tempfile.mkdtemp(prefix="triton-studio-remote-"))
    name = root.rsplit("/", 1)[-1] or "repository"
    local = holder / name
    local.mkdir()
    skipped: list[str] = []
    fetch: dict[str, Path] = {}
    strip = len(root) + 1
    try:
        files = []
        for key, info in sorted(listing.items()):
            key = key.rstrip("/")
            if key == root or not key.startswith(root + "/"):
                continue
            parts = _safe_parts(key[strip:])
            if parts is None:
                skipped.append(key[strip:])
                continue
            target = local.joinpath(*parts)
            if info.get("type") == "directory":
                target.mkdir(parents=True, exist_ok=True)
            else:
                files.append((key, parts, target, int(info.get("size") or 0)))
        for key, parts, target, size in files:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir():  # an object 'm/1' beside objects 'm/1/...': the folder wins, as in Triton's listing
                skipped.append(key[strip:])
                continue
            with open(target, "wb") as f:
                f.truncate(size)  # sparse: the size is right, no bytes are stored
            if _wanted(parts) and size <= MAX_DOWNLOAD:
                fetch[key] = target
        if fetch:
            try:
                data = fs.cat(list(fetch), on_error="return")
            except Exception as e:  # noqa: BLE001
                raise _failure(url, e) from None
            for key, target in fetch.items():
                blob = data.get(key) if isinstance(data, dict) else None
                if isinstance(blob, bytes):
                    target.write_bytes(blob)
                elif isinstance(blob, BaseException):  # unreadable object: the file stays, without its bytes
                    target.unlink()
        for p in local.rglob("*"):
            if p.is_file():
                p.chmod(0o444)
    except OSError as e:
        shutil.rmtree(holder, ignore_errors=True)
        raise StorageError(f"{url}: cannot build the local snapshot in {holder}: {e.strerror or e}") from None
    except BaseException:
        shutil.rmtree(holder, ignore_errors=True)
        raise
    with _live_lock:
        _live.add(local)
    return Snapshot(url, local, holder, skipped)


def open_repository(url: str):
    """A scanned Repository of an object-store URL. Its `snapshot` (close it when done) maps paths back to URLs;
    `location` is the URL and `read_only` is True."""
    from studio.repository import Repository

    snap = snapshot(url)
    try:
        repo = Repository(snap.local)
        repo.snapshot = snap
        repo.location = snap.url
        repo.read_only = True
        repo.scan()
    except BaseException:
        snap.close()
        raise
    return repo


def read_config(url: str):
    """The ConfigDocument at an object-store URL: a .pbtxt file, or a model folder (its config.pbtxt). Its
    filename is the URL; ParseError and StorageError say what went wrong in one line."""
    from studio.config import ConfigDocument, ParseError

    url = url.rstrip("/")
    if not url.endswith(".pbtxt"):
        url += "/config.pbtxt"
    fs, path = _filesystem(url)
    try:
        fs.invalidate_cache(path)
        size = fs.size(path)
        if size is not None and size > MAX_DOWNLOAD:
            raise StorageError(f"{url}: {size} bytes: larger than a config file can be ({MAX_DOWNLOAD} bytes)")
        data = fs.cat_file(path)
    except StorageError:
        raise
    except Exception as e:  # noqa: BLE001
        if isinstance(e, FileNotFoundError):
            raise StorageError(f"{url}: no such config file") from None
        raise _failure(url, e) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(f"the file is not UTF-8 (byte 0x{data[e.start]:02x})", 1, 1,
                         hint="Triton reads config.pbtxt as UTF-8: re-save the file in that encoding",
                         filename=url) from None
    return ConfigDocument.parse(text, filename=url)
