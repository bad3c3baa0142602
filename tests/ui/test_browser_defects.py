"""Browser defects of issue 12, driven for real (offscreen, pytest-qt): a config-only checkout, a config inside
a version folder, the parent folder of repositories, backends without a framework entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import scaled
from tests.ui.conftest import open_repo, shot

pytestmark = pytest.mark.gui

IO = 'input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]\noutput [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'


def _model(root: Path, name: str, body: str, files: dict[str, str] | None = None) -> Path:
    d = root / name
    d.mkdir(parents=True)
    if body is not None:
        (d / "config.pbtxt").write_text(f'name: "{name}"\n' + body)
    for rel, text in (files or {}).items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    return d


def _rows(window) -> dict[str, object]:
    return {window.proxy.index(r, 0).data().split()[0]: window.proxy.index(r, 0) for r in range(window.proxy.rowCount())}


def dark(widget):
    """Give WIDGET a dark palette (as a dark desktop theme does); returns the call that restores it."""
    from PySide6.QtGui import QColor, QPalette

    before = widget.palette()
    pal = QPalette(before)
    for role, c in ((QPalette.ColorRole.Window, "#262a30"), (QPalette.ColorRole.Base, "#1e2126"), (QPalette.ColorRole.AlternateBase, "#2a2e35"),
                    (QPalette.ColorRole.WindowText, "#e6e6e6"), (QPalette.ColorRole.Text, "#e6e6e6"), (QPalette.ColorRole.Button, "#30343b"),
                    (QPalette.ColorRole.ButtonText, "#e6e6e6"), (QPalette.ColorRole.Highlight, "#3d6fb4"), (QPalette.ColorRole.HighlightedText, "#ffffff"),
                    (QPalette.ColorRole.PlaceholderText, "#9e9e9e"), (QPalette.ColorRole.Mid, "#555a61"), (QPalette.ColorRole.Dark, "#15171a")):
        pal.setColor(role, QColor(c))
    widget.setPalette(pal)
    return lambda: widget.setPalette(before)


def test_a_config_only_checkout_shows_warnings_not_red_errors(window, qtbot, tmp_path):
    from PySide6.QtCore import Qt

    r = tmp_path / "configs"
    for n in ("detector", "classifier", "tokenizer"):
        _model(r, n, 'backend: "python"\nmax_batch_size: 8\n' + IO)
    _model(r, "pipeline", 'platform: "ensemble"\nmax_batch_size: 8\n' + IO + """ensemble_scheduling { step [
  { model_name: "detector" model_version: -1 input_map { key: "IN" value: "IN" } output_map { key: "OUT" value: "OUT" } } ] }
