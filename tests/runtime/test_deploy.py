"""The deploy pipeline, model states, config drift, test inference and the health watchdog against the real
embedded Triton (one server for the module, started with no models loaded)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

from studio.config import ConfigDocument
from studio.runtime import PortInUse, ServerOptions, Status, make_runtime
from studio.runtime.base import check_port_free, free_port
from studio.runtime.client import TritonClient
from studio.runtime.deploy import DeployRequest, deploy, field_of_reason
from studio.runtime.embedded import EmbeddedRuntime
from studio.runtime.health import Watchdog
from studio.runtime.inference import load_inputs, run_inference, synthesize_inputs
from studio.runtime.models import (
    NOT_LOADED,
    READY,
    UNAVAILABLE,
    config_drift,
    fetch_states,
    load_all,
    unload_all,
)
from studio.runtime.remote import RemoteRuntime, parse_server_url
from tests.conftest import scaled_s
from tests.runtime.helpers import DEMO, add_python_model, demo_copy


def consecutive_free_ports(n: int) -> int:
    for _ in range(50):
        base = free_port()
        try:
            for k in range(1, n):
                check_port_free(base + k, "test")
        except PortInUse:
            continue
        return base
    raise AssertionError("no consecutive free ports")


BAD_LINE = "  preferred_batch_size: [ 128 ]\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = demo_copy(tmp_path_factory.mktemp("deploy"))
    add_python_model(r, "broken", "import torch_that_is_not_installed")
    add_python_model(r, "slow", "time.sleep(4)")
    return r


@pytest.fixture(scope="module")
def server(repo):
    rt = EmbeddedRuntime()
    rt.start(repo, ServerOptions(models=[]))
    yield rt
    rt.stop()


@pytest.fixture
def client(server):
    c = TritonClient(server.endpoints, logs=server.logs)
    yield c
    c.close()


def _bad_text(repo) -> str:
    text = (DEMO / "add_sub" / "config.pbtxt").read_text()
    return text.replace("  max_queue_delay_microseconds: 100\n", "  max_queue_delay_microseconds: 100\n" + BAD_LINE)


def test_a_validation_error_never_reaches_the_server(repo, server, client):
    on_disk = (repo / "add_sub" / "config.pbtxt").read_text()
    mark = server.logs.total
    steps = []
    res = deploy(DeployRequest(repo, "add_sub", text=_bad_text(repo), runtime=server),
                 progress=lambda step, _m: steps.append(step))
    assert not res.ok and res.step == "validate" and steps == ["validate"]
    assert "preferred size must be <= max batch size" in res.error and "nothing was sent" in res.error
    assert res.findings[0].line == 34
    assert (repo / "add_sub" / "config.pbtxt").read_text() == on_disk  # not saved either
    assert fetch_states(client)["add_sub"].state == NOT_LOADED
    new = server.logs.lines()[mark - server.logs.total:] if server.logs.total > mark else []
    assert not [ln for ln in new if "add_sub" in ln]


def test_deploy_reaches_ready_and_the_test_inference_is_right(repo, server, client):
    doc = ConfigDocument.load(repo / "add_sub" / "config.pbtxt")
    doc.set("dynamic_batching.max_queue_delay_microseconds", 250)
    saved = []
    a = np.arange(16, dtype=np.float32).reshape(1, 16)
    b = np.full((1, 16), 2.0, dtype=np.float32)
    res = deploy(DeployRequest(repo, "add_sub", text=doc.text, save=lambda: (doc.save(), saved.append(1)), runtime=server,
                               test_inputs={"INPUT0": a, "INPUT1": b}))
    assert res.ok, res.error
    print(f"add_sub: load to READY {res.time_to_ready_s:.2f} s, test inference {res.inference.latency_ms:.1f} ms")
    assert saved == [1] and "max_queue_delay_microseconds: 250" in (repo / "add_sub" / "config.pbtxt").read_text()
    np.testing.assert_array_equal(res.inference.outputs["OUTPUT0"], a + b)
    np.testing.assert_array_equal(res.inference.outputs["OUTPUT1"], a - b)
    assert client.resolved_config("add_sub")["dynamic_batching"]["max_queue_delay_microseconds"] == 250
    # the served config is the file's: no drift, although the server's JSON is auto-completed
    assert config_drift(doc, client.resolved_config("add_sub")) == []
    doc.set("dynamic_batching.max_queue_delay_microseconds", 700)
    drift = config_drift(doc, client.resolved_config("add_sub"))
    assert [(p, str(a), str(b)) for p, a, b in drift] == [("dynamic_batching.max_queue_delay_microseconds", "700", "250")]


def test_synthesized_inputs_follow_the_served_config(server, client):
    client.load("add_sub")
    inputs = synthesize_inputs(client.resolved_config("add_sub"))
    assert {k: (v.shape, v.dtype) for k, v in inputs.items()} == {"INPUT0": ((1, 16), np.float32), "INPUT1": ((1, 16), np.float32)}
    out = run_inference(server.endpoints, "add_sub", inputs)
    np.testing.assert_allclose(out.outputs["OUTPUT0"], inputs["INPUT0"] + inputs["INPUT1"], rtol=1e-6)
    assert out.latency_ms > 0


def test_inputs_from_npy_npz_and_json(repo, tmp_path):
    doc = ConfigDocument.load(repo / "add_sub" / "config.pbtxt")
    np.savez(tmp_path / "in.npz", INPUT0=np.ones(16, np.float32), INPUT1=np.zeros((1, 16), np.float32))
    got = load_inputs(tmp_path / "in.npz", doc)
    assert got["INPUT0"].shape == (1, 16) and got["INPUT1"].shape == (1, 16)
    (tmp_path / "in.json").write_text(json.dumps({"data": [{"INPUT0": list(range(16)), "INPUT1": [1] * 16}]}))
    got = load_inputs(tmp_path / "in.json", doc)
    assert got["INPUT0"].dtype == np.float32 and got["INPUT0"][0, 3] == 3
    np.save(tmp_path / "x.npy", np.ones(16, np.float32))
    one = ConfigDocument.load(repo / "batched_sleep" / "config.pbtxt")
    assert load_inputs(tmp_path / "x.npy", one)["INPUT"].shape == (1, 16)
    with pytest.raises(ValueError, match="one array"):
        load_inputs(tmp_path / "x.npy", doc)


def test_a_model_triton_refuses_gives_tritons_reason(repo, server, client):
    res = deploy(DeployRequest(repo, "broken", runtime=server))
    assert not res.ok and res.step == "load"
    assert "No module named 'torch_that_is_not_installed'" in res.error
    assert any("broken" in ln for ln in res.log_lines)
    st = fetch_states(client)["broken"]
    assert st.state == UNAVAILABLE and "torch_that_is_not_installed" in st.reason


def test_model_states_load_unload_all(server, client):
    names = ["add_sub", "batched_sleep"]
    assert load_all(client, names) == {}
    states = fetch_states(client, ["add_sub", "batched_sleep", "not_on_server"])
    assert states["add_sub"].state == READY and states["add_sub"].versions[0].version == "1"
    assert states["not_on_server"].state == NOT_LOADED
    assert unload_all(client, names) == {}
    deadline = time.monotonic() + scaled_s(10)
    while fetch_states(client)["batched_sleep"].state != NOT_LOADED:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert fetch_states(client)["batched_sleep"].label() == "not loaded"


def test_cancel_during_a_slow_load(repo, server, client):
    cancel = threading.Event()
    steps = []

    def progress(step, _m):
        steps.append(step)
        if step == "load":
            threading.Timer(0.5, cancel.set).start()

    t0 = time.monotonic()
    res = deploy(DeployRequest(repo, "slow", runtime=server), progress=progress, cancel=cancel)
    assert res.cancelled and res.step == "load"
    assert time.monotonic() - t0 < scaled_s(2.5), "cancel returns at once, not after the 4 s load"


def test_a_load_past_its_timeout_says_so_and_the_server_goes_on_loading(repo, server, client):
    """The real deadline: `slow` sleeps 4 s in initialize; a load with a 1 s timeout raises LoadTimeout at about
    1 s (not after 4 s, and not forever: a tune once waited 37 min on one reload), the tuning session records
    it as a timed-out change without measuring, and the server finishes loading the model by itself."""
    from studio.runtime import LoadTimeout
    from studio.tuning.session import TuningSession

    doc = ConfigDocument.load(repo / "slow" / "config.pbtxt")
    t0 = time.monotonic()
    with pytest.raises(LoadTimeout) as e:
        client.load("slow", config=doc, timeout_s=1.0)
    took = time.monotonic() - t0
    assert took < scaled_s(3.5), took  # the 1 s deadline plus at most the 2 s look into the log
    assert "did not finish within 1 s" in str(e.value) and "still be loading" in str(e.value)
    client.wait_model_ready("slow", timeout_s=scaled_s(20))  # the server went on and loaded it

    session = TuningSession(client, "slow", doc, sampler=None, load_timeout_s=1.0)  # no measurement is taken
    rec = session.reload("instances 1")
    assert rec.timed_out and rec.result is None and "did not finish within 1 s" in rec.error
    client.wait_model_ready("slow", timeout_s=scaled_s(20))


def test_reason_to_field_and_line(repo):
    doc = ConfigDocument.parse(_bad_text(repo))
    path, line = field_of_reason("dynamic batching preferred size must be <= max batch size for add_sub", doc)
    assert path == "dynamic_batching.preferred_batch_size" and line == 34
    path, line = field_of_reason("unexpected datatype TYPE_INT32 for inference input 'INPUT1', expecting TYPE_FP32", doc)
    assert path.startswith("input[1]") and line == 14


def test_deploy_starts_a_server_when_none_is_connected_and_death_is_seen_within_2s(repo):
    res = deploy(DeployRequest(repo, "add_sub", make_runtime=lambda: make_runtime("embedded")))
    rt = res.runtime
    try:
        assert res.ok and res.started_server, res.error
        dead = threading.Event()
        dog = Watchdog(rt, on_dead=lambda d: dead.set()).start()
        t0 = time.monotonic()
        os.killpg(rt.pid, signal.SIGKILL)
        assert dead.wait(scaled_s(2)), "not detected within 2 s"
        elapsed = time.monotonic() - t0
        print(f"embedded death detected in {elapsed * 1000:.0f} ms")
        assert elapsed < scaled_s(2)
        assert dog.death.exit_code == -signal.SIGKILL and "killed by signal 9" in dog.death.message()
        assert dog.death.last_lines and rt.status == Status.EXITED
    finally:
        rt.stop()


def test_remote_server_by_url_and_unreachable_is_seen(repo):
    own = EmbeddedRuntime()
    http = consecutive_free_ports(3)  # Triton's layout: HTTP p, gRPC p+1, metrics p+2
    ep = own.start(repo, ServerOptions(models=["add_sub"], http_port=http, grpc_port=http + 1, metrics_port=http + 2))
    try:
        assert parse_server_url(ep.http) == ep and parse_server_url(ep.grpc) == ep
        remote = make_runtime(ep.grpc)
        assert isinstance(remote, RemoteRuntime) and not remote.owned
        remote.start()
        c = TritonClient(remote.endpoints)
        assert fetch_states(c)["add_sub"].state == READY
        c.close()
        dead = threading.Event()
        Watchdog(remote, on_dead=lambda d: dead.set()).start()
        t0 = time.monotonic()
        os.killpg(own.pid, signal.SIGKILL)
        assert dead.wait(scaled_s(2))
        print(f"remote death detected in {(time.monotonic() - t0) * 1000:.0f} ms")
        remote.stop()  # never stops a server it does not own; nothing to assert but no error
    finally:
        own.stop()


def test_a_server_without_model_control_says_so(tmp_path):
    repo = demo_copy(tmp_path)
    own = EmbeddedRuntime()
    http = consecutive_free_ports(3)
    # mode none loads every model at start (no --load-model allowed)
    ep = own.start(repo, ServerOptions(models=[], http_port=http, grpc_port=http + 1, metrics_port=http + 2,
                                       extra_args=["--model-control-mode=none"]))
    try:
        remote = RemoteRuntime(ep.http)
        remote.start()
        res = deploy(DeployRequest(repo, "batched_sleep", runtime=remote))
        assert not res.ok and res.step == "load"
        assert "does not allow loading or unloading models" in res.error and "model-control-mode=none" in res.error
    finally:
        own.stop()
