"""The studio window, driven for real (offscreen, pytest-qt): Qt warnings fail these tests."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from tests.conftest import CORPUS, scaled, scaled_s
from tests.ui.conftest import ARTIFACTS, DEMO, open_repo, shot  # noqa: F401 - fixtures window, repo come from conftest

pytestmark = pytest.mark.gui


def changed_lines(before: str, after: str) -> list[str]:
    return [ln for ln in difflib.ndiff(before.splitlines(), after.splitlines()) if ln[:2] in ("- ", "+ ")]


def test_repository_browser_model_filter_and_badges(window, qtbot, repo, qtmodeltester):
    (repo / "broken").mkdir()
    (repo / "broken" / "1").mkdir()
    (repo / "broken" / "config.pbtxt").write_text('backend: "python"\nmax_batch_size: 4\ndynamic_batching { preferred_batch_size: [ 8 ] }\n')
    open_repo(window, qtbot, repo)
    qtmodeltester.check(window.repo_model)
    names = [window.proxy.index(r, 0).data() for r in range(window.proxy.rowCount())]
    assert names[0] == "add_sub" and names[1].startswith("batched_sleep")
    assert {"pipeline", "variable_length"} <= {n.split()[0] for n in names}
    assert any(n.startswith("broken") and "✗" in n for n in names)  # error badge
    window.filter_box.setText("sleep")
    assert window.proxy.rowCount() == 1
    window.filter_box.clear()
    shot(window, "repository_browser.png")


def test_type_in_the_form_and_save_changes_only_that_line(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    before = cfg.read_text()
    ed = window.open_config(str(cfg))
    box = ed.form.widgets["max_batch_size"]
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, "32")
    qtbot.keyClick(box, "\r")
    qtbot.waitUntil(lambda: "max_batch_size: 32" in ed.text.toPlainText(), timeout=scaled(3000))
    assert "*" in window.tabs.tabText(window.tabs.indexOf(ed))
    window.save_current()
    after = cfg.read_text()
    assert changed_lines(before, after) == ["- max_batch_size: 64", "+ max_batch_size: 32"]
    assert "*" not in window.tabs.tabText(window.tabs.indexOf(ed))
    shot(window, "config_editor.png")


def test_text_edit_updates_the_form_and_undo_works_across_views(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    original = ed.controller.text
    # 1) the text view
    ed.text.setPlainText(original.replace("max_batch_size: 64", "max_batch_size: 16"))
    ed.text.flush()
    qtbot.waitUntil(lambda: ed.form.widgets.get("max_batch_size") is not None and ed.form.widgets["max_batch_size"].text() == "16", timeout=scaled(3000))
    # 2) the form
    ed.form._set("dynamic_batching.max_queue_delay_microseconds", 700)
    assert "max_queue_delay_microseconds: 700" in ed.text.toPlainText()
    # undo the form edit, then the typing: the text view follows
    window.act_undo.trigger()
    assert "max_queue_delay_microseconds: 100" in ed.text.toPlainText()
    window.act_undo.trigger()
    assert ed.controller.text == original and ed.text.toPlainText() == original
    qtbot.waitUntil(lambda: ed.form.widgets["max_batch_size"].text() == "64", timeout=scaled(3000))
    window.act_redo.trigger()
    assert "max_batch_size: 16" in ed.controller.text


def test_unparsable_text_disables_the_form_and_marks_the_error(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    ed.text.setPlainText(ed.controller.text.replace("max_batch_size: 64", "max_batch_sise: 64"))
    ed.text.flush()
    qtbot.waitUntil(lambda: ed.form.widget().findChild(type(window.status), "form_unavailable") is not None, timeout=scaled(3000))
    qtbot.waitUntil(lambda: any(f.rule == "syntax" for f in ed.controller.findings), timeout=scaled(3000))
    f = ed.controller.findings[0]
    assert (f.line, f.column) == (4, 1) and "did you mean max_batch_size" in f.hint
    assert ed.findings.tree.topLevelItemCount() == 1
    shot(window, "parse_error.png")


def test_validation_panel_jumps_and_applies_fixes(window, qtbot, repo):
    cfg = repo / "add_sub" / "config.pbtxt"
    cfg.write_text(cfg.read_text().replace("max_queue_delay_microseconds: 100", "max_queue_delay_microseconds: 100\n  preferred_batch_size: [ 128 ]"))
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(cfg))
    qtbot.waitUntil(lambda: ed.findings.tree.topLevelItemCount() > 0, timeout=scaled(5000))
    item = ed.findings.tree.topLevelItem(0)
    f = item.data(0, 0x0100 + 2)
    assert f.rule == "dynamic-batching.preferred-le-max"
    ed.findings.tree.setCurrentItem(item)
    ed.jump_to(f)
    assert ed.text.textCursor().blockNumber() + 1 == f.line
    assert ed.findings.fix_button.isEnabled()
    ed.findings.fix_button.click()
    assert "max_batch_size: 128" in ed.controller.text
    qtbot.waitUntil(lambda: not [x for x in ed.controller.findings if x.severity == "error"], timeout=scaled(5000))
    shot(window, "validation_panel.png")


def test_external_change_reloads_when_clean_and_asks_when_dirty(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    ed = window.open_config(str(cfg))
    cfg.write_text(cfg.read_text().replace("max_batch_size: 64", "max_batch_size: 48"))
    qtbot.waitUntil(lambda: "max_batch_size: 48" in ed.controller.text, timeout=scaled(5000))
    assert not ed.controller.dirty
    ed.form._set("max_batch_size", 24)
    asked = []
    window.choose_external = lambda e: asked.append(e) or "diff"
    cfg.write_text(cfg.read_text().replace("max_batch_size: 48", "max_batch_size: 12"))
    qtbot.waitUntil(lambda: bool(asked), timeout=scaled(5000))
    assert "max_batch_size: 24" in ed.controller.text  # the user's edit is not lost
    diff = window.current_editor() is None and window.tabs.currentWidget()
    assert diff is not None and [c.path for c in diff.changes] == ["max_batch_size"]


def test_crash_recovery_file_and_restore(window, qtbot, repo):
    from studio.ui.editor.controller import recovery_files

    open_repo(window, qtbot, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    ed = window.open_config(str(cfg))
    ed.form._set("max_batch_size", 7)
    qtbot.waitUntil(lambda: bool(recovery_files()), timeout=scaled(5000))  # written shortly after the change
    info = recovery_files()[0]
    assert info["path"] == str(cfg) and "max_batch_size: 7" in info["text"]
    # a new studio (the old one "crashed": no clean close) restores it
    ed.controller._watcher.blockSignals(True)
    ed.controller._recovery_timer.stop()
    window.tabs.removeTab(window.tabs.indexOf(ed))
    ed2 = window.open_config(str(cfg), text=info["text"])
    assert "max_batch_size: 7" in ed2.controller.text and ed2.controller.dirty
    window.save_current()
    assert "max_batch_size: 7" in cfg.read_text()
    assert not [r for r in recovery_files() if r["path"] == str(cfg)]


def test_diff_view_and_ensemble_view(window, qtbot, tmp_path):
    from studio.repository.templates import create_model

    r = tmp_path / "ens"
    r.mkdir()
    create_model("pipe", "ensemble", r)
    cfg = r / "pipe" / "config.pbtxt"
    cfg.write_text(cfg.read_text().replace('input_map { key: "SCORES" value: "scores" }', 'input_map { key: "SCORES" value: "scorez" }'))
    open_repo(window, qtbot, r)
    ed = window.open_config(str(cfg))
    view = window.show_ensemble()
    assert view is not None and view.red_wires  # the broken wire is drawn red
    assert any("scorez" in w.tensor for w in view.graph.dangling + view.graph.wires if w.broken)
    shot(window, "ensemble_view.png")
    opened = []
    view.sig_open_model.connect(opened.append)
    view.sig_open_model.emit("pipe_model")
    window.tabs.setCurrentWidget(ed)
    ed.form._set("max_batch_size", 4)
    dv = window.show_diff(ed.controller.disk_text(), ed.controller.text, "on disk", "editor")
    assert [c.path for c in dv.changes] == ["max_batch_size"]
    assert any(r.tag == "replace" and r.left_spans for r in dv.rows)
    shot(window, "diff_view.png")


def test_browser_follows_changes_on_disk_and_diffs_against_a_template(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    with qtbot.waitSignal(window.sig_repository_loaded, timeout=scaled(30000)):
        (repo / "newcomer" / "1").mkdir(parents=True)
    names = [window.proxy.index(r, 0).data().split()[0] for r in range(window.proxy.rowCount())]
    assert "newcomer" in names
    window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    window.diff("template: python")
    dv = window.tabs.currentWidget()
    assert "max_batch_size" in {c.path for c in dv.changes}


def test_rename_duplicate_delete(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    with qtbot.waitSignal(window.sig_repository_loaded, timeout=scaled(30000)):
        window.duplicate_model("add_sub", "add_sub_copy")
    assert 'name: "add_sub_copy"' in (repo / "add_sub_copy" / "config.pbtxt").read_text()
    with qtbot.waitSignal(window.sig_repository_loaded, timeout=scaled(30000)):
        window.rename_model("add_sub_copy", "renamed")
    assert not (repo / "add_sub_copy").exists() and 'name: "renamed"' in (repo / "renamed" / "config.pbtxt").read_text()
    with qtbot.waitSignal(window.sig_repository_loaded, timeout=scaled(30000)):
        window.delete_model("renamed", confirm=False)
    assert not (repo / "renamed").exists()
    assert any(p.name.startswith("renamed-") for p in (Path(os.environ["XDG_DATA_HOME"]) / "Trash" / "triton-config-studio").iterdir())


CORPUS_FILES = sorted((CORPUS / "real-configs").rglob("*.pbtxt"))


def test_corpus_files_open_without_errors_or_qt_warnings(window, qtbot):
    for path in CORPUS_FILES:
        ed = window.open_config(str(path))
        assert ed is not None
        assert ed.text.toPlainText() == path.read_text()
        window.close_tab(window.tabs.indexOf(ed))


def test_server_panel_starts_and_stops_the_embedded_triton(window, qtbot):
    open_repo(window, qtbot, DEMO)
    states = []
    window.server.sig_state_changed.connect(states.append)
    with qtbot.waitSignal(window.server.sig_state_changed, timeout=scaled(120000), check_params_cb=lambda s: s == "ready"):
        window.server.start(window.repository, "embedded")
    assert "ready" in window.server.status.text() and "grpc://127.0.0.1:" in window.server.status.text()
    pid = window.server.runtime.pid
    qtbot.waitUntil(lambda: "Started GRPCInferenceService" in window.server.log.toPlainText(), timeout=scaled(20000))
    shot(window, "main_window_server.png")
    # the file against what the server made of it (auto-completed fields)
    from studio.runtime.client import TritonClient

    TritonClient(window.server.runtime.endpoints).wait_model_ready("add_sub")
    window.open_config(str(DEMO / "add_sub" / "config.pbtxt"))
    window.diff("the running server's resolved config")
    dv = window.tabs.currentWidget()
    added = {c.path for c in dv.changes if c.kind == "added"}
    assert "version_policy" in added and "optimization" in added
    with qtbot.waitSignal(window.server.sig_state_changed, timeout=scaled(60000), check_params_cb=lambda s: s == "stopped"):
        window.server.stop()
    assert states[:2] == ["starting", "ready"]
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as f:
            assert f.read().split(") ", 1)[1][0] == "Z"
    except ProcessLookupError:
        pass


def test_real_window_under_xvfb(tmp_path):
    """The studio in a real X window (xcb platform) on a virtual display, not just offscreen."""
    import shutil as sh
    import subprocess
    import sys

    xvfb = sh.which("xvfb-run")
    assert xvfb, "xvfb-run is missing: bash scripts/setup.sh installs it"
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    out = tmp_path / "xvfb.png"
    r = subprocess.run([xvfb, "-a", "-s", "-screen 0 1280x800x24", sys.executable, "-m", "studio.cli", str(DEMO),
                        "--screenshot", str(out)], env=env, capture_output=True, text=True, timeout=scaled_s(120))
    assert r.returncode == 0, r.stderr[-2000:]
    from PySide6.QtGui import QImage

    img = QImage(str(out))
    assert (img.width(), img.height()) == (1280, 800)


def test_new_model_wizard_writes_a_valid_model(window, qtbot, repo):
    from studio.ui.wizard.wizard import NewModelDialog
    from studio.validate import validate_path

    open_repo(window, qtbot, repo)
    dlg = NewModelDialog(window)
    dlg.template.setCurrentIndex(dlg.template.findData("onnxruntime_onnx"))
    dlg.name.setText("detector")
    dlg.inputs.setText("images:FP32:3,640,640")
    dlg.outputs.setText("boxes:TYPE_FP32:-1,6")
    dlg.max_batch.setValue(4)
    dlg.delay.setValue(200)
    cfg = window.new_model(dialog=dlg)
    assert cfg is not None
    text = Path(cfg).read_text()
    assert 'name: "images"' in text and "dims: [ 3, 640, 640 ]" in text and "max_queue_delay_microseconds: 200" in text
    (Path(cfg).parent / "1" / "model.onnx").write_bytes(b"")
    assert not [f for f in validate_path(Path(cfg).parent).findings if f.severity == "error"]
    dlg.name.setText("")
    with pytest.raises(ValueError):
        dlg.values()


def test_convert_framework_preview_applies_as_edits(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    view = window.convert_framework("pytorch")
    assert view is not None and "INPUT0__0" in view.right.toPlainText() and view.apply_button.isVisible()
    assert "model.py" in view.notes.text() or "rename" in view.notes.text()
    view.apply_button.click()
    assert 'platform: "pytorch_libtorch"' in ed.controller.text and "INPUT0__0" in ed.controller.text
    assert "# Demo: element-wise sum" in ed.controller.text  # comments kept
    shot(window, "convert_framework.png")


def test_oneof_selector_switches_the_branch(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    vp = ed.form.widgets["version_policy"]
    vp.setChecked(True)  # set version_policy { }
    qtbot.waitUntil(lambda: "version_policy" in ed.controller.text, timeout=scaled(3000))
    from PySide6.QtWidgets import QComboBox, QStackedWidget

    qtbot.waitUntil(lambda: ed.form.widgets["version_policy"].findChild(QComboBox) is not None, timeout=scaled(3000))
    combo = ed.form.widgets["version_policy"].findChild(QComboBox)
    combo.setCurrentText("specific")
    combo.activated.emit(combo.currentIndex())
    qtbot.waitUntil(lambda: "specific" in ed.controller.text, timeout=scaled(3000))
    assert ed.controller.document.to_message().version_policy.WhichOneof("policy_choice") == "specific"
    def stack():
        return ed.form.widgets["version_policy"].findChild(QStackedWidget)

    # the form rebuilds shortly after the edit: then the page of "specific" is the current one
    qtbot.waitUntil(lambda: stack() is not None and stack().currentIndex() == 3, timeout=scaled(3000))
    assert stack().count() == 4  # (none), latest, all, specific
