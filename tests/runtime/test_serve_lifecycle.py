"""`serve` against the real embedded Triton (issue 14): Ctrl-C / SIGTERM during start-up stop it at once and
leave no process behind; a port taken on [::1] is refused naming the holder; a SIGKILLed studio's temporary
backends folder is removed at the next start."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from studio.runtime import PortInUse, ServerOptions
from studio.runtime.embedded import EmbeddedRuntime
from studio.runtime.localhost import BACKENDS_PREFIX
from tests.conftest import scaled_s
from tests.runtime.helpers import demo_copy

EXE = [sys.executable, "-m", "studio.cli"]

SLOW_MODEL = '''
import os, time
class TritonPythonModel:
    def initialize(self, args):
        open(os.path.join(args["model_repository"], "loading"), "w").close()
        time.sleep(300)
    def execute(self, requests):
        return []
'''


def slow_repo(tmp_path: Path) -> Path:
    """A repository whose one model takes 5 minutes to load: the server stays in start-up."""
    m = tmp_path / "repo" / "slow"
    (m / "1").mkdir(parents=True)
    (m / "config.pbtxt").write_text('name: "slow"\nbackend: "python"\nmax_batch_size: 0\n'
                                    'input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]\n'
                                    'output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]\n')
    (m / "1" / "model.py").write_text(SLOW_MODEL)
    return tmp_path / "repo"


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1].split()
    except OSError:
        return None


def alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] != "Z"


def children(pid: int) -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit() and (st := _stat(int(d))) and int(st[1]) == pid]


def group_members(pgid: int) -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit() and (st := _stat(int(d))) and int(st[2]) == pgid
            and st[0] != "Z"]


def backend_dir(server: int) -> Path:
    args = Path(f"/proc/{server}/cmdline").read_bytes().decode().split("\0")
    return Path(next(a.split("=", 1)[1] for a in args if a.startswith("--backend-directory=")))


def wait_for(cond, timeout_s: float, what: str):
    deadline = time.monotonic() + scaled_s(timeout_s)
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out after {scaled_s(timeout_s):.0f} s waiting for {what}")


def start_serve(repo: Path) -> tuple[subprocess.Popen, int]:
    """`serve` on the slow repository, once its server is loading the model: (the CLI process, the server pid)."""
    proc = subprocess.Popen([*EXE, "serve", str(repo), "--runtime", "embedded", "--timeout", "600"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: (repo / "slow" / "loading").exists() or proc.poll() is not None, 60,
                 "the server to start loading the slow model")
        assert proc.poll() is None, proc.communicate()[1]
        server = [c for c in children(proc.pid) if (Path(f"/proc/{c}/comm").read_text().strip() == "tritonserver")]
        assert len(server) == 1, f"expected one tritonserver child of serve, found {server}"
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc, server[0]


@pytest.fixture
def serves():
    """Kills every `serve` a test started and did not see end (its server follows: parent-death signal)."""
    started: list[subprocess.Popen] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_during_start_up_stops_at_once(tmp_path, sig, code, serves):
    repo = slow_repo(tmp_path)
    proc, server = start_serve(repo)
    serves.append(proc)
    backends = backend_dir(server)
    assert backends.is_dir(), "the server's temporary backends folder should exist while it runs"
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=scaled_s(10))
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"serve did not stop within {scaled_s(10):.0f} s of {sig.name}: {err}") from None
    took = time.monotonic() - t0
    assert took < scaled_s(3), f"serve took {took:.1f} s to stop after {sig.name}"
    assert proc.returncode == code, (proc.returncode, err)
    assert "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == f"serve: interrupted ({sig.name}) while starting: the server was stopped"
    assert not alive(server), "the tritonserver process is still running"
    assert group_members(server) == [], "a python backend stub of the server is still running"
    assert not backends.exists(), "the temporary backends folder was left behind"


def test_port_taken_on_ipv6_loopback_is_refused_naming_the_holder(tmp_path):
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind(("::1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(PortInUse) as e:
            EmbeddedRuntime().start(demo_copy(tmp_path), ServerOptions(http_port=port, models=[]))
        assert e.value.message == (f"port {port} (HTTP) is already in use on [::1] by pid {os.getpid()} "
                                   f"({Path('/proc/self/comm').read_text().strip()})")
        # the CLI says the same in one line, exit 1
        r = subprocess.run([*EXE, "serve", str(tmp_path / "repo"), "--runtime", "embedded", "--http-port", str(port)],
                           capture_output=True, text=True, timeout=scaled_s(60))
        assert r.returncode == 1, r.stderr
        assert f"serve: port {port} (HTTP) is already in use on [::1] by pid {os.getpid()}" in r.stderr
        assert "Traceback" not in r.stderr


def test_port_taken_on_ipv4_loopback_names_the_holder(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import socket,sys,time\ns=socket.socket();s.bind(('127.0.0.1',0))"
                               "\ns.listen();print(s.getsockname()[1],flush=True);time.sleep(120)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = int(holder.stdout.readline())
        with pytest.raises(PortInUse) as e:
            EmbeddedRuntime().start(demo_copy(tmp_path), ServerOptions(grpc_port=port, models=[]))
        assert e.value.message.startswith(f"port {port} (gRPC) is already in use on 127.0.0.1 by pid {holder.pid} (")
    finally:
        holder.kill()
        holder.wait()


def test_sigkilled_serve_leaves_a_folder_that_the_next_start_removes(tmp_path, serves):
    repo = slow_repo(tmp_path)
    proc, server = start_serve(repo)
    serves.append(proc)
    left = list(Path(tempfile.gettempdir()).glob(f"{BACKENDS_PREFIX}{proc.pid}-*"))
    assert len(left) == 1
    proc.kill()  # SIGKILL: serve gets no chance to clean up
    proc.wait()
    wait_for(lambda: not alive(server), 20, "the orphaned server to die (parent-death signal)")
    assert left[0].is_dir(), "expected the SIGKILLed studio's folder to be left behind"
    rt = EmbeddedRuntime()
    rt.start(demo_copy(tmp_path / "next"), ServerOptions(models=[]))
    try:
        assert not left[0].exists(), f"the stale folder {left[0]} was not removed at the next start"
        own = list(Path(tempfile.gettempdir()).glob(f"{BACKENDS_PREFIX}{os.getpid()}-*"))
        assert len(own) == 1 and own[0].is_dir(), "the new server's own folder must be kept"
    finally:
        rt.stop()
    assert not own[0].exists()
