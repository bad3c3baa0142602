"""Saving respects the file system (issue 14): real files, links, owners, modes, read-only folders, full disks.

Run as root (as CI does) the owner test gives the file to another uid/gid first; the read-only folder uses
`chattr +i` (immutable: refused even for root) and a read-only tmpfs; the full disk is a 64 KiB tmpfs.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from studio.config import ConfigDocument
from studio.config.saving import FileChangedOnDisk, ReadOnlyFile, SaveError, read_file, safe_write

TEXT = 'name: "m"\nbackend: "python"\nmax_batch_size: 8\n'


def write(p: Path, text: str = TEXT) -> Path:
    p.write_bytes(text.encode())
    return p


def leftovers(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith((".tmp", ".bak")))


def edited(path: Path, value: int = 16) -> ConfigDocument:
    doc = ConfigDocument.load(path)
    doc.set("max_batch_size", value)
    return doc


# -- links -------------------------------------------------------------------------------------------------------
def test_symlink_is_written_through_and_stays_a_link(tmp_path):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = write(real_dir / "config.pbtxt")
    link_dir = tmp_path / "repo" / "m"
    link_dir.mkdir(parents=True)
    link = link_dir / "config.pbtxt"
    link.symlink_to(target)
    edited(link).save()
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "max_batch_size: 16" in target.read_text()
    assert leftovers(real_dir) == [] and leftovers(link_dir) == []


def test_relative_symlink_chain_is_written_through(tmp_path):
    target = write(tmp_path / "a.pbtxt")
    (tmp_path / "b.pbtxt").symlink_to("a.pbtxt")
    (tmp_path / "c.pbtxt").symlink_to("b.pbtxt")
    edited(tmp_path / "c.pbtxt").save()
    assert (tmp_path / "c.pbtxt").is_symlink() and (tmp_path / "b.pbtxt").is_symlink()
    assert "max_batch_size: 16" in target.read_text()


def test_hard_links_are_kept_written_in_place(tmp_path):
    """Chosen behaviour: a hard-linked file is written in place (after a backup copy), never split."""
    a = write(tmp_path / "a.pbtxt")
    b = tmp_path / "b.pbtxt"
    os.link(a, b)
    ino = a.stat().st_ino
    edited(a).save()
    assert a.stat().st_ino == ino == b.stat().st_ino and a.stat().st_nlink == 2
    assert "max_batch_size: 16" in b.read_text()
    assert leftovers(tmp_path) == []


def test_hard_linked_file_changed_on_disk_is_refused(tmp_path):
    a = write(tmp_path / "a.pbtxt")
    os.link(a, tmp_path / "b.pbtxt")
    doc = edited(a)
    write(a, TEXT + "# theirs\n")
    with pytest.raises(FileChangedOnDisk):
        doc.save()
    assert a.read_text().endswith("# theirs\n")


# -- owner, group, mode, line endings ----------------------------------------------------------------------------
def test_owner_group_and_mode_are_kept(tmp_path):
    assert os.geteuid() == 0, "giving a file to another owner needs root (the test command runs as root)"
    p = write(tmp_path / "config.pbtxt")
    os.chown(p, 12345, 23456)
    os.chmod(p, 0o640)
    edited(p).save()
    st = p.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (12345, 23456, 0o640)
    assert "max_batch_size: 16" in p.read_text()


def test_mode_is_kept(tmp_path):
    p = write(tmp_path / "config.pbtxt")
    os.chmod(p, 0o604)
    edited(p).save()
    assert p.stat().st_mode & 0o7777 == 0o604


def test_crlf_file_stays_crlf_after_typing(tmp_path):
    """A text view hands over LF text after typing; the file keeps CRLF."""
    p = tmp_path / "config.pbtxt"
    p.write_bytes(TEXT.replace("\n", "\r\n").encode())
    doc = ConfigDocument.load(p)
    doc.set_text(doc.text.replace("\r\n", "\n").replace("8", "4"))
    doc.save()
    assert p.read_bytes() == TEXT.replace("8", "4").replace("\n", "\r\n").encode()


# -- refusals ----------------------------------------------------------------------------------------------------
def test_read_only_file_is_refused_then_forced(tmp_path):
    p = write(tmp_path / "config.pbtxt")
    os.chmod(p, 0o444)
    doc = edited(p)
    with pytest.raises(ReadOnlyFile) as e:
        doc.save()
    assert str(e.value) == f"{p}: not saved: the file is read-only (mode 0444); force to overwrite"
    assert p.read_text() == TEXT
    doc.save(force=True)
    assert "max_batch_size: 16" in p.read_text() and p.stat().st_mode & 0o777 == 0o444


def test_change_on_disk_since_load_is_refused_then_forced(tmp_path):
    p = write(tmp_path / "config.pbtxt")
    doc = edited(p)
    write(p, TEXT + "# someone else\n")
    assert doc.changed_on_disk()
    with pytest.raises(FileChangedOnDisk) as e:
        doc.save()
    assert "changed by someone else since it was read" in str(e.value) and "\n" not in str(e.value)
    assert p.read_text().endswith("# someone else\n")
    assert leftovers(tmp_path) == []
    doc.save(force=True)
    assert "max_batch_size: 16" in p.read_text()
    assert not doc.changed_on_disk()
    doc.set("max_batch_size", 2)
    doc.save()  # the stamp follows the document's own saves


def test_touch_without_change_is_not_a_change(tmp_path):
    p = write(tmp_path / "config.pbtxt")
    doc = edited(p)
    os.utime(p, ns=(1, 1))
    assert not doc.changed_on_disk()
    doc.save()


def test_file_deleted_since_load_is_refused(tmp_path):
    p = write(tmp_path / "config.pbtxt")
    doc = edited(p)
    p.unlink()
    with pytest.raises(FileChangedOnDisk, match="deleted"):
        doc.save()
    doc.save(force=True)
    assert "max_batch_size: 16" in p.read_text()


def test_concurrent_writer_content_is_never_lost(tmp_path):
    """A writer thread races each save: either the save refuses, or the writer wrote after it. Never both lost."""
    p = tmp_path / "config.pbtxt"
    theirs = TEXT + "# the other writer\n"
    outcomes = {"refused": 0, "saved": 0}
    for i in range(200):
        write(p)
        doc = edited(p, 16 + i)
        writer = threading.Thread(target=lambda d=(i % 20) * 2e-5: (time.sleep(d), p.write_text(theirs)))
        writer.start()
        try:
            doc.save()
            outcomes["saved"] += 1
        except FileChangedOnDisk:
            outcomes["refused"] += 1
        writer.join()
        assert p.read_text() == theirs, f"run {i}: the other writer's content was lost"
    assert leftovers(tmp_path) == []
    assert outcomes["refused"] + outcomes["saved"] == 200


def test_renaming_writer_content_is_never_lost(tmp_path):
    """The same race with a writer that replaces the file atomically (as editors do)."""
    p = tmp_path / "config.pbtxt"
    theirs = TEXT + "# replaced\n"
    for i in range(200):
        write(p)
        doc = edited(p, 16 + i)
        side = tmp_path / "side"

        def writer(d=(i % 20) * 2e-5, side=side):
            side.write_text(theirs)
            time.sleep(d)
            os.replace(side, p)

        t = threading.Thread(target=writer)
        t.start()
        try:
            doc.save()
        except FileChangedOnDisk:
            pass
        t.join()
        assert p.read_text() == theirs, f"run {i}: the other writer's content was lost"


def test_a_folder_is_not_a_file(tmp_path):
    with pytest.raises(SaveError, match="it is a folder"):
        safe_write(tmp_path, TEXT)


# -- read-only folder, full disk ---------------------------------------------------------------------------------
def _chattr(flag: str, path: Path) -> bool:
    try:
        return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0
    except OSError:
        return False


def test_immutable_folder_fails_with_one_line_and_keeps_the_original(tmp_path):
    """chattr +i on the folder: no new file can be made in it, even by root (0555 would not stop root)."""
    d = tmp_path / "m"
    d.mkdir()
    p = write(d / "config.pbtxt")
    doc = edited(p)
    assert _chattr("+i", d), "chattr +i is needed to make a folder refuse root (e2fsprogs, an ext4/xfs/tmpfs folder)"
    try:
        with pytest.raises(SaveError) as e:
            doc.save()
    finally:
        _chattr("-i", d)
    msg = str(e.value)
    assert msg.startswith(f"{p}: cannot create a file in {d}: ") and "Operation not permitted" in msg
    assert "\n" not in msg
    assert p.read_text() == TEXT and leftovers(d) == []


@pytest.fixture
def tmpfs(tmp_path):
    """A mount point factory: mount(options) -> folder on a fresh tmpfs, unmounted afterwards."""
    mounted: list[Path] = []

    def mount(options: str) -> Path:
        mnt = tmp_path / f"mnt{len(mounted)}"
        mnt.mkdir()
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mnt)], capture_output=True)
        assert r.returncode == 0, f"cannot mount a tmpfs here (needs root): {r.stderr.decode().strip()}"
        mounted.append(mnt)
        return mnt

    yield mount
    for mnt in reversed(mounted):
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_read_only_file_system_fails_with_one_line(tmpfs):
    mnt = tmpfs("size=64k,mode=755")
    p = write(mnt / "config.pbtxt")
    doc = edited(p)
    subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
    with pytest.raises(SaveError) as e:
        doc.save(force=True)
    assert str(e.value).startswith(f"{p}: ") and "Read-only file system" in str(e.value)
    assert p.read_text() == TEXT


def test_full_disk_fails_with_one_line_and_keeps_the_original(tmpfs):
    mnt = tmpfs("size=64k")
    p = write(mnt / "config.pbtxt")
    (mnt / "filler").write_bytes(b"x" * (64 * 1024 - 4096 - len(TEXT)))  # leave less room than the new text needs
    doc = ConfigDocument.load(p)
    doc.set("parameters", {"BIG": {"string_value": "y" * 20000}})
    with pytest.raises(SaveError) as e:
        doc.save()
    assert str(e.value) == f"{p}: cannot write: No space left on device"
    assert p.read_text() == TEXT and leftovers(mnt) == []


def test_full_disk_in_place_write_restores_the_original(tmpfs):
    mnt = tmpfs("size=64k")
    p = write(mnt / "config.pbtxt")
    os.link(p, mnt / "other.pbtxt")
    (mnt / "filler").write_bytes(b"x" * (64 * 1024 - 3 * 4096))
    doc = ConfigDocument.load(p)
    doc.set("parameters", {"BIG": {"string_value": "y" * 20000}})
    with pytest.raises(SaveError) as e:
        doc.save()
    assert "No space left on device" in str(e.value) and "\n" not in str(e.value)
    assert p.read_text() == TEXT and (mnt / "other.pbtxt").read_text() == TEXT
    assert leftovers(mnt) == []


def test_read_file_stamp_matches_what_was_read(tmp_path):
    p = write(tmp_path / "config.pbtxt")
    data, stamp = read_file(p)
    assert data == TEXT.encode() and stamp.size == len(data) and stamp.matches(data)
    new = safe_write(p, TEXT + "# more\n", expect=stamp)
    assert new.matches(p.read_bytes()) and new.mtime_ns == p.stat().st_mtime_ns


def test_writer_landing_between_check_and_rename_is_detected(tmp_path, monkeypatch):
    """The worst moment: the other write lands after the early check, right before the new file is swapped in."""
    import studio.config.saving as sw

    p = write(tmp_path / "config.pbtxt")
    doc = edited(p)
    real = sw._exchange
    calls = []

    def late_writer(a, b):
        if not calls:
            p.write_text(TEXT + "# late\n")
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(sw, "_exchange", late_writer)
    with pytest.raises(FileChangedOnDisk):
        doc.save()
    assert p.read_text() == TEXT + "# late\n" and leftovers(tmp_path) == []
