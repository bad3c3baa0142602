"""The live tuning engine behind the dashboard (no Qt): load that keeps running while the model's config
changes underneath it, samples handed to subscribers, timed reloads, and one record per applied change with
its steady-state figures.

    engine = LiveEngine("127.0.0.1:8001", "batched_sleep", doc, client=client, concurrency=16)
    engine.subscribe(on_sample)                   # called on the sampler thread with each Sample (250 ms)
    engine.start()
    result = engine.reload(new_text, diff="max_queue_delay 0->2000 us", t_requested=t)   # blocking: a worker
    engine.set_concurrency(64); engine.set_rate(500, poisson=True); engine.set_shape(Ramp(10, 500, 30))
    engine.pause(); engine.resume(); engine.stop(); engine.close()   # close(): the load's process ends too

The load generator and the sampler run in a child process (studio.tuning.loadproc), so that the Qt UI and its
plots never share a GIL with them; samples stream back and reach subscribers on a reader thread. `engine.loadgen`
and `engine.sampler` are stand-ins with the parts a TuningSession uses (running, set_concurrency, samples).
`in_process=True` keeps both on threads of this process (what `bench`-like scripts without a UI may want).

Times in records are seconds since the engine was made (`engine.now()`), the dashboard's x axis.
"""

from __future__ import annotations

import collections
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from studio.config import ConfigDocument
from studio.runtime.errors import LoadTimeout
from studio.tuning.inputs import InputError, from_input_data, synthesize
from studio.tuning.loadgen import LoadGenerator, LoadSpec
from studio.tuning.loadproc import LoadProcess
from studio.tuning.reload import SteadyDetector
from studio.tuning.sampler import Sample, Sampler
from studio.tuning.session import (
    EASED_CONCURRENCY,
    EASED_RATE,
    TuningSession,
    load_easing,
    perf_analyzer_command,
    shortest,
)


@dataclass
class Change:
    """One applied (or refused) config change."""

    index: int
    t_requested: float
    t_started: float
    t_live: float | None
    reload_s: float
    diff: str
    ok: bool
    message: str | None
    text: str  # the config that was loaded (or refused)
    edits: dict = field(default_factory=dict)
    steady: dict | None = None
    errors_during_reload: int = 0
    concurrency: int | None = None
    rate: float | None = None
    source: str = "control"  # control | script | autotune | recipe | ab | row
    timed_out: bool = False  # the reload passed the engine's load_timeout_s (the server may still be loading it)
    eased: bool = False  # the load was lowered while the reload waited (Triton's in-place instance update)

    def to_json(self) -> dict:
        st = None
        if self.steady is not None:
            st = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in self.steady.items()}
        return {"t_requested": round(self.t_requested, 3), "t_live": None if self.t_live is None else round(self.t_live, 3),
                "reload_s": round(self.reload_s, 3), "diff": self.diff, "ok": self.ok, "message": self.message,
                "steady": st, "errors_during_reload": self.errors_during_reload, "source": self.source,
                "concurrency": self.concurrency, "rate": self.rate, "edits": self.edits, "eased": self.eased}


def failure_text(e: Exception) -> str:
    """Triton's own reason for a refused load (from the log when the runtime has one), on one line."""
    reason = getattr(e, "reason", None)
    server = getattr(e, "server_message", None)
    if reason and (re.match(r"^[IWE]\d{4} ", reason) or re.fullmatch(r"\W*failed to load '[^']*'\W*", reason)):
        reason = None  # an info line of the log, not the cause: the server's own message says more
    text = reason or server or str(e)
    return " ".join(str(text).split())


def process_tree_rss_mb(pid: int) -> float | None:
    """RSS of a process and its descendants in MB (Linux /proc; None when the process is gone or unreadable):
    tritonserver and its backend stubs (the python backend runs one process per instance)."""
    import os

    try:
        children: dict[int, list[int]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(name))
        total, todo, seen = 0, [pid], set()
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            try:
                with open(f"/proc/{p}/statm", "rb") as f:
                    total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except OSError:
                if p == pid:
                    return None
                continue
            todo.extend(children.get(p, []))
        return total / 1e6
    except (OSError, ValueError):
        return None


