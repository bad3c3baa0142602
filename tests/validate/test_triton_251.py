"""Issue 13's false errors: Triton 2.51 loads these (recorded by the oracle), so no error; and --backend NAME."""

from __future__ import annotations

import pytest

from studio.config import ConfigDocument
from studio.validate import Options, validate_config
from studio.validate.rules import version_at_least

IO = 'input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ] output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
PY = 'name: "m" backend: "python" max_batch_size: 8\n' + IO

LOADED_BY_2_51 = {
    "duplicate-input": PY + 'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 2 ] } ]',
    "duplicate-output": PY + 'output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]',
    "runtime-relative": PY + 'runtime: "../python/libtriton_python.so"',
    "state-bare": PY + 'sequence_batching { state [ { input_name: "S_IN" output_name: "S_OUT" } ] }',
    "state-noname": PY + "sequence_batching { state [ { data_type: TYPE_FP32 dims: [ 1 ] } ] }",
    "warmup-extra-input": PY + 'model_warmup [ { name: "w" batch_size: 1 inputs [ { key: "IN" value: { data_type: TYPE_FP32 '
    'dims: [ 4 ] zero_data: true } }, { key: "NOPE" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } ] } ]',
    "count-negative": PY + "instance_group [ { kind: KIND_CPU count: -1 } ]",
    "count-zero": PY + "instance_group [ { kind: KIND_CPU count: 0 } ]",
    "custom-backend": PY.replace('"python"', '"diffusion"'),
}


@pytest.mark.parametrize("case", sorted(LOADED_BY_2_51))
@pytest.mark.parametrize("config_only", [False, True])
def test_no_error_where_triton_2_51_loads(case, config_only):
    findings = validate_config(ConfigDocument.parse(LOADED_BY_2_51[case]), model_name="m", options=Options(config_only=config_only))
    assert not [f.format() for f in findings if f.severity == "error"]


def test_unknown_backend_is_a_warning_that_known_backends_silences():
    doc = ConfigDocument.parse(LOADED_BY_2_51["custom-backend"])
    warn = [f for f in validate_config(doc, model_name="m") if f.rule == "backend.unknown"]
    assert [f.severity for f in warn] == ["warning"]
    assert "the server must have backend 'diffusion'" in warn[0].message
    quiet = validate_config(doc, model_name="m", options=Options(known_backends={"diffusion"}))
    assert not [f for f in quiet if f.rule == "backend.unknown"]


def test_default_version_and_ordering():
    assert Options().triton_version == "2.51"
    assert version_at_least("2.51", "2.50") and not version_at_least("2.51", "2.52")
    assert version_at_least("24.10", "2.51") and not version_at_least("24.09", "2.51")
