"""Fidelity: every case of Triton's own model-config tests is an error with Triton's message, and no real
config of the corpus gets an error (validated config-only)."""

from __future__ import annotations

import re

import pytest

from studio.config import ConfigDocument
from studio.validate import Options, validate_config, validate_repository
from tests.conftest import CORPUS
from tests.validate.qa_cases import trials

# Cases we judge impossible to decide without executing the model: none so far. Keep this list honest: a
# case goes here only with the reason, and the test checks the list stays short.
NOT_DECIDABLE: dict[str, str] = {}


def test_every_triton_qa_case_is_refused_with_tritons_message(tmp_path):
    all_trials = trials(tmp_path)
    assert len(all_trials) > 80
    misses = []
    for t in all_trials:
        if t.case in NOT_DECIDABLE:
            continue
        report = validate_repository(t.repo, Options(auto_complete=t.auto_complete))
        # Triton logs a refused model as "<status code>: <message>"; these checks are INVALID_ARG ones
        errors = [f"Invalid argument: {f.message}" for f in report.findings if f.severity == "error"]
        # an unknown backend is a warning (only the server knows its backends) quoting Triton's refusal
        errors += [f"Invalid argument: {m}" for f in report.findings if f.rule == "backend.unknown"
                   for m in re.findall(r'"(.*)"', f.message)]
        if not any(re.search(p, m) for p in t.patterns for m in errors):
            misses.append((t.case, t.patterns, errors))
    assert not misses, "\n".join(f"{c}: want {p}, got {e}" for c, p, e in misses)


REAL = sorted((CORPUS / "real-configs").rglob("*.pbtxt"))
# Real configs that Triton itself refuses: its own tests load them to check that they fail.
TRITON_REFUSES = {
    "server/qa/L0_response_cache/models/decoupled_cache/config.pbtxt": "cache.decoupled",  # L0_response_cache
}


@pytest.mark.parametrize("path", REAL, ids=[str(p.relative_to(CORPUS / "real-configs")) for p in REAL])
def test_real_configs_have_no_errors_config_only(path):
    doc = ConfigDocument.load(path)
    name = doc.get("name") or path.parent.name
    findings = validate_config(doc, model_name=name, options=Options(config_only=True), file=str(path))
    errors = [f for f in findings if f.severity == "error"]
    expected = TRITON_REFUSES.get(str(path.relative_to(CORPUS / "real-configs")))
    if expected:
        assert [f.rule for f in errors] == [expected]
        return
    assert not [f.format() for f in errors]
