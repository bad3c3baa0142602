"""Reading hostile repositories on the real file system (issue 14): names that are not UTF-8 and folders the user
may not read. `validate` keeps going and says what it found in one line each; the browser lists every model.

Permissions are tested as user `nobody` (setpriv drops root, which reads everything): the CLI runs in a child
process under that user on a repository in a folder it can reach."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO, scaled_s

DEMO = REPO / "model_repository_templates" / "demo"
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the browser test (tests/ui/conftest.py is not above this)

BAD = os.fsdecode(b"caf\xe9-model")  # Latin-1 bytes: not UTF-8; os.listdir gives it as a surrogate escape
BAD_SHOWN = "caf\\xe9-model"


def cli(*args, user: str | None = None, timeout=60.0):
    cmd = [sys.executable, "-m", "studio.cli", *map(str, args)]
    if user:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.fail("setpriv (util-linux) is needed to run the CLI as a non-root user", pytrace=False)
        cmd = [setpriv, "--reuid=nobody", "--regid=nogroup" if _has_group("nogroup") else "--regid=nobody",
               "--clear-groups", *cmd]
    env = {**os.environ, "HOME": "/tmp", "XDG_STATE_HOME": tempfile.gettempdir()}
    return subprocess.run(cmd, capture_output=True, timeout=scaled_s(timeout), env=env, cwd="/")


def _has_group(name: str) -> bool:
    import grp

    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False


def _text(b: bytes) -> str:
    return b.decode("utf-8", "backslashreplace")


@pytest.fixture
def hostile_repo(tmp_path) -> Path:
    """The demo plus: a model folder whose name is not UTF-8, a non-UTF-8 version folder name and file names."""
    r = tmp_path / "repo"
    shutil.copytree(DEMO, r)
    bad = r / BAD
    shutil.copytree(DEMO / "add_sub", bad)
    (bad / "config.pbtxt").write_text((DEMO / "add_sub" / "config.pbtxt").read_text().replace('"add_sub"', '"x"'))
    (r / "add_sub" / os.fsdecode(b"v\xff")).mkdir()
    (r / "add_sub" / "1" / os.fsdecode(b"notes-\xfe.txt")).write_bytes(b"x")
    (r / "batched_sleep" / os.fsdecode(b"readme-\xfd")).write_bytes(b"x")
    return r


def test_validate_keeps_going_over_non_utf8_names_and_shows_them_escaped(hostile_repo):
    r = cli("validate", hostile_repo)
    out, err = _text(r.stdout), _text(r.stderr)
    assert "Traceback" not in err and "internal error" not in err, err
    assert r.returncode == 1, err  # the name mismatch of the non-UTF-8 model is an error
    assert err.strip().splitlines()[-1].startswith("5 model(s): 1 error(s)"), err
    assert f"{BAD_SHOWN}/config.pbtxt:" in out and "\\udc" not in out, out
    assert "Triton ignores version folder 'v\\xff'" in out, out
    r = cli("validate", hostile_repo, "--format", "json")
    findings = json.loads(r.stdout)
    assert any(BAD_SHOWN in f["file"] for f in findings), findings


def test_the_scanner_lists_every_model_in_byte_order(hostile_repo):
    from studio.repository import Repository, display_name

    models = Repository(hostile_repo).scan()
    assert len(models) == 5 and BAD in models
    assert display_name(BAD) == BAD_SHOWN
    assert models["add_sub"].ignored[0][0] == os.fsdecode(b"v\xff")
    assert models["add_sub"].version_dirs["1"].files[-1] == os.fsdecode(b"notes-\xfe.txt")
    assert os.fsdecode(b"readme-\xfd") in models["batched_sleep"].top_files


@pytest.mark.gui
def test_the_browser_shows_every_model(hostile_repo, qapp):
    from PySide6.QtCore import Qt

    from studio.repository import Repository
    from studio.ui.browser.repository_model import RepositoryModel, ScanJob

    job = ScanJob(Repository(hostile_repo))
    done, failed = [], []
    job.signals.sig_done.connect(lambda repo, report: done.append((repo, report)))
    job.signals.sig_failed.connect(failed.append)
    job.run()  # the job's body, in this thread (the window runs it on the pool)
    assert not failed and done, failed
    model = RepositoryModel()
    model.set_repository(*done[0])
    assert model.rowCount() == 5
    names = [model.data(model.index(i, 0), Qt.ItemDataRole.DisplayRole) for i in range(5)]
    assert all(isinstance(n, str) and n for n in names), names


@pytest.fixture
def shared_repo():
    """A repository in a folder user nobody can reach (pytest's tmp_path is root's, mode 0700)."""
    top = Path(tempfile.mkdtemp(prefix="studio-perm-"))
    top.chmod(0o755)
    r = top / "repo"
    shutil.copytree(DEMO, r)
    for p in [r, *r.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    yield r
    for p in [r, *r.rglob("*")]:
        if not p.is_symlink():
            p.chmod(0o755 if p.is_dir() else 0o644)
    shutil.rmtree(top)


@pytest.mark.parametrize("lock, says", [
    ("model", "add_sub: cannot read the model folder: Permission denied"),
    ("listing", "add_sub: cannot read the model folder: Permission denied"),
    ("config", "add_sub/config.pbtxt: Permission denied"),
    ("version", "add_sub/1: cannot read the version folder: Permission denied"),
])
def test_an_unreadable_model_is_a_finding_on_it_and_validation_goes_on(shared_repo, lock, says):
    target = {"model": shared_repo / "add_sub", "listing": shared_repo / "add_sub",
              "config": shared_repo / "add_sub" / "config.pbtxt", "version": shared_repo / "add_sub" / "1"}[lock]
    target.chmod({"model": 0o000, "listing": 0o311, "config": 0o000, "version": 0o000}[lock])
    r = cli("validate", shared_repo, user="nobody")
    out, err = _text(r.stdout), _text(r.stderr)
    assert "Traceback" not in err and "internal error" not in err, err
    assert r.returncode == 1, (out, err)
    lines = [ln for ln in out.splitlines() if "[repository.unreadable]" in ln]
    assert len(lines) == 1 and says in lines[0] and lines[0].startswith(f"{shared_repo / 'add_sub'}"), out
    assert err.strip().splitlines()[-1].startswith("4 model(s): 1 error(s)"), err  # the other three: clean
    r = cli("validate", shared_repo)  # root reads it all: no finding
    assert r.returncode == 0, _text(r.stdout)
