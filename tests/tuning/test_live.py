"""The tuning engine against the real embedded Triton (demo model: 2 ms per execute + 20 us per item)."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from studio.config import ConfigDocument
from studio.runtime import ServerOptions
from studio.runtime.client import TritonClient
from studio.runtime.embedded import EmbeddedRuntime
from studio.tuning.inputs import synthesize
from studio.tuning.loadgen import LoadGenerator, LoadSpec
from studio.tuning.sampler import Sampler
from studio.tuning.session import TuningSession
from tests.cli.test_cli import run
from tests.conftest import scaled_s
from tests.runtime.helpers import demo_copy


@pytest.fixture
def server(tmp_path):
    repo = demo_copy(tmp_path)
    rt = EmbeddedRuntime()
    ep = rt.start(repo, ServerOptions(models=["batched_sleep"]))
    client = TritonClient(ep, logs=rt.logs)
    client.wait_model_ready("batched_sleep")
    yield rt, ep, client, repo
    client.close()
    rt.stop()


def _requests(repo):
    doc = ConfigDocument.load(repo / "batched_sleep" / "config.pbtxt")
    return doc, synthesize("batched_sleep", doc.to_message())


def test_batching_changes_throughput_more_than_3x(server):
    rt, ep, client, repo = server
    doc, reqs = _requests(repo)
    off = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=32, duration_s=3)).run()
    doc.set("dynamic_batching.max_queue_delay_microseconds", 500)
    client.load("batched_sleep", config=doc)
    on = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=32, duration_s=3)).run()
    print(f"batching off {off.throughput:.0f}/s, on {on.throughput:.0f}/s")
    assert off.stop_reason == on.stop_reason == "duration"
    assert sum(off.errors.values()) == sum(on.errors.values()) == 0
    assert on.throughput > 3 * off.throughput


def test_queue_delay_change_shows_in_the_sampler_within_3_s(server):
    rt, ep, client, repo = server
    doc, reqs = _requests(repo)
    doc.set("dynamic_batching.max_queue_delay_microseconds", 0)
    client.load("batched_sleep", config=doc)
    gen = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=4, duration_s=30)).start()
    sampler = Sampler(gen, client, "batched_sleep").start()
    session = TuningSession(client, "batched_sleep", doc, sampler)
    try:
        before = session.measure(budget_s=8)
        assert before.avg_batch_size is not None and before.avg_batch_size < 3
        doc.set("dynamic_batching.max_queue_delay_microseconds", 20_000)
        client.load("batched_sleep", config=doc)
        loaded = time.monotonic()
        hit = session.wait_for(lambda s: (s.queue_ms or 0) > 5 and (s.avg_batch_size or 0) >= 3, since=loaded, timeout_s=3)
        assert hit is not None, [(s.queue_ms, s.avg_batch_size) for s in list(sampler.samples)[-8:]]
        assert hit.t - loaded <= 3.0
    finally:
        gen.stop()
        sampler.stop()


def test_session_records_changes_and_exports(server, tmp_path):
    rt, ep, client, repo = server
    doc, reqs = _requests(repo)
    gen = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=16, duration_s=60)).start()
    sampler = Sampler(gen, client, "batched_sleep").start()
    session = TuningSession(client, "batched_sleep", doc, sampler, window_s=0.5)
    try:
        r1 = session.apply({"dynamic_batching.max_queue_delay_microseconds": 1000}, budget_s=15)
        bad = session.apply({"dynamic_batching.preferred_batch_size": [4096]}, budget_s=5)
    finally:
        gen.stop()
        sampler.stop()
    assert r1.result is not None and r1.result.throughput > 0 and r1.result.avg_batch_size > 1
    assert bad.error is not None and "preferred size must be <= max batch size" in bad.error
    session.export_csv(tmp_path / "s.csv")
    session.export_json(tmp_path / "s.json")
    assert (tmp_path / "s.csv").read_text().splitlines()[0].startswith("at,change,load_s")
    assert len(json.loads((tmp_path / "s.json").read_text())["changes"]) == 2


def test_runs_stop_by_themselves(server):
    rt, ep, client, repo = server
    _, reqs = _requests(repo)
    t0 = time.monotonic()
    r = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=8, duration_s=1.0)).run()
    assert r.stop_reason == "duration" and time.monotonic() - t0 < 5
    r = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=4, duration_s=60, max_requests=50)).run()
    assert r.stop_reason == "count" and 50 <= r.completed <= 54
    r = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=None, rate=200, duration_s=2)).run()
    assert r.stop_reason == "duration" and 300 <= r.completed <= 440


def test_server_killed_mid_run_ends_with_a_clear_error(server):
    rt, ep, client, repo = server
    _, reqs = _requests(repo)
    gen = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=8, duration_s=120, timeout_s=5)).start()
    time.sleep(1.0)
    os.kill(rt.pid, signal.SIGKILL)
    t0 = time.monotonic()
    result = gen.wait(timeout=30)
    assert time.monotonic() - t0 < 30
    assert result.stop_reason == "errors"
    assert "UNAVAILABLE" in result.error_detail
    assert result.completed > 0


def test_bench_cli_json(server):
    rt, ep, client, repo = server
    r = run("bench", "--url", ep.grpc, "--model", "batched_sleep", "--concurrency", "8", "--duration", "2", "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    for key in ("throughput", "p50_ms", "p90_ms", "p99_ms", "errors", "avg_batch_size"):
        assert key in data
    assert data["throughput"] > 0 and data["errors"] == 0 and data["avg_batch_size"] == 1.0
    assert data["perf_analyzer"].startswith("perf_analyzer -m batched_sleep")


def test_search_finds_batching_and_tune_writes_a_minimal_edit(server, tmp_path):
    from studio.tuning.search import Space, Tuner

    rt, ep, client, repo = server
    doc, reqs = _requests(repo)
    gen = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=8, duration_s=None)).start()
    sampler = Sampler(gen, client, "batched_sleep").start()
    session = TuningSession(client, "batched_sleep", doc, sampler, window_s=0.5)
    space = Space(max_batch_size=[1, 32], max_queue_delay_microseconds=[500], instances=[1], concurrency=[16])
    try:
        result = Tuner(session, p99_budget_ms=200, point_budget_s=6).search(space)
    finally:
        gen.stop()
        sampler.stop()
    assert result.best is not None and result.best.point.max_batch_size == 32  # batching wins
    assert len(result.measurements) == 2 and result.frontier
    cfg = repo / "batched_sleep" / "config.pbtxt"
    before = cfg.read_text()
    r = run("tune", "--url", ep.grpc, "--model", "batched_sleep", "--p99-ms", "500", "--budget-s", "20",
            "--config", str(cfg), "--write")
    assert r.returncode == 0, r.stderr
    assert "max_queue_delay_microseconds" in r.stdout
    after = cfg.read_text()
    # only batching/instance lines change; every comment stays
    assert [ln for ln in before.splitlines() if ln.startswith("#")] == [ln for ln in after.splitlines() if ln.startswith("#")]
    assert ConfigDocument.parse(after).get("dynamic_batching") is not None


def _settle_for_an_in_place_update(client) -> None:
    """One reload from disk, without load. Triton applies an instance_group-only change in place only when the
    version folder is unchanged since the last load, and the python stub's first import writes 1/__pycache__
    (a clean clone's first reload was a full one, 1.4 s, in CI): after this reload the next one is in place."""
    client.load("batched_sleep")
    client.wait_model_ready("batched_sleep")


def _stub_pids(repo) -> set[int]:
    """The python backend's stub processes serving models under `repo` (their command line names the model's
    path: no other test's server shares it)."""
    out = set()
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:  # gone meanwhile
            continue
        if args and args[0].endswith(b"triton_python_backend_stub") and any(str(repo).encode() in a for a in args):
            out.add(int(pid))
    return out


def test_an_instance_change_under_heavy_load_goes_through_with_the_load_eased(server):
    """Triton applies a change of instance_group alone in place, and the new instance's INIT waits until the
    model's shared payload queue is empty (core rate_limiter.cc). Under a load that keeps it full (the default
    scheduler: every request is a payload) the reload waited until the load dropped: 9 of 9 at concurrency 256,
    and a tune once waited 2,248 s. The session eases the load after EASE_AFTER_S and puts it back."""
    rt, ep, client, repo = server
    doc, reqs = _requests(repo)
    assert doc.get("dynamic_batching") is None
    _settle_for_an_in_place_update(client)
    gen = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=64, duration_s=None)).start()
    sampler = Sampler(gen, client, "batched_sleep").start()
    session = TuningSession(client, "batched_sleep", doc, sampler, window_s=0.5, load_timeout_s=scaled_s(40))
    try:
        time.sleep(1.5)
        rec = session.apply({"instance_group[0].count": 2}, "instances 2", budget_s=scaled_s(8))
        assert rec.error is None, rec.error
        assert rec.eased and rec.load_s < scaled_s(25), rec.load_s
        assert gen.concurrency == 64  # put back
        assert rec.result is not None and rec.result.throughput > 0  # measured under the full load again
        assert client.resolved_config("batched_sleep")["instance_group"][0]["count"] == 2
    finally:
        gen.stop()
        sampler.stop()


