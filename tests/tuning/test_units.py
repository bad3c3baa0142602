"""Pure parts of the tuning engine: histogram, request synthesis, steady-state logic, frontier."""

from __future__ import annotations

import json
import struct
import tracemalloc

import numpy as np
import pytest
from tritonclient.grpc import model_config_pb2 as mc
from tritonclient.grpc import service_pb2

from studio.config import ConfigDocument
from studio.tuning.histogram import LatencyHistogram, bucket_of, bucket_value
from studio.tuning.inputs import InputError, from_input_data, parse_shapes, synthesize
from studio.tuning.sampler import Sample, server_fields
from studio.tuning.search import Measurement, Point, Space, frontier
from studio.tuning.session import aggregate, perf_analyzer_command, stable_tail, within


def test_histogram_percentiles_within_one_percent():
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.lognormal(8, 1, 50_000), rng.uniform(1, 300, 1000)]).astype(np.int64)
    h = LatencyHistogram()
    for v in values:
        h.record(int(v))
    for p in (50, 90, 95, 99, 99.9):
        exact = float(np.percentile(values, p, method="inverted_cdf"))
        assert abs(h.percentile(p) - exact) <= max(1.0, 0.01 * exact), p
    assert h.count == len(values) and h.max == values.max() and h.min == values.min()
    assert len(h.counts) == 4096  # fixed memory whatever the count


def test_bucket_round_trip():
    for v in [0, 1, 255, 256, 257, 1000, 123_456, 10**9]:
        assert abs(bucket_value(bucket_of(v)) - v) <= max(0.5, v / 128)


def _config(text: str) -> mc.ModelConfig:
    return ConfigDocument.parse(text).to_message()


ALL_TYPES = """name: "m" max_batch_size: 4
input [
  { name: "b" data_type: TYPE_BOOL dims: [ 3 ] },
  { name: "u8" data_type: TYPE_UINT8 dims: [ 3 ] },
  { name: "i64" data_type: TYPE_INT64 dims: [ 3 ] },
  { name: "f16" data_type: TYPE_FP16 dims: [ 3 ] },
  { name: "bf16" data_type: TYPE_BF16 dims: [ 3 ] },
  { name: "f64" data_type: TYPE_FP64 dims: [ 3 ] },
  { name: "s" data_type: TYPE_STRING dims: [ 2 ] },
  { name: "var" data_type: TYPE_FP32 dims: [ -1, 2 ] },
  { name: "opt" data_type: TYPE_FP32 dims: [ 1 ] optional: true }
]"""


def test_synthesized_requests_cover_every_data_type():
    cfg = _config(ALL_TYPES)
    with pytest.raises(InputError, match="--shape var:16,2"):
        synthesize("m", cfg)
    reqs = synthesize("m", cfg, batch_size=2, shapes=parse_shapes(["var:5,2"]))
    req = service_pb2.ModelInferRequest.FromString(reqs[0])
    names = [t.name for t in req.inputs]
    assert names == ["b", "u8", "i64", "f16", "bf16", "f64", "s", "var"]  # the optional input is skipped
    by = {t.name: (t, raw) for t, raw in zip(req.inputs, req.raw_input_contents)}
    assert list(by["var"][0].shape) == [2, 5, 2] and by["var"][0].datatype == "FP32" and len(by["var"][1]) == 2 * 5 * 2 * 4
    assert by["b"][0].datatype == "BOOL" and len(by["b"][1]) == 6
    assert by["f16"][0].datatype == "FP16" and len(by["f16"][1]) == 12
    assert by["bf16"][0].datatype == "BF16" and len(by["bf16"][1]) == 12
    t, raw = by["s"]
    assert t.datatype == "BYTES"
    n = struct.unpack_from("<I", raw)[0]
    assert raw[4:4 + n] == b"sample-0000"


def test_perf_analyzer_input_data(tmp_path):
    cfg = _config('name: "m" max_batch_size: 8 input [ { name: "x" data_type: TYPE_INT32 dims: [ -1 ] }, { name: "s" data_type: TYPE_STRING dims: [ 1 ] } ]')
    f = tmp_path / "data.json"
    f.write_text(json.dumps({"data": [{"x": {"content": [1, 2, 3], "shape": [3]}, "s": ["hello"]}, {"x": [4, 5], "s": ["x"]}]}))
    reqs = from_input_data("m", cfg, f)
    r0 = service_pb2.ModelInferRequest.FromString(reqs[0])
    assert list(r0.inputs[0].shape) == [1, 3]
    assert np.frombuffer(r0.raw_input_contents[0], dtype=np.int32).tolist() == [1, 2, 3]
    r1 = service_pb2.ModelInferRequest.FromString(reqs[1])
    assert list(r1.inputs[0].shape) == [1, 2]
    f.write_text(json.dumps({"data": [{"nope": [1]}]}))
    with pytest.raises(InputError, match="does not have"):
        from_input_data("m", cfg, f)


