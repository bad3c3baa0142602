"""The dashboard's load process never outlives the studio: it ends on close(), and by itself when its parent dies
(EOF on the socket), without any server involved."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.conftest import REPO, scaled_s


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie waiting for its reaper: ended
    except FileNotFoundError:
        return True


def _wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.05)
    return _gone(pid)


def test_close_ends_the_child():
    from studio.tuning.loadproc import LoadProcess

    p = LoadProcess(lambda s: None).spawn()
    assert p.ready.wait(scaled_s(20)), "the child never said it was ready"
    pid = p.pid
    assert not _gone(pid)
    p.close()
    assert _wait_gone(pid, scaled_s(5))
    assert not p.alive


def test_the_child_ends_when_its_parent_is_killed():
    code = ("import sys, time\n"
            f"sys.path.insert(0, {str(REPO)!r})\n"
            "from studio.tuning.loadproc import LoadProcess\n"
            "p = LoadProcess(lambda s: None).spawn()\n"
            "p.ready.wait(60)\n"
            "print(p.pid, flush=True)\n"
            "time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        line = parent.stdout.readline()
        assert line.strip().isdigit(), line
        child = int(line)
        assert not _gone(child)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(scaled_s(5))
        assert _wait_gone(child, scaled_s(5)), "the load process outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
