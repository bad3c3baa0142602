"""A tuning session: apply a config change to the running model, wait until the new config serves, then
report steady-state figures (perf_analyzer's criterion: 3 consecutive windows whose throughput and p99 are
within 10%). Every change is recorded with its result; export CSV and JSON; the equivalent perf_analyzer
command line for a measurement.
"""

from __future__ import annotations

import csv
import json
import shlex
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from studio.config import ConfigDocument
from studio.runtime.errors import LoadTimeout
from studio.tuning.histogram import LatencyHistogram
from studio.tuning.sampler import Sample


@dataclass
class SteadyState:
    throughput: float
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    avg_batch_size: float | None
    queue_ms: float | None
    error_rate: float
    stable: bool  # False: the time budget ran out before 3 windows agreed
    windows: int
    seconds: float  # from the change to the steady figures


@dataclass
class ChangeRecord:
    at: float  # time.time()
    description: str
    edits: dict
    load_s: float
    result: SteadyState | None = None
    error: str | None = None
    timed_out: bool = False  # the reload passed the session's load_timeout_s (the server may still be loading it)
    eased: bool = False  # the load was lowered while this reload waited (see load_easing)


EASE_AFTER_S = 3.0  # a reload still waiting after this long, under load, gets the load eased (load_easing)
EASED_CONCURRENCY = 1
EASED_RATE = 1.0  # requests/s: what a rate is lowered to while a reload waits


def load_easing(client, model: str, config, timeout_s: float | None,
                ease: Callable[[], Callable[[], None] | None] | None, after_s: float = EASE_AFTER_S) -> bool:
    """client.load(model, config), easing the load when the reload is still waiting after `after_s`.

    Why: a change of instance_group alone is applied by Triton in place (no second copy of the model), and the
    new instances' INIT and the removed ones' EXIT go to the instances' own payload queues, which the rate
    limiter serves only while the model's shared queue is empty (core src/rate_limiter.cc, DequeuePayload).
    Under a load that keeps that queue full the reload waits until the load drops: measured on the embedded
    Triton 2.51 at concurrency 256 (and down to 16), 9 of 9 instance-count changes waited past 10 s; each
    finished 0.1-6 s after the concurrency dropped to 1 (a tune once waited 2,248 s on one).

    `ease()` lowers the load and returns the function that puts it back (or None when there was nothing to
    lower); it runs on a timer thread, and the put-back runs here once the load has returned either way.
    Returns whether the load was eased."""
    if ease is None:
        client.load(model, config=config, timeout_s=timeout_s)
        return False
    restore: list = []
    timer = threading.Timer(after_s, lambda: restore.append(ease()))
    timer.daemon = True
    timer.start()
    try:
        client.load(model, config=config, timeout_s=timeout_s)
    finally:
        timer.cancel()
        if timer.is_alive():
            timer.join()
        for put_back in restore:
            if put_back is not None:
                put_back()
    return any(r is not None for r in restore)


def ease_generator(loadgen) -> Callable[[], None] | None:
    """Lower a LoadGenerator (or anything with concurrency/set_concurrency) to EASED_CONCURRENCY; the function
    that puts it back, None when it was at that already or drives a rate."""
    n = getattr(loadgen, "concurrency", None)
    if getattr(loadgen, "_rate", None) or not n or n <= EASED_CONCURRENCY:
        return None
    loadgen.set_concurrency(EASED_CONCURRENCY)
    return lambda: loadgen.set_concurrency(n)


def aggregate(samples: list[Sample]) -> dict:
    """One window from several samples: throughput from counts, percentiles by the samples' weights."""
    secs = sum(s.t - s.t_start for s in samples) or 1e-9
    total = sum(s.throughput * (s.t - s.t_start) for s in samples)

    def wavg(attr):
        vals = [(getattr(s, attr), s.throughput * (s.t - s.t_start)) for s in samples if getattr(s, attr) is not None]
        w = sum(x for _, x in vals)
        return sum(v * x for v, x in vals) / w if w else None

    if samples and all(s.hist is not None for s in samples):
        # exact percentiles over the whole window, from the samples' histograms
        h = LatencyHistogram()
        for s in samples:
            for i, n in s.hist:
                h.counts[i] += n
                h.count += n
        h.min, h.max = 0, float("inf")
        p = h.percentiles((50, 90, 99))
        p50, p90, p99 = (p[k] / 1000 if p[k] is not None else None for k in (50, 90, 99))
    else:
        p50, p90 = wavg("p50_ms"), wavg("p90_ms")
        p99 = max((s.p99_ms for s in samples if s.p99_ms is not None), default=None)
    return {
        "throughput": total / secs,
        "p50_ms": p50,
        "p90_ms": p90,
        "p99_ms": p99,
        "avg_batch_size": wavg("avg_batch_size"),
        "queue_ms": wavg("queue_ms"),
        "error_rate": sum(s.errors for s in samples) / max(1, total + sum(s.errors for s in samples)),
    }


