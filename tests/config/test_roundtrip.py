"""Every file of the vendored corpus (tests/data/corpus): byte-identical round trip and the same message as text_format.Parse."""

from __future__ import annotations

import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from studio.config import ConfigDocument, ParseError
from tests.conftest import corpus_files, corpus_id

FILES = corpus_files()


@pytest.mark.parametrize("path", FILES, ids=[corpus_id(p) for p in FILES])
def test_corpus_file_round_trips_and_matches_text_format(path):
    text = path.read_bytes().decode("utf-8")
    expected = model_config_pb2.ModelConfig()
    try:
        text_format.Parse(text, expected)
    except text_format.ParseError as e:
        # partial.pbtxt fragments and the like: we must refuse them at the same place
        with pytest.raises(ParseError) as err:
            ConfigDocument.parse(text)
        assert (err.value.line, err.value.column) == (e.GetLine(), e.GetColumn())
        return
    doc = ConfigDocument.parse(text)
    assert doc.text == text
    assert doc.to_message() == expected
    assert doc.to_message().SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    )


def test_real_configs_carry_comments_the_editor_must_keep():
    real = [p for p in FILES if "real-configs" in p.parts]
    commented = sum("#" in p.read_text(encoding="utf-8") for p in real)
    assert commented / len(real) > 0.9
