"""Shared steps of the runtime integration tests (both runtimes run the same scenario)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import tritonclient.grpc as grpcclient

from studio.config import ConfigDocument
from studio.runtime import LoadFailed
from studio.runtime.client import TritonClient
from tests.conftest import REPO

DEMO = REPO / "model_repository_templates" / "demo"


@contextmanager
def embedded_demo(base: Path, *models: str) -> Iterator[tuple]:
    """(runtime, endpoints, client, repo): the embedded Triton on a copy of the demo repository with `models`
    READY; stopped on exit."""
    from studio.runtime import ServerOptions
    from studio.runtime.embedded import EmbeddedRuntime

    repo = demo_copy(base)
    rt = EmbeddedRuntime()
    ep = rt.start(repo, ServerOptions(models=list(models)))
    client = TritonClient(ep, logs=rt.logs)
    try:
        for m in models:
            client.wait_model_ready(m)
        yield rt, ep, client, repo
    finally:
        client.close()
        rt.stop()


def demo_copy(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(DEMO, repo)
    return repo


def _infer_two_inputs(grpc_target: str, model: str, b_value: float):
    """INPUT0 = 0..15 and INPUT1 = b_value (shape [1, 16], FP32) sent to a model: (a, b, result)."""
    client = grpcclient.InferenceServerClient(grpc_target)
    a = np.arange(16, dtype=np.float32).reshape(1, 16)
    b = np.full((1, 16), b_value, dtype=np.float32)
    inputs = [grpcclient.InferInput("INPUT0", [1, 16], "FP32"), grpcclient.InferInput("INPUT1", [1, 16], "FP32")]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(b)
    result = client.infer(model, inputs)
    client.close()
    return a, b, result


def infer_add_sub(grpc_target: str) -> None:
    a, b, r = _infer_two_inputs(grpc_target, "add_sub", 2.0)
    np.testing.assert_array_equal(r.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(r.as_numpy("OUTPUT1"), a - b)


def infer_pipeline(grpc_target: str) -> None:
    """The demo ensemble: add_sub's sum through batched_sleep (an identity on the values)."""
    a, b, r = _infer_two_inputs(grpc_target, "pipeline", 3.0)
    np.testing.assert_array_equal(r.as_numpy("OUTPUT"), a + b)


def concurrent_load(grpc_target: str, model: str = "batched_sleep", requests: int = 96, workers: int = 24) -> None:
    x = np.ones((1, 16), dtype=np.float32)

    def one(_):
        c = grpcclient.InferenceServerClient(grpc_target)
        i = grpcclient.InferInput("INPUT", [1, 16], "FP32")
        i.set_data_from_numpy(x)
        out = c.infer(model, [i]).as_numpy("OUTPUT")
        c.close()
        return out

    with ThreadPoolExecutor(workers) as pool:
        for out in pool.map(one, range(requests)):
            np.testing.assert_array_equal(out, x)


def executions_and_inferences(client: TritonClient, model: str) -> tuple[int, int]:
    s = client.statistics(model)
    return int(s.get("execution_count", 0)), int(s.get("inference_count", 0))


def full_scenario(runtime, repo: Path) -> None:
    """start -> READY -> right numbers -> batching reload takes effect -> bad reload refused with the real
    reason while the old version serves -> stop."""
    t0 = time.monotonic()
    ep = runtime.start(repo)
    print(f"{runtime.kind}: start to READY {time.monotonic() - t0:.2f} s")
    client = TritonClient(ep, logs=runtime.logs)
    client.wait_model_ready("add_sub")
    client.wait_model_ready("batched_sleep")
    infer_add_sub(ep.grpc_target)

    # no batching: every request is its own execution
    concurrent_load(ep.grpc_target)
    e1, n1 = executions_and_inferences(client, "batched_sleep")
    assert e1 == n1 == 96

    doc = ConfigDocument.load(repo / "batched_sleep" / "config.pbtxt")
    doc.set("dynamic_batching.max_queue_delay_microseconds", 2000)
    client.load("batched_sleep", config=doc)
    concurrent_load(ep.grpc_target)
    e2, n2 = executions_and_inferences(client, "batched_sleep")
    assert n2 == 96, "statistics restart with the reloaded model"
    assert e2 < n2, f"batching did not take effect: {e2} executions for {n2} inferences"
    stats = client.statistics("batched_sleep")
    assert any(int(b["batch_size"]) > 1 for b in stats.get("batch_stats", []))

    bad = ConfigDocument.load(repo / "add_sub" / "config.pbtxt")
    bad.set("dynamic_batching.preferred_batch_size", [128])
    try:
        client.load("add_sub", config=bad)
    except LoadFailed as e:
        assert "failed to poll from model repository" in e.server_message or "failed to load" in e.server_message
        assert e.reason is not None and "preferred size must be <= max batch size" in e.reason
    else:
        raise AssertionError("a bad config override was accepted")
    assert client.model_ready("add_sub")
    infer_add_sub(ep.grpc_target)  # the old version keeps serving
    resolved = client.resolved_config("add_sub")
    assert resolved["max_batch_size"] == 64
    metrics = client.metrics()
    assert any(labels.get("model") == "batched_sleep" for labels, _ in metrics.get("nv_inference_exec_count_total", []))
    client.wait_model_ready("pipeline")
    infer_pipeline(ep.grpc_target)  # the ensemble runs through both reloaded models
    client.close()
    runtime.stop()


def add_python_model(repo: Path, name: str, initialize: str) -> Path:
    """A copy of the demo's batched_sleep (INPUT -> OUTPUT, FP32 [16]) named `name`, whose model.py runs
    `initialize` (python source, one statement per line) in initialize(): a model that really fails to load
    (raise ImportError...) or loads slowly (time.sleep)."""
    folder = repo / name
    (folder / "1").mkdir(parents=True)
    text = (DEMO / "batched_sleep" / "config.pbtxt").read_text().replace('name: "batched_sleep"', f'name: "{name}"')
    (folder / "config.pbtxt").write_text(text)
    body = "\n".join("        " + ln for ln in initialize.splitlines())
    (folder / "1" / "model.py").write_text(
        "import time\n\nimport triton_python_backend_utils as pb_utils\n\n\n"
        "class TritonPythonModel:\n    def initialize(self, args):\n" + body + "\n\n"
        "    def execute(self, requests):\n"
        "        return [pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor('OUTPUT', "
        "pb_utils.get_input_tensor_by_name(r, 'INPUT').as_numpy())]) for r in requests]\n")
    return folder