""")
    open_repo(window, qtbot, r)
    rows = _rows(window)
    assert set(rows) == {"detector", "classifier", "tokenizer", "pipeline"}
    for name, idx in rows.items():
        text = idx.data()
        assert "✗" not in text and "⚠" in text, text
        assert idx.data(Qt.ItemDataRole.ForegroundRole) is None  # not red
        tip = idx.data(Qt.ItemDataRole.ToolTipRole)
        assert "warning: no version folders: Triton will not load it until model files are present" in tip, (name, tip)
    assert "0 error(s)" in window.status.text()
    window.tree.expandAll()
    shot(window, "browser_config_only_checkout.png")
    restore = dark(window)
    try:
        shot(window, "browser_config_only_checkout_dark.png")
    finally:
        restore()


def test_a_config_inside_a_version_folder_opens_with_a_warning(window, qtbot, tmp_path):
    from PySide6.QtCore import Qt

    r = tmp_path / "repo"
    nested = 'name: "ensemble_model"\nplatform: "ensemble"\nmax_batch_size: 8\n' + IO
    _model(r, "ensemble_model", None, {"1/config.pbtxt": nested})
    _model(r, "pre", 'backend: "python"\nmax_batch_size: 8\n' + IO, {"1/model.py": ""})
    open_repo(window, qtbot, r)
    rows = _rows(window)
    model = rows["ensemble_model"]
    assert "Triton reads only ensemble_model/config.pbtxt; this file (ensemble_model/1/config.pbtxt) is ignored" in model.data(Qt.ItemDataRole.ToolTipRole)
    window.tree.expand(model)
    version = window.proxy.index(0, 0, model)
    window.tree.expand(version)
    f = window.proxy.index(0, 0, version)
    assert f.data() == "config.pbtxt"
    assert "Triton reads only ensemble_model/config.pbtxt; this file" in f.data(Qt.ItemDataRole.ToolTipRole)
    window.tree.scrollTo(f)
    rect = window.tree.visualRect(f)
    qtbot.mouseClick(window.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(window.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.current_editor() is not None, timeout=scaled(3000))
    ed = window.current_editor()
    assert Path(ed.controller.path) == (r / "ensemble_model" / "1" / "config.pbtxt").resolve()
    assert ed.text.toPlainText() == nested
    shot(window, "browser_misplaced_config.png")


def test_opening_a_folder_of_repositories_offers_the_repositories(window, qtbot, tmp_path):
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QApplication, QComboBox, QInputDialog

    parent = tmp_path / "L0_model_namespacing"
    for repo in ("addsub_repo", "subadd_repo"):
        _model(parent / repo, "simple", 'backend: "python"\nmax_batch_size: 8\n' + IO, {"1/model.py": ""})
    seen = {}

    def answer(tries=[0]):  # noqa: B006 - a counter: poll for the dialog at most 5 s
        dlg = QApplication.activeModalWidget()
        if not isinstance(dlg, QInputDialog):
            tries[0] += 1
            if tries[0] < 100:
                QTimer.singleShot(50, answer)
            return
        combo = dlg.findChild(QComboBox)
        seen["items"] = [combo.itemText(i) for i in range(combo.count())]
        seen["label"] = dlg.labelText()
        qtbot.keyClick(combo, Qt.Key.Key_Down)
        qtbot.keyClick(dlg, Qt.Key.Key_Return)

    QTimer.singleShot(50, answer)
    with qtbot.waitSignal(window.sig_repository_loaded, timeout=scaled(30000)):
        window.open_repository(str(parent))
    assert seen["items"][:2] == [str(parent / "addsub_repo"), str(parent / "subadd_repo")]
    assert "folder of model repositories" in seen["label"]
    assert window.repository == str((parent / "subadd_repo").resolve())
    assert list(_rows(window)) == ["simple"]  # not the bogus models addsub_repo and subadd_repo


def test_backends_without_a_framework_get_a_known_or_neutral_icon(window, qtbot, tmp_path):
    from studio.ui.browser.repository_model import icon_spec

    r = tmp_path / "llm"
    _model(r, "trtllm", 'backend: "tensorrtllm"\nmax_batch_size: 8\n' + IO, {"1/.keep": ""})
    _model(r, "vllm_model", 'backend: "vllm"\n' + IO, {"1/model.json": "{}"})
    _model(r, "custom", 'backend: "my_backend"\nmax_batch_size: 8\n' + IO, {"1/.keep": ""})
    _model(r, "ident", 'backend: "identity"\nmax_batch_size: 8\n' + IO, {"1/.keep": ""})
    open_repo(window, qtbot, r)
    nodes = {n.name: n for n in window.repo_model.roots}
    assert nodes["trtllm"].framework == "tensorrtllm" and icon_spec("tensorrtllm")[1] == "TL"
    assert nodes["vllm_model"].framework == "vllm" and icon_spec("vllm")[1] == "vL"
    for name in ("custom", "ident"):
        color, letters, outlined = icon_spec(nodes[name].framework)
        assert letters != "?" and outlined, (name, letters)
    window.tree.expandAll()
    shot(window, "browser_backends.png")
