"""Edits change only the lines they must; everything else keeps its bytes."""

from __future__ import annotations

import difflib

import pytest
from tritonclient.grpc import model_config_pb2

from studio.config import ConfigDocument, EditError, PathError

BASE = """\
# Copyright (c) 2024, somebody. All rights reserved.
#
# Licensed under the BSD license.

name: "add_sub"   # the model
backend: "python"
max_batch_size: 8
input [
  {
    name: "INPUT0"
    data_type: TYPE_FP32
    dims: [ 16 ]
  },
  {
    # the second input
    name: "INPUT1"
    data_type: TYPE_FP32
    dims: [ 16 ]
  }
]
output [
  {
    name: "OUTPUT0"
    data_type: TYPE_FP32
    dims: [ 16 ]
  }
]

# one CPU instance
instance_group [ { kind: KIND_CPU } ]
"""


def changes(before: str, after: str) -> tuple[list[str], list[str]]:
    """(removed lines, added lines) of a line diff."""
    removed, added = [], []
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


def check(doc: ConfigDocument) -> None:
    assert ConfigDocument.parse(doc.text).to_message() == doc.to_message()


def test_untouched_document_is_identical():
    doc = ConfigDocument.parse(BASE)
    assert doc.text == BASE
    doc.apply(doc.to_message())
    assert doc.text == BASE


def test_set_existing_scalar_rewrites_only_its_token():
    doc = ConfigDocument.parse(BASE)
    doc.set("max_batch_size", 32)
    assert changes(BASE, doc.text) == (["max_batch_size: 8"], ["max_batch_size: 32"])
    doc.set("name", "renamed")
    assert 'name: "renamed"   # the model' in doc.text
    doc.set("input[1].data_type", "TYPE_INT32")
    assert changes(BASE, doc.text)[1][-1] == "    data_type: TYPE_INT32"
    check(doc)


def test_set_repeated_element_and_append_into_existing_list():
    doc = ConfigDocument.parse(BASE)
    doc.set("input[0].dims[0]", 3)
    doc.append("input[0].dims", 224)
    assert changes(BASE, doc.text) == (["    dims: [ 16 ]"], ["    dims: [ 3, 224 ]"])
    check(doc)


def test_new_field_goes_in_schema_order_with_the_files_indentation():
    doc = ConfigDocument.parse(BASE)
    doc.set("dynamic_batching.max_queue_delay_microseconds", 100)
    removed, added = changes(BASE, doc.text)
    assert removed == []
    assert added == ["dynamic_batching {", "  max_queue_delay_microseconds: 100", "}"]
    lines = doc.text.splitlines()
    # after output (schema order), before the comment that belongs to instance_group
    assert lines.index("dynamic_batching {") > lines.index("output [")
    assert lines.index("dynamic_batching {") < lines.index("# one CPU instance")
    check(doc)


def test_new_field_in_nested_block_uses_sibling_indentation():
    doc = ConfigDocument.parse(BASE)
    doc.set("output[0].label_filename", "labels.txt")
    assert changes(BASE, doc.text) == ([], ['    label_filename: "labels.txt"'])
    check(doc)


def test_append_message_to_list_keeps_the_list_style():
    doc = ConfigDocument.parse(BASE)
    doc.append("output", {"name": "OUTPUT1", "data_type": "TYPE_FP32", "dims": [16]})
    removed, added = changes(BASE, doc.text)
    # a line diff aligns the old closing brace with the new element's
    assert removed == []
    assert added == ["  },", "  {", '    name: "OUTPUT1"', "    data_type: TYPE_FP32", "    dims: [ 16 ]"]
    check(doc)


def test_remove_takes_its_own_comments_and_leaves_others():
    doc = ConfigDocument.parse(BASE)
    doc.remove("input[1]")
    assert "# the second input" not in doc.text
    assert "# one CPU instance" in doc.text and "# the model" in doc.text
    assert doc.text.count("INPUT1") == 0
    removed, added = changes(BASE, doc.text)
    assert added == [] and len(removed) == 6 and "    # the second input" in removed
    check(doc)
    doc.clear("instance_group")
    assert "# one CPU instance" not in doc.text
    assert doc.text.endswith("]\n\n") or doc.text.endswith("]\n")
    check(doc)


def test_remove_line_style_element_with_its_comment():
    text = 'name: "m"\n# first\ninput { name: "a" }\n# second\ninput { name: "b" }  # b!\noutput { name: "o" }\n'
    doc = ConfigDocument.parse(text)
    doc.remove("input[1]")
    assert doc.text == 'name: "m"\n# first\ninput { name: "a" }\noutput { name: "o" }\n'
    doc.remove("input[0]")
    assert doc.text == 'name: "m"\noutput { name: "o" }\n'


