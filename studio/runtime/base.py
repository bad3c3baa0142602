"""The Runtime interface: a Triton server the studio starts, watches and stops (no Qt)."""

from __future__ import annotations

import collections
import enum
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from studio.runtime.errors import ReadinessTimeout, RepositoryNotFound

LABEL = "triton-config-studio"  # container label / process marker of studio-owned servers


class Status(enum.Enum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"  # could not start
    EXITED = "exited"  # ended while running (killed from outside, crashed)


@dataclass(frozen=True)
class Endpoints:
    http: str
    grpc: str
    metrics: str

    @property
    def grpc_target(self) -> str:
        """host:port for gRPC clients."""
        return self.grpc.removeprefix("grpc://")

    @property
    def http_target(self) -> str:
        return self.http.removeprefix("http://")


@dataclass
class ServerOptions:
    models: list[str] | None = None  # None: every model of the repository; []: none (loaded on demand)
    http_port: int | None = None  # None: a free port
    grpc_port: int | None = None
    metrics_port: int | None = None
    extra_args: list[str] = field(default_factory=list)
    ready_timeout_s: float = 60.0
    stop_grace_s: float = 10.0


class LogStream:
    """Server log lines: a bounded history plus subscribers called for each new line (from a reader thread)."""

    def __init__(self, history: int = 5000) -> None:
        self._lines: collections.deque[str] = collections.deque(maxlen=history)
        self._subscribers: list[Callable[[str], None]] = []
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self.total = 0

    def append(self, line: str) -> None:
        with self._lock:
            self._lines.append(line)
            self.total += 1
            subs = list(self._subscribers)
            self._cond.notify_all()
        for s in subs:
            try:
                s(line)
            except Exception:  # noqa: BLE001 - a subscriber's bug must not stop log reading
                pass

    def subscribe(self, callback: Callable[[str], None], replay: bool = True) -> None:
        with self._lock:
            history = list(self._lines) if replay else []
            self._subscribers.append(callback)
        for line in history:
            callback(line)

    def unsubscribe(self, callback: Callable[[str], None]) -> None:
        with self._lock:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

    def lines(self) -> list[str]:
        with self._lock:
            return list(self._lines)

    def wait_for(self, predicate: Callable[[str], bool], timeout: float) -> str | None:
        """The first line (history included) that satisfies predicate, waiting up to timeout seconds."""
        deadline = time.monotonic() + timeout
        seen = 0
        with self._lock:
            while True:
                lines = list(self._lines)
                for line in lines[seen:] if seen <= len(lines) else lines:
                    if predicate(line):
                        return line
                seen = len(lines)
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)


def free_port() -> int:
    """A port free on both loopback families (studio.runtime.localhost)."""
    from studio.runtime import localhost

    return localhost.free_port()


def check_port_free(port: int, what: str) -> None:
    """PortInUse unless the port is free on 127.0.0.1 and [::1]; the error names the holder when the OS tells."""
    from studio.runtime import localhost

    localhost.check_port_free(port, what)


def choose_ports(options: ServerOptions) -> tuple[int, int, int]:
    """The same port choice for every runtime (embedded and Docker): both loopback families checked."""
    from studio.runtime import localhost

    return localhost.choose_ports(options.http_port, options.grpc_port, options.metrics_port)


def check_repository(repository: str | Path) -> Path:
    p = Path(repository)
    if not p.is_dir():
        raise RepositoryNotFound(f"model repository {repository} does not exist or is not a folder",
                                 "give the folder that holds <model>/config.pbtxt")
    return p.resolve()


def http_ready(http_url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"{http_url}/v2/health/ready", timeout=timeout) as r:
            return r.status == 200
    except Exception:  # noqa: BLE001 - any failure means not ready yet
        return False


def wait_ready(http_url: str, timeout_s: float, alive: Callable[[], bool], on_dead: Callable[[], Exception]) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not alive():
            raise on_dead()
        if http_ready(http_url):
            return
        time.sleep(0.1)
    if not alive():
        raise on_dead()
    raise ReadinessTimeout(f"the server did not become ready within {timeout_s:.0f} s",
                           "a model may be slow to load: see the log, or raise the timeout")


class Runtime:
    """Start, watch and stop one Triton server. Implementations: EmbeddedRuntime, DockerRuntime."""

    kind = "abstract"

    def __init__(self) -> None:
        self.logs = LogStream()
        self.status = Status.STOPPED
        self.endpoints: Endpoints | None = None
        self.repository: Path | None = None
        self.exit_reason: str | None = None
        self.exit_code: int | None = None

    @property
    def owned(self) -> bool:
        """True when the studio started this server (and so may stop it); False for a remote one."""
        return True

    def start(self, repository: str | Path, options: ServerOptions | None = None) -> Endpoints:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def poll(self) -> Status:
        """Refresh and return the status (notices a server that ended on its own)."""
        return self.status

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
