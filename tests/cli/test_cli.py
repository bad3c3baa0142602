"""The command line, run as a user runs it (a real subprocess), asserting on file bytes and exit codes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import CORPUS, scaled_s

EXE = [sys.executable, "-m", "studio.cli"]
SAMPLE = CORPUS / "real-configs" / "server" / "docs" / "examples" / "model_repository" / "densenet_onnx" / "config.pbtxt"


def run(*args, cwd=None):
    return subprocess.run([*EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=scaled_s(60))


def copy_sample(tmp_path: Path) -> Path:
    p = tmp_path / "config.pbtxt"
    shutil.copyfile(SAMPLE, p)
    return p


def test_get_prints_values(tmp_path):
    p = copy_sample(tmp_path)
    r = run("get", str(p), "input[0].dims")
    assert r.returncode == 0 and r.stdout == "[3, 224, 224]\n"
    r = run("get", str(p), "platform")
    assert r.stdout == '"onnxruntime_onnx"\n'
    r = run("get", str(p), "dynamic_batching")
    assert r.returncode == 1 and "not set" in r.stderr


def test_set_is_a_minimal_atomic_edit(tmp_path):
    p = copy_sample(tmp_path)
    before = p.read_text()
    os.chmod(p, 0o600)
    r = run("set", str(p), "max_batch_size", "8")
    assert r.returncode == 0, r.stderr
    after = p.read_text()
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=False) if a != b]
    assert changed == [("max_batch_size : 0", "max_batch_size : 8")]
    assert p.stat().st_mode & 0o777 == 0o600
    r = run("set", str(p), "dynamic_batching.max_queue_delay_microseconds", "100")
    assert r.returncode == 0
    assert "dynamic_batching {\n  max_queue_delay_microseconds: 100\n}" in p.read_text()
    r = run("set", str(p), "name", "renamed")  # quotes optional for strings
    assert 'name: "renamed"' in p.read_text()
    r = run("set", str(p), 'parameters["K"]', 'string_value: "v"')
    assert r.returncode == 0 and 'key: "K"' in p.read_text()


def test_set_errors_are_clear_and_leave_the_file_alone(tmp_path):
    p = copy_sample(tmp_path)
    before = p.read_bytes()
    r = run("set", str(p), "input[0].data_type", "TYPE_FLOAT")
    assert r.returncode == 2 and "did you mean TYPE_FP32?" in r.stderr
    r = run("set", str(p), "max_batch_sise", "8")
    assert r.returncode == 2 and "did you mean max_batch_size?" in r.stderr
    assert p.read_bytes() == before
    assert "Traceback" not in r.stderr


def test_parse_error_is_reported_with_file_line_col(tmp_path):
    p = tmp_path / "config.pbtxt"
    p.write_text('name: "m"\nmax_batch_size: 8\ninput [ { name: "x" data_type: TYPE_FP32 dims: [ 1 ] }\n')
    r = run("get", str(p), "name")
    assert r.returncode == 1
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{p}:4:1: error:")  # text_format reports the end of the text
    assert "'[' opened at line 3, column 7" in r.stderr
    assert "Traceback" not in r.stderr


def test_fmt_check_and_rewrite_keep_comments(tmp_path):
    p = copy_sample(tmp_path)
    p.write_text("# header\nname:'m'  # trailing\ninput<name:'x',dims:[1,2]>\n")
    r = run("fmt", "--check", str(tmp_path))
    assert r.returncode == 1 and "would be reformatted" in r.stdout
    r = run("fmt", str(tmp_path))
    assert r.returncode == 0
    assert p.read_text() == "# header\nname: 'm'  # trailing\ninput {\n  name: 'x'\n  dims: [ 1, 2 ]\n}\n"
    r = run("fmt", "--check", str(p))
    assert r.returncode == 0


def test_usage_errors_exit_2():
    assert run("get").returncode == 2
    assert run("frobnicate-nothing-here").returncode == 2