def test_a_tunes_session_eases_the_load_for_every_reload_and_puts_it_back(server):
    """`triton-studio tune` builds its session with ease_after_s 0: it measures only after a reload, so the load
    drops as the reload starts (a full load has no second copy competing with 64 requests; an in-place one does
    not wait for an empty queue first), and comes back for the measurement."""
    rt, ep, client, repo = server
    doc, reqs = _requests(repo)
    gen = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=16, duration_s=None)).start()
    sampler = Sampler(gen, client, "batched_sleep").start()
    session = TuningSession(client, "batched_sleep", doc, sampler, window_s=0.5, load_timeout_s=scaled_s(40),
                            ease_after_s=0.0)
    try:
        time.sleep(1.0)
        rec = session.apply({"max_batch_size": 16}, "max_batch 16", budget_s=scaled_s(8))
        assert rec.error is None, rec.error
        assert rec.eased  # a full load, eased although it never waited
        assert gen.concurrency == 16  # put back
        assert rec.result is not None and rec.result.throughput > 0
        assert client.resolved_config("batched_sleep")["max_batch_size"] == 16
    finally:
        gen.stop()
        sampler.stop()


def test_a_new_concurrency_holds_through_a_reload_eased_at_once(server):
    """The tune sets a configuration's load and reloads at once, easing the load as the reload starts: the easing
    must put back the new load, not the one before (a point labelled concurrency 32 was measured at 4)."""
    from studio.tuning.session import ease_generator

    rt, ep, client, repo = server
    doc, reqs = _requests(repo)
    gen = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=4, duration_s=None)).start()
    try:
        time.sleep(0.5)
        for n in (32, 4) * 10:
            gen.set_concurrency(n)
            put_back = ease_generator(gen)
            assert gen.concurrency == 1 and put_back is not None
            put_back()
            assert gen.concurrency == n
        deadline = time.monotonic() + scaled_s(5)
        while len(gen._workers) != 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(gen._workers) == 4  # the loop's workers followed the last setting
    finally:
        gen.stop()


