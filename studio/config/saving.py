"""The one save path for users' files (CLI `set`/`fmt`, GUI save, deploy, tuning write-back). No Qt.

What it promises about the file at `path`:

- **Never a partial file.** New bytes go to a temporary file in the *target's* folder, are fsynced, then renamed
  over the target. On any failure the temporary file is removed and the original is untouched.
- **Symlinks are written through**: the link stays a link, its target gets the new bytes (atomically, in the
  target's folder).
- **Hard links are kept, never split**: a file with `st_nlink > 1` (or one whose owner the current user cannot
  give back to a new file) is written *in place*, after a backup copy in the same folder; a failed in-place write
  is undone from the backup (if even that fails, the error names the backup, which is then kept).
- **Owner, group and mode are kept** (chown when permitted, else the in-place write above keeps them), and so
  are the POSIX ACL and `user.*` extended attributes (copied to the temporary file before the rename; where one
  cannot be set there, the file is written in place as for hard links).
- **Read-only files are refused** (`ReadOnlyFile`) unless `force=True`.
- **Changes since the file was read are refused** (`FileChangedOnDisk`) unless `force=True`: give the
  `FileStamp` taken when it was read (`read_file`, or `ConfigDocument.load`'s `doc.disk_stamp`). The check runs
  against the bytes actually replaced: with `renameat2(RENAME_EXCHANGE)` (Linux; ext4, tmpfs, xfs, btrfs) the
  new file is swapped in, the old one is checked, and on a mismatch swapped back, so a concurrent writer's
  content is never lost; elsewhere the check runs right before the rename.
- **Line endings are kept**: `newline="keep"` writes CRLF when the file being replaced is CRLF and the new text
  has no CR at all (what a text widget hands over after typing).
- **Every failure is one typed exception** (`SaveError`, an `OSError`) whose `str()` is one line for users:
  `PATH: what failed: reason`.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass

__all__ = [
    "FileChangedOnDisk",
    "FileStamp",
    "ReadOnlyFile",
    "SaveError",
    "changed_on_disk",
    "read_file",
    "safe_write",
]


@dataclass(frozen=True)
class FileStamp:
    """What a file was when it was read: enough to tell whether someone else changed it since."""

    mtime_ns: int
    size: int
    sha256: str

    @classmethod
    def of(cls, data: bytes, st: os.stat_result) -> FileStamp:
        return cls(st.st_mtime_ns, len(data), hashlib.sha256(data).hexdigest())

    def matches(self, data: bytes) -> bool:
        """Whether `data` is the content this stamp was taken of (the mtime alone may change with a `touch`)."""
        return len(data) == self.size and hashlib.sha256(data).hexdigest() == self.sha256


class SaveError(OSError):
    """A save that did not happen; the original file is intact. `str(e)` is one line: `path: what: reason`."""

    def __init__(self, path: str, what: str, reason: str, errno_: int | None = None) -> None:
        super().__init__(errno_ or 0, reason)
        self.path = path
        self.what = what
        self.reason = reason
        self.filename = path

    def __str__(self) -> str:
        return f"{self.path}: {self.what}: {self.reason}"

    def __reduce__(self):  # picklable across worker processes
        return (type(self), (self.path, self.what, self.reason, self.errno or None))


class ReadOnlyFile(SaveError):
    """The file is read-only (no write permission bit, or not writable by this user). `force=True` overrides."""


class FileChangedOnDisk(SaveError):
    """The file changed (or vanished) since it was read. `force=True` overwrites; a GUI offers reload/diff."""


def _reason(e: OSError) -> str:
    return e.strerror or str(e) or type(e).__name__


MAX_FILE_BYTES = 16 * 1024 * 1024
"""The largest config read (Triton's configs are kilobytes; a bigger file is a mistake, not a config)."""


def read_file(path: str | os.PathLike, max_bytes: int | None = MAX_FILE_BYTES) -> tuple[bytes, FileStamp]:
    """The bytes of a regular file and its stamp, read through one open file. OSError as open() raises them;
    a FIFO, device or socket (which could block or never end) and a file over max_bytes raise OSError too."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", os.fspath(path))
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        if max_bytes is not None and st.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"the file is {st.st_size / 2**20:.0f} MiB; configs over "
                          f"{max_bytes // 2**20} MiB are refused", os.fspath(path))
        data = f.read()
        st = os.fstat(fd)
    return data, FileStamp.of(data, st)


def changed_on_disk(path: str | os.PathLike, stamp: FileStamp | None) -> bool:
    """Whether the file at path differs from what `stamp` was taken of (gone counts as changed). Cheap when the
    mtime and size agree; reads the file only when they do not."""
    if stamp is None:
        return False
    try:
        st = os.stat(path)
    except OSError:
        return True
    if st.st_mtime_ns == stamp.mtime_ns and st.st_size == stamp.size:
        return False
    try:
        with open(path, "rb") as f:
            return not stamp.matches(f.read())
    except OSError:
        return True


# -- renameat2(RENAME_EXCHANGE) ------------------------------------------------------------------------------
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_renameat2 = None
try:  # glibc >= 2.28
    _libc = ctypes.CDLL(None, use_errno=True)
    _renameat2 = _libc.renameat2
    _renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    _renameat2.restype = ctypes.c_int
except (OSError, AttributeError):  # pragma: no cover - not Linux/glibc
    _renameat2 = None


def _exchange(a: str, b: str) -> bool:
    """Atomically swap two paths. False when the system or file system cannot (then nothing happened)."""
    if _renameat2 is None:
        return False
    rc = _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), b)


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _read_quietly(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _with_newlines(data: bytes, old: bytes | None, newline: str | None) -> bytes:
    if newline is None:
        return data
    if newline == "keep":
        if old is None or b"\r" in data:
            return data
        crlf = old.count(b"\r\n")
        if crlf == 0 or crlf < old.count(b"\n") - crlf:
            return data
        newline = "\r\n"
    if newline == "\r\n":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if newline == "\n":
        return data.replace(b"\r\n", b"\n")
    raise ValueError(f"newline must be 'keep', None, '\\n' or '\\r\\n', got {newline!r}")


def safe_write(
    path: str | os.PathLike,
    data: str | bytes,
    *,
    expect: FileStamp | None = None,
    force: bool = False,
    newline: str | None = "keep",
) -> FileStamp:
    """Replace the content of the file at `path` as the module docstring promises; return the new stamp.

    expect: the stamp of the file when it was read; a file that differs now raises FileChangedOnDisk.
    force: write over a read-only file and over changes made since `expect` was taken.
    newline: "keep" (follow the replaced file), None (bytes as given), "\\n" or "\\r\\n".
    Raises SaveError (ReadOnlyFile, FileChangedOnDisk) with a one-line message; the original stays intact.
    """
    shown = os.fspath(path)
    if isinstance(shown, bytes):
        shown = os.fsdecode(shown)
    target = os.path.realpath(shown)  # through symlinks (a dangling one: its target is created)
    folder = os.path.dirname(target) or "."
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
        if not os.path.isdir(folder):
            raise SaveError(shown, "cannot save", f"the folder {folder} does not exist", errno.ENOENT) from None
    except OSError as e:
        raise SaveError(shown, "cannot read the file's status", _reason(e), e.errno) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise SaveError(shown, "cannot save", f"it is {kind}", errno.EISDIR if stat.S_ISDIR(st.st_mode) else None)
    if st is not None and not force:
        if st.st_mode & 0o222 == 0:
            raise ReadOnlyFile(
                shown, "not saved", f"the file is read-only (mode {stat.S_IMODE(st.st_mode):04o}); force to overwrite",
                errno.EACCES)
        if not os.access(target, os.W_OK):  # writable, but not by this user: forcing would not help
            raise SaveError(
                shown, "not saved", f"permission denied: {_user(os.geteuid())} may not write this file (owner "
                f"{_user(st.st_uid)}, group {_group(st.st_gid)}, mode {stat.S_IMODE(st.st_mode):04o})", errno.EACCES)
    old = _read_quietly(target) if st is not None else None
    check = expect is not None and not force

    def refuse_changed() -> FileChangedOnDisk:
        gone = not os.path.lexists(target)
        why = "the file was deleted" if gone else "the file was changed by someone else"
        return FileChangedOnDisk(shown, "not saved", f"{why} since it was read; reload it or force to overwrite")

    if check:
        if st is None or old is None or not expect.matches(old):  # type: ignore[union-attr]
            if st is None or old is not None:
                raise refuse_changed()
    if isinstance(data, str):
        data = data.encode("utf-8")
    data = _with_newlines(data, old, newline)

    if st is not None and st.st_nlink > 1:
        return _write_in_place(shown, target, data, st, expect if check else None)

    # 1. the new bytes in a temporary file beside the target
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise SaveError(shown, f"cannot create a file in {folder}", _reason(e), e.errno) from None
    try:
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        except OSError as e:
            raise SaveError(shown, "cannot write", _reason(e), e.errno) from None
        if st is not None:
            try:
                if (st.st_uid, st.st_gid) != (os.fstat(fd).st_uid, os.fstat(fd).st_gid):
                    os.fchown(fd, st.st_uid, st.st_gid)
            except PermissionError:  # not ours to give away: keep the owner by writing in place
                os.close(fd)
                fd = -1
                os.unlink(tmp)
                return _write_in_place(shown, target, data, st, expect if check else None)
            except OSError as e:
                raise SaveError(shown, "cannot keep the file's owner", _reason(e), e.errno) from None
        try:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        except OSError as e:
            raise SaveError(shown, "cannot keep the file's mode", _reason(e), e.errno) from None
        if st is not None and not _copy_xattrs(target, fd):
            # an ACL or extended attribute that cannot be given to a new file: keep them by writing in place
            os.close(fd)
            fd = -1
            os.unlink(tmp)
            return _write_in_place(shown, target, data, st, expect if check else None)
        written = os.fstat(fd)
        os.close(fd)
        fd = -1
        # 2. swap it in; with a stamp to honour, check what was replaced and swap back on a change
        try:
            if check and st is not None and _exchange(tmp, target):
                replaced = _read_quietly(tmp)
                if replaced is None or not expect.matches(replaced):  # type: ignore[union-attr]
                    _exchange(tmp, target)
                    raise refuse_changed()
                os.unlink(tmp)
            else:
                if check and (old_now := _read_quietly(target)) is not None and not expect.matches(old_now):  # type: ignore[union-attr]
                    raise refuse_changed()
                os.replace(tmp, target)
        except SaveError:
            raise
        except OSError as e:
            raise SaveError(shown, "cannot replace the file", _reason(e), e.errno) from None
        _fsync_dir(folder)
        return FileStamp.of(data, written)
    finally:
        if fd >= 0:
            os.close(fd)
        if os.path.lexists(tmp):
            try:
                os.unlink(tmp)
            except OSError:
                pass


# the extended attributes a save carries over: user data (user.*) and the POSIX ACL (an xattr on Linux); not
# security.* (an SELinux label belongs to where the file is, and the kernel labels the new file) nor trusted.*
_KEPT_XATTRS = ("user.", "system.posix_acl_access")


def _copy_xattrs(source: str, fd: int) -> bool:
    """Give the open file `fd` the POSIX ACL and user.* xattrs of `source` (before the rename). True when done
    (or there was nothing to copy, or the system has no xattrs); False when one could not be set."""
    if not hasattr(os, "listxattr"):  # pragma: no cover - not Linux
        return True
    try:
        names = os.listxattr(source)
    except OSError:  # no xattr support on this file system (ENOTSUP) or the file is unreadable: nothing to keep
        return True
    for name in names:
        if not name.startswith(_KEPT_XATTRS):
            continue
        try:
            value = os.getxattr(source, name)
            os.setxattr(fd, name, value)
        except OSError:
            return False
    return True


def _user(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def _group(gid: int) -> str:
    try:
        import grp

        return grp.getgrgid(gid).gr_name
    except (ImportError, KeyError):
        return f"gid {gid}"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_in_place(shown: str, target: str, data: bytes, st: os.stat_result, expect: FileStamp | None) -> FileStamp:
    """Overwrite the file's own inode (hard links and owner stay), with a backup copy to undo a failed write."""
    folder = os.path.dirname(target) or "."
    try:
        f = open(target, "r+b")  # noqa: SIM115 - closed below
    except OSError as e:
        raise SaveError(shown, "cannot open the file for writing", _reason(e), e.errno) from None
    backup = None
    try:
        old = f.read()
        if expect is not None and not expect.matches(old):
            raise FileChangedOnDisk(
                shown, "not saved", "the file was changed by someone else since it was read; reload it or force to overwrite")
        try:
            bfd, backup = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".bak", dir=folder)
            with os.fdopen(bfd, "wb") as b:
                b.write(old)
                b.flush()
                os.fsync(b.fileno())
        except OSError as e:
            raise SaveError(shown, f"cannot make the backup copy in {folder} (needed to write a hard-linked file in place)",
                            _reason(e), e.errno) from None
        try:
            f.seek(0)
            f.write(data)
            f.truncate()
            f.flush()
            os.fsync(f.fileno())
        except OSError as e:
            try:
                f.seek(0)
                f.write(old)
                f.truncate()
                f.flush()
                os.fsync(f.fileno())
            except OSError:
                kept, backup = backup, None
                raise SaveError(shown, "cannot write", f"{_reason(e)}; the original is in {kept}", e.errno) from None
            raise SaveError(shown, "cannot write", f"{_reason(e)} (the original was restored)", e.errno) from None
        return FileStamp.of(data, os.fstat(f.fileno()))
    finally:
        f.close()
        if backup is not None:
            try:
                os.unlink(backup)
            except OSError:
                pass
