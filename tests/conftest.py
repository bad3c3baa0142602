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
CORPUS = Path(os.environ.get("STUDIO_CORPUS", REPO.parent / "shared" / "corpus"))


def corpus_files() -> list[Path]:
    """Every pbtxt of the shared corpus (real configs and Triton's QA cases)."""
    if not CORPUS.is_dir():
        raise RuntimeError(f"the shared corpus is missing at {CORPUS} (set STUDIO_CORPUS)")
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix == ".pbtxt")
    assert len(files) > 250, f"only {len(files)} corpus files under {CORPUS}"
    return files


@pytest.fixture(scope="session")
def corpus() -> list[Path]:
    return corpus_files()
