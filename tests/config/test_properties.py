"""Property-based tests: write -> parse -> equal, and random edit sequences against a plain message."""

from __future__ import annotations

import random

from google.protobuf import text_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tritonclient.grpc import model_config_pb2

from studio.config import ConfigDocument
from studio.config.descriptors import is_map, is_message, is_repeated
from studio.config.render import Style, message_body_lines
from tests.config.differential import compare
from tests.config.strategies import fill_message, messages, scalar_values
from tests.conftest import corpus_files

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
STYLES = st.builds(
    Style,
    unit=st.sampled_from(["  ", "    ", "\t", " "]),
    message_colon=st.booleans(),
    list_padding=st.booleans(),
    message_lists=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n"]),
)


@SETTINGS
@given(messages())
def test_text_format_output_parses_to_the_same_message(msg):
    for as_one_line in (False, True):
        text = text_format.MessageToString(msg, as_one_line=as_one_line)
        doc = ConfigDocument.parse(text)
        assert doc.text == text
        assert doc.to_message() == msg


@SETTINGS
@given(messages(), STYLES)
def test_our_writer_parses_to_the_same_message_in_every_style(msg, style):
    text = style.newline.join(message_body_lines(msg, "", style))
    doc = ConfigDocument.parse(text)
    assert doc.to_message() == msg
    assert compare(text) is None


# -- random edit sequences ---------------------------------------------------------------------------
def _walk(msg, prefix=""):
    """(path, message, field) for every field of every message present in `msg`."""
    for fd in msg.DESCRIPTOR.fields:
        yield prefix + fd.name, msg, fd
        if not is_message(fd):
            continue
        if is_map(fd):
            vfd = fd.message_type.fields_by_name["value"]
            for key in getattr(msg, fd.name):
                if is_message(vfd) and isinstance(key, str) and '"' not in key and "\\" not in key:
                    yield from _walk(getattr(msg, fd.name)[key], f'{prefix}{fd.name}["{key}"].')
        elif is_repeated(fd):
            for i, sub in enumerate(getattr(msg, fd.name)):
                yield from _walk(sub, f"{prefix}{fd.name}[{i}].")
        elif msg.HasField(fd.name):
            yield from _walk(getattr(msg, fd.name), f"{prefix}{fd.name}.")


def _edit(draw, doc: ConfigDocument, mirror) -> str:
    """One random edit, done to the document through its API and to the mirror through protobuf's."""
    spots = list(_walk(mirror))
    path, owner, fd = draw(st.sampled_from(spots))
    kind = draw(st.sampled_from(["set", "append", "remove", "clear", "apply"]))
    if kind == "apply":
        fill_message(draw, mirror, 0, 2, 0.15)
        doc.apply(mirror)
        return "apply"
    if kind == "clear":
        owner.ClearField(fd.name)
        doc.clear(path)
        return f"clear {path}"
    if is_map(fd):
        return "skip"
    if is_repeated(fd):
        container = getattr(owner, fd.name)
        if kind == "remove" and len(container):
            i = draw(st.integers(0, len(container) - 1))
            del container[i]
            doc.remove(f"{path}[{i}]")
            return f"remove {path}[{i}]"
        if is_message(fd):
            sub = type(container.add())()
            del container[-1]
            fill_message(draw, sub, 1, 2, 0.3)
            container.add().CopyFrom(sub)
            doc.append(path, sub)
            return f"append {path}"
        if kind == "set" and len(container):
            i = draw(st.integers(0, len(container) - 1))
            v = draw(scalar_values(fd))
            container[i] = v
            doc.set(f"{path}[{i}]", v)
            return f"set {path}[{i}]"
        v = draw(scalar_values(fd))
        container.append(v)
        doc.append(path, v)
        return f"append {path}"
    if is_message(fd):
        sub = type(getattr(owner, fd.name))()
        fill_message(draw, sub, 1, 2, 0.3)
        getattr(owner, fd.name).CopyFrom(sub)
        getattr(owner, fd.name).SetInParent()
        doc.set(path, sub)
        return f"set {path}"
    v = draw(scalar_values(fd))
    setattr(owner, fd.name, v)
    doc.set(path, v)
    return f"set {path}"


CORPUS_TEXTS = [p.read_text(encoding="utf-8") for p in corpus_files() if "real-configs" in p.parts]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_edit_sequences_match_the_same_edits_on_a_message(data):
    draw = data.draw
    text = draw(st.sampled_from(CORPUS_TEXTS))
    doc = ConfigDocument.parse(text)
    mirror = doc.to_message()
    for _ in range(draw(st.integers(1, 6))):
        what = _edit(draw, doc, mirror)
        assert doc.to_message() == mirror, what
        reparsed = ConfigDocument.parse(doc.text)
        assert reparsed.to_message() == mirror, what
        assert reparsed.text == doc.text


def test_corpus_comments_survive_random_edits():
    """Edits never drop a comment that does not belong to what they removed."""
    rng = random.Random(7)
    for text in CORPUS_TEXTS[:80]:
        doc = ConfigDocument.parse(text)
        msg = model_config_pb2.ModelConfig()
        msg.CopyFrom(doc.to_message())
        msg.max_batch_size = rng.randint(1, 64)
        if msg.WhichOneof("scheduling_choice") in (None, "dynamic_batching"):
            msg.dynamic_batching.max_queue_delay_microseconds = rng.randint(1, 1000)
        if len(msg.input):
            msg.input[0].dims.append(3)
        doc.apply(msg)
        before = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("#")]
        after = [ln.strip() for ln in doc.text.splitlines() if ln.strip().startswith("#")]
        assert before == after
        assert ConfigDocument.parse(doc.text).to_message() == msg
