"""Repository-level decisions of the validator (issue 12): a config-only checkout, misplaced configs, the
official backends."""

from __future__ import annotations

from pathlib import Path

from studio.frameworks import framework_for
from studio.validate import Options, validate_path, validate_repository

IO = 'input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ] output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'


def _write(root: Path, name: str, config: str, version_files: list[str] | None = None) -> None:
    d = root / name
    d.mkdir(parents=True)
    (d / "config.pbtxt").write_text(f'name: "{name}"\n' + config)
    if version_files is not None:
        (d / "1").mkdir()
        for f in version_files:
            (d / "1" / f).write_text("")


def _config_only(root: Path) -> None:
    _write(root, "pre", 'backend: "python"\nmax_batch_size: 8\n' + IO)
    _write(root, "net", 'platform: "onnxruntime_onnx"\nmax_batch_size: 8\n' + IO)
    _write(root, "pipe", 'platform: "ensemble"\nmax_batch_size: 8\n' + IO + """ensemble_scheduling { step [
  { model_name: "pre" model_version: 1 input_map { key: "IN" value: "IN" } output_map { key: "OUT" value: "mid" } },
  { model_name: "net" model_version: -1 input_map { key: "IN" value: "mid" } output_map { key: "OUT" value: "OUT" } } ] }
""")


def test_a_config_only_checkout_warns_instead_of_failing_every_model(tmp_path):
    _config_only(tmp_path)
    report = validate_repository(tmp_path)
    assert report.errors == [], [f.format() for f in report.errors]
    nv = [f for f in report.findings if f.rule == "repository.no-version"]
    assert {f.model for f in nv} == {"pre", "net", "pipe"} and {f.severity for f in nv} == {"warning"}
    assert all("no version folders: Triton will not load" in f.message and "until model files are present" in f.message for f in nv)
    assert any(f.rule == "repository.config-only-checkout" and f.severity == "info" for f in report.findings)
    # validate_path (what the CLI runs) decides the same way
    assert validate_path(tmp_path).errors == []
    # asked for strictly: Triton's error on every model
    strict = validate_repository(tmp_path, Options(config_only_checkout=False))
    assert {f.model for f in strict.errors if f.rule == "repository.no-version"} == {"pre", "net", "pipe"}


def test_one_model_without_versions_in_a_full_repository_stays_an_error(tmp_path):
    for n in ("a", "b"):
        _write(tmp_path, n, 'backend: "python"\nmax_batch_size: 8\n' + IO, ["model.py"])
    _write(tmp_path, "forgot", 'backend: "python"\nmax_batch_size: 8\n' + IO)
    report = validate_repository(tmp_path)
    assert [(f.model, f.rule) for f in report.errors] == [("forgot", "repository.no-version")]


def test_a_config_inside_a_version_folder_is_a_warning_on_that_file(tmp_path):
    _write(tmp_path, "m", 'backend: "python"\nmax_batch_size: 8\n' + IO, ["model.py", "config.pbtxt"])
    report = validate_repository(tmp_path)
    f = next(f for f in report.findings if f.rule == "repository.misplaced-config")
    assert f.severity == "warning" and f.model == "m"
    assert f.message == "Triton reads only m/config.pbtxt; this file (m/1/config.pbtxt) is ignored"
    assert f.file == str(tmp_path / "m" / "1" / "config.pbtxt")


def test_official_backends_are_known_and_custom_ones_are_told_apart():
    from studio.frameworks import backend_kind

    assert framework_for("", "tensorrtllm").label == "TensorRT-LLM"
    assert framework_for("", "vllm").default_model_filename == "model.json"
    assert framework_for("", "vllm").decoupled and framework_for("", "tensorrtllm").decoupled
    assert (backend_kind("vllm"), backend_kind("identity"), backend_kind("my_backend"), backend_kind("")) == (
        "framework", "official", "custom", "")


def test_decoupled_llm_backends_are_not_warned_about(tmp_path):
    _write(tmp_path, "llm", 'backend: "vllm"\nmodel_transaction_policy { decoupled: true }\n'
           'input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] } ]\n'
           'output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]\n', ["model.json"])
    assert not [f for f in validate_repository(tmp_path).findings if f.rule == "decoupled.backend"]
