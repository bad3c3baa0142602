"""validate / diff / new / templates as a user runs them."""

from __future__ import annotations

import json
import shutil

from tests.cli.test_cli import run
from tests.conftest import REPO

DEMO = REPO / "model_repository_templates" / "demo"


def test_validate_demo_repository_is_clean():
    r = run("validate", str(DEMO))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 error(s)" in r.stderr


def test_validate_reports_compiler_style_and_json(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(DEMO, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    cfg.write_text(cfg.read_text().replace("max_queue_delay_microseconds: 100", "max_queue_delay_microseconds: 100\n  preferred_batch_size: [ 128 ]"))
    r = run("validate", str(repo))
    assert r.returncode == 1
    line = next(ln for ln in r.stdout.splitlines() if "preferred-le-max" in ln)
    assert line.startswith(f"{cfg}:34:27: error: dynamic batching preferred size must be <= max batch size for add_sub")
    r = run("validate", str(repo), "--format", "json")
    data = json.loads(r.stdout)
    f = next(x for x in data if x["rule"] == "dynamic-batching.preferred-le-max")
    assert set(f) == {"severity", "rule", "message", "file", "line", "column", "path", "hint"}
    assert (f["line"], f["column"], f["path"]) == (34, 27, "dynamic_batching.preferred_batch_size[0]")
    r = run("validate", str(cfg))  # a lone file: config-only
    assert r.returncode == 1


def test_validate_strict_and_flags(tmp_path):
    m = tmp_path / "m"
    (m / "1").mkdir(parents=True)
    (m / "1" / "model.py").write_text("")
    (m / "config.pbtxt").write_text('backend: "python"\nmax_batch_size: 0\ndynamic_batching { }\n')
    assert run("validate", str(tmp_path)).returncode == 0  # python auto-completes IO; a warning only
    assert run("validate", str(tmp_path), "--strict").returncode == 1
    o = tmp_path / "o"
    (o / "1").mkdir(parents=True)
    (o / "1" / "model.onnx").write_bytes(b"")
    (o / "config.pbtxt").write_text('platform: "onnxruntime_onnx"\nmax_batch_size: 4\ninput [ { name: "x" } ]\n')
    (m / "config.pbtxt").unlink()
    (m / "config.pbtxt").write_text('backend: "python"\nmax_batch_size: 4\n')
    assert run("validate", str(tmp_path)).returncode == 0  # ONNX Runtime fills in data_type and dims
    r = run("validate", str(tmp_path), "--disable-auto-complete-config")
    assert r.returncode == 1 and "[io.input-data-type]" in r.stdout and "[io.input-dims]" in r.stdout
    assert run("validate", str(tmp_path / "nope")).returncode == 2


def test_new_from_each_template_validates_clean_once_files_are_in_place(tmp_path):
    r = run("templates")
    keys = [ln.split()[0] for ln in r.stdout.splitlines()]
    assert {"pytorch_libtorch", "tensorflow_savedmodel", "onnxruntime_onnx", "tensorrt_plan", "python", "ensemble"} <= set(keys)
    files = {"pytorch_libtorch": "model.pt", "onnxruntime_onnx": "model.onnx", "tensorrt_plan": "model.plan"}
    for key in keys:
        r = run("new", f"m_{key}", "--template", key, "--repo", str(tmp_path), "--set", "max_batch_size=4")
        assert r.returncode == 0, r.stderr
        v = tmp_path / f"m_{key}" / "1"
        if key in files:
            (v / files[key]).write_bytes(b"")
        if key == "tensorflow_savedmodel":
            (v / "model.savedmodel").mkdir()
    r = run("validate", str(tmp_path))
    assert r.returncode == 0, r.stdout
    assert "max_batch_size: 4" in (tmp_path / "m_python" / "config.pbtxt").read_text()
    assert 'model_name: "m_ensemble_preprocess"' in (tmp_path / "m_ensemble" / "config.pbtxt").read_text()
    r = run("new", "m_python", "--template", "python", "--repo", str(tmp_path))
    assert r.returncode == 2 and "already exists" in r.stderr


def test_diff_cli(tmp_path):
    a = DEMO / "add_sub" / "config.pbtxt"
    b = tmp_path / "config.pbtxt"
    b.write_text(a.read_text().replace("count: 1", "count: 3"))
    r = run("diff", str(a), str(b))
    assert r.returncode == 0 and r.stdout.strip() == "~ instance_group[0].count [instances]: 1 -> 3"
    r = run("diff", str(a), str(b), "--category", "io", "--format", "json")
    assert json.loads(r.stdout) == []


def test_a_custom_backend_is_a_warning_and_backend_silences_it(tmp_path):
    import subprocess
    import sys

    m = tmp_path / "repo" / "diffusion_model"
    (m / "1").mkdir(parents=True)
    (m / "1" / "model.bin").write_bytes(b"x")
    (m / "config.pbtxt").write_text('backend: "diffusion"\nmax_batch_size: 0\n'
                                    'input [ { name: "x" data_type: TYPE_FP32 dims: [ 1 ] } ]\n'
                                    'output [ { name: "y" data_type: TYPE_FP32 dims: [ 1 ] } ]\n')

    def run(*extra):
        return subprocess.run([sys.executable, "-m", "studio.cli", "validate", str(m / "config.pbtxt"), *extra],
                              capture_output=True, text=True)

    r = run()
    assert r.returncode == 0 and "warning" in r.stdout and "diffusion" in r.stdout, r.stdout + r.stderr
    r = run("--backend", "diffusion", "--triton-version", "24.10")
    assert r.returncode == 0 and "diffusion" not in r.stdout, r.stdout
