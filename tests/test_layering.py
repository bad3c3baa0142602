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


UI = STUDIO / "ui"
CAPABILITIES = sorted(p.name for p in UI.iterdir() if p.is_dir() and p.name != "__pycache__")


def test_the_window_is_one_folder_per_capability():
    flat = [p.name for p in UI.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert not flat, f"modules directly under studio/ui (put them in a capability folder): {flat}"
    for c in ("shell", "common", "browser", "editor", "validation", "diff", "ensemble", "server", "tuning", "wizard"):
        assert (UI / c / "__init__.py").is_file(), f"studio/ui/{c}/ is missing"
        doc = ast.get_docstring(ast.parse((UI / c / "__init__.py").read_text(encoding="utf-8")))
        assert doc, f"studio/ui/{c}/__init__.py needs a docstring: what it shows, which core objects it observes"


def test_a_capability_imports_only_ui_common_and_the_core():
    """Only the shell knows the capability folders; the others import ui/common and the core."""
    offenders = []
    for c in CAPABILITIES:
        if c == "shell":
            continue
        for path in (UI / c).rglob("*.py"):
            for line, mod in _imports(path):
                parts = mod.split(".")
                if mod.startswith("studio.ui.") and len(parts) > 2 and parts[2] not in (c, "common"):
                    offenders.append(f"{path.relative_to(STUDIO.parent)}:{line}: {mod}")
    # relative imports that climb out of the folder are refused too
    for path in UI.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 1:
                offenders.append(f"{path.relative_to(STUDIO.parent)}:{node.lineno}: relative import level {node.level}")
    assert not offenders, offenders


def test_the_core_does_not_import_the_ui_even_lazily():
    for path in STUDIO.rglob("*.py"):
        rel = path.relative_to(STUDIO)
        if rel.parts[0] == "ui" or path.name == "cli.py":
            continue
        assert not [m for _l, m in _imports(path) if m.startswith("studio.ui")], path
