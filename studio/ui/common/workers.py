"""Background work for widgets: a function runs in the global QThreadPool and its result (or the error message)
comes back as a signal on the UI thread. Nothing here touches a widget from the worker thread.

    job = run_in_background(lambda: client.repository_index(), on_done=self._show, on_failed=self._fail)
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal


class JobSignals(QObject):
    sig_done = Signal(object)
    """The function returned: its result."""
    sig_failed = Signal(str)
    """The function raised: a one-line message for the user."""


class BackgroundJob(QRunnable):
    """Runs `fn()` off the UI thread; emits sig_done(result) or sig_failed(message)."""

    def __init__(self, fn: Callable[[], object]) -> None:
        super().__init__()
        self.setAutoDelete(False)  # the caller's reference (or _live) keeps it until its signal is delivered
        self.fn = fn
        self.signals = JobSignals()

    def run(self) -> None:
        try:
            result = self.fn()
        except Exception as e:  # noqa: BLE001 - reported to the UI as a message
            self.signals.sig_failed.emit(str(e) or type(e).__name__)
        else:
            self.signals.sig_done.emit(result)


_live: set[BackgroundJob] = set()


def run_in_background(
    fn: Callable[[], object],
    on_done: Callable[[object], None] | None = None,
    on_failed: Callable[[str], None] | None = None,
    pool: QThreadPool | None = None,
) -> BackgroundJob:
    """Start `fn` in the pool; `on_done`/`on_failed` run on the thread of the receiver (the UI thread)."""
    job = BackgroundJob(fn)
    _live.add(job)
    if on_done is not None:
        job.signals.sig_done.connect(on_done)
    if on_failed is not None:
        job.signals.sig_failed.connect(on_failed)
    job.signals.sig_done.connect(lambda _r: _live.discard(job))
    job.signals.sig_failed.connect(lambda _m: _live.discard(job))
    (pool or QThreadPool.globalInstance()).start(job)
    return job