def test_map_entries_by_key():
    doc = ConfigDocument.parse(BASE)
    doc.set('parameters["EXECUTION_ENV_PATH"].string_value', "$$TRITON_MODEL_DIRECTORY/env.tar.gz")
    assert doc.get('parameters["EXECUTION_ENV_PATH"].string_value') == "$$TRITON_MODEL_DIRECTORY/env.tar.gz"
    before = doc.text
    doc.set('parameters["EXECUTION_ENV_PATH"].string_value', "other.tar.gz")
    assert changes(before, doc.text) == (
        ['    string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz"'],
        ['    string_value: "other.tar.gz"'],
    )
    doc.remove('parameters["EXECUTION_ENV_PATH"]')
    assert "parameters" not in doc.text
    check(doc)


def test_oneof_switch_replaces_the_other_member():
    doc = ConfigDocument.parse(BASE + "dynamic_batching { }\n")
    doc.set("sequence_batching.max_sequence_idle_microseconds", 5000000)
    msg = doc.to_message()
    assert msg.WhichOneof("scheduling_choice") == "sequence_batching"
    assert "dynamic_batching" not in doc.text
    check(doc)


def test_apply_makes_minimal_edits():
    doc = ConfigDocument.parse(BASE)
    msg = doc.to_message()
    msg.max_batch_size = 4
    del msg.input[0]
    msg.instance_group[0].count = 2
    doc.apply(msg)
    removed, added = changes(BASE, doc.text)
    assert "max_batch_size: 4" in added
    assert "instance_group [ { kind: KIND_CPU count: 2 } ]" in added
    assert doc.to_message() == msg
    assert "# the second input" in doc.text  # INPUT1 stayed: only INPUT0 went
    assert "INPUT0" not in doc.text
    check(doc)


def test_crlf_file_keeps_crlf_on_edit():
    text = BASE.replace("\n", "\r\n")
    doc = ConfigDocument.parse(text)
    assert doc.text == text
    doc.set("dynamic_batching.max_queue_delay_microseconds", 100)
    doc.set("max_batch_size", 2)
    assert "\n" not in doc.text.replace("\r\n", "")
    check(doc)


def test_file_without_final_newline():
    doc = ConfigDocument.parse('name: "m"')
    doc.set("max_batch_size", 1)
    assert doc.text == 'name: "m"\nmax_batch_size: 1'
    doc = ConfigDocument.parse("")
    doc.set("name", "x")
    assert doc.text == 'name: "x"\n'


def test_bad_values_and_paths_are_clear_errors():
    doc = ConfigDocument.parse(BASE)
    with pytest.raises(EditError, match="did you mean TYPE_FP32"):
        doc.set("input[0].data_type", "TYPE_FLOAT")
    with pytest.raises(EditError, match="integer"):
        doc.set("max_batch_size", "8")
    with pytest.raises(EditError):
        doc.set("max_batch_size", 2**40)
    with pytest.raises(PathError, match="did you mean max_batch_size"):
        doc.set("max_batch_sise", 8)
    with pytest.raises(PathError, match="not in the document"):
        doc.set("input[5].name", "x")
    assert doc.text == BASE  # nothing changed on failure


def test_get_and_position():
    doc = ConfigDocument.parse(BASE)
    assert doc.get("max_batch_size") == 8
    assert doc.get("input[1].name") == "INPUT1"
    assert doc.get("input[0].data_type") == "TYPE_FP32"
    assert doc.get("input[0].dims") == [16]
    assert doc.get("dynamic_batching.max_queue_delay_microseconds") is None
    assert doc.position("input[1]") == (14, 3)
    assert doc.position("max_batch_size") == (7, 1)
    assert doc.position("dynamic_batching") is None
    assert isinstance(doc.get("output[0]"), model_config_pb2.ModelOutput)


def test_observers_are_told_of_every_edit():
    doc = ConfigDocument.parse(BASE)
    seen = []
    doc.subscribe(lambda d: seen.append(d.revision))
    doc.set("max_batch_size", 2)
    doc.set_text(doc.text + "\n")
    assert seen == [1, 2]


def test_save_is_atomic_and_keeps_mode(tmp_path):
    p = tmp_path / "config.pbtxt"
    p.write_text(BASE)
    p.chmod(0o640)
    doc = ConfigDocument.load(p)
    doc.set("max_batch_size", 16)
    doc.save()
    assert p.read_text() == BASE.replace("max_batch_size: 8", "max_batch_size: 16")
    assert p.stat().st_mode & 0o777 == 0o640
    assert [x.name for x in tmp_path.iterdir()] == ["config.pbtxt"]


def test_a_dropped_document_is_freed_without_the_cycle_collector():
    import gc
    import weakref

    gc.disable()
    try:
        doc = ConfigDocument.parse(BASE)
        doc.set("dynamic_batching.max_queue_delay_microseconds", 5)
        doc.append("input", {"name": "X", "data_type": "TYPE_FP32", "dims": [1]})
        ref = weakref.ref(doc._root)
        field_ref = weakref.ref(doc._root.fields[-1])
        del doc
        assert ref() is None and field_ref() is None  # no reference cycles keep the tree alive
    finally:
        gc.enable()
