"""Server health: a watchdog thread that notices a dead server (embedded process exit, container exit, a URL
that stops answering) within about a second, and says why (exit code, last log lines). No Qt.

    dog = Watchdog(runtime, on_dead=lambda death: print(death.message()))
    dog.start()   ...   dog.stop()
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from studio.runtime.base import Runtime, Status

# what the log's last lines show of a dead server
TAIL_LINES = 20


@dataclass
class Death:
    kind: str  # embedded | docker | remote
    exit_code: int | None
    reason: str  # one line for a status bar
    last_lines: list[str] = field(default_factory=list)
    detected_at: float = 0.0  # time.monotonic() when the watchdog noticed

    def message(self) -> str:
        text = f"the server is gone: {self.reason}"
        if self.exit_code is not None and "exit code" not in self.reason:
            text += f" (exit code {self.exit_code})"
        return text


def check(runtime: Runtime) -> Death | None:
    """A Death when the runtime's server has ended or stopped answering, else None (one cheap probe)."""
    if runtime.status != Status.READY:
        return None
    if runtime.poll() != Status.EXITED:
        return None
    return death_of(runtime)


def death_of(runtime: Runtime) -> Death:
    # let the log reader drain the dead process's last lines
    reader = getattr(runtime, "_reader", None) or getattr(runtime, "_follower", None)
    if reader is not None:
        reader.join(timeout=0.3)
    return Death(runtime.kind, runtime.exit_code, runtime.exit_reason or "the server ended",
                 runtime.logs.lines()[-TAIL_LINES:], time.monotonic())


class Watchdog:
    """Polls `check(runtime)` every `interval` seconds on its own thread; calls on_dead(Death) once."""

    def __init__(self, runtime: Runtime, on_dead: Callable[[Death], None], interval: float = 0.25) -> None:
        self.runtime = runtime
        self.on_dead = on_dead
        self.interval = interval
        self.death: Death | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Watchdog:
        self._thread = threading.Thread(target=self._run, name="triton-watchdog", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                death = check(self.runtime)
            except Exception as e:  # noqa: BLE001 - a probe that fails is not a death; say so in the log
                self.runtime.logs.append(f"studio: health check failed: {e}")
                continue
            if death is not None:
                self.death = death
                if not self._stop.is_set():
                    self.on_dead(death)
                return

    def stop(self) -> None:
        self._stop.set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()
