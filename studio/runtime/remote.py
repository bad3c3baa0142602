"""RemoteRuntime: an existing Triton reached by URL. The studio did not start it and never stops it; it can
load and unload models (unless the server runs with --model-control-mode=none) and watch that it answers.

    rt = RemoteRuntime("grpc://gpu-box:8001")      # or http://gpu-box:8000, or gpu-box:8001 (gRPC)
    rt.start()                                      # checks that it answers; RuntimeFailure when it does not
"""

from __future__ import annotations

import socket
import urllib.parse
import urllib.request

from studio.runtime.base import Endpoints, Runtime, ServerOptions, Status
from studio.runtime.errors import RuntimeFailure


def parse_server_url(url: str) -> Endpoints:
    """Endpoints from one URL. Triton's default layout is HTTP p, gRPC p+1, metrics p+2: given one of HTTP
    or gRPC, the others are derived from it that way."""
    text = url.strip()
    if "://" not in text:
        text = "grpc://" + text
    u = urllib.parse.urlsplit(text)
    if u.scheme not in ("http", "grpc") or not u.hostname:
        raise ValueError(f"{url!r}: expected http://HOST:PORT or grpc://HOST:PORT")
    host = u.hostname if ":" not in u.hostname else f"[{u.hostname}]"
    try:
        port = u.port
    except ValueError:
        raise ValueError(f"{url!r}: the port is not a number") from None
    if u.scheme == "http":
        http = port or 8000
        grpc, metrics = http + 1, http + 2
    else:
        grpc = port or 8001
        http, metrics = grpc - 1, grpc + 1
    return Endpoints(f"http://{host}:{http}", f"grpc://{host}:{grpc}", f"http://{host}:{metrics}")


def reachable(endpoints: Endpoints, timeout: float = 0.5) -> bool:
    """The server answers: HTTP live, else a TCP connection to the gRPC port."""
    try:
        with urllib.request.urlopen(f"{endpoints.http}/v2/health/live", timeout=timeout) as r:
            if r.status == 200:
                return True
    except Exception:  # noqa: BLE001 - try gRPC's port next
        pass
    host, _, port = endpoints.grpc_target.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return True
    except OSError:
        return False


class RemoteRuntime(Runtime):
    kind = "remote"

    def __init__(self, url: str, failures_to_dead: int = 2) -> None:
        super().__init__()
        self.url = url
        self.endpoints = parse_server_url(url)
        self.failures_to_dead = failures_to_dead
        self._failures = 0

    @property
    def owned(self) -> bool:
        return False

    def start(self, repository=None, options: ServerOptions | None = None) -> Endpoints:
        self.status = Status.STARTING
        if not reachable(self.endpoints, timeout=2.0):
            self.status = Status.FAILED
            raise RuntimeFailure(f"no Triton answers at {self.url} ({self.endpoints.http}, {self.endpoints.grpc})",
                                 "check the address and that the server runs; Triton's default ports are 8000 (HTTP) and 8001 (gRPC)")
        self.status = Status.READY
        self.logs.append(f"studio: connected to the Triton at {self.url} (the studio does not own it: it is never stopped from here)")
        return self.endpoints

    def poll(self) -> Status:
        if self.status != Status.READY:
            return self.status
        if reachable(self.endpoints):
            self._failures = 0
        else:
            self._failures += 1
            if self._failures >= self.failures_to_dead:
                self.status = Status.EXITED
                self.exit_reason = f"the server at {self.url} stopped answering"
        return self.status

    def stop(self) -> None:
        # not ours: disconnect only
        if self.status in (Status.READY, Status.STARTING, Status.EXITED):
            self.status = Status.STOPPED
