"""Where the studio keeps files: its data (resources/, beside the package or under share/) and its state."""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path


@cache
def resources_dir() -> Path:
    here = Path(__file__).resolve().parent.parent / "resources"
    if here.is_dir():
        return here
    installed = Path(sys.prefix) / "share" / "triton-config-studio" / "resources"
    if installed.is_dir():
        return installed
    raise FileNotFoundError(f"the studio's resources folder is missing (looked in {here} and {installed})")


def resource(name: str) -> Path:
    return resources_dir() / name


def state_dir(name: str) -> Path:
    """A folder of the studio's state ($XDG_STATE_HOME/triton-config-studio/<name>), created when missing."""
    base = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state"))
    d = base / "triton-config-studio" / name
    d.mkdir(parents=True, exist_ok=True)
    return d
