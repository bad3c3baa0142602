"""`triton-studio deploy` and `triton-studio status --models` as a user runs them, against the real embedded
Triton and the real Docker engine (CPU image)."""

from __future__ import annotations

import json

from studio.runtime import ServerOptions
from studio.runtime.embedded import EmbeddedRuntime
from tests.cli.test_cli import run
from tests.runtime.helpers import DEMO, add_python_model, demo_copy


def _inputs(tmp_path):
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"INPUT0": list(range(16)), "INPUT1": [2.0] * 16}))
    return str(f)


def test_deploy_embedded_reaches_ready_and_prints_the_figures(tmp_path):
    repo = demo_copy(tmp_path)
    r = run("deploy", str(repo), "--model", "add_sub", "--input-data", _inputs(tmp_path), "--format", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["ok"] and out["time_to_ready_s"] > 0 and out["latency_ms"] > 0
    assert out["outputs"]["OUTPUT0"]["values"] == [float(i + 2) for i in range(16)]
    assert out["outputs"]["OUTPUT1"]["values"] == [float(i - 2) for i in range(16)]
    assert out["outputs"]["OUTPUT0"]["shape"] == [1, 16] and out["outputs"]["OUTPUT0"]["dtype"] == "float32"
    print(f"CLI deploy: READY {out['time_to_ready_s']:.2f} s, test inference {out['latency_ms']:.1f} ms")
    text = run("deploy", str(repo), "--model", "add_sub")
    assert text.returncode == 0 and "add_sub: READY in" in text.stdout and "OUTPUT0: shape [1, 16] FP32" in text.stdout


def test_deploy_refuses_an_invalid_config_and_reports_tritons_reason_for_a_refused_model(tmp_path):
    repo = demo_copy(tmp_path)
    cfg = repo / "add_sub" / "config.pbtxt"
    cfg.write_text(cfg.read_text().replace("max_batch_size: 64", "max_batch_size: 64\nmax_batch_sise: 3"))
    r = run("deploy", str(repo), "--model", "add_sub")
    assert r.returncode == 1 and "did you mean max_batch_size" in r.stderr
    assert "starting a server" not in r.stderr and "Traceback" not in r.stderr
    add_python_model(repo, "broken", "import torch_that_is_not_installed")
    r = run("deploy", str(repo), "--model", "broken")
    assert r.returncode == 1 and "No module named 'torch_that_is_not_installed'" in r.stderr
    assert "Traceback (most recent" not in r.stderr.split("server log:")[0]


def test_deploy_bad_arguments_exit_2(tmp_path):
    for args in (("deploy", str(tmp_path / "nope"), "--model", "m"),
                 ("deploy", str(DEMO), "--model", "nope"),
                 ("deploy", str(DEMO), "--model", "add_sub", "--server", "kubernetes"),
                 ("deploy", str(DEMO), "--model", "add_sub", "--gpus", "all"),
                 ("deploy", str(DEMO), "--model", "add_sub", "--server", "grpc://:x"),
                 ("deploy", str(DEMO))):
        r = run(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.strip().splitlines()[-1].startswith(("deploy:", "triton-studio deploy: error:")), r.stderr


def test_deploy_docker_cpu_image_and_a_missing_image_asks_for_pull(tmp_path):
    from tests.runtime.test_docker import CPU_IMAGE_REPOSITORY, REPO

    tag = (REPO / ".cpu-image-tag").read_text().strip() if (REPO / ".cpu-image-tag").exists() else f"{CPU_IMAGE_REPOSITORY}:2.51.0"
    repo = demo_copy(tmp_path)
    r = run("deploy", str(repo), "--model", "add_sub", "--server", "docker", "--image", tag,
            "--input-data", _inputs(tmp_path), "--format", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["server"] == "docker" and out["outputs"]["OUTPUT0"]["values"][:3] == [2.0, 3.0, 4.0]
    r = run("deploy", str(repo), "--model", "add_sub", "--server", "docker", "--image", "nvcr.io/nvidia/tritonserver:24.10-py3")
    assert r.returncode == 1 and "is not on this machine" in r.stderr and "--pull" in r.stderr
    r = run("deploy", str(repo), "--model", "add_sub", "--server", "docker", "--image", "nvcr.io/nvidia/tritonserver:24.10-py3", "--pull")
    assert r.returncode == 1 and "registry cannot be reached" in r.stderr and "Traceback" not in r.stderr


def test_status_models_by_url_and_for_studio_owned_servers(tmp_path):
    repo = demo_copy(tmp_path)
    rt = EmbeddedRuntime()
    ep = rt.start(repo, ServerOptions(models=["add_sub"]))
    try:
        r = run("status", "--models", "--url", ep.grpc, "--format", "json")
        assert r.returncode == 0, r.stderr
        models = {m["name"]: m for m in json.loads(r.stdout)[0]["models"]}
        assert models["add_sub"]["state"] == "READY" and models["add_sub"]["versions"][0]["version"] == "1"
        assert models["batched_sleep"]["state"] == "NOT_LOADED"
        r = run("status", "--models")
        assert r.returncode == 0 and str(repo) in r.stdout
        assert any(line.split()[:3] == ["add_sub", "1", "READY"] for line in r.stdout.splitlines())
    finally:
        rt.stop()
    r = run("status", "--models", "--url", ep.http)
    assert r.returncode == 1 and "no Triton answers" in r.stdout
    assert run("status", "--url", "http://x:1").returncode == 2
