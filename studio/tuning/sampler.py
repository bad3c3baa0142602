"""A time series of what the client and the server see, at a fixed period (default 250 ms).

Client side from the load generator's windows (throughput, p50/p90/p95/p99 from a fixed-memory histogram, error
rate); server side from statistics deltas (queue and compute time per request, executions per second, average
batch size and the batch-size distribution from batch_stats) and, when the metrics endpoint has them, GPU
utilization and memory. Bounded memory: a ring buffer (an hour at 250 ms is 14,400 samples).
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field


@dataclass
class Sample:
    t: float  # end of the window, time.monotonic()
    t_start: float
    throughput: float = 0.0
    p50_ms: float | None = None
    p90_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    error_rate: float = 0.0
    errors: int = 0
    # server side, per window
    executions_per_s: float = 0.0
    inferences_per_s: float = 0.0
    avg_batch_size: float | None = None
    queue_ms: float | None = None  # per request
    compute_input_ms: float | None = None
    compute_infer_ms: float | None = None
    compute_output_ms: float | None = None
    batch_sizes: dict[int, int] = field(default_factory=dict)  # batch size -> executions in the window
    gpu_utilization: float | None = None
    gpu_memory_used_mb: float | None = None
    server_rss_mb: float | None = None  # RSS of the server's process tree (when the studio knows its pid)
    concurrency: int | None = None
    # the window's latency histogram, sparse ((bucket, count), ...); kept for recent samples only, so that a
    # measurement over several windows has exact percentiles without the ring buffer growing
    hist: tuple | None = field(default=None, repr=False)

    def to_json(self) -> dict:
        d = asdict(self)
        d.pop("hist", None)
        return d


def _ns_per(stat: dict, count: int) -> float | None:
    if not stat or not count:
        return None
    return int(stat.get("ns", 0)) / count / 1e6


def server_fields(delta: dict, seconds: float) -> dict:
    """Sample fields from a statistics delta (TritonClient.statistics_delta)."""
    out: dict = {}
    execs = int(delta.get("execution_count", 0) or 0)
    infers = int(delta.get("inference_count", 0) or 0)
    out["executions_per_s"] = execs / seconds
    out["inferences_per_s"] = infers / seconds
    out["avg_batch_size"] = infers / execs if execs else None
    st = delta.get("inference_stats", {}) or {}
    n = int((st.get("success") or {}).get("count", 0) or 0)
    out["queue_ms"] = _ns_per(st.get("queue"), n)
    out["compute_input_ms"] = _ns_per(st.get("compute_input"), n)
    out["compute_infer_ms"] = _ns_per(st.get("compute_infer"), n)
    out["compute_output_ms"] = _ns_per(st.get("compute_output"), n)
    sizes = {}
    for b in delta.get("batch_stats", []) or []:
        c = int((b.get("compute_infer") or {}).get("count", 0) or 0)
        if c:
            sizes[int(b.get("batch_size", 0))] = c
    out["batch_sizes"] = sizes
    return out


class Sampler:
    def __init__(self, loadgen, client=None, model: str | None = None, period_s: float = 0.25,
                 history: int = 14_400, gpu_metrics: bool = True, keep_histograms: int = 240) -> None:
        self.keep_histograms = keep_histograms
        self.loadgen = loadgen
        self.client = client
        self.model = model
        self.period_s = period_s
        self.samples: collections.deque[Sample] = collections.deque(maxlen=history)
        self._subscribers: list[Callable[[Sample], None]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.gpu_metrics = gpu_metrics
        self.server_error: str | None = None

    def subscribe(self, callback: Callable[[Sample], None]) -> None:
        self._subscribers.append(callback)

    def start(self) -> Sampler:
        if self.client is not None and self.model:
            try:
                self.client.statistics_delta(self.model)  # baseline
            except Exception as e:  # noqa: BLE001
                self.server_error = str(e)
        self.loadgen.window()  # start the first window now
        self._thread = threading.Thread(target=self._run, name="studio-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        next_t = time.monotonic() + self.period_s
        while not self._stop.is_set():
            delay = next_t - time.monotonic()
            if delay > 0 and self._stop.wait(delay):
                break
            next_t += self.period_s
            self.take()
            if not self.loadgen.running:
                break

    def take(self) -> Sample:
        w = self.loadgen.window()
        p = w.histogram.percentiles((50, 90, 95, 99))
        errs = sum(w.errors.values())
        total = w.completed + errs
        s = Sample(
            t=w.t_end, t_start=w.t_start, throughput=w.throughput,
            p50_ms=p[50] / 1000 if p[50] is not None else None,
            p90_ms=p[90] / 1000 if p[90] is not None else None,
            p95_ms=p[95] / 1000 if p[95] is not None else None,
            p99_ms=p[99] / 1000 if p[99] is not None else None,
            error_rate=errs / total if total else 0.0, errors=errs,
            concurrency=self.loadgen.concurrency,
            hist=tuple((i, n) for i, n in enumerate(w.histogram.counts) if n),
        )
        if self.client is not None and self.model:
            try:
                delta = self.client.statistics_delta(self.model)
                for k, v in server_fields(delta, w.seconds).items():
                    setattr(s, k, v)
            except Exception as e:  # noqa: BLE001 - a dead server: client-side figures still come
                self.server_error = str(e)
            if self.gpu_metrics:
                self._gpu(s)
        self.samples.append(s)
        if len(self.samples) > self.keep_histograms:
            self.samples[-self.keep_histograms - 1].hist = None
        for cb in list(self._subscribers):
            try:
                cb(s)
            except Exception:  # noqa: BLE001
                pass
        return s

    def _gpu(self, s: Sample) -> None:
        try:
            m = self.client.metrics()
        except Exception:  # noqa: BLE001 - no metrics endpoint: no GPU figures
            self.gpu_metrics = False
            return
        util = m.get("nv_gpu_utilization")
        mem = m.get("nv_gpu_memory_used_bytes")
        if not util and not mem:
            self.gpu_metrics = False  # a CPU server: stop asking
            return
        if util:
            s.gpu_utilization = sum(v for _, v in util) / len(util)
        if mem:
            s.gpu_memory_used_mb = sum(v for _, v in mem) / 1e6
