"""File vs server (issue 12): both sides in one canonical layout, so a compact file and the server's expanded
JSON differ only where Triton filled something in."""

from __future__ import annotations

import json

from studio.diff import side_by_side
from studio.diff.server import resolved_config

COMPACT = ('name: "m" platform: "onnxruntime_onnx" max_batch_size: 8\n'
           'input [{name: "a", data_type: TYPE_FP32, dims: [4]}, {name: "b", data_type: TYPE_FP32, dims: [4]}]\n'
           'output [{name: "y", data_type: TYPE_FP32, dims: [4]}]\n'
           'parameters { key: "intra_op_thread_count" value { string_value: "2" } }\n')
SERVER = {"name": "m", "platform": "onnxruntime_onnx", "backend": "onnxruntime", "max_batch_size": 8,
          "version_policy": {"latest": {"num_versions": 1}}, "default_model_filename": "model.onnx",
          "input": [{"name": "a", "data_type": "TYPE_FP32", "dims": [4]}, {"name": "b", "data_type": "TYPE_FP32", "dims": [4]}],
          "output": [{"name": "y", "data_type": "TYPE_FP32", "dims": [4]}],
          "parameters": {"intra_op_thread_count": {"string_value": "2"}}}


def test_file_and_server_are_compared_in_one_layout():
    from studio.diff.server import canonical_text, server_diff_texts

    left, right, changes = server_diff_texts(COMPACT, json.dumps(SERVER))
    rows = side_by_side(left, right)
    changed = [(r.left, r.right) for r in rows if r.tag != "equal"]
    # only what Triton filled in: backend, version_policy (3 lines), default_model_filename
    assert all(a is None for a, _b in changed), changed
    assert {b.strip() for _a, b in changed} == {'backend: "onnxruntime"', "version_policy {", "latest {", "num_versions: 1",
                                                "}", 'default_model_filename: "model.onnx"'}
    assert {c.path for c in changes} == {"backend", "version_policy", "default_model_filename"}
    assert right == canonical_text(resolved_config(SERVER))


def test_a_file_that_does_not_parse_is_shown_as_written():
    from studio.diff.server import server_diff_texts

    left, right, changes = server_diff_texts("max_batch_sise: 4\n", SERVER)
    assert left == "max_batch_sise: 4\n" and changes == [] and "backend" in right
