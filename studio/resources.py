"""Where the studio keeps files: its data (resources/, model_repository_templates/) and its state.

The data folders live at the top of the source tree. A wheel carries them inside the package, as
`studio/_data/resources` and `studio/_data/model_repository_templates` (pyproject.toml maps them there, no copies
in the tree); a checkout or an editable install reads them where they are.
"""

from __future__ import annotations

import os
from functools import cache
from importlib import resources as _ilr
from pathlib import Path


def data_dir(name: str) -> Path:
    """The studio's data folder `name` (resources or model_repository_templates): in the package, else the checkout."""
    candidates = []
    try:
        packaged = Path(str(_ilr.files("studio") / "_data" / name))
        candidates.append(packaged)
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - studio is always importable here
        pass
    candidates.append(Path(__file__).resolve().parent.parent / name)
    for c in candidates:
        if c.is_dir():
            return c
    raise FileNotFoundError(f"the studio's {name} folder is missing (looked in {', '.join(map(str, candidates))})")


@cache
def resources_dir() -> Path:
    return data_dir("resources")


@cache
def templates_dir() -> Path:
    return data_dir("model_repository_templates")


def demo_repository() -> Path:
    """The bundled demo model repository (model_repository_templates/demo)."""
    return templates_dir() / "demo"


def resource(name: str) -> Path:
    return resources_dir() / name


def state_dir(name: str) -> Path:
    """A folder of the studio's state ($XDG_STATE_HOME/triton-config-studio/<name>), created when missing."""
    base = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state"))
    d = base / "triton-config-studio" / name
    d.mkdir(parents=True, exist_ok=True)
    return d
