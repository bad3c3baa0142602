from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parent.parent
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
