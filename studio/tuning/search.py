"""Auto-tune: the best throughput under a p99 latency budget, over max_batch_size, preferred_batch_size,
max_queue_delay_microseconds, instance count, and concurrency as the load axis.

Each point is an in-place reload (config override) and a steady-state measurement with the load generator
kept running. The search walks one axis at a time to the neighbour that improves throughput within the
budget (coordinate ascent), stops early when no neighbour helps, and reports the frontier (the points no
other point beats on both throughput and p99). `grid()` measures every point, for comparison.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

AXES = ("max_queue_delay_microseconds", "concurrency", "instances", "max_batch_size", "preferred")


@dataclass(frozen=True)
class Point:
    max_batch_size: int
    max_queue_delay_microseconds: int
    instances: int
    concurrency: int
    preferred: tuple[int, ...] = ()  # () = Triton's default (max_batch_size)

    def edits(self) -> dict:
        return {
            "max_batch_size": self.max_batch_size,
            "dynamic_batching.max_queue_delay_microseconds": self.max_queue_delay_microseconds,
            "dynamic_batching.preferred_batch_size": list(self.preferred),
            "instance_group[0].count": self.instances,
        }

    def config_key(self) -> tuple:
        return (self.max_batch_size, self.max_queue_delay_microseconds, self.instances, self.preferred)

    def fragment(self) -> str:
        """The best config as a pbtxt fragment."""
        pref = f"\n  preferred_batch_size: [ {', '.join(map(str, self.preferred))} ]" if self.preferred else ""
        return (f"max_batch_size: {self.max_batch_size}\n"
                f"dynamic_batching {{{pref}\n  max_queue_delay_microseconds: {self.max_queue_delay_microseconds}\n}}\n"
                f"instance_group [ {{ count: {self.instances} }} ]\n")


@dataclass
class Space:
    max_batch_size: list[int] = field(default_factory=lambda: [8, 16, 32])
    max_queue_delay_microseconds: list[int] = field(default_factory=lambda: [0, 100, 500, 2000])
    instances: list[int] = field(default_factory=lambda: [1, 2])
    concurrency: list[int] = field(default_factory=lambda: [8, 16, 32])
    preferred: list[tuple[int, ...]] = field(default_factory=lambda: [()])

    def values(self, axis: str) -> list:
        return list(getattr(self, axis))

    def points(self) -> list[Point]:
        return [Point(m, d, i, c, p) for m, d, i, c, p in itertools.product(
            self.max_batch_size, self.max_queue_delay_microseconds, self.instances, self.concurrency, self.preferred)]

    def start(self) -> Point:
        def mid(xs):
            return xs[len(xs) // 2]

        return Point(mid(self.max_batch_size), mid(self.max_queue_delay_microseconds), self.instances[0],
                     mid(self.concurrency), self.preferred[0])


@dataclass
class Measurement:
    point: Point
    throughput: float
    p99_ms: float | None
    stable: bool
    seconds: float
    error: str | None = None

    def within(self, budget_ms: float) -> bool:
        return self.error is None and self.p99_ms is not None and self.p99_ms <= budget_ms


@dataclass
class TuneResult:
    best: Measurement | None
    measurements: list[Measurement]
    frontier: list[Measurement]
    seconds: float


def frontier(ms: list[Measurement]) -> list[Measurement]:
    ok = [m for m in ms if m.error is None and m.p99_ms is not None]
    out = [m for m in ok if not any(o.throughput >= m.throughput and o.p99_ms <= m.p99_ms and
                                    (o.throughput > m.throughput or o.p99_ms < m.p99_ms) for o in ok)]
    return sorted(out, key=lambda m: m.p99_ms)


class Tuner:
    """Measures points through a TuningSession whose load generator keeps running."""

    def __init__(self, session, p99_budget_ms: float, budget_s: float | None = None, point_budget_s: float = 12.0,
                 on_measurement: Callable[[Measurement], None] | None = None) -> None:
        self.session = session
        self.p99_budget_ms = p99_budget_ms
        self.budget_s = budget_s
        self.point_budget_s = point_budget_s
        self.on_measurement = on_measurement
        self.cache: dict[Point, Measurement] = {}
        self._t0 = time.monotonic()
        self._config: tuple | None = None

    def out_of_time(self) -> bool:
        return self.budget_s is not None and time.monotonic() - self._t0 > self.budget_s

    def measure(self, p: Point) -> Measurement:
        if p in self.cache:
            return self.cache[p]
        t0 = time.monotonic()
        loadgen = self.session.sampler.loadgen
        loadgen.set_concurrency(p.concurrency)
        if self._config != p.config_key():
            if not self.session.document.has("instance_group[0]"):
                self.session.document.set("instance_group", [{"kind": "KIND_AUTO"}])
            rec = self.session.apply(p.edits(), f"{p}", budget_s=self.point_budget_s)
            self._config = p.config_key() if rec.error is None else None
            if rec.error is not None:
                m = Measurement(p, 0.0, None, False, time.monotonic() - t0, rec.error)
                self.cache[p] = m
                return m
            steady = rec.result
        else:
            steady = self.session.measure(since=time.monotonic(), budget_s=self.point_budget_s)
        m = Measurement(p, steady.throughput, steady.p99_ms, steady.stable, time.monotonic() - t0)
        self.cache[p] = m
        if self.on_measurement:
            self.on_measurement(m)
        return m

    def _score(self, m: Measurement) -> float:
        return m.throughput if m.within(self.p99_budget_ms) else -1.0 / (1 + (m.p99_ms or 1e9))

    def search(self, space: Space, start: Point | None = None, passes: int = 2) -> TuneResult:
        t0 = time.monotonic()
        current = start or space.start()
        best = self.measure(current)
        for _ in range(passes):
            improved = False
            for axis in AXES:
                values = space.values(axis)
                if len(values) < 2 or self.out_of_time():
                    continue
                idx = values.index(getattr(current, axis))
                for direction in (1, -1):
                    j = idx + direction
                    while 0 <= j < len(values) and not self.out_of_time():
                        cand = _replace(current, axis, values[j])
                        m = self.measure(cand)
                        if self._score(m) > self._score(best) * 1.02 or (self._score(best) < 0 < self._score(m)):
                            best, current, improved = m, cand, True
                            j += direction  # keep walking while it helps
                        else:
                            break  # early stop in this direction
                    if current != best.point:
                        current = best.point
            if not improved:
                break
        ms = list(self.cache.values())
        ok = [m for m in ms if m.within(self.p99_budget_ms)]
        return TuneResult(max(ok, key=lambda m: m.throughput) if ok else None, ms, frontier(ms), time.monotonic() - t0)

    def grid(self, space: Space) -> TuneResult:
        t0 = time.monotonic()
        pts = sorted(space.points(), key=lambda p: (p.config_key(), p.concurrency))
        for p in pts:
            if self.out_of_time():
                break
            self.measure(p)
        ms = list(self.cache.values())
        ok = [m for m in ms if m.within(self.p99_budget_ms)]
        return TuneResult(max(ok, key=lambda m: m.throughput) if ok else None, ms, frontier(ms), time.monotonic() - t0)


def _replace(p: Point, axis: str, value) -> Point:
    d = dict(p.__dict__)
    d[axis] = value
    return Point(**d)
