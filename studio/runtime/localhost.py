"""Local resources of the embedded server: its ports on both loopback families and its temporary folders.

- A port counts as free only when it can be bound on 127.0.0.1 *and* on [::1]: a client that resolves
  `localhost` to ::1 would otherwise reach another program. When it is taken, the OS often tells by whom
  (/proc/net/tcp{,6} give the socket's inode, /proc/<pid>/fd links name it): the error says so.
- Each server's temporary backends folder is named with the studio's pid and holds an `owner` file with that pid
  and its start time; a folder whose owner is gone (a SIGKILLed studio) is removed at the next start.
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import tempfile
from pathlib import Path

from studio.runtime.errors import PortInUse

BACKENDS_PREFIX = "triton-studio-backends-"
_OWNER_FILE = "owner"


# -- ports ---------------------------------------------------------------------------------------------------
def _bindable(family: int, host: str, port: int) -> bool | None:
    """True/False whether host:port can be bound; None when the family does not exist here (no IPv6)."""
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
    except OSError:
        return None
    with s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            if e.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):  # no ::1 on this machine
                return None
            return False
    return True


def taken_on(port: int) -> list[str]:
    """The loopback addresses ("127.0.0.1", "[::1]") on which `port` cannot be bound."""
    out = []
    for family, host, shown in ((socket.AF_INET, "127.0.0.1", "127.0.0.1"), (socket.AF_INET6, "::1", "[::1]")):
        if _bindable(family, host, port) is False:
            out.append(shown)
    return out


def _socket_inodes(port: int) -> set[str]:
    """Inodes of TCP sockets bound to `port` (any address), from /proc/net/tcp and tcp6."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f, None)
                for line in f:
                    cols = line.split()
                    if len(cols) > 9 and int(cols[1].rsplit(":", 1)[1], 16) == port and cols[9] != "0":
                        inodes.add(cols[9])
        except (OSError, ValueError, IndexError):
            continue
    return inodes


def port_holder(port: int) -> str | None:
    """'pid 1234 (python3)' for the process that holds a socket on `port`, when the OS lets us see it."""
    inodes = _socket_inodes(port)
    if not inodes:
        return None
    links = {f"socket:[{i}]" for i in inodes}
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") in links:
                    return f"pid {pid} ({_comm(pid)})"
            except OSError:
                continue
    return None


def _comm(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip() or "?"
    except OSError:
        return "?"


def check_port_free(port: int, what: str) -> None:
    """Raise PortInUse when `port` is taken on 127.0.0.1 or [::1], naming the family and the holder if known."""
    where = taken_on(port)
    if not where:
        return
    err = PortInUse(port, what)
    holder = port_holder(port)
    err.message = (f"port {port} ({what}) is already in use on {' and '.join(where)}"
                   + (f" by {holder}" if holder else ""))
    err.args = (err.message,)
    err.holder = holder  # type: ignore[attr-defined]
    raise err


def free_port(avoid: set[int] | None = None) -> int:
    """A port the OS hands out on 127.0.0.1 that is free on [::1] too."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if (avoid is None or port not in avoid) and not taken_on(port):
            return port
    raise PortInUse(0, "no free port found on both 127.0.0.1 and [::1] in 100 tries")


def choose_ports(http: int | None, grpc: int | None, metrics: int | None) -> tuple[int, int, int]:
    ports: list[int] = []
    for given, what in ((http, "HTTP"), (grpc, "gRPC"), (metrics, "metrics")):
        if given:
            check_port_free(given, what)
            ports.append(given)
        else:
            ports.append(free_port(set(ports) | {p for p in (http, grpc, metrics) if p}))
    return ports[0], ports[1], ports[2]


# -- temporary folders ---------------------------------------------------------------------------------------
def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat): tells a pid reused
    by another process apart from the one that wrote the owner file."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def make_backends_dir(base: str | None = None) -> Path:
    """A new temporary folder for one server's backends, marked with this process as its owner."""
    pid = os.getpid()
    d = Path(tempfile.mkdtemp(prefix=f"{BACKENDS_PREFIX}{pid}-", dir=base))
    (d / _OWNER_FILE).write_text(f"{pid} {_start_time(pid) or '?'}\n")
    return d


def _referenced(d: Path) -> bool:
    """Whether a running process names `d` on its command line (a server's --backend-directory, its stubs)."""
    needle = os.fsencode(str(d))
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return True
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if needle in f.read():
                    return True
        except OSError:
            continue
    return False


_UNNAMED_STALE_S = 600.0


def _owner_alive(d: Path) -> bool:
    """Whether the process that made `d` still runs. A folder not named `<prefix><pid>-<random>` (an older
    studio's) counts as alive while it is younger than 10 minutes or a running process names it."""
    head, dash, _ = d.name[len(BACKENDS_PREFIX):].partition("-")
    if not (dash and head.isdigit()):
        try:
            import time

            if time.time() - d.stat().st_mtime < _UNNAMED_STALE_S:
                return True
        except OSError:
            return False
        return _referenced(d)
    try:
        pid_s, start = (d / _OWNER_FILE).read_text().split()
        pid = int(pid_s)
    except (OSError, ValueError):  # the owner file is not written yet (or was lost): go by the name
        pid, start = int(head), "?"
    now = _start_time(pid)
    return now is not None and (start == "?" or now == start)


def clean_stale_backends_dirs(base: str | None = None) -> list[Path]:
    """Remove backends folders whose owner process is gone (a killed studio); return what was removed."""
    root = Path(base or tempfile.gettempdir())
    removed = []
    try:
        entries = list(root.glob(f"{BACKENDS_PREFIX}*"))
    except OSError:
        return removed
    for d in entries:
        try:
            if not d.is_dir() or d.is_symlink() or d.stat().st_uid != os.geteuid():
                continue
        except OSError:
            continue
        if not _owner_alive(d):
            shutil.rmtree(d, ignore_errors=True)
            if not d.exists():
                removed.append(d)
    return removed
