"""Triton's own model-config test cases (qa/L0_model_config), laid out the way its test script runs them."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import CORPUS

QA = CORPUS / "triton-qa-model-config"
PLATFORM_FILES = {"tensorrt_plan": "model.plan", "onnxruntime_onnx": "model.onnx", "pytorch_libtorch": "model.pt"}


@dataclass
class Trial:
    case: str  # case id, relative to the QA folder
    repo: Path  # a repository laid out for this trial
    model: str  # the model Triton must refuse
    auto_complete: bool
    patterns: list[str]  # grep patterns; any one must match a reported error


def bre_to_python(pattern: str) -> str:
    """grep's basic regular expressions: ( ) { } + ? | are literal unless escaped."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "(){}+?|" else "\\" + nxt)
            i += 2
            continue
        out.append("\\" + ch if ch in "(){}+?|" else ch)
        i += 1
    return "".join(out)


def _patterns(case_dir: Path) -> list[str]:
    return [bre_to_python(p.read_text().strip()) for p in sorted(case_dir.glob("expected*"))]


def _versions(model_dir: Path, filename: str | None) -> None:
    v = model_dir / "1"
    v.mkdir(exist_ok=True)
    if filename:
        (v / filename).write_bytes(b"")


def _default_file(text: str) -> str | None:
    if re.search(r'backend:\s*"python"', text):
        return "model.py"
    for platform, fname in PLATFORM_FILES.items():
        if platform in text:
            return fname
    if "ensemble_scheduling" in text:
        return None
    return "model.placeholder"


def trials(tmp: Path) -> list[Trial]:
    out: list[Trial] = []
    for case in sorted((QA / "noautofill_platform").iterdir()):
        text = (case / "config.pbtxt").read_text()
        body = "\n".join(ln for ln in text.splitlines() if not re.match(r"\s*platform\s*:", ln))
        for platform, fname in PLATFORM_FILES.items():
            repo = tmp / f"noautofill-{case.name}-{platform}"
            model = repo / case.name
            model.mkdir(parents=True)
            (model / "config.pbtxt").write_text(body + f'\nplatform: "{platform}"\n')
            _versions(model, fname)
            out.append(Trial(f"noautofill_platform/{case.name}[{platform}]", repo, case.name, False, _patterns(case)))
    for backend_dir in sorted((QA / "autofill_noplatform").iterdir()):
        for case in sorted(backend_dir.iterdir()):
            repo = tmp / f"autofill-{backend_dir.name}-{case.name}"
            if (case / "config.pbtxt").exists():
                model = repo / case.name
                model.mkdir(parents=True)
                text = (case / "config.pbtxt").read_text()
                (model / "config.pbtxt").write_text(text)
                _versions(model, _default_file(text))
            else:
                for sub in sorted(p for p in case.iterdir() if p.is_dir()):
                    model = repo / sub.name
                    model.mkdir(parents=True)
                    text = (sub / "config.pbtxt").read_text()
                    (model / "config.pbtxt").write_text(text)
                    _versions(model, _default_file(text))
            out.append(Trial(f"autofill_noplatform/{backend_dir.name}/{case.name}", repo, case.name, True, _patterns(case)))
    base = (QA / "model_metrics" / "BASE.pbtxt").read_text()
    for case in sorted((QA / "model_metrics" / "invalid_config").iterdir()):
        repo = tmp / f"metrics-{case.name}"
        model = repo / case.name
        model.mkdir(parents=True)
        (model / "config.pbtxt").write_text(base + "\n" + (case / "partial.pbtxt").read_text())
        _versions(model, "model.py")
        out.append(Trial(f"model_metrics/invalid_config/{case.name}", repo, case.name, True, _patterns(case)))
    for case in sorted((QA / "special_cases").iterdir()):
        repo = tmp / f"special-{case.name}"
        model = repo / case.name
        model.mkdir(parents=True)
        shutil.copyfile(case / "config.pbtxt", model / "config.pbtxt")
        _versions(model, "model.placeholder")
        out.append(Trial(f"special_cases/{case.name}", repo, case.name, True, _patterns(case)))
    return out
