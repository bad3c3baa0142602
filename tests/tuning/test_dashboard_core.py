"""The dashboard's pure logic (no Qt, no server): ring buffers, controls from the schema, reload discipline,
traffic shapes, the script format, A/B statistics, recipes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from studio.config import ConfigDocument
from studio.tuning.abtest import ab_schedule, compare, t975
from studio.tuning.controls import apply_edits, control_specs, current_value, describe, refusal
from studio.tuning.recipes import FourStep
from studio.tuning.reload import ReloadCoordinator, SteadyDetector
from studio.tuning.sampler import Sample
from studio.tuning.script import Recording, ScriptError, parse_script
from studio.tuning.series import RingSeries
from studio.tuning.shapes import Ramp, ShapeError, Step, Trace
from tests.conftest import REPO

DEMO = REPO / "model_repository_templates" / "demo"


def demo_doc() -> ConfigDocument:
    return ConfigDocument.load(DEMO / "batched_sleep" / "config.pbtxt")


# -- series ------------------------------------------------------------------------------------------------
def test_ring_series_keeps_the_newest_rows_contiguous_and_fixed_memory():
    s = RingSeries(capacity=5, fields=("a",))
    nbytes = s.nbytes
    for i in range(12):
        s.append(float(i), {"a": i * 10 if i != 9 else None})
    assert len(s) == 5 and s.total == 12 and s.nbytes == nbytes
    assert s.t().tolist() == [7, 8, 9, 10, 11]
    col = s.column("a")
    assert col.base is not None  # a view, not a copy
    assert col[0] == 70 and np.isnan(col[2]) and col[-1] == 110
    assert s.t()[s.window(2.0)].tolist() == [9, 10, 11]
    assert s.t()[s.window(None)].tolist() == [7, 8, 9, 10, 11]
    assert s.last() == {"t": 11.0, "a": 110.0}
    assert s.rows()[2] == {"t": 9.0, "a": None}


# -- controls ------------------------------------------------------------------------------------------------
def test_controls_come_from_the_schema():
    specs = {c.path: c for c in control_specs(demo_doc())}
    assert specs["dynamic_batching"].widget == "toggle"
    q = specs["dynamic_batching.max_queue_delay_microseconds"]
    assert q.widget == "log_slider" and q.slider_max == 100_000 and q.minimum == 0 and q.unit == "us"
    assert specs["dynamic_batching.preferred_batch_size"].widget == "chips"
    assert specs["dynamic_batching.preserve_ordering"].widget == "bool"
    assert specs["max_batch_size"].minimum == 1  # a batching model keeps its batch dimension
    assert specs["instance_group[0].kind"].widget == "enum" and "KIND_CPU" in specs["instance_group[0].kind"].enum_values
    more = [c.path for c in specs.values() if c.group == "more"]
    assert "dynamic_batching.max_queue_size" not in more  # a message field of default_queue_policy, not here
    assert any(p.endswith("priority_queue_policy") for p in more) is False
    assert "dynamic_batching.preserve_ordering" not in more


def test_refusal_uses_the_validators_message_and_edits_are_minimal():
    doc = demo_doc()
    assert refusal(doc, {"dynamic_batching.preferred_batch_size": [64]}, "batched_sleep").startswith(
        "dynamic batching preferred size must be <= max batch size")
    assert refusal(doc, {"dynamic_batching.max_queue_delay_microseconds": -5}, "batched_sleep")
    assert refusal(doc, {"dynamic_batching.max_queue_delay_microseconds": 2000}, "batched_sleep") is None
    before = doc.text
    after = ConfigDocument.parse(before)
    apply_edits(after, {"dynamic_batching": {}, "dynamic_batching.max_queue_delay_microseconds": 2000})
    assert [ln for ln in before.splitlines() if ln.startswith("#")] == [ln for ln in after.text.splitlines() if ln.startswith("#")]
    assert describe(doc, after) == "batching off->on, max_queue_delay 0->2000 us"  # settings beyond the defaults
    again = ConfigDocument.parse(after.text)
    apply_edits(again, {"dynamic_batching.max_queue_delay_microseconds": 100, "dynamic_batching.preferred_batch_size": [4, 8]})
    assert describe(after, again) == "max_queue_delay 2000->100 us, preferred batch size []->[4,8]"
    specs = control_specs(again)
    assert current_value(again, next(s for s in specs if s.path == "instance_group[0].count")) == 1


# -- reload discipline -----------------------------------------------------------------------------------------
def test_reload_coordinator_debounces_runs_one_at_a_time_latest_wins():
    now = [0.0]
    rc = ReloadCoordinator(debounce_s=0.4, clock=lambda: now[0])
    rc.request({"q": 100})
    now[0] = 0.2
    rc.request({"q": 200})  # a slider still moving: the debounce restarts
    assert rc.take() is None and rc.next_due() == pytest.approx(0.6)
    now[0] = 0.61
    first = rc.take()
    assert first.edits == {"q": 200} and first.t_requested == 0.0 and rc.state == "applying"
    now[0] = 0.7
    rc.request({"q": 300})
    now[0] = 0.8
    rc.request({"q": 400, "p": [4]})
    now[0] = 5.0
    assert rc.take() is None and rc.next_due() is None  # one load in flight
    rc.done()
    second = rc.take()
    assert second.edits == {"q": 400, "p": [4]} and second.t_requested == 0.7
    rc.done()
    assert rc.state == "idle" and rc.take() is None


def _sample(t, tp, p99):
    return Sample(t=t, t_start=t - 0.25, throughput=tp, p50_ms=p99 / 2, p90_ms=p99 * 0.9, p99_ms=p99)


def test_steady_detector_needs_three_agreeing_windows():
    d = SteadyDetector(since=0.0, period_s=0.25)
    t = 0.25
    for tp in (100, 500, 900, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000):
        r = d.feed(_sample(t, tp, 10.0))
        t += 0.25
        if r:
            break
    assert r is not None and r["stable"] and r["throughput"] == pytest.approx(1000)
    d2 = SteadyDetector(since=0.0, period_s=0.25, budget_s=2.0)
    vals = [100, 1000] * 10
    for i, tp in enumerate(vals):
        r = d2.feed(_sample(0.25 * (i + 1), tp, 10.0 if i % 3 else 40.0))
    assert r is not None and r["stable"] is False


# -- traffic shapes --------------------------------------------------------------------------------------------
def test_shapes_and_trace_csv(tmp_path):
    assert Step.once(10, 50, 5).value_at(4.9) == 10 and Step.once(10, 50, 5).value_at(5) == 50
    r = Ramp(0, 100, 10)
    assert r.value_at(5) == 50 and r.value_at(20) == 100
    f = tmp_path / "trace.csv"
    f.write_text("t_s,requests_per_s\n0,10\n2,50\n5,20\n")
    tr = Trace.from_csv(f)
    assert [tr.value_at(t) for t in (0, 1.9, 2, 4, 6)] == [10, 10, 50, 50, 20]
    assert Trace.from_csv(f, loop=True).value_at(5.5) == 10
    f.write_text("0,10\n2,x\n")
    with pytest.raises(ShapeError, match=r"trace.csv:2: not numbers"):
        Trace.from_csv(f)
    f.write_text("0,10\n0,5\n")
    with pytest.raises(ShapeError, match="times must increase"):
        Trace.from_csv(f)


# -- script ------------------------------------------------------------------------------------------------
def test_script_parses_and_orders_steps():
    steps = parse_script(json.dumps([
        {"at_s": 10, "set": {"dynamic_batching.max_queue_delay_microseconds": 2000}},
        {"at_s": 0, "remove": "dynamic_batching"},
        {"at_s": 20, "load": {"concurrency": 64}},
    ]))
    assert [s.kind for s in steps] == ["remove", "set", "load"]
    assert steps[0].edits() == {"dynamic_batching": None}
    assert steps[1].edits() == {"dynamic_batching.max_queue_delay_microseconds": 2000}


@pytest.mark.parametrize("text, where, words", [
    ('[{"at_s": 1, "set": {"x": 1}', "f.json:1:29", "Expecting"),
    ('[\n  {"at_s": 1, "set": {"dynamic_batching.max_queue_delay_microseconds": 1}},\n  {"at_s": 2, "set": {"dynamic_batching.max_queue_delai": 3}}\n]',
     "f.json:3:3: step 2", "unknown field path"),
    ('[{"at_s": -1, "load": {"concurrency": 4}}]', "f.json:1:2: step 1", "at_s"),
    ('[{"at_s": 1, "load": {"threads": 4}}]', "f.json:1:2", "unknown load setting"),
    ('[{"at_s": 1}]', "f.json:1:2", "exactly one of"),
    ('{"at_s": 1}', "f.json:1:1", "expected a list"),
])
def test_script_errors_say_where(text, where, words):
    with pytest.raises(ScriptError) as e:
        parse_script(text, "f.json")
    assert str(e.value).startswith(where) and words in str(e.value)


def test_recording_json(tmp_path):
    rec = Recording("m", "embedded", samples=[{"t": 0.25, "throughput": 1.0}], changes=[], ui_max_stall_ms=12.345)
    rec.write(tmp_path / "out.json")
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["ui_max_stall_ms"] == 12.3 and data["samples"][0]["throughput"] == 1.0 and data["changes"] == []


# -- A/B ------------------------------------------------------------------------------------------------------
def test_welch_interval():
    assert t975(1) == pytest.approx(12.706) and t975(10) == pytest.approx(2.228)
    assert t975(60) == pytest.approx(2.000, abs=0.002) and t975(1000) == pytest.approx(1.962, abs=0.002)
    assert ab_schedule(2) == ["A", "B", "A", "B"]
    # Welch by hand: se 0.7638, df 5.07, t 2.563 -> diff 8.5 +- 1.957
    r = compare([12, 11, 13, 12], [20, 22, 21, 19])
    assert r.diff == pytest.approx(8.5) and r.significant
    assert r.low == pytest.approx(6.543, abs=0.01) and r.high == pytest.approx(10.457, abs=0.01)
    same = compare([10, 11, 9], [10, 9, 11])
    assert not same.significant


# -- recipes --------------------------------------------------------------------------------------------------
def test_four_step_recipe_doubles_preferred_while_under_budget():
    r = FourStep(p99_budget_ms=20, max_batch_size=32, concurrencies=(8, 16))
    a = r.next(None)
    assert a.step == 1 and a.edits == {"dynamic_batching": None}
    a = r.next({"throughput": 370, "p99_ms": 40})
    assert a.step == 2 and a.edits["dynamic_batching"] == {}
    a = r.next({"throughput": 3000, "p99_ms": 10})
    assert a.edits == {"dynamic_batching.preferred_batch_size": [4]}
    a = r.next({"throughput": 3100, "p99_ms": 12})
    assert a.edits == {"dynamic_batching.preferred_batch_size": [8]}
    a = r.next({"throughput": 3200, "p99_ms": 25})  # over budget: keep 4, sweep concurrency
    assert a.step == 4 and a.concurrency == 8 and a.edits == {"dynamic_batching.preferred_batch_size": [4]}
    a = r.next({"throughput": 3000, "p99_ms": 5})
    assert a.step == 4 and a.concurrency == 16
    assert r.next({"throughput": 3300, "p99_ms": 9}) is None
    assert [s["step"] for s in r.summary()] == [1, 2, 3, 3, 4, 4]
