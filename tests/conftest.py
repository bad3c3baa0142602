from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent

# Waits in GUI and integration tests scale with the machine: STUDIO_TEST_TIMEOUT_SCALE=3 on a slow or loaded one.
TIMEOUT_SCALE = float(os.environ.get("STUDIO_TEST_TIMEOUT_SCALE", "1") or 1)


def scaled(ms: float) -> int:
    """A wait in milliseconds (what a qtbot.wait* takes), scaled for this machine; at least the given value."""
    return int(ms * max(1.0, TIMEOUT_SCALE))


def scaled_s(seconds: float) -> float:
    """A wait in seconds, scaled like scaled()."""
    return seconds * max(1.0, TIMEOUT_SCALE)
CORPUS = REPO / "tests" / "data" / "corpus"
"""Real configs and Triton's own model-config test cases, vendored with their sources (tests/data/corpus/SOURCES.tsv)."""
EXTRA_CORPUS = Path(os.environ["STUDIO_CORPUS"]) if os.environ.get("STUDIO_CORPUS") else None
"""More pbtxt files to round-trip (optional): every *.pbtxt under $STUDIO_CORPUS."""


def corpus_files() -> list[Path]:
    """Every pbtxt of the vendored corpus (real configs and Triton's QA cases), plus $STUDIO_CORPUS's."""
    files = sorted(p for p in CORPUS.rglob("*.pbtxt") if p.is_file())
    assert len(files) > 250, f"only {len(files)} corpus files under {CORPUS}"
    if EXTRA_CORPUS is not None:
        if not EXTRA_CORPUS.is_dir():
            raise RuntimeError(f"STUDIO_CORPUS={EXTRA_CORPUS} is not a folder")
        files += sorted(p for p in EXTRA_CORPUS.rglob("*.pbtxt") if p.is_file())
    return files


def corpus_id(path: Path) -> str:
    """A short test id for a corpus file."""
    for root in (CORPUS, EXTRA_CORPUS):
        if root is not None and path.is_relative_to(root):
            return str(path.relative_to(root))
    return str(path)


@pytest.fixture(scope="session")
def corpus() -> list[Path]:
    return corpus_files()