class RemoteLoad:
    """The parent's view of the load generator in the child: what TuningSession and the search call."""

    def __init__(self, engine: LiveEngine) -> None:
        self.engine = engine

    @property
    def running(self) -> bool:
        return self.engine.running

    @property
    def concurrency(self) -> int:
        return self.engine.concurrency or 0

    def set_concurrency(self, n: int) -> None:
        self.engine._send("concurrency", max(1, int(n)))

    def set_rate(self, rate: float) -> None:
        self.engine._send("rate", float(rate))

    def stop(self) -> None:
        self.engine.stop()


class RemoteSampler:
    """The samples streamed from the child, newest last (histograms kept for the most recent ones only)."""

    def __init__(self, engine: LiveEngine, period_s: float, history: int = 14_400, keep_histograms: int = 240) -> None:
        self.period_s = period_s
        self.loadgen = RemoteLoad(engine)
        self.samples: collections.deque[Sample] = collections.deque(maxlen=history)
        self.keep_histograms = keep_histograms

    def add(self, s: Sample) -> None:
        self.samples.append(s)
        if len(self.samples) > self.keep_histograms:
            self.samples[-self.keep_histograms - 1].hist = None

    def stop(self) -> None:
        pass


class LiveEngine:
    def __init__(self, target: str, model: str, document: ConfigDocument, client=None, *,
                 concurrency: int | None = 16, rate: float | None = None, poisson: bool = False,
                 requests: list[bytes] | None = None, shapes: dict[str, list[int]] | None = None,
                 input_data: str | None = None, period_s: float = 0.25, steady_budget_s: float = 30.0,
                 in_process: bool = False, server_pid: int | None = None) -> None:
        self.in_process = in_process
        self.server_pid = server_pid  # the Triton process (embedded, or a container's on this host): its RSS
        self.memory_source: str | None = None  # "rss" | "gpu" once known
        self._proc: LoadProcess | None = None
        self._proc_running = False
        self.load_error: str | None = None  # the child's last error (e.g. it could not start the load)
        self.target = target.removeprefix("grpc://")
        self.model = model
        self.client = client
        self.period_s = period_s
        self.steady_budget_s = steady_budget_s
        self.load_timeout_s: float | None = 120.0  # a reload that takes longer is a failed change (timed_out)
        self.t0 = time.monotonic()
        self.live_text = document.text  # what the server runs (as far as the studio changed it)
        self.concurrency = concurrency if rate is None else None
        self.rate = rate
        self.poisson = poisson
        self.shapes = shapes or {}
        self.input_data = input_data
        self._requests = requests
        self._base = document
        self.loadgen: LoadGenerator | None = None
        self.sampler: Sampler | None = None
        self._subscribers: list[Callable[[Sample], None]] = []
        self._steady_subscribers: list[Callable[[Change], None]] = []
        self._change_subscribers: list[Callable[[Change], None]] = []
        self.changes: list[Change] = []
        self._detectors: list[tuple[Change, SteadyDetector]] = []
        self._lock = threading.Lock()
        self.errors_total = 0
        self.util_source: str | None = None  # "gpu" | "cpu" once the metrics endpoint answered
        self._metrics_every = max(1, round(2.0 / period_s))
        self._metrics_n = 0
        self._metrics_ok = True
        self._last_util: tuple[float | None, float | None] = (None, None)
        self._last_rss: float | None = None
        self._shape = None
        self._shape_stop = threading.Event()
        self._shape_thread: threading.Thread | None = None
        self.paused = False

    # -- time ---------------------------------------------------------------------------------------------
    def now(self) -> float:
        return time.monotonic() - self.t0

    def rel(self, t_monotonic: float) -> float:
        return t_monotonic - self.t0

    # -- requests -----------------------------------------------------------------------------------------
    def requests(self) -> list[bytes]:
        if self._requests is None:
            config = self._base.to_message()
            if not config.input and self.client is not None:
                from studio.tuning.remote import fetch_config

                config = fetch_config(self.target, self.model)
            if self.input_data:
                self._requests = from_input_data(self.model, config, self.input_data)
            else:
                self._requests = synthesize(self.model, config, 1, self.shapes)
        return self._requests

    def set_inputs(self, shapes: dict[str, list[int]] | None = None, input_data: str | None = None) -> None:
        """New input shapes or a perf_analyzer --input-data file: requests are rebuilt, load restarts."""
        self.shapes, self.input_data, self._requests = shapes or {}, input_data, None
        self.requests()  # raises InputError now, at the control
        if self.running:
            self._restart()

    # -- load ---------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        if not self.in_process:
            return self._proc_running and self._proc is not None and self._proc.alive
        return self.loadgen is not None and self.loadgen.running

    def subscribe(self, callback: Callable[[Sample], None]) -> None:
        self._subscribers.append(callback)

    def subscribe_steady(self, callback: Callable[[Change], None]) -> None:
        self._steady_subscribers.append(callback)

    def subscribe_change(self, callback: Callable[[Change], None]) -> None:
        """Called (on the reloading thread) with every Change, ok or refused."""
        self._change_subscribers.append(callback)

    def _notify_change(self, ch: Change) -> None:
        for cb in list(self._change_subscribers):
            try:
                cb(ch)
            except Exception:  # noqa: BLE001
                pass

    def start(self) -> LiveEngine:
        reqs = self.requests()
        if not self.in_process:
            return self._start_child(reqs)
        spec = LoadSpec(concurrency=self.concurrency, rate=self.rate, poisson=self.poisson, duration_s=None,
                        error_threshold=1.01, timeout_s=30.0)
        self.loadgen = LoadGenerator(self.target, reqs, spec).start()
        self.sampler = Sampler(self.loadgen, self.client, self.model, period_s=self.period_s, gpu_metrics=False)
        self.sampler.subscribe(self._on_sample)
        self.sampler.start()
        self.paused = False
        return self

    # -- the load's process ---------------------------------------------------------------------------------------
    def _start_child(self, reqs: list[bytes]) -> LiveEngine:
        if self._proc is None or not self._proc.alive:
            self._proc = LoadProcess(self._on_child_sample, self._on_child_stopped, self._on_child_error).spawn()
        if self.sampler is None or not isinstance(self.sampler, RemoteSampler):
            self.sampler = RemoteSampler(self, self.period_s)
            self.loadgen = self.sampler.loadgen
        eps = getattr(self.client, "endpoints", None)
        cfg = {"target": self.target, "requests": reqs, "concurrency": self.concurrency, "rate": self.rate,
               "poisson": self.poisson, "model": self.model, "period_s": self.period_s,
               "http": eps.http if eps is not None else None, "metrics": eps.metrics if eps is not None else None,
               "server_pid": self.server_pid}
        self.load_error = None
        self._proc_running = self._proc.send("start", cfg)
        self.paused = False
        return self

    def _send(self, op: str, arg=None) -> None:
        if self._proc is not None and self._proc_running:
            self._proc.send(op, arg)

    def _on_child_sample(self, s: Sample) -> None:
        if not self._proc_running:
            return  # in flight when the load stopped
        if isinstance(self.sampler, RemoteSampler):
            self.sampler.add(s)
        self._on_sample(s)

    def _on_child_stopped(self, reason: str) -> None:
        if reason != "stopped":
            self._proc_running = False

    def _on_child_error(self, message: str) -> None:
        self.load_error = message

    def close(self) -> None:
        """Stop the load and end its process (the dashboard calls this when it closes)."""
        self.stop()
        if self._proc is not None:
            self._proc.close()

    def stop(self) -> None:
        self.clear_shape()
        self._stop_load()

    def _stop_load(self) -> None:
        """Stop the requests; a traffic shape driving them goes on (a restart switches mode under it)."""
        if not self.in_process:
            self._send("stop")
            self._proc_running = False
            return
        if self.loadgen is not None and self.loadgen.running:
            self.loadgen.stop()
        if self.sampler is not None:
            self.sampler.stop()

    def pause(self) -> None:
        self.stop()
        self.paused = True

    def resume(self) -> None:
        if not self.running:
            self.start()

    def _restart(self) -> None:
        """A switch between rate and concurrency: the shape's own switch keeps it driving; anyone else's ends it."""
        if threading.current_thread() is not self._shape_thread:
            self.clear_shape()
        self._stop_load()
        self.start()

    def set_concurrency(self, n: int) -> None:
        n = max(1, int(n))
        if self.rate is not None:
            self.rate, self.concurrency = None, n
            if self.running:
                self._restart()
            return
        self.concurrency = n
        self._drive_concurrency(n)

    def _drive_concurrency(self, n: int) -> None:
        """The generator's concurrency, the engine's own setting left as it is (set_concurrency sets both)."""
        if not self.in_process:
            self._send("concurrency", n)
        elif self.loadgen is not None:
            self.loadgen.set_concurrency(n)

    def _drive_rate(self, rate: float) -> None:
        if not self.in_process:
            self._send("rate", rate)
        elif self.loadgen is not None:
            self.loadgen.set_rate(rate)

    def _ease_load(self):
        """Lower the generator's load while a reload waits (studio.tuning.session.load_easing says why); the
        function that puts it back, unless the load was changed meanwhile (then the new setting stands)."""
        if self.rate is not None and self.rate > EASED_RATE:
            rate = self.rate
            self._drive_rate(EASED_RATE)
            return lambda: self._drive_rate(rate) if self.rate == rate else None
        if self.rate is None and self.concurrency and self.concurrency > EASED_CONCURRENCY:
            n = self.concurrency
            self._drive_concurrency(EASED_CONCURRENCY)
            return lambda: self._drive_concurrency(n) if self.rate is None and self.concurrency == n else None
        return None

    def set_rate(self, rate: float, poisson: bool | None = None) -> None:
        rate = max(0.1, float(rate))
        mode_change = self.rate is None or (poisson is not None and poisson != self.poisson)
        self.rate = rate
        if poisson is not None:
            self.poisson = poisson
        self.concurrency = None
        if mode_change:
            if self.running:
                self._restart()
        else:
            self._drive_rate(rate)

    def set_shape(self, shape, what: str = "rate", poisson: bool | None = None) -> None:
        """Drive the rate (or concurrency) from a traffic shape (studio.tuning.shapes) until clear_shape() or
        stop(); `poisson` sets the arrivals when the shape switches the load to a rate."""
        self.clear_shape()
        self._shape = (shape, what)
        self._shape_stop = threading.Event()
        t_start = time.monotonic()

        def drive(stop=self._shape_stop):
            first = True
            while not stop.is_set():
                v = shape.value_at(time.monotonic() - t_start)
                if what == "rate":
                    self.set_rate(v, poisson=poisson if first else None)
                    first = False
                else:
                    self.set_concurrency(round(v))
                stop.wait(self.period_s)

        self._shape_thread = threading.Thread(target=drive, name="studio-shape", daemon=True)
        self._shape_thread.start()

    def clear_shape(self) -> None:
        self._shape_stop.set()
        if self._shape_thread is not None and self._shape_thread is not threading.current_thread():
            self._shape_thread.join(timeout=2)
        self._shape_thread = None
        self._shape = None

    # -- samples (sampler thread) ---------------------------------------------------------------------------
    def _on_sample(self, s: Sample) -> None:
        if s.executions_per_s < 0 or s.inferences_per_s < 0:
            # statistics restart with a reloaded model: a counter going down is a reset, not a negative rate
            s.executions_per_s = s.inferences_per_s = 0.0
            s.avg_batch_size = s.queue_ms = s.compute_input_ms = s.compute_infer_ms = s.compute_output_ms = None
            s.batch_sizes = {}
        for name in ("queue_ms", "compute_input_ms", "compute_infer_ms", "compute_output_ms"):
            v = getattr(s, name)
            if v is not None and v < 0:
                setattr(s, name, None)
        self._metrics(s)
        with self._lock:
            self.errors_total += s.errors
            for ch, det in list(self._detectors):
                if det.feed(s) is not None:
                    ch.steady = det.result
                    self._detectors.remove((ch, det))
                    for cb in list(self._steady_subscribers):
                        try:
                            cb(ch)
                        except Exception:  # noqa: BLE001
                            pass
        for cb in list(self._subscribers):
            try:
                cb(s)
            except Exception:  # noqa: BLE001 - a subscriber's bug must not stop sampling
                pass

    def _metrics(self, s: Sample) -> None:
        self._metrics_n += 1
        due = self._metrics_n % self._metrics_every == 1
        if s.server_rss_mb is not None:
            self.memory_source = "rss"  # read by the load's process
        elif self.server_pid is not None and self.in_process:
            if due:
                self._last_rss = process_tree_rss_mb(self.server_pid)
                if self._last_rss is not None:
                    self.memory_source = "rss"
            s.server_rss_mb = self._last_rss
        if self.client is None or not self._metrics_ok:
            return
        if due:
            try:
                m = self.client.metrics()
            except Exception:  # noqa: BLE001 - no metrics endpoint: nothing to plot there
                self._metrics_ok = False
                return
            util, mem = m.get("nv_gpu_utilization"), m.get("nv_gpu_memory_used_bytes")
            if util or mem:
                self.util_source = "gpu"
                if mem and self.memory_source is None:
                    self.memory_source = "gpu"
                self._last_util = (100 * sum(v for _, v in util) / len(util) if util else None,
                                   sum(v for _, v in mem) / 1e6 if mem else None)
            else:
                cu, cm = m.get("nv_cpu_utilization"), m.get("nv_cpu_memory_used_bytes")
                if cu or cm:
                    self.util_source = "cpu"
                    # nv_cpu_memory_used_bytes is the host's memory, not the server's: not plotted as such
                    self._last_util = (100 * cu[0][1] if cu else None, None)
                else:
                    self._metrics_ok = False
        s.gpu_utilization, s.gpu_memory_used_mb = self._last_util

    # -- changes ---------------------------------------------------------------------------------------------
    def _client(self):
        if self.client is None:
            from studio.runtime.client import TritonClient
            from studio.tuning.remote import endpoints_for

            self.client = TritonClient(endpoints_for(self.target))
        return self.client

    def reload(self, text: str, *, diff: str, t_requested: float | None = None, edits: dict | None = None,
               source: str = "control", load_timeout_s: float | None = None) -> Change:
        """Load the model with this config (blocking: call it off the UI thread). On failure the previous config
        keeps serving and the change records Triton's reason. `load_timeout_s` shortens the engine's deadline
        for this reload (an auto-tune's time budget)."""
        t_start = time.monotonic()
        t_req = self.rel(t_requested) if t_requested is not None else self.rel(t_start)
        err0 = self.errors_total
        ok, message, timed_out, eased = True, None, False, False
        try:
            eased = load_easing(self._client(), self.model, ConfigDocument.parse(text),
                                shortest(self.load_timeout_s, load_timeout_s), self._ease_load)
        except Exception as e:  # noqa: BLE001 - LoadFailed carries the reason; anything else is reported too
            ok, message, timed_out = False, failure_text(e), isinstance(e, LoadTimeout)
        t_end = time.monotonic()
        with self._lock:
            ch = Change(len(self.changes) + 1, t_req, self.rel(t_start), self.rel(t_end) if ok else None,
                        t_end - t_start, diff, ok, message, text, dict(edits or {}),
                        concurrency=self.concurrency, rate=self.rate, source=source, timed_out=timed_out,
                        eased=eased)
            ch.errors_during_reload = self.errors_total - err0
            self.changes.append(ch)
            if ok:
                self.live_text = text
                self._detectors = [(c, d) for c, d in self._detectors if c.steady is not None]  # older ones stop
                self._detectors.append((ch, self._detector(t_end)))
        self._notify_change(ch)
        return ch

    def _detector(self, since: float) -> SteadyDetector:
        return SteadyDetector(since, self.period_s, budget_s=self.steady_budget_s)

    def remeasure(self, label: str, source: str = "load") -> Change:
        """A row without a reload (e.g. the load changed): steady figures from now on."""
        t = time.monotonic()
        with self._lock:
            ch = Change(len(self.changes) + 1, self.rel(t), self.rel(t), self.rel(t), 0.0, label, True, None,
                        self.live_text, {}, concurrency=self.concurrency, rate=self.rate, source=source)
            self.changes.append(ch)
            self._detectors.append((ch, self._detector(t)))
        self._notify_change(ch)
        return ch

    def wait_steady(self, change: Change, timeout_s: float) -> dict | None:
        # the detector answers (steady, or its figures marked unsettled) at the first sample after its own
        # budget: wait that sample too, or an unsettled measurement of the same budget comes back as nothing
        deadline = time.monotonic() + timeout_s + 2 * self.period_s
        while change.steady is None and time.monotonic() < deadline and self.running:
            time.sleep(self.period_s / 2)
        return change.steady

    def session(self, document: ConfigDocument) -> TuningSession:
        """A TuningSession over the running sampler (for the auto-tune search)."""
        return TuningSession(self._client(), self.model, document, self.sampler, window_s=1.0)

    def perf_analyzer(self) -> str:
        return perf_analyzer_command(self.target, self.model, concurrency=self.concurrency, rate=self.rate,
                                     shapes=self.shapes)


