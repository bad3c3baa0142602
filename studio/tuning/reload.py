"""Reload discipline for live config changes, as pure state over an injectable clock (no threads, no Qt).

Triton reloads most dynamic_batching changes in the background (the old model serves until the new one is
READY) and two loads of one model at once can load it twice, so: slider moves are debounced (~400 ms), at most
one load is in flight, and the latest value wins (edits made while a load runs are merged and go next).

    rc = ReloadCoordinator(debounce_s=0.4, clock=time.monotonic)
    rc.request({"dynamic_batching.max_queue_delay_microseconds": 2000})
    rc.next_due()          # when to call take() (None: nothing pending or a load is in flight)
    batch = rc.take()      # a PendingReload to start now, or None
    rc.done()              # the load finished (either way); pending edits may now go

SteadyDetector applies the tuning session's stability criterion (3 consecutive 1 s windows within 10% on
throughput and p99) incrementally, sample by sample, after a change went live.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from studio.tuning.session import stable_tail


@dataclass
class PendingReload:
    edits: dict
    t_requested: float  # when the first of these edits was requested (the slider release)
    t_started: float


class ReloadCoordinator:
    def __init__(self, debounce_s: float = 0.4, clock: Callable[[], float] = time.monotonic) -> None:
        self.debounce_s = debounce_s
        self.clock = clock
        self._pending: dict = {}
        self._t_first: float | None = None
        self._t_last: float | None = None
        self.in_flight: PendingReload | None = None

    @property
    def pending(self) -> dict:
        return dict(self._pending)

    @property
    def state(self) -> str:
        """idle | waiting (debouncing or queued behind a load) | applying."""
        if self.in_flight is not None:
            return "applying"
        return "waiting" if self._pending else "idle"

    def request(self, edits: dict) -> None:
        now = self.clock()
        self._pending.update(edits)  # latest value per field wins
        if self._t_first is None:
            self._t_first = now
        self._t_last = now

    def next_due(self) -> float | None:
        if self.in_flight is not None or not self._pending:
            return None
        return self._t_last + self.debounce_s

    def take(self) -> PendingReload | None:
        due = self.next_due()
        if due is None or self.clock() < due:
            return None
        now = self.clock()
        self.in_flight = PendingReload(self._pending, self._t_first, now)
        self._pending, self._t_first, self._t_last = {}, None, None
        return self.in_flight

    def done(self) -> PendingReload | None:
        finished, self.in_flight = self.in_flight, None
        return finished

    def cancel_pending(self) -> None:
        self._pending, self._t_first, self._t_last = {}, None, None


@dataclass
class SteadyDetector:
    """Feed samples (studio.tuning.sampler.Sample) that started after the change went live; `result` is set
    once the last `stable_windows` windows agree within `tolerance`, or when `budget_s` runs out (stable False)."""

    since: float
    period_s: float = 0.25
    window_s: float = 1.0
    tolerance: float = 0.10
    stable_windows: int = 3
    budget_s: float = 30.0
    samples: list = field(default_factory=list)
    result: dict | None = None

    def feed(self, s) -> dict | None:
        if self.result is not None:
            return self.result
        if s.t_start >= self.since and s.throughput > 0:
            self.samples.append(s)
        per = max(1, round(self.window_s / self.period_s))
        windows, last = stable_tail(self.samples, per, self.stable_windows, self.tolerance)
        if last is not None:
            self.result = self._figures(last, True, s.t)
            return self.result
        if s.t - self.since > self.budget_s:
            self.result = self._figures(windows[-self.stable_windows:], False, s.t)
        return self.result

    def _figures(self, windows: list[dict], stable: bool, t: float) -> dict:
        def mean(k):
            vals = [w[k] for w in windows if w.get(k) is not None]
            return statistics.fmean(vals) if vals else None

        return {"throughput": mean("throughput") or 0.0, "p50_ms": mean("p50_ms"), "p90_ms": mean("p90_ms"),
                "p99_ms": mean("p99_ms"), "avg_batch_size": mean("avg_batch_size"), "queue_ms": mean("queue_ms"),
                "error_rate": mean("error_rate") or 0.0, "stable": stable, "t_steady": t,
                "time_to_steady_s": t - self.since}
