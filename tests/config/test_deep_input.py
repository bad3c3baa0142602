"""Deep and huge inputs (issue 14): nesting is bounded like protobuf's C++ parser (100 messages), never a
RecursionError; tokens are made lazily and capped, and the parser's memory stays bounded on the worst inputs the
16 MiB file cap lets through (measured in a fresh process: peak RSS)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from google.protobuf import struct_pb2, text_format

from studio.config import ConfigDocument
from studio.config.syntax import MAX_DEPTH, MAX_TOKENS, ParseError


def nest(levels: int) -> str:
    """google.protobuf.Struct nested `levels` times: 3 messages a level (map entry, Value, Struct)."""
    return 'fields { key: "a" value { struct_value { ' * levels + "} } }" * levels


def test_python_text_format_has_no_depth_limit():
    # what we are protecting against: text_format.Parse itself ends in RecursionError
    with pytest.raises(RecursionError):
        text_format.Parse(nest(400), struct_pb2.Struct())


def test_nesting_up_to_the_limit_parses_and_round_trips():
    levels = MAX_DEPTH // 3  # 99 nested messages
    doc = ConfigDocument.parse(nest(levels), message_type=struct_pb2.Struct.DESCRIPTOR)
    assert doc.text == nest(levels)
    assert doc.to_message() == text_format.Parse(nest(levels), struct_pb2.Struct())


@pytest.mark.parametrize("levels", [MAX_DEPTH // 3 + 1, 5_000, 100_000])
def test_deeper_nesting_is_a_parse_error_at_the_101st_message(levels):
    with pytest.raises(ParseError) as e:
        ConfigDocument.parse(nest(levels), message_type=struct_pb2.Struct.DESCRIPTOR, filename="deep.pbtxt")
    # 33 levels hold 99 messages; the 34th level's map entry is the 100th; its `value {` the 101st: refused there
    col = len('fields { key: "a" value { struct_value { ') * 33 + len('fields { key: "a" value ') + 1
    first = str(e.value).splitlines()[0]
    assert first == (f"deep.pbtxt:1:{col}: error: Message is too deep, the parser exceeded the configured "
                     f"recursion limit of {MAX_DEPTH}.")


@pytest.mark.parametrize("text, where", [
    ("{" * 100_000, "1:1"),
    ("input {" * 100_000, "1:8"),
    ("input { dims: [" * 100_000, "1:16"),
])
def test_deep_model_config_text_fails_at_once_with_a_short_message(text, where):
    with pytest.raises(ParseError) as e:
        ConfigDocument.parse(text, filename="c.pbtxt")
    shown = str(e.value)
    assert shown.startswith(f"c.pbtxt:{where}: error: ")
    assert len(shown) < 600, "the source line must be shown as a window, not the whole 100,000-character line"


def test_too_many_tokens_is_a_parse_error_at_the_first_token_over():
    text = "input { dims: [" + "1," * MAX_TOKENS + "1] }"
    with pytest.raises(ParseError) as e:
        ConfigDocument.parse(text)
    assert e.value.message == f"The text has more than {MAX_TOKENS:,} tokens."
    # five tokens before the list, then one-character tokens: token number MAX_TOKENS (from 0) is the first over
    assert (e.value.line, e.value.column) == (1, 1 + len("input { dims: [") + MAX_TOKENS - 5)


MEASURE = """
import resource, sys
from studio.config import ConfigDocument
from studio.config.syntax import ParseError
N = 16 * 1024 * 1024 - 64
kind = sys.argv[1]
text = {"braces": "{" * N, "comments": "#\\n" * (N // 2), "dims": "input { dims: [" + "1," * (N // 2 - 16) + "1] }",
        "messages": "input{}" * (N // 7), "string": 'name: "' + "\\\\a" * (N // 2 - 8) + '"'}[kind]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    ConfigDocument.parse(text)
except ParseError:
    pass
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)
"""


@pytest.mark.parametrize("kind", ["braces", "comments", "dims", "messages", "string"])
def test_parser_memory_is_bounded_on_16_mib_worst_cases(kind):
    """Peak RSS growth of parsing a 16 MiB text (the file cap) in a fresh process. Before: 1.7-2.8 GiB for each
    of these; now at most ~110 MiB (the token cap bounds the tree; possessive regexes bound the tokenizer)."""
    r = subprocess.run([sys.executable, "-c", MEASURE, kind], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    grew_mib = int(r.stdout)
    assert grew_mib < 256, f"parsing 16 MiB of {kind} grew the process by {grew_mib} MiB"
