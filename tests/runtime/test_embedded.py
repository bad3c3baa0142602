"""The embedded CPU Triton from the nvidia-pytriton wheel, for real."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from studio.runtime import PortInUse, RepositoryNotFound, ServerOptions, Status
from studio.runtime.embedded import EmbeddedRuntime, list_embedded_servers
from tests.conftest import scaled_s
from tests.runtime.helpers import demo_copy, full_scenario


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is not a running server
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _group_members(pgid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().split(") ", 1)[1].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def test_embedded_full_scenario_and_nothing_left_behind(tmp_path):
    rt = EmbeddedRuntime()
    repo = demo_copy(tmp_path)
    pid_holder = {}
    rt.logs.subscribe(lambda line: pid_holder.setdefault("first", line), replay=False)
    try:
        full_scenario(rt, repo)
    finally:
        pid = rt.pid
        rt.stop()
    assert rt.status == Status.STOPPED
    assert pid is not None and not _alive(pid)
    assert _group_members(pid) == []  # no python backend stub either
    assert all(s["pid"] != pid for s in list_embedded_servers())
    assert "first" in pid_holder  # the log stream delivered lines


def test_port_already_taken(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(PortInUse) as e:
            EmbeddedRuntime().start(demo_copy(tmp_path), ServerOptions(http_port=port))
        assert str(port) in e.value.message


def test_repository_that_does_not_exist(tmp_path):
    with pytest.raises(RepositoryNotFound):
        EmbeddedRuntime().start(tmp_path / "nope")


def test_server_killed_from_outside_is_noticed(tmp_path):
    rt = EmbeddedRuntime()
    rt.start(demo_copy(tmp_path), ServerOptions(models=["add_sub"]))
    try:
        os.kill(rt.pid, signal.SIGKILL)
        deadline = time.monotonic() + scaled_s(10)
        while rt.poll() != Status.EXITED and time.monotonic() < deadline:
            time.sleep(0.1)
        assert rt.status == Status.EXITED
        assert "signal 9" in rt.exit_reason
    finally:
        rt.stop()


CHILD = """
import sys, time
from studio.runtime.embedded import EmbeddedRuntime
from studio.runtime import ServerOptions
rt = EmbeddedRuntime()
rt.start(sys.argv[1], ServerOptions(models=["add_sub"]))
print(rt.pid, flush=True)
time.sleep(600)
"""


def test_no_server_outlives_a_killed_studio(tmp_path):
    repo = demo_copy(tmp_path)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(repo)], stdout=subprocess.PIPE, text=True)
    try:
        server_pid = int(child.stdout.readline())
        assert _alive(server_pid)
        child.kill()  # SIGKILL: the studio gets no chance to clean up
        child.wait()
        deadline = time.monotonic() + scaled_s(20)
        while _alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(server_pid), "the server outlived the studio"
        deadline = time.monotonic() + scaled_s(10)
        while _group_members(server_pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _group_members(server_pid) == []
    finally:
        if child.poll() is None:
            child.kill()


def test_exit_during_start_reports_code_and_log(tmp_path):
    rt = EmbeddedRuntime()
    with pytest.raises(Exception) as e:
        rt.start(demo_copy(tmp_path), ServerOptions(extra_args=["--no-such-flag"], ready_timeout_s=scaled_s(20)))
    text = str(e.value)
    assert "exited during start" in text and "exit code" in text and "no-such-flag" in text
    assert rt.status == Status.FAILED