def test_a_tune_loads_fewer_python_instances_anew_where_removing_them_in_place_costs_more(server):
    """Triton removes instances in place one after another, and each python instance's teardown sleeps 1 s: the
    tune (full_reload_removals, as the CLI sets it for the python backend) changes a parameter the model ignores
    instead, so Triton loads the configuration anew. One instance fewer, or more, stays in place."""
    from studio.tuning.search import Point, Tuner

    rt, ep, client, repo = server
    doc, reqs = _requests(repo)
    before = (repo / "batched_sleep" / "config.pbtxt").read_bytes()
    _settle_for_an_in_place_update(client)
    gen = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=8, duration_s=None)).start()
    sampler = Sampler(gen, client, "batched_sleep").start()
    session = TuningSession(client, "batched_sleep", doc, sampler, window_s=0.5, load_timeout_s=scaled_s(40),
                            ease_after_s=0.0)
    tuner = Tuner(session, 1000.0, point_budget_s=scaled_s(3), full_reload_removals=True)

    def stubs(settled_at: int | None = None) -> set[int]:
        """A full load starts every instance's stub anew, an update in place keeps them (Triton logs "loading:
        <model>:<version>" for both). After a full load the old instances' stubs are torn down in the background
        (1 s each): with `settled_at`, wait until that many are left."""
        deadline = time.monotonic() + scaled_s(20)
        pids = _stub_pids(repo)
        while settled_at is not None and len(pids) != settled_at and time.monotonic() < deadline:
            time.sleep(0.1)
            pids = _stub_pids(repo)
        return pids

    def count() -> int:
        return client.resolved_config("batched_sleep")["instance_group"][0]["count"]

    try:
        m = tuner.measure(Point(16, 0, 4, 8))
        assert m.error is None, m.error
        for n in (6, 5):  # more, one fewer: in place (a point measured before is not measured again)
            before_stubs = stubs()
            assert tuner.measure(Point(16, 0, n, 8)).error is None
            assert count() == n and tuner.forced_reloads == 0
            now = stubs(settled_at=n)
            assert len(now) == n and len(now & before_stubs) == min(n, len(before_stubs))
        before_stubs = stubs()
        assert tuner.measure(Point(16, 0, 1, 8)).error is None  # four fewer: ~4.4 s in place, a full load ~1.5 s
        assert count() == 1 and tuner.forced_reloads == 1
        now = stubs(settled_at=1)
        assert len(now) == 1 and not now & before_stubs  # loaded anew (in place would keep one of the five)
        params = client.resolved_config("batched_sleep")["parameters"]
        assert params["triton_studio_reload"]["string_value"] == "1"
        before_stubs = stubs()
        assert tuner.measure(Point(16, 0, 2, 8)).error is None  # the parameter kept: an add stays in place
        assert count() == 2 and tuner.forced_reloads == 1
        now = stubs(settled_at=2)
        assert len(now) == 2 and before_stubs <= now
        assert (repo / "batched_sleep" / "config.pbtxt").read_bytes() == before  # a scratch document only
    finally:
        gen.stop()
        sampler.stop()


