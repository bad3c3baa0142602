"""Framework knowledge base: platforms, backends, model files, auto-complete, framework-specific fields.

The facts live in resources/frameworks.toml (loaded once); this module answers questions about them.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache

from studio.resources import resource

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


@dataclass(frozen=True)
class Framework:
    key: str
    label: str
    platform: str
    backend: str
    default_model_filename: str
    model_is_directory: bool | str
    auto_complete: bool
    io_naming: str | None
    gpu_accelerators: tuple[str, ...]
    cpu_accelerators: tuple[str, ...]
    parameters: tuple[str, ...]
    specific_fields: tuple[str, ...]
    forbidden_fields: tuple[str, ...] = ()
    decoupled: bool = False  # the backend can send any number of responses per request
    model_files: str = ""  # what goes in a version folder, in words (for people, not checked)


@lru_cache(maxsize=1)
def _data() -> dict:
    with open(resource("frameworks.toml"), "rb") as f:
        return tomllib.load(f)


@lru_cache(maxsize=1)
def frameworks() -> dict[str, Framework]:
    out = {}
    for key, d in _data()["frameworks"].items():
        out[key] = Framework(
            key=key,
            label=d["label"],
            platform=d.get("platform", ""),
            backend=d.get("backend", ""),
            default_model_filename=d.get("default_model_filename", ""),
            model_is_directory=d.get("model_is_directory", False),
            auto_complete=bool(d.get("auto_complete", False)),
            io_naming=d.get("io_naming"),
            gpu_accelerators=tuple(d.get("gpu_accelerators", ())),
            cpu_accelerators=tuple(d.get("cpu_accelerators", ())),
            parameters=tuple(d.get("parameters", ())),
            specific_fields=tuple(d.get("specific_fields", ())),
            forbidden_fields=tuple(d.get("forbidden_fields", ())),
            decoupled=bool(d.get("decoupled", False)),
            model_files=d.get("model_files", ""),
        )
    return out


def known_backends() -> set[str]:
    fw = {f.backend for f in frameworks().values() if f.backend}
    return fw | set(_data()["backends"]["known"])


def backend_kind(backend: str) -> str:
    """"framework" (a framework of this knowledge base), "official" (ships with Triton or its QA suite) or
    "custom" (a backend of your own: libtriton_<name>.so on the server); "" for no backend."""
    if not backend:
        return ""
    if any(f.backend == backend for f in frameworks().values()):
        return "framework"
    return "official" if backend in known_backends() else "custom"


def python_based_backends() -> set[str]:
    return set(_data()["backends"]["python_based"])


def known_platforms() -> set[str]:
    return {f.platform for f in frameworks().values() if f.platform}


def version_policies() -> tuple[str, ...]:
    return tuple(_data()["version_policies"])


def framework_for(platform: str, backend: str) -> Framework | None:
    """The framework a (platform, backend) pair names; platform decides between TensorFlow flavours."""
    fws = frameworks().values()
    if platform:
        for f in fws:
            if f.platform == platform:
                return f
    if backend:
        for f in fws:
            if f.backend == backend and (not platform or f.platform == platform):
                return f
    return None


def framework_of(config) -> Framework | None:
    """The framework of a ModelConfig message (after Triton's platform/backend auto-fill)."""
    return framework_for(config.platform, config.backend)


def _norm(path: str) -> str:
    return re.sub(r"\[[^\]]*\]", "[*]", path)


def _covers(pattern: str, path: str) -> bool:
    p, q = _norm(pattern), _norm(path)
    return q == p or q.startswith(p + ".") or q.startswith(p + "[")


def specific_to(path: str) -> list[Framework]:
    """Frameworks for which a field path is specific (empty: a field every framework uses)."""
    return [f for f in frameworks().values() if any(_covers(s, path) for s in f.specific_fields)]


def applies(path: str, framework: Framework | None) -> tuple[bool, str | None]:
    """Whether a field means something for a framework, and if not, why (for dimming it in forms)."""
    if framework is None:
        return True, None
    if any(_covers(s, path) for s in framework.forbidden_fields):
        return False, f"{framework.label} models may not set {path.split('[')[0]}: Triton refuses it"
    owners = specific_to(path)
    if owners and framework not in owners:
        names = ", ".join(f.label for f in owners)
        return False, f"{path} is used by {names} only; {framework.label} ignores it"
    return True, None
