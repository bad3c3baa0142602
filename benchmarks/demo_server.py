"""Shared by the tuning benchmarks: the embedded Triton serving one demo model from a scratch copy."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from studio.config import ConfigDocument
from studio.runtime import Endpoints, ServerOptions
from studio.runtime.client import TritonClient
from studio.runtime.embedded import EmbeddedRuntime

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def demo_server(model: str) -> Iterator[tuple[Endpoints, TritonClient, ConfigDocument]]:
    """(endpoints, client, the model's config document) with the model READY; stopped on exit."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(ROOT / "model_repository_templates" / "demo", repo)
        rt = EmbeddedRuntime()
        ep = rt.start(repo, ServerOptions(models=[model]))
        client = TritonClient(ep, logs=rt.logs)
        try:
            client.wait_model_ready(model)
            yield ep, client, ConfigDocument.load(repo / model / "config.pbtxt")
        finally:
            client.close()
            rt.stop()
