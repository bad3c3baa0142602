"""EmbeddedRuntime: the tritonserver binary of the nvidia-pytriton wheel, as a child process on the CPU.

It serves python-backend models without Docker or a GPU. The server runs in its own process group with a
parent-death signal, so no server outlives the studio, also when the studio is killed.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import ctypes.util
import importlib.util
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

from studio.resources import state_dir
from studio.runtime.base import (
    Endpoints,
    Runtime,
    ServerOptions,
    Status,
    check_repository,
    wait_ready,
)
from studio.runtime.errors import EmbeddedUnavailable, ServerExited
from studio.runtime.localhost import choose_ports, clean_stale_backends_dirs, make_backends_dir

PR_SET_PDEATHSIG = 1


class EmbeddedServer:
    """Where the wheel's server lives: binary, bundled libraries, python backend and its stubs."""

    def __init__(self, root: Path) -> None:
        self.root = root  # .../site-packages/pytriton/tritonserver
        self.binary = root / "bin" / "tritonserver"
        self.libs = root.parent.parent / "nvidia_pytriton.libs"
        self.python_backend = root / "backends" / "python"
        ver = f"{sys.version_info.major}.{sys.version_info.minor}"
        self.stub = root / "python_backend_stubs" / ver / "triton_python_backend_stub"
        self.python_version = ver

    @classmethod
    def find(cls) -> EmbeddedServer:
        spec = importlib.util.find_spec("pytriton")
        if spec is None or not spec.submodule_search_locations:
            raise EmbeddedUnavailable(
                "the embedded Triton server is not installed (Python package nvidia-pytriton)",
                "pip install 'triton-config-studio[embedded]' (or bash scripts/setup.sh embedded)",
            )
        root = Path(list(spec.submodule_search_locations)[0]) / "tritonserver"
        server = cls(root)
        for p, what in ((server.binary, "tritonserver binary"), (server.python_backend / "libtriton_python.so", "python backend")):
            if not p.exists():
                raise EmbeddedUnavailable(f"the nvidia-pytriton package has no {what} at {p}", "reinstall nvidia-pytriton")
        if not server.stub.exists():
            raise EmbeddedUnavailable(
                f"the embedded server has no python backend stub for Python {server.python_version}",
                "use a Python version that nvidia-pytriton ships stubs for (3.8 to 3.13)",
            )
        lib = ctypes.util.find_library(f"python{server.python_version}")
        if lib is None:
            raise EmbeddedUnavailable(
                f"libpython{server.python_version} is missing: the python backend stub links it",
                f"apt-get install libpython{server.python_version}",
            )
        return server

    def triton_version(self) -> str:
        """Triton's version (e.g. 2.51.0), read from the server's start-up table once and cached."""
        cache = self.root / ".studio-triton-version"
        try:
            if cache.stat().st_mtime >= self.binary.stat().st_mtime:
                return cache.read_text().strip()
        except OSError:
            pass
        version = self._probe_version()
        try:
            cache.write_text(version)
        except OSError:
            pass
        return version

    def _probe_version(self) -> str:
        with tempfile.TemporaryDirectory() as repo:
            env = dict(os.environ, LD_LIBRARY_PATH=str(self.libs))
            proc = subprocess.Popen(
                [str(self.binary), f"--model-repository={repo}", "--model-control-mode=explicit",
                 "--allow-http=false", "--allow-grpc=false", "--allow-metrics=false"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", env=env,
            )
            try:
                assert proc.stdout is not None
                for line in proc.stdout:
                    if "server_version" in line:
                        return line.split("|")[2].strip()
            finally:
                proc.kill()
                proc.wait()
        raise EmbeddedUnavailable("could not read the embedded server's version")


class _Spawner:
    """One long-lived thread forks every server: Linux sends the parent-death signal when the *thread* that
    forked the child ends, so servers must not be started from short-lived worker threads."""

    _instance: _Spawner | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self._q: queue.Queue = queue.Queue()
        threading.Thread(target=self._run, name="studio-server-spawner", daemon=True).start()

    @classmethod
    def get(cls) -> _Spawner:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def _run(self) -> None:
        while True:
            fn, fut = self._q.get()
            try:
                fut.set_result(fn())
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                fut.set_exception(e)

    def popen(self, args: list[str], **kw) -> subprocess.Popen:
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self._q.put((lambda: subprocess.Popen(args, **kw), fut))
        return fut.result()


def _die_with_parent(parent: int):
    def setup() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return setup


def servers_dir() -> Path:
    return state_dir("servers")


def list_embedded_servers() -> list[dict]:
    """Studio-owned embedded servers that are still running (from their state files)."""
    out = []
    for f in sorted(servers_dir().glob("*.json")):
        try:
            info = json.loads(f.read_text())
            os.kill(int(info["pid"]), 0)
        except (OSError, ValueError, KeyError, json.JSONDecodeError):
            f.unlink(missing_ok=True)
            continue
        out.append(info)
    return out


class EmbeddedRuntime(Runtime):
    kind = "embedded"

    def __init__(self) -> None:
        super().__init__()
        self._proc: subprocess.Popen | None = None
        self._tmp: Path | None = None
        self._reader: threading.Thread | None = None
        self._state_file: Path | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def _backend_dir(self, server: EmbeddedServer) -> Path:
        self._tmp = make_backends_dir()
        py = self._tmp / "python"
        py.mkdir()
        for f in ("libtriton_python.so", "triton_python_backend_utils.py"):
            shutil.copy2(server.python_backend / f, py / f)
        shutil.copy2(server.stub, py / "triton_python_backend_stub")
        return self._tmp

    def _environment(self, server: EmbeddedServer) -> dict[str, str]:
        env = dict(os.environ)
        libs = [str(server.libs)] + ([env["LD_LIBRARY_PATH"]] if env.get("LD_LIBRARY_PATH") else [])
        env["LD_LIBRARY_PATH"] = os.pathsep.join(libs)
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "/usr/bin:/bin")])
        site = sysconfig.get_paths()["purelib"]
        env["PYTHONPATH"] = os.pathsep.join([site] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        return env

    def command(self, repository: Path, backend_dir: Path, ports: tuple[int, int, int], options: ServerOptions,
                server: EmbeddedServer) -> list[str]:
        http, grpc, metrics = ports
        models = options.models if options.models is not None else ["*"]  # []: none (load on demand)
        return [
            str(server.binary),
            f"--model-repository={repository}",
            f"--backend-directory={backend_dir}",
            "--model-control-mode=explicit",
            *[f"--load-model={m}" for m in models],
            "--http-address=127.0.0.1",
            "--grpc-address=127.0.0.1",
            "--metrics-address=127.0.0.1",
            f"--http-port={http}",
            f"--grpc-port={grpc}",
            f"--metrics-port={metrics}",
            "--exit-on-error=false",
            "--strict-readiness=false",
            *options.extra_args,
        ]

    def start(self, repository, options: ServerOptions | None = None) -> Endpoints:
        """Start the server and wait until it is ready. Interruptible: a KeyboardInterrupt (or any exception a
        signal handler raises) during the wait stops the server at once (1 s grace, then SIGKILL to its group),
        removes its temporary folder and propagates."""
        if self._proc is not None and self._proc.poll() is None:
            raise RuntimeError("this runtime already runs a server: stop it first")
        options = options or ServerOptions()
        repo = check_repository(repository)
        server = EmbeddedServer.find()
        clean_stale_backends_dirs()  # left by a studio that was killed (SIGKILL) while its server ran
        ports = choose_ports(options.http_port, options.grpc_port, options.metrics_port)
        self.repository = repo
        self.status = Status.STARTING
        self.exit_reason = None
        try:
            backend_dir = self._backend_dir(server)
            args = self.command(repo, backend_dir, ports, options, server)
            self._proc = _Spawner.get().popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                bufsize=1,
                env=self._environment(server),
                start_new_session=True,
                preexec_fn=_die_with_parent(os.getpid()),
            )
            self._reader = threading.Thread(target=self._read_logs, args=(self._proc,), daemon=True, name="triton-log")
            self._reader.start()
            self.endpoints = Endpoints(f"http://127.0.0.1:{ports[0]}", f"grpc://127.0.0.1:{ports[1]}",
                                       f"http://127.0.0.1:{ports[2]}")
            wait_ready(self.endpoints.http, options.ready_timeout_s, lambda: self._proc.poll() is None,
                       self._exited_error)
        except Exception:
            self.status = Status.FAILED
            self._terminate(options.stop_grace_s)
            raise
        except BaseException:  # Ctrl-C / SIGTERM while starting: no graceful unload of half-loaded models
            self.status = Status.STOPPED
            self._terminate(min(1.0, options.stop_grace_s))
            raise
        self.status = Status.READY
        self._state_file = servers_dir() / f"{self._proc.pid}.json"
        self._state_file.write_text(json.dumps({
            "kind": self.kind, "pid": self._proc.pid, "repository": str(repo),
            "http": self.endpoints.http, "grpc": self.endpoints.grpc, "metrics": self.endpoints.metrics,
            "started": time.time(),
        }))
        return self.endpoints

    def _exited_error(self) -> ServerExited:
        if self._reader is not None:
            self._reader.join(timeout=2)
        code = self._proc.returncode if self._proc else None
        return ServerExited("the embedded Triton server exited during start", code, self.logs.lines())

    def _read_logs(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.logs.append(line.rstrip("\n"))

    def poll(self) -> Status:
        if self._proc is not None and self.status == Status.READY and self._proc.poll() is not None:
            self.status = Status.EXITED
            code = self._proc.returncode
            self.exit_code = code
            how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
            self.exit_reason = f"the server ended on its own ({how})"
        return self.status

    def _terminate(self, grace: float) -> None:
        proc = self._proc
        if proc is None:
            if self._tmp is not None:  # interrupted before the server was spawned
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=10)
        # the python backend stubs share the group: make sure none is left
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self._reader is not None:
            self._reader.join(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        if self._state_file is not None:
            self._state_file.unlink(missing_ok=True)
            self._state_file = None

    def stop(self) -> None:
        self._terminate(10.0)
        if self.status in (Status.READY, Status.STARTING):
            self.status = Status.STOPPED
