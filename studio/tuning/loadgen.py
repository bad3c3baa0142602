"""A gRPC load generator on its own asyncio loop in a worker thread.

Requests are serialized once (studio.tuning.inputs) and sent through grpc.aio with no serializer on either
side: the hot path is a coroutine awaiting a call and recording one integer. Modes: concurrency (N requests in
flight) or request rate (constant or Poisson arrivals), both changeable while running. Bounded: it stops by
itself after a duration or a request count, and when errors exceed a threshold.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import random
import threading
import time
from dataclasses import dataclass, field

import grpc

from studio.tuning.histogram import LatencyHistogram

METHOD = "/inference.GRPCInferenceService/ModelInfer"


@dataclass
class Window:
    """What completed since the previous window() call."""

    t_start: float
    t_end: float
    completed: int
    errors: collections.Counter
    histogram: LatencyHistogram

    @property
    def seconds(self) -> float:
        return max(1e-9, self.t_end - self.t_start)

    @property
    def throughput(self) -> float:
        return self.completed / self.seconds


@dataclass
class RunResult:
    completed: int
    errors: dict[str, int]
    seconds: float
    histogram: LatencyHistogram
    stop_reason: str  # duration | count | errors | stopped
    error_detail: str | None = None

    @property
    def throughput(self) -> float:
        return self.completed / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> dict:
        p = self.histogram.percentiles((50, 90, 95, 99))
        ms = {k: (v / 1000.0 if v is not None else None) for k, v in p.items()}
        return {
            "throughput": round(self.throughput, 2),
            "p50_ms": ms[50], "p90_ms": ms[90], "p95_ms": ms[95], "p99_ms": ms[99],
            "completed": self.completed,
            "errors": sum(self.errors.values()),
            "errors_by_code": dict(self.errors),
            "seconds": round(self.seconds, 3),
            "stop_reason": self.stop_reason,
            "error_detail": self.error_detail,
        }


@dataclass
class LoadSpec:
    concurrency: int | None = 8
    rate: float | None = None  # requests per second; set to use request-rate mode
    poisson: bool = False
    duration_s: float | None = 10.0
    max_requests: int | None = None
    error_threshold: float = 0.2  # stop when this fraction of requests (after warm-up) fails
    min_requests_for_errors: int = 20
    timeout_s: float = 30.0
    max_inflight: int = 4096  # request-rate mode: cap on outstanding requests
    channels: int = 1
    freeze_gc: bool = True
    extra: dict = field(default_factory=dict)


class LoadGenerator:
    def __init__(self, target: str, requests: list[bytes], spec: LoadSpec | None = None) -> None:
        if not requests:
            raise ValueError("no requests to send")
        self.target = target
        self.requests = requests
        self.spec = spec or LoadSpec()
        self._lock = threading.Lock()
        self._window_hist = LatencyHistogram()
        self._window_count = 0
        self._window_errors: collections.Counter = collections.Counter()
        self._window_start = time.monotonic()
        self._total_hist = LatencyHistogram()
        self._total = 0
        self._errors: collections.Counter = collections.Counter()
        self._last_error: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._concurrency = self.spec.concurrency or 0
        self._rate = self.spec.rate
        self._workers: list[asyncio.Task] = []
        self.result: RunResult | None = None
        self._done = threading.Event()
        self._started_at = 0.0
        self._stop_reason = "stopped"

    # -- control (any thread) ----------------------------------------------------------------------------
    def start(self) -> LoadGenerator:
        if self.spec.freeze_gc:
            # objects that exist now (the studio's own, protobuf descriptors, Qt) leave the collector's
            # generations: full collections during the run get cheap, and do not show up as latency spikes
            gc.freeze()
        self._thread = threading.Thread(target=self._thread_main, name="studio-loadgen", daemon=True)
        self._thread.start()
        return self

    def run(self) -> RunResult:
        """Start, wait until it stops by itself, return the result."""
        self.start()
        return self.wait()

    def wait(self, timeout: float | None = None) -> RunResult:
        if not self._done.wait(timeout):
            raise TimeoutError("the load generator is still running")
        assert self.result is not None
        return self.result

    def stop(self) -> RunResult | None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._request_stop, "stopped")
        self._done.wait(30)
        return self.result

    def set_concurrency(self, n: int) -> None:
        """The workers follow on the generator's loop; `concurrency` says the new figure at once. (It used to
        change only when the loop ran the resize: the tune's easing, reading it right after a new load was
        set, put the old load back, and a point labelled concurrency 32 was measured at 4: 1,082/s p99 4.9 ms.)"""
        self._concurrency = n
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._resize, n)

    def set_rate(self, rate: float) -> None:
        self._rate = rate

    @property
    def concurrency(self) -> int:
        return self._concurrency

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._done.is_set()

    def window(self) -> Window:
        """Counts and latencies since the previous call (for the sampler)."""
        now = time.monotonic()
        with self._lock:
            w = Window(self._window_start, now, self._window_count, self._window_errors, self._window_hist)
            self._window_hist = LatencyHistogram()
            self._window_count = 0
            self._window_errors = collections.Counter()
            self._window_start = now
            # the run's totals are kept here, off the request path
            self._total_hist.merge(w.histogram)
        return w

    # -- the loop ------------------------------------------------------------------------------------------
    def _thread_main(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except Exception as e:  # noqa: BLE001 - reported in the result
            self._stop_reason = "errors"
            self._last_error = f"{type(e).__name__}: {e}"
            self.result = self._make_result()
        finally:
            loop.close()
            self._done.set()

    def _request_stop(self, reason: str) -> None:
        if self._stop is not None and not self._stop.is_set():
            self._stop_reason = reason
            self._stop.set()

    def _record_ok(self, us: int) -> None:
        with self._lock:
            self._window_hist.record(us)
            self._window_count += 1
            self._total += 1
        if self.spec.max_requests is not None or self._errors:
            self._check_limits()

    def _record_error(self, code: str, detail: str) -> None:
        with self._lock:
            self._window_errors[code] += 1
            self._errors[code] += 1
            self._last_error = f"{code}: {detail}"
        self._check_limits()

    def _check_limits(self) -> None:
        spec = self.spec
        done = self._total + sum(self._errors.values())
        if spec.max_requests is not None and done >= spec.max_requests:
            self._request_stop("count")
        errs = sum(self._errors.values())
        if done >= spec.min_requests_for_errors and errs > spec.error_threshold * done:
            self._request_stop("errors")

    async def _call(self, call, payload: bytes) -> None:
        t0 = time.perf_counter_ns()
        try:
            await call(payload, timeout=self.spec.timeout_s)
        except grpc.aio.AioRpcError as e:
            self._record_error(e.code().name, e.details() or "")
            return
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - counted as an error
            self._record_error(type(e).__name__, str(e))
            return
        self._record_ok((time.perf_counter_ns() - t0) // 1000)

    async def _worker(self, call, k: int) -> None:
        reqs = self.requests
        n = len(reqs)
        i = k
        stop = self._stop
        while not stop.is_set():
            await self._call(call, reqs[i % n])
            i += 1
            if self._errors and self._last_error and self._last_error.startswith("UNAVAILABLE"):
                await asyncio.sleep(0.05)  # a dead server: do not spin

    def _resize(self, n: int) -> None:
        self._concurrency = n
        if self._rate is not None or self._stop is None:
            return
        while len(self._workers) < n:
            k = len(self._workers)
            self._workers.append(asyncio.ensure_future(self._worker(self._calls[k % len(self._calls)], k)))
        while len(self._workers) > n:
            self._workers.pop().cancel()

    async def _rate_scheduler(self, calls) -> None:
        inflight: set[asyncio.Task] = set()
        next_t = time.monotonic()
        i = 0
        stop = self._stop
        rng = random.Random(0)
        while not stop.is_set():
            rate = max(1e-3, float(self._rate or 1.0))
            gap = rng.expovariate(rate) if self.spec.poisson else 1.0 / rate
            next_t += gap
            delay = next_t - time.monotonic()
            if delay > 0:
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                    break
                except asyncio.TimeoutError:
                    pass
            else:
                next_t = time.monotonic() if delay < -1.0 else next_t  # fell far behind: do not burst
            if len(inflight) >= self.spec.max_inflight:
                self._record_error("CLIENT_OVERLOAD", "too many requests in flight: the server is slower than the rate")
                continue
            t = asyncio.ensure_future(self._call(calls[i % len(calls)], self.requests[i % len(self.requests)]))
            inflight.add(t)
            t.add_done_callback(inflight.discard)
            i += 1
        for t in list(inflight):
            t.cancel()
        await asyncio.gather(*inflight, return_exceptions=True)

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        channels = [grpc.aio.insecure_channel(self.target, options=[
            ("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)])
            for _ in range(max(1, self.spec.channels))]
        self._calls = [ch.unary_unary(METHOD, request_serializer=None, response_deserializer=None) for ch in channels]
        self._started_at = time.monotonic()
        with self._lock:
            self._window_start = self._started_at
        timer = None
        if self.spec.duration_s is not None:
            timer = asyncio.get_running_loop().call_later(self.spec.duration_s, self._request_stop, "duration")
        try:
            if self._rate is not None:
                await self._rate_scheduler(self._calls)
            else:
                self._resize(self._concurrency or 1)
                await self._stop.wait()
                for w in self._workers:
                    w.cancel()
                await asyncio.gather(*self._workers, return_exceptions=True)
        finally:
            if timer is not None:
                timer.cancel()
            for ch in channels:
                await ch.close()
        self.result = self._make_result()

    def _make_result(self) -> RunResult:
        seconds = time.monotonic() - self._started_at if self._started_at else 0.0
        self.window()  # fold the last window into the totals
        with self._lock:
            return RunResult(self._total, dict(self._errors), seconds, self._total_hist, self._stop_reason,
                             self._last_error if self._stop_reason == "errors" else None)
