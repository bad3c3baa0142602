"""Model templates (model_repository_templates/): list them and create a model folder from one.

A template is a folder with `manifest.toml` and either a model (config.pbtxt + version folder) or, for
pipelines, several model folders (`models = [...]`, `entry = ...`). `create_model` copies it under a new name,
renames the models an ensemble calls to `<name>_<folder>`, and applies `--set FIELD=VALUE` edits with the
config document (minimal edits, comments kept).
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from studio.config import ConfigDocument

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


def templates_dir() -> Path:
    """model_repository_templates/: in the installed package (a wheel), else the checkout (studio.resources)."""
    from studio.resources import templates_dir as _templates_dir

    return _templates_dir()


@dataclass
class Template:
    key: str
    path: Path
    description: str
    framework: str
    model_files: list[str]
    placeholders: list[dict] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    entry: str | None = None


def list_templates() -> dict[str, Template]:
    out = {}
    for d in sorted(templates_dir().iterdir()):
        m = d / "manifest.toml"
        if not m.is_file():
            continue
        with open(m, "rb") as f:
            data = tomllib.load(f)
        out[d.name] = Template(
            key=d.name,
            path=d,
            description=data.get("description", ""),
            framework=data.get("framework", ""),
            model_files=list(data.get("model_files", [])),
            placeholders=list(data.get("placeholders", [])),
            models=list(data.get("models", [])),
            entry=data.get("entry"),
        )
    return out


class TemplateError(ValueError):
    pass


def _copy_model(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("manifest.toml", ".gitkeep", "__pycache__"))
    for v in ("1",):
        (dst / v).mkdir(exist_ok=True)


def create_model(name: str, template: str, repo: str | Path, sets: dict[str, object] | None = None) -> list[Path]:
    """Create model folder(s) in `repo` from a template; returns the config files written."""
    if not _NAME.match(name):
        raise TemplateError(f"model name {name!r}: use letters, digits, '_', '-' and '.'")
    templates = list_templates()
    if template not in templates:
        raise TemplateError(f"unknown template {template!r}; templates: {', '.join(templates)}")
    t = templates[template]
    from studio.repository.storage import ReadOnlyError, check_writable

    try:
        check_writable(repo)
    except ReadOnlyError as e:
        raise TemplateError(str(e)) from None
    repo = Path(repo)
    if not repo.is_dir():
        raise TemplateError(f"{repo}: no such repository folder")
    if t.models:
        names = {m: (name if m == t.entry else f"{name}_{m}") for m in t.models}
    else:
        names = {"": name}
    for n in names.values():
        if (repo / n).exists():
            raise TemplateError(f"{repo / n} already exists: nothing was written")
    written: list[Path] = []
    try:
        for folder, new_name in names.items():
            src = t.path / folder if folder else t.path
            dst = repo / new_name
            _copy_model(src, dst)
            cfg = dst / "config.pbtxt"
            doc = ConfigDocument.load(cfg)
            doc.set("name", new_name)
            msg = doc.to_message()
            if msg.HasField("ensemble_scheduling"):
                for i, step in enumerate(msg.ensemble_scheduling.step):
                    if step.model_name in names:
                        doc.set(f"ensemble_scheduling.step[{i}].model_name", names[step.model_name])
            if folder in ("", t.entry):
                for path, value in (sets or {}).items():
                    if value is None:
                        doc.clear(path)
                    else:
                        doc.set(path, value)
            doc.save(cfg)
            written.append(cfg)
    except Exception:
        for new_name in names.values():
            shutil.rmtree(repo / new_name, ignore_errors=True)
        raise
    return written
