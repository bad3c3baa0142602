"""A save keeps the file's POSIX ACL and user.* extended attributes (issue 14), on the real file system.

The ACL is set through its xattr (`system.posix_acl_access`, the kernel's binary form, as `setfacl` writes it)
so the test needs no `acl` package; the kernel validates the entries and derives the group mode bits from them.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from studio.config import ConfigDocument
from studio.config.saving import safe_write

TEXT = 'name: "m"\nbackend: "python"\nmax_batch_size: 8\n'
ACL = "system.posix_acl_access"
# linux/posix_acl_xattr.h: a version header, then (tag, perm, id) entries sorted by tag then id
_USER_OBJ, _USER, _GROUP_OBJ, _GROUP, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_NO_ID = 0xFFFFFFFF


def acl_bytes(entries: list[tuple[int, int, int]]) -> bytes:
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i) for t, p, i in entries)


def acl_entries(raw: bytes) -> list[tuple[int, int, int]]:
    assert struct.unpack_from("<I", raw)[0] == 2
    return [struct.unpack_from("<HHI", raw, off) for off in range(4, len(raw), 8)]


# owner rw, user 4321 rw, owning group r, group 5432 r, mask rw, others none (setfacl -m u:4321:rw,g:5432:r)
ENTRIES = [(_USER_OBJ, 6, _NO_ID), (_USER, 6, 4321), (_GROUP_OBJ, 4, _NO_ID), (_GROUP, 4, 5432),
           (_MASK, 6, _NO_ID), (_OTHER, 0, _NO_ID)]


def config_with_attrs(tmp_path: Path) -> Path:
    p = tmp_path / "config.pbtxt"
    p.write_text(TEXT)
    try:
        os.setxattr(p, "user.origin", b"exported by the team's pipeline")
        os.setxattr(p, "user.empty", b"")
        os.setxattr(p, ACL, acl_bytes(ENTRIES))
    except OSError as e:
        raise AssertionError(f"{tmp_path} must support user xattrs and POSIX ACLs (ext4/xfs/tmpfs do): {e}") from e
    return p


def test_cli_style_save_keeps_acl_and_user_xattrs(tmp_path):
    p = config_with_attrs(tmp_path)
    ino = p.stat().st_ino
    mode = p.stat().st_mode & 0o7777
    doc = ConfigDocument.load(p)
    doc.set("max_batch_size", 16)
    doc.save()
    assert "max_batch_size: 16" in p.read_text()
    assert p.stat().st_ino != ino, "expected the atomic rename path (a new inode), not the in-place fallback"
    assert os.getxattr(p, "user.origin") == b"exported by the team's pipeline"
    assert os.getxattr(p, "user.empty") == b""
    assert acl_entries(os.getxattr(p, ACL)) == ENTRIES
    assert p.stat().st_mode & 0o7777 == mode == 0o660  # group bits are the ACL mask
    assert sorted(n for n in os.listdir(tmp_path) if n != "config.pbtxt") == []


def test_safe_write_keeps_attrs_through_a_symlink(tmp_path):
    real = config_with_attrs(tmp_path)
    link = tmp_path / "link.pbtxt"
    link.symlink_to(real.name)
    safe_write(link, TEXT.replace("8", "4"))
    assert link.is_symlink() and "max_batch_size: 4" in real.read_text()
    assert os.getxattr(real, "user.origin") == b"exported by the team's pipeline"
    assert acl_entries(os.getxattr(real, ACL)) == ENTRIES


def test_a_file_without_attrs_gets_none(tmp_path):
    p = tmp_path / "config.pbtxt"
    p.write_text(TEXT)
    safe_write(p, TEXT + "# more\n")
    assert [n for n in os.listxattr(p) if n.startswith("user.") or n == ACL] == []