def within(values: list[float], tolerance: float) -> bool:
    lo, hi = min(values), max(values)
    return hi <= lo * (1 + tolerance) if lo > 0 else hi == lo


def stable_tail(samples: list[Sample], per_window: int, stable_windows: int, tolerance: float,
                max_per_window: int | None = None) -> tuple[list[dict], list[dict] | None]:
    """perf_analyzer's stability criterion over samples taken since a change: windows of `per_window` samples
    (the first sample skipped: it mixes in the switch-over), and the last `stable_windows` of them when their
    throughput and p99 agree within `tolerance`, else None.

    When windows of `per_window` samples do not agree, longer windows over the same samples are tried (2x, 3x,
    ... up to `max_per_window` samples, aligned on the newest sample): perf_analyzer's own windows are seconds
    long, and a short window's p99 rests on a handful of requests, so its noise alone can keep a steady server
    from "settling". The criterion stays the same (the last 3 windows within 10%), on windows at least as long
    as asked."""
    usable = samples[1:]
    windows = [aggregate(usable[i:i + per_window]) for i in range(0, len(usable) - per_window + 1, per_window)]
    for pw in range(per_window, max(per_window, max_per_window or per_window) + 1, per_window):
        if pw * stable_windows > len(usable):
            break
        tail = usable[len(usable) - pw * stable_windows:]
        last = windows[-stable_windows:] if pw == per_window else \
            [aggregate(tail[i:i + pw]) for i in range(0, len(tail), pw)]
        if pw == per_window and len(windows) < stable_windows:
            continue
        tps = [w["throughput"] for w in last]
        p99 = [w["p99_ms"] for w in last if w["p99_ms"] is not None]
        if within(tps, tolerance) and len(p99) == len(last) and within(p99, tolerance):
            return windows, last
    return windows, None


def shortest(*limits: float | None) -> float | None:
    """The shortest of some time limits, None (no limit) where none is set: a reload's deadline from the
    session's own and a shorter one asked for (a tune's time budget)."""
    given = [t for t in limits if t is not None]
    return min(given) if given else None


