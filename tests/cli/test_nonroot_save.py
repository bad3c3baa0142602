"""`set` and `fmt` run as a non-root user (issue 14): the saves that the root-run tests cannot show. The CLI runs
as `nobody` through `setpriv` on a file that user may not write and in a folder it may not write: one line, exit 1,
the original's bytes untouched, nothing left beside it."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import scaled_s

EXE = [sys.executable, "-m", "studio.cli"]
MESSY = 'name:"m"   backend:"python"\nmax_batch_size:8\n'  # fmt rewrites it, set changes it


def as_nobody(*args: str) -> subprocess.CompletedProcess:
    assert os.geteuid() == 0, "these tests switch to the user nobody: run them as root (CI does)"
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to run the CLI as nobody"
    r = subprocess.run([setpriv, "--reuid", "nobody", "--regid", "nogroup", "--clear-groups", *EXE, *args],
                       capture_output=True, text=True, timeout=scaled_s(60), cwd=Path(__file__).parents[2],
                       env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", HOME="/nonexistent"))
    assert "Traceback" not in r.stderr, r.stderr
    return r


@pytest.fixture
def folder():
    """A folder under /tmp that nobody can reach (pytest's tmp_path is 0700 root)."""
    d = Path(tempfile.mkdtemp(prefix="studio-nonroot-", dir="/tmp"))
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d)


def config(folder: Path, mode: int) -> Path:
    p = folder / "config.pbtxt"
    p.write_text(MESSY)
    os.chmod(p, mode)
    return p


def one_line(r: subprocess.CompletedProcess) -> str:
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


COMMANDS = {"set": ["set", "{p}", "max_batch_size", "4"], "fmt": ["fmt", "{p}"]}


def run(cmd: str, p: Path, *extra: str) -> subprocess.CompletedProcess:
    return as_nobody(*[str(p) if a == "{p}" else a for a in COMMANDS[cmd]], *extra)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_file_the_user_may_not_write(folder, cmd):
    p = config(folder, 0o644)  # root's, in root's folder
    r = run(cmd, p)
    assert r.returncode == 1, r.stderr
    assert one_line(r) == (f"{p}: not saved: permission denied: nobody may not write this file "
                           "(owner root, group root, mode 0644)")
    assert p.read_text() == MESSY and os.listdir(folder) == ["config.pbtxt"]
    r = run(cmd, p, "--force")  # forcing cannot give a permission
    assert r.returncode == 1, r.stderr
    assert one_line(r) == f"{p}: cannot create a file in {folder}: Permission denied"
    assert p.read_text() == MESSY and os.listdir(folder) == ["config.pbtxt"]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_writable_file_in_a_folder_the_user_may_not_write(folder, cmd):
    p = config(folder, 0o666)
    r = run(cmd, p)
    assert r.returncode == 1, r.stderr
    assert one_line(r) == f"{p}: cannot create a file in {folder}: Permission denied"
    assert p.read_bytes() == MESSY.encode() and os.listdir(folder) == ["config.pbtxt"]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_forced_over_a_foreign_file_in_the_users_own_folder(folder, cmd):
    """The folder is nobody's, the file root's 0644: a forced save could rename over it but must not take the file
    from its owner; it tries in place, which the OS refuses: one line, the original intact."""
    os.chown(folder, pwd.getpwnam("nobody").pw_uid, -1)
    p = config(folder, 0o644)
    r = run(cmd, p, "--force")
    assert r.returncode == 1, r.stderr
    assert one_line(r) == f"{p}: cannot open the file for writing: Permission denied"
    assert p.read_bytes() == MESSY.encode() and p.stat().st_uid == 0
    assert os.listdir(folder) == ["config.pbtxt"]
