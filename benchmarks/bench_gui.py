"""Benchmark: window start time with a 200-model repository (goal < 1.5 s), and the longest UI-thread stall
while a 1,000-model repository loads (goal < 50 ms), measured with an event-loop lag probe (a 5 ms timer whose
lateness is the stall). Reference in the same run: the stall of a bare event loop with the same probe.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_gui.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_repository import make_repo  # noqa: E402
from PySide6.QtCore import QElapsedTimer, QTimer  # noqa: E402

from studio.ui.shell.main_window import MainWindow, make_app  # noqa: E402


class LagProbe:
    def __init__(self, period_ms: int = 5) -> None:
        self.period = period_ms
        self.worst = 0.0
        self.timer = QTimer(interval=period_ms)
        self.clock = QElapsedTimer()
        self.timer.timeout.connect(self._tick)

    def start(self) -> None:
        self.clock.start()
        self.timer.start()

    def _tick(self) -> None:
        elapsed = self.clock.restart()
        self.worst = max(self.worst, elapsed - self.period)

    def stop(self) -> float:
        self.timer.stop()
        return self.worst


def open_and_wait(app, repo: Path, probe: LagProbe | None = None) -> float:
    t0 = time.perf_counter()
    win = MainWindow()
    win.resize(1280, 800)
    win.show()
    done = []
    win.sig_repository_loaded.connect(lambda n: done.append(time.perf_counter()))
    if probe:
        probe.start()
    win.open_repository(str(repo))
    while not done:
        app.processEvents()
        time.sleep(0.001)
    app.processEvents()
    t = done[0] - t0
    win.server.shutdown()
    win.close()
    return t


def main() -> None:
    app = make_app()
    idle = LagProbe()
    idle.start()
    end = time.perf_counter() + 1.0
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.001)
    idle_lag = idle.stop()
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "r200"
        make_repo(small, 200)
        big = Path(tmp) / "r1000"
        make_repo(big, 1000)
        start = open_and_wait(app, small)
        probe = LagProbe()
        t_big = open_and_wait(app, big, probe)
        stall = probe.stop()
    print(f"window start with 200 models (scan + validate + tree filled): {start * 1000:.0f} ms  (goal < 1500 ms)")
    print(f"1,000 models: loaded in {t_big * 1000:.0f} ms; longest UI stall {stall:.0f} ms (goal < 50 ms); "
          f"idle loop reference {idle_lag:.0f} ms")


if __name__ == "__main__":
    main()
