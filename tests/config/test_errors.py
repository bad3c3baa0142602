"""Bad input: refused where text_format refuses it, at the same line and column, with a useful hint."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studio.config import ConfigDocument, ParseError
from tests.config.differential import compare
from tests.conftest import corpus_files

TEXTS = [p.read_text(encoding="utf-8") for p in corpus_files()]
NOISE = list("{}[]<>:,;\"'#\n -.0123456789abcxyzTF_ef")


def _mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(text) + 1)
        op = rng.random()
        if op < 0.4:
            text = text[:i] + text[i + 1 :]
        elif op < 0.8:
            text = text[:i] + rng.choice(NOISE) + text[i:]
        else:
            lines = text.split("\n")
            lines.insert(rng.randrange(len(lines)), lines[rng.randrange(len(lines))])
            text = "\n".join(lines)
    return text


def test_mutated_corpus_files_fail_exactly_where_text_format_fails():
    rng = random.Random(20261202)
    failures = []
    for _ in range(1500):
        text = _mutate(rng, rng.choice(TEXTS))
        problem = compare(text)
        if problem:
            failures.append((problem, text))
    assert not failures, failures[:3]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TEXTS), st.integers(0, 2**32), st.text(alphabet="".join(NOISE), max_size=3))
def test_any_splice_is_judged_like_text_format(text, where, noise):
    i = where % (len(text) + 1)
    assert compare(text[:i] + noise + text[i + len(noise) :]) is None


def _error(text: str) -> ParseError:
    with pytest.raises(ParseError) as e:
        ConfigDocument.parse(text)
    return e.value


def test_misspelled_field_names_the_right_one():
    e = _error('name: "m"\nmax_batch_sise: 8\n')
    assert (e.line, e.column) == (2, 1)
    assert e.hint == "did you mean max_batch_size?"
    assert 'has no field named "max_batch_sise"' in e.message
    text = e.format("models/m/config.pbtxt")
    assert text.splitlines()[0].startswith("models/m/config.pbtxt:2:1: error:")
    assert text.splitlines()[1].strip() == "max_batch_sise: 8"
    assert text.splitlines()[2] == "    ^"


def test_field_of_another_message_says_where_it_belongs():
    e = _error("max_queue_delay_microseconds: 100\n")
    assert e.hint.startswith("max_queue_delay_microseconds belongs inside dynamic_batching or sequence_batching.")


def test_unknown_enum_lists_the_valid_names():
    e = _error('input [ { name: "x" data_type: TYPE_FLOAT32 dims: [1] } ]')
    assert (e.line, e.column) == (1, 32)
    assert e.hint.startswith("did you mean TYPE_FP32?")
    assert "TYPE_STRING" in e.hint and "TYPE_BF16" in e.hint


def test_unclosed_brace_names_where_it_was_opened():
    e = _error('name: "m"\ninput [\n  {\n    name: "x"\n')
    assert "opened at line 3, column 3" in e.hint


def test_unclosed_bracket_names_where_it_was_opened():
    e = _error("name: \"m\"\ninput [\n  { name: \"x\" }\n")
    assert "'[' opened at line 2, column 7" in e.hint


def test_duplicate_and_oneof_conflicts():
    e = _error("max_batch_size: 4\nmax_batch_size: 8\n")
    assert e.line == 2 and "multiple" in e.message
    e = _error("dynamic_batching { }\nsequence_batching { }\n")
    assert e.line == 2 and "oneof" in e.message


def test_not_utf8_file_is_a_parse_error_with_position(tmp_path):
    p = tmp_path / "config.pbtxt"
    p.write_bytes(b'name: "m"\nplatform: "\xff"\n')
    with pytest.raises(ParseError) as e:
        ConfigDocument.load(p)
    assert e.value.line == 2 and e.value.filename == str(p)
