"""Every spelling text_format accepts for ModelConfig parses here to the same message, byte-identically."""

from __future__ import annotations

import pytest

from tests.config.differential import compare

CASES = {
    "colon and braces": 'name: "m" dynamic_batching { max_queue_delay_microseconds: 5 }',
    "colon before brace": "dynamic_batching: { preferred_batch_size: 4 }",
    "angle brackets": "dynamic_batching < preferred_batch_size: [4, 8] >",
    "repeated scalar list": "input [ { name: 'a' dims: [1, -1, 3] } ]",
    "repeated scalar lines": "input { name: 'a' dims: 1 dims: -1 }",
    "empty list": "input: [] output []",
    "separators": 'name: "m", platform: "onnxruntime_onnx"; max_batch_size: 4;',
    "comments anywhere": "input [ # c1\n { # c2\n name: 'x' # c3\n dims: [ # c4\n 1 # c5\n ] } # c6\n ] # end",
    "single quotes and escapes": "name: 'it\\'s \\\"q\\\" \\n \\t \\x41 \\101 \\u00e9'",
    "adjacent strings": 'name: "add" "_" \'sub\'',
    "hex octal negative ints": "max_batch_size: 0x10 input { dims: [ -1, 010, 0 ] }",
    "floats": "instance_group { } optimization { } sequence_batching { direct { minimum_slot_utilization: 1e-1 } }",
    "float spellings": "model_metrics { metric_control { histogram_options { buckets: [1, 2.5, 1e3, inf, -inf, 10f, .5, 1.5F] } } }",
    "nan": "model_metrics { metric_control { histogram_options { buckets: nan } } }",
    "enum by name and number": "input { data_type: TYPE_FP32 } input { data_type: 8 } instance_group { kind: 2 }",
    "bool spellings": "dynamic_batching { preserve_ordering: true } response_cache { enable: t } "
    "model_transaction_policy { decoupled: True }",
    "bool numbers": "dynamic_batching { preserve_ordering: 1 } response_cache { enable: 0 }",
    "bool false spellings": "model_transaction_policy { decoupled: False } response_cache { enable: f }",
    "map block entries": 'parameters { key: "A" value { string_value: "1" } } parameters { key: "B" value: { string_value: "2" } }',
    "map list entries": 'parameters: [ { key: "A" value { string_value: "1" } }, { key: "B" value { string_value: "2" } } ]',
    "map duplicate keys, last wins": 'parameters { key: "A" value { string_value: "1" } } parameters { key: "A" value { string_value: "2" } }',
    "string maps": 'ensemble_scheduling { step { model_name: "m" input_map { key: "a" value: "b" } output_map [ { key: "c", value: "d" } ] } }',
    "uint64 map keys": "dynamic_batching { priority_levels: 2 priority_queue_policy { key: 1 value { max_queue_size: 3 } } }",
    "crlf": 'name: "m"\r\nmax_batch_size: 1\r\n',
    "no final newline": 'name: "m"\nmax_batch_size: 1',
    "tabs and form feeds": 'name:\t"m"\x0c\nmax_batch_size :\t1',
    "default then set": "max_batch_size: 0 max_batch_size: 3",
    "unicode": 'name: "mod\u00e8le_\u6a21\u578b"  # \u6ce8\u91ca',
    "oneof scalar members": "model_warmup { name: 'w' inputs { key: 'x' value { data_type: TYPE_FP32 dims: 1 zero_data: true } } }",
    "empty": "",
    "only comments": "# nothing here\n# at all\n",
}


@pytest.mark.parametrize("text", list(CASES.values()), ids=list(CASES))
def test_accepted_syntax(text):
    assert compare(text) is None


BAD = {
    "trailing comma in list": "input { dims: [1, 2,] }",
    "unterminated string": 'name: "abc\nplatform: "x"',
    "string across lines": "name: 'a\nb'",
    "missing colon on scalar": 'name "m"',
    "extension syntax": "[foo.bar]: 1",
    "message as scalar": "dynamic_batching: 5",
    "list for singular": "max_batch_size: [1]",
    "float for int": "max_batch_size: 1.5",
    "int32 overflow": "max_batch_size: 4294967296",
    "negative unsigned": "dynamic_batching { max_queue_delay_microseconds: -1 }",
    "octal float": "model_metrics { metric_control { histogram_options { buckets: 01.5 } } }",
    "duplicate message": "dynamic_batching { } dynamic_batching { }",
    "duplicate oneof member scalar": "model_warmup { inputs { key: 'x' value { zero_data: false random_data: true } } }",
    "bad escape": r"name: '\q'",
    "unmatched close": "}",
    "unclosed block at eof": "dynamic_batching {",
    "angle closed with brace": "dynamic_batching < }",
    "invalid utf8 escape": r"name: '\xff'",
}


@pytest.mark.parametrize("text", list(BAD.values()), ids=list(BAD))
def test_refused_syntax_fails_at_the_same_place(text):
    assert compare(text) is None
