"""Deeply nested text in the editor (issue 14): opening it or typing it shows the parse error at its line and
column (never a RecursionError), and the window stays usable."""

from __future__ import annotations

import pytest

from tests.conftest import scaled
from tests.ui.conftest import open_repo

pytestmark = pytest.mark.gui


def test_opening_100000_braces_shows_the_error_at_1_1(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    cfg.write_text("{" * 100_000)
    ed = window.open_config(str(cfg))
    assert ed is not None
    err = ed.controller.parse_error
    assert err is not None and (err.line, err.column) == (1, 1)
    assert err.message == "Expected identifier or number, got {."
    findings = ed.controller.validate_now()
    assert findings and (findings[0].line, findings[0].column) == (1, 1)


def test_typing_deep_nesting_is_a_parse_error_not_a_crash(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    ed.text.setPlainText("input {" * 100_000)
    ed.text.flush()
    qtbot.waitUntil(lambda: ed.controller.parse_error is not None, timeout=scaled(5000))
    assert (ed.controller.parse_error.line, ed.controller.parse_error.column) == (1, 8)
    assert "*" in window.tabs.tabText(window.tabs.indexOf(ed))
