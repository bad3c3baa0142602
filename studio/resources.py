"""Where the studio's data files (resources/) are: beside the package in a checkout, or under share/."""

from __future__ import annotations

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