class TuningSession:
    def __init__(self, client, model: str, document: ConfigDocument, sampler, *, window_s: float = 1.0,
                 tolerance: float = 0.10, stable_windows: int = 3, max_window_s: float | None = None,
                 load_timeout_s: float | None = 120.0, ease_after_s: float = EASE_AFTER_S) -> None:
        self.client = client
        # how long a reload waits under load before the load is eased (load_easing): a live view keeps its load
        # for EASE_AFTER_S; a tune, which measures only after the reload, eases at once (0)
        self.ease_after_s = ease_after_s
        self.load_timeout_s = load_timeout_s  # a reload that takes longer is recorded as failed (timed_out)
        self.model = model
        self.document = document
        self.sampler = sampler
        self.window_s = window_s
        self.tolerance = tolerance
        self.stable_windows = stable_windows
        self.max_window_s = max_window_s  # longer windows tried when short ones disagree (stable_tail)
        self.records: list[ChangeRecord] = []

    # -- changes --------------------------------------------------------------------------------------------
    def apply(self, edits: dict, description: str | None = None, budget_s: float = 30.0,
              load_timeout_s: float | None = None) -> ChangeRecord:
        """Set fields (path -> value) in the document, reload the model with it, measure until steady.
        `load_timeout_s` shortens this reload's deadline below the session's (a tune's time budget)."""
        for path, value in edits.items():
            if value is None:
                self.document.clear(path)
            else:
                self.document.set(path, value)
        return self.reload(description or ", ".join(f"{k}={v}" for k, v in edits.items()), edits, budget_s,
                           load_timeout_s=load_timeout_s)

    def reload(self, description: str, edits: dict | None = None, budget_s: float = 30.0,
               load_timeout_s: float | None = None) -> ChangeRecord:
        t0 = time.monotonic()
        rec = ChangeRecord(time.time(), description, dict(edits or {}), 0.0)
        loadgen = getattr(self.sampler, "loadgen", None)
        try:
            rec.eased = load_easing(self.client, self.model, self.document,
                                    shortest(self.load_timeout_s, load_timeout_s),
                                    None if loadgen is None else lambda: ease_generator(loadgen),
                                    after_s=self.ease_after_s)
        except Exception as e:  # noqa: BLE001 - recorded; the old config keeps serving (or, timed out, loads on)
            rec.error = str(e)
            rec.timed_out = isinstance(e, LoadTimeout)
            rec.load_s = time.monotonic() - t0
            self.records.append(rec)
            return rec
        loaded = time.monotonic()
        rec.load_s = loaded - t0
        rec.result = self.measure(since=loaded, budget_s=budget_s, t_change=t0)
        self.records.append(rec)
        return rec

    def measure(self, since: float | None = None, budget_s: float = 30.0, t_change: float | None = None) -> SteadyState:
        """Steady figures from samples that began after `since` (the new config serving)."""
        since = time.monotonic() if since is None else since
        t_change = since if t_change is None else t_change
        deadline = since + budget_s
        per_window = max(1, round(self.window_s / self.sampler.period_s))
        longest = max(per_window, round((self.max_window_s or 0) / self.sampler.period_s))
        windows: list[dict] = []
        while time.monotonic() < deadline:
            fresh = [s for s in list(self.sampler.samples) if s.t_start >= since and s.throughput > 0]
            windows, last = stable_tail(fresh, per_window, self.stable_windows, self.tolerance, longest)
            if last is not None:
                return self._steady(last, True, len(windows), time.monotonic() - t_change)
            if not self.sampler.loadgen.running:
                break
            time.sleep(self.sampler.period_s / 2)
        last = windows[-self.stable_windows:] if windows else []
        return self._steady(last, False, len(windows), time.monotonic() - t_change)

    def _steady(self, windows: list[dict], stable: bool, n: int, seconds: float) -> SteadyState:
        if not windows:
            return SteadyState(0.0, None, None, None, None, None, 0.0, False, 0, seconds)

        def mean(key):
            vals = [w[key] for w in windows if w[key] is not None]
            return statistics.fmean(vals) if vals else None

        return SteadyState(mean("throughput") or 0.0, mean("p50_ms"), mean("p90_ms"), mean("p99_ms"),
                           mean("avg_batch_size"), mean("queue_ms"), mean("error_rate") or 0.0, stable, n, seconds)

    def wait_for(self, predicate: Callable[[Sample], bool], since: float, timeout_s: float) -> Sample | None:
        """The first sample after `since` that satisfies predicate (e.g. the batch size grew)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for s in list(self.sampler.samples):
                if s.t_start >= since and predicate(s):
                    return s
            time.sleep(self.sampler.period_s / 2)
        return None

    # -- records --------------------------------------------------------------------------------------------
    def rows(self) -> list[dict]:
        out = []
        for r in self.records:
            row = {"at": r.at, "change": r.description, "load_s": round(r.load_s, 3), "error": r.error}
            if r.result is not None:
                row.update({k: v for k, v in asdict(r.result).items()})
            out.append(row)
        return out

    def export_csv(self, path: str | Path) -> None:
        rows = self.rows()
        keys = ["at", "change", "load_s", "error", "throughput", "p50_ms", "p90_ms", "p99_ms", "avg_batch_size",
                "queue_ms", "error_rate", "stable", "windows", "seconds"]
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
            w.writeheader()
            for row in rows:
                w.writerow(row)

    def export_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"model": self.model, "changes": self.rows()}, indent=2))


def perf_analyzer_command(url: str, model: str, *, concurrency: int | None = None, rate: float | None = None,
                          shapes: dict[str, list[int]] | None = None, window_ms: int = 5000,
                          batch_size: int = 1) -> str:
    """The perf_analyzer command line that measures the same thing."""
    args = ["perf_analyzer", "-m", model, "-u", url.removeprefix("grpc://"), "-i", "grpc", "-b", str(batch_size),
            "--measurement-interval", str(window_ms), "--stability-percentage", "10"]
    if rate is not None:
        args += ["--request-rate-range", f"{rate:g}"]
    else:
        args += ["--concurrency-range", str(concurrency or 1)]
    for name, dims in (shapes or {}).items():
        args += ["--shape", f"{name}:{','.join(map(str, dims))}"]
    return shlex.join(args)
