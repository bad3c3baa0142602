"""Rules that need a repository on disk: files Triton looks for, versions, symlinks, ensembles across models."""

from __future__ import annotations

import os
from pathlib import Path

from studio.validate import Options, validate_path, validate_repository

IO = 'input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ] output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'


def model(repo: Path, name: str, config: str | None, versions: dict[str, list[str]] | None = None) -> Path:
    d = repo / name
    d.mkdir(parents=True)
    if config is not None:
        (d / "config.pbtxt").write_text(config)
    for v, files in (versions if versions is not None else {"1": ["model.py"]}).items():
        (d / v).mkdir()
        for f in files:
            if f.endswith("/"):
                (d / v / f.rstrip("/")).mkdir()
            else:
                (d / v / f).write_bytes(b"")
    return d


def rules(repo: Path, **kw) -> dict[str, set[str]]:
    report = validate_repository(repo, Options(**kw))
    out: dict[str, set[str]] = {}
    for f in report.findings:
        out.setdefault(f.model or "", set()).add(f.rule)
    return out


PY = 'backend: "python" max_batch_size: 8\n' + IO


def test_clean_repository_has_no_findings(tmp_path):
    model(tmp_path, "ok", 'name: "ok"\n' + PY)
    model(tmp_path, "onnx", 'platform: "onnxruntime_onnx"\n', {"1": ["model.onnx"]})
    report = validate_repository(tmp_path)
    assert [f.format() for f in report.findings if f.severity != "info"] == []


def test_files_and_versions(tmp_path):
    model(tmp_path, "nofile", PY, {"1": ["other.py"]})
    model(tmp_path, "empty", PY, {"1": []})
    model(tmp_path, "noversion", PY, {})
    model(tmp_path, "renamed", 'name: "other"\n' + PY)
    model(tmp_path, "specific", PY + "version_policy { specific { versions: [ 1, 3 ] } }")
    model(tmp_path, "ignored", PY, {"1": ["model.py"], "01": ["model.py"], "v2": []})
    model(tmp_path, "savedmodel", 'platform: "tensorflow_savedmodel"\n', {"1": ["model.savedmodel"]})
    model(tmp_path, "cc", 'platform: "tensorrt_plan"\ncc_model_filenames { key: "8.0" value: "a100.plan" }\n', {"1": ["model.plan"]})
    model(tmp_path, "autofilled", None, {"1": ["model.onnx"]})
    r = rules(tmp_path)
    assert "repository.model-file" in r["nofile"]
    assert "repository.empty-version" in r["empty"]
    assert "repository.no-version" in r["noversion"]
    assert "repository.name-mismatch" in r["renamed"]
    assert "repository.specific-version-missing" in r["specific"] and "repository.no-version" not in r["specific"]
    assert r["ignored"] == {"repository.version-ignored"}
    assert "repository.model-file" in r["savedmodel"]  # a file where Triton wants a folder
    assert "repository.cc-model-file" in r["cc"]
    assert r["autofilled"] == {"repository.no-config"}
    assert "repository.no-config" in rules(tmp_path, auto_complete=False)["autofilled"]


def test_symlinks_leaving_the_repository_are_reported_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x")
    repo = tmp_path / "repo"
    d = model(repo, "m", PY)
    os.symlink(outside / "secret.py", d / "1" / "linked.py")
    os.symlink(outside, repo / "escape")
    r = rules(repo)
    assert "repository.symlink-outside" in r["m"]
    assert "repository.symlink-outside" in r[""]
    assert "escape" not in validate_repository(repo).models


def test_unreadable_and_unparsable_configs(tmp_path):
    d = model(tmp_path, "bad", 'name: "bad"\nmax_batch_sise: 4\n')
    r = validate_repository(tmp_path)
    syntax = [f for f in r.findings if f.rule == "syntax"]
    assert syntax and (syntax[0].line, syntax[0].column) == (2, 1) and syntax[0].hint == "did you mean max_batch_size?"
    (d / "config.pbtxt").chmod(0)
    if os.geteuid() != 0:  # root reads anything; the unreadable case is then produced with a folder
        assert "repository.unreadable" in rules(tmp_path)["bad"]
    (d / "config.pbtxt").chmod(0o644)
    (d / "config.pbtxt").unlink()
    (d / "config.pbtxt").mkdir()
    assert "repository.no-config" in rules(tmp_path)["bad"]


