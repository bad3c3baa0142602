from __future__ import annotations

import json

from tritonclient.grpc import model_config_pb2 as pb

from studio.config import ConfigDocument
from studio.diff import semantic_diff, side_by_side
from studio.diff.convert import plan_conversion
from studio.diff.server import diff_against_server
from studio.diff.text import MAX_INTRALINE_CHARS, intraline

A = """name: "m"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "a" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "b" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 4 ] } ]
instance_group [ { name: "g0" kind: KIND_GPU count: 1 } ]
optimization { execution_accelerators { gpu_execution_accelerator [ { name: "tensorrt" } ] } }
parameters { key: "intra_op_thread_count" value { string_value: "2" } }
"""


def msg(text: str) -> pb.ModelConfig:
    return ConfigDocument.parse(text).to_message()


def test_elements_are_matched_by_name_not_position():
    b = msg(A.replace('input [ { name: "a" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "b" data_type: TYPE_FP32 dims: [ 4 ] } ]',
                      'input [ { name: "b" data_type: TYPE_FP32 dims: [ 8 ] }, { name: "a" data_type: TYPE_FP32 dims: [ 4 ] } ]'))
    changes = semantic_diff(msg(A), b)
    assert [(c.path, c.kind, c.left, c.right) for c in changes] == [("input[1].dims", "changed", "[4]", "[8]")]
    assert changes[0].category == "io"


def test_categories_and_framework_specific_fields():
    b = msg(A.replace("max_batch_size: 8", "max_batch_size: 16").replace("count: 1", "count: 2")
            .replace('name: "tensorrt"', 'name: "cuda"') + "version_policy { all { } }\ndynamic_batching { }\n")
    by_path = {c.path: c for c in semantic_diff(msg(A), b)}
    assert by_path["max_batch_size"].category == "batching"
    assert by_path["dynamic_batching"].kind == "added"
    assert by_path["instance_group[0].count"].category == "instances"
    assert by_path["version_policy"].category == "versioning"
    acc = by_path["optimization.execution_accelerators.gpu_execution_accelerator[0].name"]
    assert acc.category == "framework" and "ONNX Runtime" in acc.frameworks


def test_map_entries_by_key():
    b = msg(A.replace('string_value: "2"', 'string_value: "4"') + 'parameters { key: "x" value { string_value: "1" } }')
    changes = {c.path: c for c in semantic_diff(msg(A), b)}
    assert changes['parameters["intra_op_thread_count"].string_value'].right == '"4"'
    assert changes['parameters["x"]'].kind == "added"


def test_side_by_side_with_intraline_spans():
    rows = side_by_side("a: 1\nkeep\nb: 22\n", "a: 1\nkeep\nb: 23\nnew\n")
    assert [r.tag for r in rows] == ["equal", "equal", "replace", "insert"]
    r = rows[2]
    assert r.left[r.left_spans[0][0]:r.left_spans[0][1]] == "2" and r.right_spans == [(4, 5)]
    big = "x" * (MAX_INTRALINE_CHARS + 1)
    assert intraline(big, big + "y") == ([(0, len(big))], [(0, len(big) + 1)])
    assert side_by_side("a\n" * 10, "b\n" * 10, cancelled=lambda: True) == []


def test_convert_onnx_to_pytorch():
    plan = plan_conversion(msg(A), "pytorch")
    m = plan.message
    assert (m.platform, m.backend) == ("pytorch_libtorch", "pytorch")
    assert [i.name for i in m.input] == ["a__0", "b__1"] and m.output[0].name == "y__0"
    assert not m.HasField("optimization")  # ONNX Runtime's accelerators do not apply
    assert "intra_op_thread_count" not in m.parameters
    assert plan.renames == [("model.onnx", "model.pt")]
    doc = ConfigDocument.parse(A)
    doc.apply(m)
    assert doc.to_message() == m
    assert 'platform: "pytorch_libtorch"' in doc.text


def test_diff_against_server_shows_what_triton_filled_in():
    server = json.dumps({"name": "m", "platform": "onnxruntime_onnx", "backend": "onnxruntime", "max_batch_size": 8,
                         "version_policy": {"latest": {"num_versions": 1}}, "default_model_filename": "model.onnx",
                         "input": [{"name": "a", "data_type": "TYPE_FP32", "dims": [4]}, {"name": "b", "data_type": "TYPE_FP32", "dims": [4]}],
                         "output": [{"name": "y", "data_type": "TYPE_FP32", "dims": [4]}],
                         "instance_group": [{"name": "g0", "kind": "KIND_GPU", "count": 1, "gpus": [0]}],
                         "optimization": {"execution_accelerators": {"gpu_execution_accelerator": [{"name": "tensorrt"}]}},
                         "parameters": {"intra_op_thread_count": {"string_value": "2"}}, "unknown_field": 1})
    added = {c.path for c in diff_against_server(msg(A), server) if c.kind == "added"}
    assert {"backend", "version_policy", "default_model_filename", "instance_group[0].gpus"} <= added