__all__ = ["Change", "EngineSession", "InputError", "LiveEngine", "RemoteLoad", "RemoteSampler", "failure_text",
           "process_tree_rss_mb"]


class EngineSession(TuningSession):
    """A TuningSession whose reloads go through the engine (so every probe is a recorded Change, a marker and
    a row) and whose measurements are the engine's steady figures: what the auto-tune search drives live."""

    def __init__(self, engine: LiveEngine, document: ConfigDocument) -> None:
        super().__init__(engine._client(), engine.model, document, engine.sampler, window_s=1.0)
        self.engine = engine

    def reload(self, description: str, edits: dict | None = None, budget_s: float = 30.0,
               load_timeout_s: float | None = None):
        from studio.tuning.controls import describe
        from studio.tuning.session import ChangeRecord, SteadyState

        before = ConfigDocument.parse(self.engine.live_text)
        diff = describe(before, self.document)
        if self.engine.concurrency:
            diff += f" @c{self.engine.concurrency}"
        ch = self.engine.reload(self.document.text, diff=diff, edits=edits, source="autotune",
                                load_timeout_s=load_timeout_s)
        rec = ChangeRecord(time.time(), description, dict(edits or {}), ch.reload_s, eased=ch.eased)
        if not ch.ok:
            rec.error = ch.message
            rec.timed_out = ch.timed_out
            self.document = ConfigDocument.parse(self.engine.live_text)
        else:
            st = self.engine.wait_steady(ch, budget_s) or {}
            rec.result = SteadyState(st.get("throughput", 0.0), st.get("p50_ms"), st.get("p90_ms"), st.get("p99_ms"),
                                     st.get("avg_batch_size"), st.get("queue_ms"), st.get("error_rate", 0.0),
                                     bool(st.get("stable")), 0, st.get("time_to_steady_s", budget_s))
        self.records.append(rec)
        return rec

    def measure(self, since=None, budget_s: float = 30.0, t_change=None):
        from studio.tuning.session import SteadyState

        ch = self.engine.remeasure(f"concurrency {self.engine.concurrency}", source="autotune")
        st = self.engine.wait_steady(ch, budget_s) or {}
        return SteadyState(st.get("throughput", 0.0), st.get("p50_ms"), st.get("p90_ms"), st.get("p99_ms"),
                           st.get("avg_batch_size"), st.get("queue_ms"), st.get("error_rate", 0.0),
                           bool(st.get("stable")), 0, st.get("time_to_steady_s", budget_s))