def _sample(t, tp, p99, batch=None):
    return Sample(t=t + 0.25, t_start=t, throughput=tp, p50_ms=p99 / 2, p99_ms=p99, avg_batch_size=batch)


def test_steady_state_logic():
    assert within([100, 105, 109], 0.10) and not within([100, 120], 0.10)
    w = aggregate([_sample(0, 100, 10), _sample(0.25, 300, 20)])
    assert w["throughput"] == pytest.approx(200) and w["p99_ms"] == 20


def test_noisy_short_windows_settle_on_longer_windows_over_the_same_samples():
    """A steady server whose 0.25 s windows alternate (a p99 from a handful of requests): never 3 short windows
    within 10%, but 3 windows of 0.5 s are; a server whose throughput drifts settles at no window length."""
    def samples(tps, p99s):
        return [Sample(t=0.25 * (i + 1), t_start=0.25 * i, throughput=x, p99_ms=p) for i, (x, p) in
                enumerate(zip(tps, p99s))]

    noisy = samples([1000] * 7, [10.0, 12.0] * 3 + [10.0])
    assert stable_tail(noisy, 1, 3, 0.10)[1] is None  # the short windows alone never agree
    windows, last = stable_tail(noisy, 1, 3, 0.10, max_per_window=2)
    assert last is not None and len(last) == 3 and {w["p99_ms"] for w in last} == {12.0}
    assert len(windows) == 6  # the short windows are still what is counted
    drifting = samples([1000, 1100, 1250, 1400, 1600, 1800, 2000], [10.0] * 7)
    assert stable_tail(drifting, 1, 3, 0.10, max_per_window=2)[1] is None
    assert stable_tail(noisy[:6], 1, 3, 0.10, max_per_window=2)[1] is None  # 5 usable samples: not 3 windows of 2


def test_server_fields_from_statistics_delta():
    delta = {"inference_count": 64, "execution_count": 4,
             "inference_stats": {"success": {"count": 64, "ns": 64 * 3_000_000}, "queue": {"count": 64, "ns": 64 * 1_000_000},
                                 "compute_infer": {"count": 64, "ns": 64 * 2_000_000}},
             "batch_stats": [{"batch_size": 16, "compute_infer": {"count": 4, "ns": 1}}]}
    f = server_fields(delta, 0.5)
    assert f["avg_batch_size"] == 16 and f["executions_per_s"] == 8 and f["queue_ms"] == 1.0
    assert f["compute_infer_ms"] == 2.0 and f["batch_sizes"] == {16: 4}


def test_frontier_and_space():
    a = Measurement(Point(8, 0, 1, 8), 100, 5, True, 1)
    b = Measurement(Point(8, 100, 1, 8), 200, 10, True, 1)
    c = Measurement(Point(8, 500, 1, 8), 150, 12, True, 1)  # dominated by b
    assert frontier([a, b, c]) == [a, b]
    assert len(Space().points()) == 3 * 4 * 2 * 3
    assert "max_queue_delay_microseconds: 100" in b.point.fragment()


def test_perf_analyzer_command():
    cmd = perf_analyzer_command("grpc://127.0.0.1:8001", "m", concurrency=32, shapes={"x": [3, 4]})
    assert cmd == ("perf_analyzer -m m -u 127.0.0.1:8001 -i grpc -b 1 --measurement-interval 5000 "
                   "--stability-percentage 10 --concurrency-range 32 --shape x:3,4")


def test_an_hour_of_samples_fits_well_under_50_mb():
    import collections

    tracemalloc.start()
    ring = collections.deque(maxlen=14_400)
    for i in range(20_000):
        ring.append(Sample(t=i + 0.25, t_start=float(i), throughput=1.0 * i, p50_ms=1.0, p99_ms=2.0,
                           batch_sizes={1: 3, 8: 5, 16: 2}, avg_batch_size=4.0, queue_ms=1.0))
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert current < 50 * 1024 * 1024, current
