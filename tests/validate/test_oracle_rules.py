"""Regression tests for what the oracle (tests/validate/oracle/triton-2.51.json) showed: Triton 2.51's wording of
parse errors (recorded from its log), model.py read statically, the per-release field table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.config import ConfigDocument, ParseError
from studio.repository import Repository
from studio.validate import Finding, Options, validate_config, validate_model
from studio.validate.python_model import read_model_py
from studio.validate.release_fields import names_in_proto, table, unknown_to
from tests.validate.oracle.cases import generate, model_py, py_config
from tests.validate.oracle.compare import RECORDED

RECORD = json.loads(RECORDED.read_text())["cases"]
PARSE_CASES = [c for c in generate() if c.category == "parse" and c.id != "py_parse_model_metrics"]


@pytest.mark.parametrize("case", PARSE_CASES, ids=lambda c: c.id)
def test_parse_errors_lead_with_tritons_log_line(case):
    with pytest.raises(ParseError) as e:
        ConfigDocument.parse(case.config)
    f = Finding.from_parse_error(e.value)
    recorded = next(x for x in RECORD[case.id]["log"] if x.startswith("Error parsing text-format"))
    assert f.message == recorded
    assert f.line == e.value.line  # the editor's place stays ours (the name's start)


def test_model_metrics_is_unknown_to_2_51_and_known_to_2_52():
    text = py_config("m") + 'model_metrics { metric_control [ { metric_identifier { family: "x" } } ] }\n'
    doc = ConfigDocument.parse(text)
    f51 = [f for f in validate_config(doc, model_name="m", options=Options(triton_version="2.51"))
           if f.rule == "release.unknown-field"]
    assert [f.message for f in f51] == [
        'Error parsing text-format inference.ModelConfig: 8:15: Message type "inference.ModelConfig" has no field '
        'named "model_metrics". (Triton 2.51 does not know field model_metrics: added in 2.52)']
    assert f51[0].line == 8
    f52 = validate_config(doc, model_name="m", options=Options(triton_version="2.52"))
    assert not [f for f in f52 if f.rule.startswith("release.")]


def test_field_table_comes_from_the_proto_history():
    t = table()
    assert "model_config.proto" in t["source"] and t["releases"][0] == "2.30"
    assert t["added"]["inference.ModelConfig.model_metrics"] == "2.52"
    assert unknown_to("2.40", "inference.ModelInput.is_non_linear_format_io") == "2.49"
    assert unknown_to("24.10", "inference.ModelInput.is_non_linear_format_io") is None  # container tag = 2.51
    assert unknown_to("2.30", "inference.ModelConfig.max_batch_size") is None
    proto = 'message A\n{\n  message B\n  {\n    int32 x = 1;\n  }\n  enum E { V0 = 0; }\n  repeated B b = 2;\n}\n'
    assert names_in_proto(proto) == {"inference.A.B.x", "inference.A.E.V0", "inference.A.b"}


def test_model_py_read_without_running_it():
    assert read_model_py("def broken(:\n").syntax_error == "SyntaxError: invalid syntax (model.py, line 1)"
    assert read_model_py(model_py(False)).auto_complete is None
    assert read_model_py(model_py(True)).auto_complete == "fills-nothing"
    fills = model_py(False).replace("    def initialize", "    @staticmethod\n    def auto_complete_config(c):\n"
                                    "        c.add_input({'name': 'INPUT0', 'data_type': 'TYPE_FP32', 'dims': [4]})\n"
                                    "        return c\n\n    def initialize")
    assert read_model_py(fills).auto_complete == "fills"


def _repo(tmp_path: Path, name: str, config: str, files: dict[str, str]) -> Repository:
    (tmp_path / name).mkdir()
    (tmp_path / name / "config.pbtxt").write_text(config)
    for rel, text in files.items():
        (tmp_path / name / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name / rel).write_text(text)
    repo = Repository(tmp_path)
    repo.scan()
    return repo


def test_syntax_error_in_model_py_is_tritons_refusal(tmp_path):
    marker = tmp_path / "ran"
    src = f"open({str(marker)!r}, 'w').write('x')\ndef broken(:\n"
    repo = _repo(tmp_path, "m", py_config(None), {"1/model.py": src})
    f = [f for f in validate_model(repo, "m") if f.rule == "python.model-syntax"]
    assert [x.message for x in f] == ["SyntaxError: invalid syntax (model.py, line 2)"] and f[0].severity == "error"
    assert not marker.exists()  # parsed, never executed


def test_auto_complete_that_fills_nothing_needs_dims(tmp_path):
    from tests.validate.oracle.cases import IO

    repo = _repo(tmp_path, "m", py_config(None, io=IO.format(dt="TYPE_FP32", dims="")), {"1/model.py": model_py(True)})
    errs = [f for f in validate_model(repo, "m") if f.severity == "error"]
    assert any("model input 'INPUT0' must specify 'dims'" in f.message for f in errs), errs


def test_tensorflow_platform_on_python_backend(tmp_path):
    repo = _repo(tmp_path, "m", py_config(None, backend='platform: "tensorflow_savedmodel" backend: "python"'),
                 {"1/model.py": model_py()})
    f = [f for f in validate_model(repo, "m") if f.rule == "python.platform-handler"]
    assert [x.message for x in f] == ['Model name must end with \'.py\'. Model name is "model.savedmodel".']


def test_missing_model_py_says_triton_stays_loading(tmp_path):
    repo = _repo(tmp_path, "m", py_config(None), {"1/.keep": ""})
    msgs = [f.message for f in validate_model(repo, "m") if f.severity == "error"]
    assert any("the model stays LOADING" in m for m in msgs), msgs


def test_a_check_triton_gained_later_follows_the_release():
    from studio.validate.release_fields import rule_added_in

    assert table()["rules_source"].startswith("github.com/triton-inference-server/core")
    assert rule_added_in("with sequence batching scheduler") == "2.38"
    doc = ConfigDocument.parse('name: "m"\nbackend: "identity"\nmax_batch_size: 4\n'
                               'input [ { name: "I" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
                               'output [ { name: "O" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
                               "sequence_batching { }\nresponse_cache { enable: true }\n")

    def sev(version):
        return [f.severity for f in validate_config(doc, model_name="m", options=Options(triton_version=version))
                if f.rule == "cache.sequence"]

    assert sev("2.51") == ["error"]
    assert sev("2.37") == ["warning"]