def test_python_execution_env_and_decoupled(tmp_path):
    env = 'parameters { key: "EXECUTION_ENV_PATH" value { string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz" } }\n'
    model(tmp_path, "py", PY + env)
    model(tmp_path, "onnx", 'platform: "onnxruntime_onnx"\nmodel_transaction_policy { decoupled: true }\n', {"1": ["model.onnx"]})
    r = rules(tmp_path)
    assert "python.execution-env" in r["py"]
    assert "decoupled.backend" in r["onnx"]
    (tmp_path / "py" / "env.tar.gz").write_bytes(b"")
    assert "python.execution-env" not in rules(tmp_path).get("py", set())


def test_backend_from_files(tmp_path):
    (tmp_path / "lone.pbtxt").write_text("max_batch_size: 4\n")
    report = validate_path(tmp_path / "lone.pbtxt", Options(config_only=True))
    assert {f.rule for f in report.findings} == {"backend.from-files"}
    model(tmp_path / "repo", "nobackend", "max_batch_size: 4\n", {"1": ["weights.bin"]})
    assert "backend.undetermined" in rules(tmp_path / "repo")["nobackend"]


ENS_IO = 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] } ] output [ { name: "B" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'


def ensemble(step_model="m", in_key="IN", out_key="OUT", max_batch=8, version=-1, extra=""):
    return (
        f'platform: "ensemble" max_batch_size: {max_batch}\n' + ENS_IO
        + f'ensemble_scheduling {{ step [ {{ model_name: "{step_model}" model_version: {version} '
        f'input_map {{ key: "{in_key}" value: "A" }} output_map {{ key: "{out_key}" value: "B" }} }} {extra} ] }}\n'
    )


def test_ensembles_across_models(tmp_path):
    model(tmp_path, "m", PY)
    model(tmp_path, "small", PY.replace("max_batch_size: 8", "max_batch_size: 2"))
    model(tmp_path, "int", PY.replace("TYPE_FP32", "TYPE_INT32"))
    model(tmp_path, "wide", PY.replace("dims: [ 4 ]", "dims: [ 5 ]"))
    model(tmp_path, "two_in", 'backend: "python" max_batch_size: 8\ninput [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "IN2" data_type: TYPE_FP32 dims: [ 4 ] } ] output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n')
    model(tmp_path, "good", ensemble(), {"1": []})
    model(tmp_path, "missing", ensemble("nope"), {"1": []})
    model(tmp_path, "batch", ensemble("small"), {"1": []})
    model(tmp_path, "badin", ensemble(in_key="X"), {"1": []})
    model(tmp_path, "badout", ensemble(out_key="Y"), {"1": []})
    model(tmp_path, "unmapped", ensemble("two_in"), {"1": []})
    model(tmp_path, "dtype", ensemble("int"), {"1": []})
    model(tmp_path, "shape", ensemble("wide"), {"1": []})
    model(tmp_path, "version", ensemble(version=3), {"1": []})
    model(tmp_path, "loop_a", ensemble("loop_b"), {"1": []})
    model(tmp_path, "loop_b", ensemble("loop_a"), {"1": []})
    r = rules(tmp_path)
    assert "good" not in r or not {x for x in r["good"] if x.startswith("ensemble")}
    assert "ensemble.missing-models" in r["missing"]
    assert "ensemble.batch-size" in r["batch"]
    assert "ensemble.unknown-input" in r["badin"]
    assert "ensemble.unknown-output" in r["badout"]
    assert "ensemble.unmapped-input" in r["unmapped"]
    assert "ensemble.tensor-type" in r["dtype"]
    assert "ensemble.tensor-shape" in r["shape"]
    assert "ensemble.required-version" in r["version"]
    assert "ensemble.circular" in r["loop_a"] and "ensemble.circular" in r["loop_b"]


def test_decoupled_branches(tmp_path):
    model(tmp_path, "dec", PY + "model_transaction_policy { decoupled: true }")
    model(tmp_path, "m", PY)
    model(tmp_path, "join", 'backend: "python" max_batch_size: 8\ninput [ { name: "X" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "Y" data_type: TYPE_FP32 dims: [ 4 ] } ] output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n')
    steps = (
        'step [ { model_name: "dec" input_map { key: "IN" value: "A" } output_map { key: "OUT" value: "t1" } },'
        ' { model_name: "m" input_map { key: "IN" value: "A" } output_map { key: "OUT" value: "t2" } },'
        ' { model_name: "join" input_map [ { key: "X" value: "t1" }, { key: "Y" value: "t2" } ] output_map { key: "OUT" value: "B" } } ]'
    )
    model(tmp_path, "ens", 'platform: "ensemble" max_batch_size: 8\n' + ENS_IO + "ensemble_scheduling { " + steps + " }\n", {"1": []})
    assert "ensemble.decoupled-branches" in rules(tmp_path)["ens"]
