"""The validator against a real Triton's recorded verdicts (tests/validate/oracle/triton-2.51.json), without Triton.

The cases are regenerated (tests/validate/oracle/cases.py, seeded); scripts/record-validator-oracle.py re-records
the verdicts with the embedded Triton. Goals: no false errors (a config Triton loads never gets an error), few
missed rejections, Triton's own message on the agreed ones.
"""

from __future__ import annotations

import json

import pytest

from tests.validate.oracle.cases import SEED, generate
from tests.validate.oracle.compare import RECORDED, compare

# Ratchets: lower MAX_MISSED / raise MIN_MESSAGE_SHARE as rules close the gaps (never the other way round).
MAX_MISSED = 0
MIN_MESSAGE_SHARE = 1.0


@pytest.fixture(scope="module")
def result():
    return compare()


def test_recording_matches_the_generator():
    data = json.loads(RECORDED.read_text())
    assert data["triton_version"].startswith("2.51")
    assert data["seed"] == SEED
    ids = {c.id for c in generate()}
    assert set(data["cases"]) <= ids
    assert len(data["cases"]) >= 0.95 * len(ids), "re-record: scripts/record-validator-oracle.py"


def test_generator_is_deterministic():
    a, b = generate(), generate()
    assert [(c.id, c.config, c.files) for c in a] == [(c.id, c.config, c.files) for c in b]


def test_no_false_errors(result):
    assert not result.false_errors, result.details()


def test_missed_rejections_within_goal(result):
    assert len(result.missed) <= MAX_MISSED, result.summary() + "\n" + result.details()


def test_tritons_message_on_agreed_rejections(result):
    assert result.message_share >= MIN_MESSAGE_SHARE, result.summary() + "\n" + result.details()
