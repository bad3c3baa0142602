"""Auto-tune: the best throughput under a p99 latency budget.

The configuration axes are instance count, max_batch_size, max_queue_delay_microseconds and preferred batch
sizes; the load (concurrency) is an axis of its own. For one configuration, `knee()` finds the highest load whose
p99 stays under the budget: it brackets the budget (p99 grows about linearly with concurrency once the server is
saturated, so one measurement predicts where the budget is crossed) and then interpolates inside the bracket until
it is narrower than ~12%. Between configurations the search walks one axis at a time from a sensible seed, like
Model Analyzer's quick search, keeps walking while the knee throughput improves, and stops a configuration early
once a measurement shows it cannot beat the leader.

Every point is measured to stability (the session's criterion: 3 windows within 10%); a point that did not
settle is measured again and marked noisy if it still does not. `tune()` adds what a user needs to trust the
answer: the file's own configuration as a baseline, and a confirmation phase that re-measures the top three
alternating (A B C C B A ...) and reports the winner with a 95% confidence interval and its margin over the
runner-up, plus the machine's load, so that a noisy machine is said, not hidden.

Why no black-box optimizer (optuna's TPE/GP): a probe costs 2-5 s of real load, so a tune has 20-40 probes;
the response surface is smooth and nearly separable in these axes (instances, then batch size, then delay), and
the knee along the load axis is a 1-D root-finding problem that interpolation solves in 2-4 probes. TPE needs
tens of trials before it beats coordinate steps on such a surface, and it cannot exploit the knee structure.

`search()` is the config walk alone (used live by the dashboard, at the user's load when `Space.concurrency`
has one value); `grid()` measures every point, for comparison.
"""

from __future__ import annotations

import itertools
import math
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from studio.tuning.abtest import compare, t975

AXES = ("instances", "max_batch_size", "max_queue_delay_microseconds", "preferred")
KNEE_TARGET = 0.98  # aim the interpolation a little under the budget: p99 near the budget is steep and noisy
KNEE_RESOLUTION = 0.12  # stop bisecting when the bracket is this narrow (relative)
IMPROVED = 1.05  # a move must beat the leader by more than a measurement's noise (windows agree within ~5-10%);
# smaller differences are for the confirmation's alternating rounds to settle, not for the walk to chase
NOISE_BAND = 0.95  # a configuration this close to the leader may be noise: along TIE_STEP_AXES the walk takes one more step
# the axes where a tie with the leader says little about the next step: one instance more may be noise, and a
# queue delay shorter than a batch takes to fill changes little while a longer one fills the batches (the demo
# model at concurrency 64 on 2 cores, perf_analyzer: 4 instances at max_batch 16, 0 us 9,669/s, 1000 us 10,122/s;
# 8 instances 9,255 and 10,089/s; Model Analyzer's quick search does not walk the delay at all)
TIE_STEP_AXES = ("instances", "max_queue_delay_microseconds")
SATURATED = 1.02  # more load that adds less than 2% throughput is latency only
FULL_LOAD = 15  # what a full load costs, in reload_cost's tenths of a second
RELOAD_PARAMETER = 'parameters["triton_studio_reload"].string_value'  # changed to make Triton load a config anew
BETWEEN_LOOKS = 2  # looks between the instance counts the doubling walk stepped over on its way to the leader
PLATEAU_LOOKS = 2  # probes spent after the walk around configurations that tied with the leader
BASELINE_TOLERANCE = 0.20  # the baseline's windows agree within this: it is a reference, not a candidate, and
# its low throughput leaves few requests per window, so the candidates' 10% cost it 5-11 s of waiting
CLEAR = 1.15  # a gain over the leader above IMPROVED but below this is measured once more before the walk takes
# it: the configuration is loaded (no reload, ~1.5 s), and the figure that beat the leader is, among the walk's
# many, the likeliest to be a lucky window (an 8-instance walk on 2 cores chased such gains over 14 configurations)
MIN_POINT_S = 2.0  # the shortest measurement the time budget cuts a point's to: a few windows of 0.5 s
MIN_RELOAD_S = 10.0  # the shortest reload deadline the time budget cuts to (a reload here takes 1-5 s)
NEAR_MISS = 0.90  # an instance step that reads this close to the leader (but under NOISE_BAND) is measured once
# more before the walk gives up on it: the configuration is loaded (no reload, ~2 s), and on 2 busy cores a single
# look misranks 2 and 4 instances of the demo model by ~7% (4 read 0.937x of 2, perf_analyzer then measured 4 at
# 1.08x Model Analyzer's 5): the walk stopped short of 5-7, where the best counts were
RESCUE = 1  # confirmed configurations over the budget re-measured at a lower load (see Tuner._rescue)
REWALK = 1.10  # a move along one axis re-opens the others only when it gained more than this (twice the noise):
# a smaller gain says the landscape is flat along that axis near the leader, so what the other axes found around
# the old leader holds around the new one within the noise (their re-walk cost 4 probes, ~14 s, for nothing in
# the benchmark); the confirmation and the tie look settle what is left


@dataclass(frozen=True)
class Point:
    max_batch_size: int
    max_queue_delay_microseconds: int
    instances: int
    concurrency: int
    preferred: tuple[int, ...] = ()  # () = Triton's default (max_batch_size)
    batching: bool = True  # False: no dynamic_batching block (the baseline of a file without one)

    def edits(self) -> dict:
        e: dict = {"instance_group[0].count": self.instances}
        if self.max_batch_size > 0:
            e["max_batch_size"] = self.max_batch_size
        if self.batching and self.max_batch_size > 0:
            e["dynamic_batching.max_queue_delay_microseconds"] = self.max_queue_delay_microseconds
            e["dynamic_batching.preferred_batch_size"] = list(self.preferred)
        else:
            e["dynamic_batching"] = None
        return e

    def config_key(self) -> tuple:
        return (self.max_batch_size, self.max_queue_delay_microseconds, self.instances, self.preferred, self.batching)

    def config(self) -> Point:
        """The configuration without the load (concurrency 0)."""
        return replace(self, concurrency=0)

    def label(self) -> str:
        if self.max_batch_size <= 0 or not self.batching:
            b = "no dynamic batching" if self.max_batch_size > 0 else "no batching"
            return f"instances {self.instances}, max_batch {self.max_batch_size}, {b}"
        pref = f", preferred {list(self.preferred)}" if self.preferred else ""
        return (f"instances {self.instances}, max_batch {self.max_batch_size}, "
                f"delay {self.max_queue_delay_microseconds} us{pref}")

    def fragment(self) -> str:
        """The configuration as a pbtxt fragment."""
        groups = f"instance_group [ {{ count: {self.instances} }} ]\n"
        if self.max_batch_size <= 0:
            return groups
        if not self.batching:
            return f"max_batch_size: {self.max_batch_size}\n# no dynamic_batching\n" + groups
        pref = f"\n  preferred_batch_size: [ {', '.join(map(str, self.preferred))} ]" if self.preferred else ""
        return (f"max_batch_size: {self.max_batch_size}\n"
                f"dynamic_batching {{{pref}\n  max_queue_delay_microseconds: {self.max_queue_delay_microseconds}\n}}\n"
                + groups)


