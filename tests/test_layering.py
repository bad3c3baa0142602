"""The core never imports Qt: only studio/ui may (import scan over the source)."""

from __future__ import annotations

import ast
from pathlib import Path

STUDIO = Path(__file__).resolve().parent.parent / "studio"
QT = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "superqt", "qtpy", "shiboken6")


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module


def test_core_packages_do_not_import_qt_or_the_ui():
    offenders = []
    files = [p for p in STUDIO.rglob("*.py") if "ui" not in p.relative_to(STUDIO).parts]
    assert len(files) > 10
    for path in files:
        if path.name == "cli.py":
            continue  # the CLI starts the GUI lazily (inside a function); checked below
        for line, mod in _imports(path):
            if mod.split(".")[0] in QT or mod.startswith("studio.ui"):
                offenders.append(f"{path.relative_to(STUDIO.parent)}:{line}: {mod}")
    assert not offenders, offenders


def test_cli_imports_the_ui_only_inside_the_gui_entry():
    tree = ast.parse((STUDIO / "cli.py").read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
    names += [n.module for n in top if isinstance(n, ast.ImportFrom) and n.module]
    assert not [n for n in names if n.split(".")[0] in QT or n.startswith("studio.ui")]
