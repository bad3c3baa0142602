"""The dashboard's load in a process of its own, so that the load generator never shares a GIL with the Qt UI
and its plots (issue 10: in-window throughput >= 0.95x of the headless `bench`).

The child (`python -m studio.tuning.loadproc FD`) runs the real LoadGenerator and Sampler (client percentiles
from the window histograms, server figures from the statistics API) and streams every Sample back over a
socket; the parent (LoadProcess) reads them on a thread and hands them to a callback. Commands go the other way:

    ("start", {"target", "requests", "concurrency", "rate", "poisson", "http", "metrics", "model", "period_s",
               "server_pid"})
    ("concurrency", n)   ("rate", r)   ("stop", None)   ("exit", None)

Events from the child: ("sample", Sample), ("stopped", reason), ("error", message), ("ready", None).
The child never outlives the studio: it exits on EOF of the socket (the parent closed it or died) and the
parent terminates it on close() (and at interpreter exit).
"""

from __future__ import annotations

import atexit
import collections
import os
import socket
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

from studio.tuning.sampler import Sample

# -- child ------------------------------------------------------------------------------------------------------


def _child(fd: int) -> int:
    from studio.runtime.base import Endpoints
    from studio.runtime.client import TritonClient
    from studio.tuning.loadgen import LoadGenerator, LoadSpec
    from studio.tuning.sampler import Sampler

    conn = Connection(fd)
    send_lock = threading.Lock()
    state: dict = {"gen": None, "sampler": None, "watch": None}

    def send(msg) -> None:
        try:
            with send_lock:
                conn.send(msg)
        except OSError:
            os._exit(0)  # the parent is gone: nothing to report to

    def stop() -> None:
        gen, sampler = state["gen"], state["sampler"]
        state["gen"] = state["sampler"] = None
        if gen is not None and gen.running:
            gen.stop()
        if sampler is not None:
            sampler.stop()

    def start(cfg: dict) -> None:
        stop()
        spec = LoadSpec(concurrency=cfg.get("concurrency"), rate=cfg.get("rate"), poisson=bool(cfg.get("poisson")),
                        duration_s=None, error_threshold=1.01, timeout_s=30.0)
        client = None
        if cfg.get("http") and cfg.get("model"):
            client = TritonClient(Endpoints(cfg["http"], f"grpc://{cfg['target']}", cfg.get("metrics") or ""))
        gen = LoadGenerator(cfg["target"], cfg["requests"], spec).start()
        sampler = Sampler(gen, client, cfg.get("model"), period_s=cfg.get("period_s", 0.25), gpu_metrics=False,
                          keep_histograms=1)
        pid = cfg.get("server_pid")
        if pid:
            # the server's RSS, read here (a /proc scan every 2 s) rather than in the UI's process
            from studio.tuning.live import process_tree_rss_mb

            every = max(1, round(2.0 / cfg.get("period_s", 0.25)))
            rss = {"n": 0, "mb": None}

            def add_rss(s) -> None:
                if rss["n"] % every == 0:
                    rss["mb"] = process_tree_rss_mb(pid)
                rss["n"] += 1
                s.server_rss_mb = rss["mb"]

            sampler.subscribe(add_rss)
        sampler.subscribe(lambda s: send(("sample", s)))
        state["gen"], state["sampler"] = gen, sampler
        sampler.start()

        def watch(g=gen):  # the load stopped by itself (it does not, with these limits; but say so if it does)
            res = g.wait()
            if state["gen"] is g:
                send(("stopped", res.stop_reason if res else "stopped"))

        threading.Thread(target=watch, name="studio-load-watch", daemon=True).start()

    send(("ready", None))
    while True:
        try:
            op, arg = conn.recv()
        except (EOFError, OSError):
            break  # the parent closed the socket or died
        try:
            if op == "start":
                start(arg)
            elif op == "concurrency":
                if state["gen"] is not None:
                    state["gen"].set_concurrency(int(arg))
            elif op == "rate":
                if state["gen"] is not None:
                    state["gen"].set_rate(float(arg))
            elif op == "stop":
                stop()
                send(("stopped", "stopped"))
            elif op == "exit":
                break
        except Exception as e:  # noqa: BLE001 - reported to the parent, the child keeps listening
            send(("error", f"{type(e).__name__}: {e}"))
    try:
        stop()
    finally:
        os._exit(0)  # no interpreter teardown: grpc's threads are not waited for


# -- parent -----------------------------------------------------------------------------------------------------

_live: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for p in list(_live):
        p.close()


class LoadProcess:
    """The parent's end: a child process running the load; samples arrive on a reader thread."""

    def __init__(self, on_sample: Callable[[Sample], None], on_stopped: Callable[[str], None] | None = None,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.on_sample = on_sample
        self.on_stopped = on_stopped
        self.on_error = on_error
        self._proc: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self._send_lock = threading.Lock()
        self._reader: threading.Thread | None = None
        self.ready = threading.Event()
        self.errors: collections.deque[str] = collections.deque(maxlen=20)

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def spawn(self) -> LoadProcess:
        if self.alive:
            return self
        parent_sock, child_sock = socket.socketpair()
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.pop("QT_QPA_PLATFORM", None)
        fd = child_sock.fileno()
        self._proc = subprocess.Popen([sys.executable, "-m", "studio.tuning.loadproc", str(fd)], pass_fds=(fd,),
                                      env=env, stdin=subprocess.DEVNULL, close_fds=True)
        child_sock.close()
        self._conn = Connection(parent_sock.detach())
        self._reader = threading.Thread(target=self._read, name="studio-load-reader", daemon=True)
        self._reader.start()
        _live.add(self)
        return self

    def _read(self) -> None:
        conn = self._conn
        while conn is not None:
            try:
                kind, arg = conn.recv()
            except (EOFError, OSError):
                break
            except Exception as e:  # noqa: BLE001 - an unreadable message: report it, keep reading
                self.errors.append(str(e))
                continue
            try:
                if kind == "sample":
                    self.on_sample(arg)
                elif kind == "ready":
                    self.ready.set()
                elif kind == "stopped" and self.on_stopped is not None:
                    self.on_stopped(arg)
                elif kind == "error":
                    self.errors.append(arg)
                    if self.on_error is not None:
                        self.on_error(arg)
            except Exception:  # noqa: BLE001 - a subscriber's bug must not stop the stream
                pass
        if self.on_stopped is not None and self._conn is not None:
            try:
                self.on_stopped("exited")
            except Exception:  # noqa: BLE001
                pass

    def send(self, op: str, arg=None) -> bool:
        """Send a command; False when the child is gone. Never blocks for long (the child reads promptly)."""
        conn = self._conn
        if conn is None:
            return False
        try:
            with self._send_lock:
                conn.send((op, arg))
            return True
        except OSError:
            return False

    def close(self, timeout_s: float = 2.0) -> None:
        """Stop the load and end the child (terminate, then kill, if it does not go by itself)."""
        proc, conn = self._proc, self._conn
        self._conn = None
        if conn is not None:
            try:
                with self._send_lock:
                    conn.send(("exit", None))
            except OSError:
                pass
            conn.close()  # EOF for the child in any case
        if proc is not None:
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(1.0)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(1.0)
        _live.discard(self)


if __name__ == "__main__":
    sys.exit(_child(int(sys.argv[1])))