def baseline_point(config) -> Point:
    """The file's own configuration (a ModelConfig message) as a point: what the tune is compared with."""
    mbs = int(config.max_batch_size)
    count = max(1, config.instance_group[0].count) if len(config.instance_group) else 1
    db = config.dynamic_batching if config.HasField("dynamic_batching") else None
    return Point(mbs, db.max_queue_delay_microseconds if db else 0, count, 0,
                 tuple(db.preferred_batch_size) if db else (), db is not None and mbs > 0)


def machine_instances(gpus: int = 0, cpus: int | None = None) -> int:
    """The most instances worth trying: a few per GPU, else ~4 per CPU core (a model that waits on I/O or
    sleeps, like many python models, keeps paying beyond one per core: Model Analyzer found 8 instances best
    for such a model on 2 cores); at least 8 on a CPU, 4 on GPUs, at most 16. The walk doubles instance counts,
    so a wider range costs one probe more, not one per count."""
    if gpus > 0:
        return max(4, min(16, 4 * gpus))
    cpus = cpus or os.cpu_count() or 1
    return max(8, min(16, 4 * cpus))


def seed_instances(gpus: int = 0, cpus: int | None = None, top: int | None = None) -> int:
    """The instance count the walk starts from: one per GPU (a GPU group's count is per GPU), else one per CPU
    core (instances run in parallel up to one per core), at most half the range, so the walk can go both ways.
    Starting from one instance spent the tune's steepest knee on a configuration that never won on 2 cores
    (1 instance at max_batch 16: 3-4 probes, 6.5-10 s of the demo model's 56-83 s tune, ~4,000/s against 7,500/s
    for 2 instances). Where going up does not pay, the walk still steps down from the seed."""
    if gpus > 0:
        return 1
    cpus = cpus or os.cpu_count() or 1
    top = top or machine_instances(gpus, cpus)
    return max(1, min(cpus, top // 2))


@dataclass
class Space:
    max_batch_size: list[int] = field(default_factory=lambda: [8, 16, 32])
    max_queue_delay_microseconds: list[int] = field(default_factory=lambda: [0, 100, 500, 2000])
    instances: list[int] = field(default_factory=lambda: [1, 2])
    concurrency: list[int] = field(default_factory=lambda: [8, 16, 32])  # one value: a fixed load; else a range
    preferred: list[tuple[int, ...]] = field(default_factory=lambda: [()])
    seed: Point | None = None  # where the walk starts (None: the middle of each axis, first instance count)

    @classmethod
    def for_model(cls, config, *, gpus: int = 0, cpus: int | None = None, max_concurrency: int = 256,
                  min_concurrency: int = 1, max_instances: int | None = None) -> Space:
        """The space for a model (a ModelConfig message) on this machine. max_batch_size is never raised above
        the file's (the model may not be built for more); the seed is one batch size below the file's (for a
        maximum of 5 or more) with dynamic batching on and no queue delay, seed_instances() instances."""
        mbs = int(config.max_batch_size)
        top = max_instances or machine_instances(gpus, cpus)
        count = max(1, config.instance_group[0].count) if len(config.instance_group) else 1
        if mbs > 0:
            sizes = sorted({m for m in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024) if m <= mbs} | {mbs})
            delays = sorted({0, 100, 500, 2000} | ({config.dynamic_batching.max_queue_delay_microseconds}
                                                  if config.HasField("dynamic_batching") else set()))
        else:
            sizes, delays = [0], [0]
        space = cls(max_batch_size=sizes, max_queue_delay_microseconds=delays,
                    instances=sorted(set(range(1, top + 1)) | {count}),
                    concurrency=[max(1, min_concurrency), max(max_concurrency, min_concurrency, 1)], preferred=[()])
        # the seed's batch size: one step inside the file's maximum (for a maximum of 5 or more). The maximum is the model's limit,
        # not a latency-aware choice, and a walk that starts at the end of an axis can only move one way; under a
        # p99 budget the best size is seldom the largest (the demo model: 16 of 32 at 3-5 instances, heavy items:
        # 8), and the walk still tries the maximum one step up
        space.seed = Point(sizes[-2] if len(sizes) >= 4 else mbs, 0, seed_instances(gpus, cpus, top), 0, (), mbs > 0)
        return space

    def values(self, axis: str) -> list:
        return list(getattr(self, axis))

    def points(self) -> list[Point]:
        return [Point(m, d, i, c, p) for m, d, i, c, p in itertools.product(
            self.max_batch_size, self.max_queue_delay_microseconds, self.instances, self.concurrency, self.preferred)]

    def start(self) -> Point:
        if self.seed is not None:
            return self.seed

        def mid(xs):
            return xs[len(xs) // 2]

        return Point(mid(self.max_batch_size), mid(self.max_queue_delay_microseconds), self.instances[0],
                     mid(self.concurrency), self.preferred[0])

    @property
    def load_range(self) -> tuple[int, int]:
        return min(self.concurrency), max(self.concurrency)

    @property
    def fixed_load(self) -> bool:
        return len(set(self.concurrency)) == 1


@dataclass
class Measurement:
    point: Point
    throughput: float
    p99_ms: float | None
    stable: bool
    seconds: float
    error: str | None = None
    p50_ms: float | None = None
    avg_batch_size: float | None = None
    attempts: int = 1  # >1: it did not settle and was measured again
    at: float = 0.0  # seconds since the tune started
    reload_s: float = 0.0  # of `seconds`, the time the server took to load the configuration (0: no reload)
    looks: int = 1  # 2: a narrow gain over the leader (CLEAR) or a near miss (NEAR_MISS), measured again; the mean of both

    def within(self, budget_ms: float) -> bool:
        return self.error is None and self.p99_ms is not None and self.p99_ms <= budget_ms

    def to_json(self) -> dict:
        return {"config": self.point.label(), "instances": self.point.instances,
                "max_batch_size": self.point.max_batch_size, "batching": self.point.batching,
                "max_queue_delay_microseconds": self.point.max_queue_delay_microseconds,
                "preferred": list(self.point.preferred), "concurrency": self.point.concurrency,
                "throughput": round(self.throughput, 1), "p99_ms": _r(self.p99_ms), "p50_ms": _r(self.p50_ms),
                "avg_batch_size": _r(self.avg_batch_size), "stable": self.stable, "attempts": self.attempts,
                "seconds": round(self.seconds, 2), "reload_s": round(self.reload_s, 2), "at_s": round(self.at, 1),
                "looks": self.looks,
                "error": self.error}


def _r(x: float | None, n: int = 2) -> float | None:
    return None if x is None else round(x, n)


@dataclass
class Confirmed:
    """A candidate re-measured in the alternating rounds."""

    point: Point
    throughputs: list[float]
    p99s: list[float]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.throughputs) if self.throughputs else 0.0

    @property
    def p99_mean(self) -> float | None:
        return statistics.fmean(self.p99s) if self.p99s else None

    def ci(self) -> tuple[float, float]:
        n = len(self.throughputs)
        if n < 2:
            return self.mean, self.mean
        h = t975(n - 1) * statistics.stdev(self.throughputs) / math.sqrt(n)
        return self.mean - h, self.mean + h

    @property
    def spread(self) -> float:
        """max/min - 1 of the rounds' throughputs: how much the same config moved between rounds."""
        lo = min(self.throughputs, default=0.0)
        return max(self.throughputs) / lo - 1 if lo > 0 else 0.0

    def to_json(self) -> dict:
        lo, hi = self.ci()
        return {"config": self.point.label(), "concurrency": self.point.concurrency,
                "throughputs": [round(x, 1) for x in self.throughputs], "p99_ms": [round(x, 2) for x in self.p99s],
                "mean": round(self.mean, 1), "ci95": [round(lo, 1), round(hi, 1)], "p99_mean_ms": _r(self.p99_mean)}


@dataclass
class TuneResult:
    best: Measurement | None
    measurements: list[Measurement]
    frontier: list[Measurement]
    seconds: float
    knees: list[Measurement] = field(default_factory=list)  # per configuration, its best point under the budget
    baseline: Measurement | None = None
    confirmed: list[Confirmed] = field(default_factory=list)  # the alternating re-measurement, best first
    margin: dict | None = None  # winner vs runner-up: diff, ci95, ratio
    notes: list[str] = field(default_factory=list)
    machine: dict = field(default_factory=dict)
    confirmation_runs: list[Measurement] = field(default_factory=list)  # the confirmation's own measurements

    @property
    def winner(self) -> Confirmed | None:
        return self.confirmed[0] if self.confirmed else None

    def to_json(self) -> dict:
        w = self.winner
        return {
            "best": self.best.to_json() if self.best else None,
            "winner": w.to_json() if w else None,
            "margin_over_runner_up": self.margin,
            "baseline": self.baseline.to_json() if self.baseline else None,
            "vs_baseline": (round(w.mean / self.baseline.throughput, 2) if w and self.baseline
                            and self.baseline.throughput > 0 else None),
            "confirmed": [c.to_json() for c in self.confirmed],
            "frontier": [m.to_json() for m in self.frontier],
            "knees": [m.to_json() for m in self.knees],
            "measurements": [m.to_json() for m in self.measurements],
            "confirmation_runs": [m.to_json() for m in self.confirmation_runs],
            "seconds": round(self.seconds, 1),
            "notes": self.notes,
            "machine": self.machine,
        }


def frontier(ms: list[Measurement]) -> list[Measurement]:
    ok = [m for m in ms if m.error is None and m.p99_ms is not None]
    out = [m for m in ok if not any(o.throughput >= m.throughput and o.p99_ms <= m.p99_ms and
                                    (o.throughput > m.throughput or o.p99_ms < m.p99_ms) for o in ok)]
    return sorted(out, key=lambda m: m.p99_ms)


def next_load(ok: Measurement | None, bad: Measurement | None, budget_ms: float, lo: int, hi: int,
              below: Measurement | None = None) -> int | None:
    """The next concurrency to try for one configuration, from the highest load measured under the budget
    (`ok`) and the lowest measured over it (`bad`); None when the knee is found to the resolution. `below`, a
    measurement under the budget at a lower load than `ok`, gives the local slope of log p99 over log load
    (batching keeps p99 nearly flat until the batches are full: then the jump is larger)."""
    target = KNEE_TARGET * budget_ms
    if ok is not None and bad is not None:
        a, b = ok.point.concurrency, bad.point.concurrency
        if b - a <= max(1, round(KNEE_RESOLUTION * a)):
            return None
        if bad.throughput <= ok.throughput * IMPROVED:
            # throughput grows with the load, so the bracket holds at most the over-budget point's figure:
            # when that is within a measurement's noise of the point under the budget, narrowing the bracket
            # cannot change how this configuration ranks (it would cost a probe for a gain the walk ignores)
            return None
        pa, pb = max(ok.p99_ms or 0.0, 1e-6), max(bad.p99_ms or 0.0, 1e-6)
        if pb > pa and pa < target < pb:  # regula falsi on p99 against the load
            frac = (target - pa) / (pb - pa)
        else:
            frac = 0.5
        frac = min(0.8, max(0.2, frac))  # safeguarded: never hug one end of the bracket
        c = round(a + (b - a) * frac)
        return min(b - 1, max(a + 1, c))
    if ok is not None:
        c = ok.point.concurrency
        if c >= hi:
            return None
        p = max(ok.p99_ms or 0.0, 1e-6)
        slope = 1.0  # p99 ~ proportional to the load past saturation (Little's law)
        if below is not None and below.p99_ms and below.point.concurrency < c and p > below.p99_ms:
            slope = max(0.02, min(1.0, math.log(p / below.p99_ms) / math.log(c / below.point.concurrency)))
        elif below is not None and below.p99_ms and p <= below.p99_ms:
            slope = 0.02
        guess = round(c * (budget_ms / p) ** (1 / slope)) if budget_ms > p else c + 1
        if p >= 0.85 * budget_ms and guess <= c * (1 + KNEE_RESOLUTION):
            return None  # the budget is predicted within the resolution: this is the knee
        # close to the budget already (e.g. the leader's knee tried on a neighbour): one resolution step
        step = 1 + KNEE_RESOLUTION if p >= 0.85 * budget_ms else 1.25
        return min(hi, 4 * c, max(c + 1, math.ceil(step * c), guess))
    if bad is not None:
        c = bad.point.concurrency
        if c <= lo:
            return None
        p = max(bad.p99_ms or 0.0, 1e-6)
        guess = round(c * target / p)
        step = 1 / (1 + KNEE_RESOLUTION) if p <= 1.15 * budget_ms else 0.8
        return max(lo, -(-c // 4), min(c - 1, math.floor(step * c), guess))
    return None


class Tuner:
    """Measures points through a TuningSession whose load generator keeps running (or any `session` with the
    same apply/measure/document/sampler surface, e.g. the dashboard's EngineSession)."""

    def __init__(self, session, p99_budget_ms: float, budget_s: float | None = None, point_budget_s: float = 12.0,
                 on_measurement: Callable[[Measurement], None] | None = None, max_knee_probes: int = 6,
                 requests_per_window: int | None = None, max_window_s: float = 2.0,
                 clock: Callable[[], float] = time.monotonic, full_reload_removals: bool = False) -> None:
        self.session = session
        # load a configuration with fewer instances anew (RELOAD_PARAMETER) where removing them in place costs
        # more than a full load: the python backend's instances are removed one after another at ~1.1 s each
        # (reload_cost). Only where the session's document is a scratch copy: the parameter stays in it
        self.full_reload_removals = full_reload_removals
        self.forced_reloads = 0
        self.clock = clock  # injectable, as in studio.tuning.reload: the tests' simulated server advances it
        # adaptive windows: each window long enough for this many requests (a p99 from >= 5 tail requests),
        # never shorter than the session's own window nor longer than max_window_s
        self.requests_per_window = requests_per_window
        self.max_window_s = max_window_s
        self._min_window_s = getattr(session, "window_s", None)
        self._last_throughput: float | None = None
        self.p99_budget_ms = p99_budget_ms
        self.budget_s = budget_s
        self._given_budget_s = budget_s  # as given: stop() ends the search by setting budget_s, not this
        self.point_budget_s = point_budget_s
        self.on_measurement = on_measurement
        self.max_knee_probes = max_knee_probes
        self.cache: dict[Point, Measurement] = {}
        self._t0 = clock()
        self._config: tuple | None = None
        self._concurrency: int | None = None
        self._reserve_s = 0.0  # time kept for the confirmation phase
        self._between_left = 0  # looks between instance counts left (search() sets BETWEEN_LOOKS)
        self.reload_s = 0.0  # time spent waiting for the server to load configurations, over the whole tune
        self.measured = 0  # measurements taken (the cache's plus the confirmation's fresh ones)
        self.stop_reason: str | None = None  # why the tune stopped early by itself (a reload that timed out)

    # -- time ---------------------------------------------------------------------------------------------
    def elapsed(self) -> float:
        return self.clock() - self._t0

    def out_of_time(self) -> bool:
        return self.budget_s is not None and self.elapsed() > self.budget_s - self._reserve_s

    def _time_left(self) -> float:
        """Seconds left of the whole tune's budget (infinite without one, or once stopped: stop() ends the
        search by out_of_time, and what is in flight finishes at its own pace)."""
        if self.budget_s is None or self.budget_s < 0:
            return math.inf
        return self.budget_s - self.elapsed()

    def _point_budget(self) -> float:
        """How long one measurement may wait for stability: the point budget, cut to the time left in this
        phase (the search stops short of the confirmation's reserve), never below MIN_POINT_S. A point that
        the cut leaves unsettled is marked so (stable False), not dropped."""
        return min(self.point_budget_s, max(MIN_POINT_S, self._time_left() - self._reserve_s))

    def reload_budget(self) -> float | None:
        """How long one reload may take before the search gives it up: the rest of the whole tune's budget
        (never below MIN_RELOAD_S), so a reload that hangs cannot carry the tune far past its budget; the
        session's own load_timeout_s applies on top. None without a time budget. After stop() too: the caller's
        restore of the file's config gets the same bound."""
        if self._given_budget_s is None:
            return None
        return max(MIN_RELOAD_S, self._given_budget_s - self.elapsed())

    def stop(self) -> None:
        """End the search after the point being measured (the dashboard's Stop)."""
        self.budget_s = -1.0
        self._reserve_s = 0.0

    # -- one point ------------------------------------------------------------------------------------------
    def _set_load(self, n: int) -> None:
        if n <= 0 or n == self._concurrency:
            return
        setter = getattr(self.session, "set_concurrency", None)
        if setter is not None:
            setter(n)
        else:
            self.session.sampler.loadgen.set_concurrency(n)
        self._concurrency = n

    def _steady(self, p: Point):
        """Apply the point (a reload only when the configuration changed) and measure it once."""
        self._set_load(p.concurrency)
        if self.requests_per_window and self._min_window_s and self._last_throughput:
            self.session.window_s = min(self.max_window_s, max(self._min_window_s,
                                                               self.requests_per_window / self._last_throughput))
        if self._config != p.config_key():
            if not self.session.document.has("instance_group[0]"):
                self.session.document.set("instance_group", [{"kind": "KIND_AUTO"}])
            limit = self.reload_budget()
            edits = p.edits()
            if self.full_reload_removals and reload_cost(self._config, p.config_key()) > FULL_LOAD:
                self.forced_reloads += 1  # a new value: Triton's config differs outside instance_group
                edits[RELOAD_PARAMETER] = str(self.forced_reloads)
            rec = self.session.apply(edits, p.label(), budget_s=self._point_budget(), load_timeout_s=limit)
            self._config = p.config_key() if rec.error is None else None
            self.reload_s += rec.load_s
            if getattr(rec, "timed_out", False):  # the server may still be loading it: a next reload would queue
                self.stop()
                cut = limit is not None and limit < (getattr(self.session, "load_timeout_s", None) or math.inf)
                self.stop_reason = (f"the search stopped: the reload of {p.label()} did not finish within "
                                    f"{rec.load_s:.0f} s" + (", the rest of the time budget" if cut else "") +
                                    " (the server may still be loading it; see its log)")
            return rec.error, rec.result, rec.load_s
        return None, self.session.measure(since=time.monotonic(), budget_s=self._point_budget()), 0.0

    def measure(self, p: Point, fresh: bool = False, again: bool = True) -> Measurement:
        """The point's steady figures; measured again once when it did not settle (the attempts say so), unless
        `again` is False: the confirmation's rounds are the re-measurement (an unsettled look there took the whole
        point budget twice, 13 s of a 92 s tune), and its figure is marked unsettled (stable False)."""
        if p in self.cache and not fresh:
            return self.cache[p]
        t0 = self.clock()
        at = self.elapsed()
        attempts = 0
        reload_s = 0.0
        while True:
            attempts += 1
            error, steady, load_s = self._steady(p)
            reload_s += load_s
            if error is not None:
                m = Measurement(p, 0.0, None, False, self.clock() - t0, error, attempts=attempts, at=at,
                                reload_s=reload_s)
                break
            m = Measurement(p, steady.throughput, steady.p99_ms, steady.stable, self.clock() - t0,
                            p50_ms=steady.p50_ms, avg_batch_size=steady.avg_batch_size, attempts=attempts, at=at,
                            reload_s=reload_s)
            if steady.throughput > 0:
                self._last_throughput = steady.throughput
            if steady.stable or attempts >= 2 or not again or self.out_of_time():
                break
        self.measured += 1
        if not fresh:
            self.cache[p] = m
        if self.on_measurement:
            self.on_measurement(m)
        return m

    def _score(self, m: Measurement | None) -> float:
        if m is None:
            return -math.inf
        return m.throughput if m.within(self.p99_budget_ms) else -1.0 / (1 + (m.p99_ms or 1e9))

    # -- one configuration: the highest load under the budget ----------------------------------------------
    def knee(self, config: Point, space: Space, start: int | None = None, leader: Measurement | None = None,
             probes: int | None = None) -> Measurement:
        """The best point of one configuration under the budget along the load axis (or, when none is under
        it, the least bad one). Stops early when a measurement shows the configuration cannot beat `leader`."""
        lo, hi = space.load_range
        if space.fixed_load:
            return self.measure(replace(config, concurrency=lo))
        if start is None and config.batching and config.max_batch_size > 0:
            start = config.max_batch_size * config.instances  # enough load to fill the batches
        c = min(hi, max(lo, start or config.concurrency or lo))
        ok: Measurement | None = None
        below: Measurement | None = None
        bad: Measurement | None = None
        seen: list[Measurement] = []
        for _ in range(probes or self.max_knee_probes):
            if self.out_of_time() and seen:
                break
            m = self.measure(replace(config, concurrency=c))
            seen.append(m)
            if m.error is not None:
                return m
            if m.within(self.p99_budget_ms):
                saturated = ok is not None and m.point.concurrency > ok.point.concurrency and \
                    m.throughput < ok.throughput * SATURATED
                if ok is None or m.point.concurrency > ok.point.concurrency:
                    below, ok = ok, m
                if saturated:
                    break  # more load adds latency, not throughput
            elif bad is None or m.point.concurrency < bad.point.concurrency:
                bad = m
            if leader is not None and leader.within(self.p99_budget_ms):
                if m.throughput < 0.9 * leader.throughput and (m.p99_ms or 0) >= 0.8 * self.p99_budget_ms:
                    break  # near or over the budget already and still well below the leader: it cannot win
                if not m.within(self.p99_budget_ms) and m.throughput < leader.throughput:
                    break  # over the budget below the leader's figure: under the budget (less load) it is lower still
            nxt = next_load(ok, bad, self.p99_budget_ms, lo, hi, below)
            if nxt is None:
                break
            c = nxt
        return max(seen, key=self._score)

    # -- the walk over configurations ----------------------------------------------------------------------
    def search(self, space: Space, start: Point | None = None, passes: int = 2) -> TuneResult:
        t0 = self.clock()
        current = (start or space.start()).config()
        if not space.fixed_load:
            current = replace(current, concurrency=0)
        knees: dict[tuple, Measurement] = {}

        def evaluate(cfg: Point, leader: Measurement | None) -> Measurement:
            key = cfg.config_key()
            if key not in knees:
                guess = leader.point.concurrency if leader is not None else None
                if guess and cfg.instances > leader.point.instances:
                    # more instances serve about proportionally more load at the same latency until the machine
                    # saturates; when it has, this probe lands over the budget below the leader's figure and
                    # ends the configuration at once. Fewer instances start at the leader's load (the same rule)
                    guess = round(guess * cfg.instances / leader.point.instances)
                knees[key] = self.knee(cfg, space, start=guess, leader=leader)
            return knees[key]

        def looked_at(m: Measurement, lead: Measurement) -> Measurement:
            """m, or, when it beats the leader by a narrow gain (IMPROVED to CLEAR), m measured a second time
            (its knee then keeps the mean of both looks): the walk compares what this returns."""
            lead_score, score = self._score(lead), self._score(m)
            if m.looks == 1 and lead_score > 0 and lead_score * IMPROVED < score < lead_score * CLEAR:
                m = knees[m.point.config_key()] = self._second_look(m)
            return m

        best = evaluate(current, None)
        self._between_left = BETWEEN_LOOKS  # looks between instance counts left in this search
        dirty = set(AXES)  # axes to walk: all at first; later only those walked before another axis moved
        for _ in range(passes):
            improved = False
            for axis in AXES:
                values = space.values(axis)
                if axis not in dirty or len(values) < 2 or self.out_of_time():
                    continue
                if current.max_batch_size <= 0 and axis != "instances":
                    continue  # a model without batching has only instances (and the load)
                dirty.discard(axis)
                before = self._score(best)
                here = getattr(current, axis)
                idx = values.index(here) if here in values else 0
                moved = False
                for direction in (1, -1):
                    if moved:
                        break  # it improved going up: going down leads back where it came from
                    j = _step(axis, values, idx, direction)
                    misses = 0
                    while 0 <= j < len(values) and not self.out_of_time():
                        cand = replace(current, **{axis: values[j]})
                        m = looked_at(evaluate(cand, best), best)
                        if axis == "instances" and misses == 0 and self._near_miss(m, best):
                            m = knees[m.point.config_key()] = self._second_look(m)
                        if self._score(m) > self._score(best) * IMPROVED or (self._score(best) < 0 < self._score(m)):
                            best, current, improved, moved = m, cand, True, True
                            misses = 0
                        elif axis in TIE_STEP_AXES and misses == 0 and \
                                self._score(m) >= NOISE_BAND * self._score(best) > 0:
                            misses = 1  # within the noise of the leader: one more step before giving up
                        else:
                            break  # early stop in this direction
                        j = _step(axis, values, j, direction)  # keep walking while it helps
                    if current.config_key() != best.point.config_key():
                        current = best.point.config()
                if axis == "instances":
                    lead = best
                    best = self._between(values, best, knees, evaluate, looked_at)
                    if best is not lead:
                        current, improved, moved = best.point.config(), True, True
                if moved and (before <= 0 or self._score(best) > before * REWALK):
                    dirty |= set(AXES) - {axis}  # the others were walked around a point that is gone
            if not improved or not dirty:
                break
        self._plateau(space, knees, best, evaluate)
        return self._result(list(knees.values()), self.clock() - t0)

    def _between(self, counts: list, best: Measurement, knees: dict, evaluate, looked_at) -> Measurement:
        """The instance counts the doubling walk stepped over next to the leader (4 and 8 measured: 5-7), bisected
        from the leader towards a measured neighbour: the midpoint, then the midpoint between it and the leader,
        until a look falls clearly behind (under NOISE_BAND). The better neighbour's side first, then the other
        (e.g. 3 after 2 and 4 were measured, then 6 after 8 failed), BETWEEN_LOOKS looks in all per search.
        Where the machine saturates, the best count often lies in between: the demo model on 2 cores,
        perf_analyzer at concurrency 64, max_batch 16: 7 instances 8,848/s, 4 0.95x, 8 0.90x, and Model Analyzer,
        which steps one instance at a time, picked 5-6 and beat our 8 by 8-9%. Returns the leader."""
        done: set[int] = set()  # the neighbours whose side was bisected

        def measured(n: int) -> Measurement | None:
            return knees.get(replace(best.point.config(), instances=n).config_key())

        while self._between_left > 0 and best.point.instances in counts and not self.out_of_time():
            lead_j = counts.index(best.point.instances)
            below = next((j for j in range(lead_j - 1, -1, -1) if measured(counts[j])), None)
            above = next((j for j in range(lead_j + 1, len(counts)) if measured(counts[j])), None)
            sides = [j for j in (below, above) if j is not None and abs(j - lead_j) > 1 and counts[j] not in done]
            if not sides:
                break
            other = max(sides, key=lambda j: self._score(measured(counts[j])))
            done.add(counts[other])
            lo, hi = sorted((other, lead_j))
            while self._between_left > 0 and hi - lo > 1 and not self.out_of_time():
                mid = (lo + hi) // 2
                self._between_left -= 1
                m = looked_at(evaluate(replace(best.point.config(), instances=counts[mid]), best), best)
                lo, hi = sorted((mid, lead_j))  # next: between it and the leader it was measured against
                if self._score(m) > self._score(best) * IMPROVED:
                    best, lead_j = m, mid
                elif self._score(m) < NOISE_BAND * self._score(best):
                    break  # clearly behind: the counts beside it are no better than the leader
        return best

    def _near_miss(self, m: Measurement, lead: Measurement) -> bool:
        """m, looked at once, fell short of the leader's noise band by less than a single look's noise
        (NEAR_MISS to NOISE_BAND of the leader's figure): worth a second look before the walk stops."""
        lead_score, score = self._score(lead), self._score(m)
        return m.looks == 1 and lead_score > 0 and NEAR_MISS * lead_score <= score < NOISE_BAND * lead_score

    def _second_look(self, m: Measurement) -> Measurement:
        """The point measured once more (fresh, at once: its configuration is the one loaded) and its figures
        the mean of both looks; the cache keeps the combined figure. Out of time: the one look stands."""
        if self.out_of_time() or m.error is not None:
            return m
        again = self.measure(m.point, fresh=True)
        if again.error is not None or again.p99_ms is None or m.p99_ms is None:
            return m
        both = replace(m, throughput=(m.throughput + again.throughput) / 2, p99_ms=(m.p99_ms + again.p99_ms) / 2,
                       stable=m.stable and again.stable, seconds=m.seconds + again.seconds,
                       attempts=m.attempts + again.attempts, looks=m.looks + 1)
        self.cache[m.point] = both
        return both

    def _plateau(self, space: Space, knees: dict, best: Measurement, evaluate) -> None:
        """Ties: a configuration within the noise of the leader (NOISE_BAND) did not move the walk, so the walk
        never looked around it. Where the leader's own instance step was a tie too, the same step from the tied
        configuration may be the better one (e.g. leader 2 instances at max_batch 32, ties 4 instances at 32 and
        2 at 16: 4 instances at 16 was never measured). At most PLATEAU_LOOKS such probes, best ties first."""
        lead = self._score(best)
        if lead <= 0 or len(space.instances) < 2:
            return
        counts = space.values("instances")
        looks = 0
        for tie in sorted(knees.values(), key=self._score, reverse=True):
            if looks >= PLATEAU_LOOKS or self.out_of_time():
                return
            score = self._score(tie)
            if tie.point.config_key() == best.point.config_key() or score < NOISE_BAND * lead:
                continue
            if tie.point.instances != best.point.instances or tie.point.instances not in counts:
                continue  # a tie along the instance axis itself: its neighbours are the walk's own
            i = counts.index(tie.point.instances)
            for direction in (1, -1):
                j = _step("instances", counts, i, direction)
                if not 0 <= j < len(counts) or looks >= PLATEAU_LOOKS or self.out_of_time():
                    continue
                cand = replace(tie.point.config(), instances=counts[j])
                sibling = knees.get(replace(best.point.config(), instances=counts[j]).config_key())
                if cand.config_key() in knees or sibling is None or self._score(sibling) < NOISE_BAND * lead:
                    continue
                evaluate(cand, best)
                looks += 1

    def _result(self, knees: list[Measurement], seconds: float) -> TuneResult:
        ms = list(self.cache.values())
        ok = [m for m in ms if m.within(self.p99_budget_ms)]
        best = max(ok, key=lambda m: m.throughput) if ok else None
        ranked = sorted(knees, key=self._score, reverse=True)
        return TuneResult(best, ms, frontier(ms), seconds, knees=ranked)

    def grid(self, space: Space) -> TuneResult:
        t0 = self.clock()
        pts = sorted(space.points(), key=lambda p: (p.config_key(), p.concurrency))
        for p in pts:
            if self.out_of_time():
                break
            self.measure(p)
        ms = list(self.cache.values())
        ok = [m for m in ms if m.within(self.p99_budget_ms)]
        return TuneResult(best=max(ok, key=lambda m: m.throughput) if ok else None, measurements=ms,
                          frontier=frontier(ms), seconds=self.clock() - t0)

    # -- the whole tune: baseline, search, confirmation ------------------------------------------------------
    def tune(self, space: Space, baseline: Point | None = None, rounds: int = 2, top: int = 3,
             confirm_window_s: float | None = None) -> TuneResult:
        """Baseline (the file's config at its own knee), the search, then the top `top` configurations
        re-measured alternating for `rounds` rounds; the winner is the best mean under the budget."""
        t0 = self.clock()
        load0 = _loadavg()
        other0 = other_cpu_busy()  # before the baseline raises the load: other work on this machine
        cpu0 = time.process_time()
        notes: list[str] = []
        if self.budget_s is not None:  # keep time for the confirmation: ~one reload + measurement per turn
            self._reserve_s = min(0.4 * self.budget_s, top * rounds * min(self.point_budget_s, 4.0))
        base = None
        if baseline is not None:
            tolerance = getattr(self.session, "tolerance", None)
            if tolerance is not None:
                self.session.tolerance = max(tolerance, BASELINE_TOLERANCE)
            try:
                base = self.knee(baseline.config(), space, probes=2)  # a reference, not a candidate
            finally:
                if tolerance is not None:
                    self.session.tolerance = tolerance
        t_base = self.clock()
        found = self.search(space)
        t_search = self.clock()
        self._reserve_s = 0.0
        candidates = [k for k in found.knees if k.within(self.p99_budget_ms)][:top]
        confirmed: list[Confirmed] = []
        fresh: list[Measurement] = []
        if len(candidates) >= 1 and rounds >= 1 and self.budget_s != -1.0:
            old_window = getattr(self.session, "window_s", None)
            if confirm_window_s is not None and old_window is not None:
                self.session.window_s = confirm_window_s
            # the search's own measurement is the first sample; then `rounds` alternating rounds, the order
            # reversed every other round (A B C C B A: a drift of the machine's speed weighs on each candidate
            # alike), starting with the configuration the server runs now (one reload fewer)
            runs = {k.point: Confirmed(k.point, [k.throughput], [k.p99_ms]) for k in candidates}
            order = confirmation_order(candidates, self._config, rounds, self.full_reload_removals)
            last_round_s = 0.0
            cut = False
            try:
                for r in range(rounds):
                    left = self._time_left()
                    if left <= 0 or last_round_s > left:  # a round starts only when one like the last fits
                        notes.append(f"the confirmation stopped after {r} of {rounds} rounds (time budget)"
                                     if r else "no time was left to re-measure the leaders (time budget): the "
                                     "winner's figure is the search's own measurement")
                        break
                    t_round = self.clock()
                    for i, k in enumerate(order if r % 2 == 0 else order[::-1]):
                        if i and self.budget_s == -1.0:
                            break  # stopped by the user (stop()): what was measured stands
                        if i and self._time_left() <= 0:
                            notes.append(f"the confirmation's round {r + 1} re-measured {i} of {len(order)} "
                                         "configurations (time budget)")
                            cut = True
                            break
                        m = self.measure(k.point, fresh=True, again=False)
                        fresh.append(m)
                        if m.error is None and m.p99_ms is not None:
                            runs[k.point].throughputs.append(m.throughput)
                            runs[k.point].p99s.append(m.p99_ms)
                    last_round_s = self.clock() - t_round
                    if self.budget_s == -1.0 or cut:
                        break
                confirmed = [c for c in runs.values() if c.throughputs]
                over = [c for c in confirmed if (c.p99_mean or 0) > self.p99_budget_ms]
                for c in over:
                    notes.append(f"{c.point.label()} at concurrency {c.point.concurrency} measured p99 "
                                 f"{c.p99_mean:.1f} ms on re-measurement: over the budget, not a winner there")
                if not cut:
                    confirmed += self._rescue(space, confirmed, rounds, fresh, notes)
            finally:
                if confirm_window_s is not None and old_window is not None:
                    self.session.window_s = old_window
            confirmed.sort(key=lambda c: ((c.p99_mean or 0) <= self.p99_budget_ms, c.mean), reverse=True)
            for c in confirmed:
                if len(c.throughputs) >= 2 and c.spread > 0.10:
                    notes.append(f"{c.point.label()} moved {c.spread:.0%} between rounds: the machine's load "
                                 "changed during the measurement; treat small margins as noise")
        t_confirm = self.clock()
        margin = None
        if len(confirmed) >= 2 and len(confirmed[0].throughputs) >= 2 and len(confirmed[1].throughputs) >= 2:
            cmp = compare(confirmed[1].throughputs, confirmed[0].throughputs)
            margin = {"runner_up": confirmed[1].point.label(), "diff": round(cmp.diff, 1),
                      "ci95": [round(cmp.low, 1), round(cmp.high, 1)],
                      "ratio": round(cmp.ratio, 3) if cmp.ratio else None, "significant": cmp.significant}
            if not cmp.significant:
                notes.append("the winner's margin over the runner-up is within the noise (95% CI includes 0)")
        load1 = _loadavg()
        wall = self.clock() - t0
        machine = {"loadavg_start": load0, "loadavg_end": load1, "cpus": os.cpu_count(), "other_cpu_start": other0,
                   "phases_s": {"baseline": round(t_base - t0, 1), "search": round(t_search - t_base, 1),
                                "confirmation": round(t_confirm - t_search, 1),
                                "of_which_reloads": round(self.reload_s, 1)},
                   "measurements": self.measured,
                   "client_cpu_share": round((time.process_time() - cpu0) / wall, 2) if wall > 0 else None}
        if self.stop_reason:
            notes.insert(0, self.stop_reason)
        cpus = os.cpu_count() or 1
        if other0 is not None and other0 > 0.5 * cpus:  # at the lowest load: other work (or a busy server)
            notes.append(f"the machine was busy when the tune started: {other0:.1f} of {cpus} CPUs in use outside "
                         "the tune's own process (the server's work at the load then running included); other work "
                         "competes with the server and the load generator")
        result = self._result(found.knees, wall)
        result.knees = found.knees
        result.baseline = base
        result.confirmed = confirmed
        result.margin = margin
        result.notes = notes
        result.machine = machine
        result.confirmation_runs = fresh
        if confirmed and (confirmed[0].p99_mean or 0) <= self.p99_budget_ms:
            w = confirmed[0]
            result.best = Measurement(w.point, w.mean, w.p99_mean, True, 0.0, attempts=len(w.throughputs))
        elif confirmed:
            result.best = None
        return result


    def _rescue(self, space: Space, confirmed: list[Confirmed], rounds: int, fresh: list[Measurement],
                notes: list[str]) -> list[Confirmed]:
        """The best confirmed configuration whose re-measurement put its p99 over the budget, where its throughput
        beats every one under the budget by more than IMPROVED: measured `rounds` times more at a lower load, the
        load scaled by the budget over the p99 of its re-measurements (KNEE_TARGET under it; past the knee latency
        grows with the load while the throughput holds). The machine's load can rise during a tune, and then every leader re-measures
        over the budget: in one benchmark run the load average went 2.5 -> 4.7, 8 and 4 instances of a model at
        concurrency 57 read p99 21.4 and 20.3 ms (20 ms budget) and the winner fell to 2 instances at concurrency
        32, half their throughput. Returns the configuration at that load (a candidate like the others: the
        winner only if its own p99 stays under the budget), at most RESCUE of them."""
        budget = self.p99_budget_ms
        if space.fixed_load or rounds < 1 or self.budget_s == -1.0:
            return []
        under = max((c.mean for c in confirmed if (c.p99_mean or 0) <= budget), default=0.0)
        over = sorted((c for c in confirmed if (c.p99_mean or 0) > budget and c.mean > under * IMPROVED),
                      key=lambda c: c.mean, reverse=True)
        lo = space.load_range[0]
        out: list[Confirmed] = []
        for c in over[:RESCUE]:
            again = c.p99s[1:] or c.p99s  # the re-measurements: the machine as it is now (the search's look was calm)
            load = max(lo, math.floor(c.point.concurrency * KNEE_TARGET * budget / statistics.fmean(again)))
            if load >= c.point.concurrency or any(k.point.concurrency == load and k.point.config_key() ==
                                                  c.point.config_key() for k in confirmed):
                continue
            got = Confirmed(replace(c.point, concurrency=load), [], [])
            for _ in range(rounds):
                if self._time_left() <= 0 or self.budget_s == -1.0:
                    break
                m = self.measure(got.point, fresh=True, again=False)
                fresh.append(m)
                if m.error is None and m.p99_ms is not None:
                    got.throughputs.append(m.throughput)
                    got.p99s.append(m.p99_ms)
            if not got.throughputs:
                continue
            out.append(got)
            verdict = "under the budget: a candidate there" if (got.p99_mean or 0) <= budget else \
                "still over the budget, not a winner"
            notes.append(f"{c.point.label()} re-measured at concurrency {load} (the load scaled by the budget over "
                         f"its p99): {got.mean:,.0f} infer/s, p99 {got.p99_mean:.1f} ms, {verdict}")
        return out


def reload_cost(a: tuple | None, b: tuple, full_removals: bool = False) -> int:
    """What loading configuration `b` (a config_key) costs with `a` loaded, in tenths of a second as measured on
    the embedded Triton 2.51 (python backend, load eased): 0 the same; 3 more instances and nothing else (Triton
    adds instances in place: 0.2-0.5 s for 8 python instances); 11 per instance fewer and nothing else (Triton
    removes them in place, one after another, and each python instance's teardown sleeps 1 s: python_backend
    src/python_be.cc, ~ModelInstanceState -> StubLauncher::UpdateHealth; 8 -> 4 instances took 4.8-5.1 s), or
    at most FULL_LOAD with `full_removals` (the Tuner loads such a removal anew); FULL_LOAD anything else (a full
    load, the old copy torn down in the background: 1.5-2.5 s)."""
    if a == b:
        return 0
    if a is not None and a[:2] == b[:2] and a[3:] == b[3:]:
        if b[2] > a[2]:
            return 3
        removal = 11 * (a[2] - b[2])
        return min(removal, FULL_LOAD) if full_removals else removal
    return FULL_LOAD


def confirmation_order(candidates: list[Measurement], loaded: tuple | None, rounds: int,
                       full_removals: bool = False) -> list[Measurement]:
    """The first round's order for the confirmation (later rounds alternate its reverse and itself): the one
    whose loads cost least, starting with the loaded configuration when it is a candidate (its first
    measurement needs no load at all); ties keep the search's ranking."""
    keys = [k.point.config_key() for k in candidates]
    orders = [list(p) for p in itertools.permutations(range(len(candidates)))]
    if loaded in keys:
        orders = [p for p in orders if keys[p[0]] == loaded]

    def cost(p: list[int]) -> int:
        seq = [keys[i] for r in range(rounds) for i in (p if r % 2 == 0 else p[::-1])]
        return sum(reload_cost(a, b, full_removals) for a, b in zip([loaded, *seq], seq))

    best = min(orders, key=cost)  # min keeps the first of equals: permutations come in the ranking's order
    return [candidates[i] for i in best]


def _step(axis: str, values: list, j: int, direction: int) -> int:
    """The next index along an axis: one step, except instance counts, which double (halve) up to the end of
    the range (1, 2, 4, 8 ... the last): their gains shrink with each instance, and a reload costs little."""
    if axis != "instances":
        return j + direction
    if direction > 0:
        if j >= len(values) - 1:
            return len(values)
        return next((k for k in range(j + 1, len(values)) if values[k] >= 2 * values[j]), len(values) - 1)
    if j <= 0:
        return -1
    return next((k for k in range(j - 1, -1, -1) if values[k] <= values[j] / 2), 0)


def _loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _cpu_ticks() -> tuple[float, float] | None:
    """(busy, total) CPU seconds of the whole machine so far, from /proc/stat (None where there is none)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [float(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest is inside user)
    return (total - idle) / hz, total / hz


def other_cpu_busy(seconds: float = 0.3) -> float | None:
    """CPUs' worth of work that is not this process's, over the next `seconds`: the machine's busy time from
    /proc/stat less this process's own CPU time. Unlike the 1-minute load average it says what runs now (the
    average still carries, for a minute, a tool that has just ended). Includes a local server's work."""
    a, own0, t0 = _cpu_ticks(), time.process_time(), time.monotonic()
    if a is None:
        return None
    time.sleep(seconds)
    b, own1, t1 = _cpu_ticks(), time.process_time(), time.monotonic()
    if b is None or t1 <= t0:
        return None
    return round(max(0.0, (b[0] - a[0]) - (own1 - own0)) / (t1 - t0), 2)