def test_the_dashboards_instance_change_under_heavy_load_goes_through_too(server):
    """The same in-place instance update from the live engine (the dashboard's instances slider)."""
    from studio.tuning.live import LiveEngine

    rt, ep, client, repo = server
    doc, reqs = _requests(repo)
    _settle_for_an_in_place_update(client)
    engine = LiveEngine(ep.grpc_target, "batched_sleep", doc, client, concurrency=64, requests=reqs).start()
    engine.load_timeout_s = scaled_s(40)
    try:
        time.sleep(1.5)
        new = ConfigDocument.parse(doc.text)
        new.set("instance_group[0].count", 3)
        ch = engine.reload(new.text, diff="instances 1 -> 3")
        assert ch.ok, ch.message
        assert ch.eased and ch.to_json()["eased"] and ch.reload_s < scaled_s(25), ch.reload_s
        assert engine.concurrency == 64 and engine.loadgen.concurrency == 64  # put back
        assert client.resolved_config("batched_sleep")["instance_group"][0]["count"] == 3
    finally:
        engine.stop()


def test_variable_size_demo_model_needs_and_takes_a_shape(tmp_path):
    repo = demo_copy(tmp_path)
    rt = EmbeddedRuntime()
    ep = rt.start(repo, ServerOptions(models=["variable_length"]))
    try:
        TritonClient(ep).wait_model_ready("variable_length")
        r = run("bench", "--url", ep.grpc, "--model", "variable_length", "--duration", "1", "--format", "json")
        assert r.returncode == 2 and "--shape INPUT:" in r.stderr
        r = run("bench", "--url", ep.grpc, "--model", "variable_length", "--duration", "2", "--shape", "INPUT:256", "--format", "json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["completed"] > 0
    finally:
        rt.stop()


def test_a_shape_that_switches_to_a_rate_keeps_driving_and_another_switch_ends_it(server, tmp_path):
    """CI saw a trace stop at its first rate: a restart for the switch to rate mode also ended the shape."""
    from studio.tuning.live import LiveEngine
    from studio.tuning.shapes import Trace

    rt, ep, client, repo = server
    doc, reqs = _requests(repo)
    engine = LiveEngine(ep.grpc_target, "batched_sleep", doc, client, concurrency=4, requests=reqs).start()
    try:
        trace = tmp_path / "rate.csv"
        trace.write_text("t_s,requests_per_s\n0,40\n1.5,400\n", encoding="utf-8")
        engine.set_shape(Trace.from_csv(trace), "rate", poisson=False)  # from concurrency: its own switch
        deadline = time.monotonic() + 10
        while engine.rate != 400 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert engine.rate == 400 and engine.concurrency is None and engine.running
        assert engine._shape is not None
        engine.set_concurrency(6)  # the user's switch back to concurrency ends the shape
        time.sleep(3 * engine.period_s)
        assert engine._shape is None and engine.rate is None and engine.concurrency == 6
    finally:
        engine.close()
