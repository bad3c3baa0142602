"""200% scaling (issue 12): the studio in a process of its own with QT_SCALE_FACTOR=2 (a pytest-qt test cannot
change the scale in-process); tests/ui/scale_probe.py writes facts about the editor's widgets before its screenshot.
1280x800 logical is a 2560x1600 screen at 200%, 960x540 a 1920x1080 one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO, scaled_s
from tests.ui.conftest import ARTIFACTS, DEMO

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("size", ["1280x800", "960x540"])
def test_the_form_has_no_horizontal_scrollbar_at_200_percent(tmp_path, size):
    repo = tmp_path / "repo"
    shutil.copytree(DEMO, repo)
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / f"editor_200pct_{size}.png"
    facts_file = tmp_path / "facts.json"
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env.update(QT_QPA_PLATFORM="offscreen", QT_SCALE_FACTOR="2", STUDIO_WIDGET_FACTS=str(facts_file),
               STUDIO_WINDOW_SIZE=size, XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_DATA_HOME=str(tmp_path / "data"), PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-m", "tests.ui.scale_probe", str(repo / "add_sub" / "config.pbtxt"), str(out)],
                       env=env, cwd=str(REPO), capture_output=True, text=True, timeout=scaled_s(120))
    assert r.returncode == 0, r.stderr[-2000:]
    facts = json.loads(facts_file.read_text())
    assert facts["device_pixel_ratio"] == 2.0 and facts["editor"], facts
    assert facts["window"] == [int(x) for x in size.split("x")], facts
    for key in ("form", "form_all_fields"):  # the common fields, then every field
        f = facts[key]
        assert not f["hscroll_visible"] and f["hscroll_range"] == 0, (key, f)
        assert f["root_min_width"] <= f["viewport_width"] and f["root_width"] <= f["viewport_width"], (key, f)
    assert facts["form_all_fields"]["labels_without_tooltip"] == []
    assert facts["findings"]["summary_fits"] and facts["findings"]["fix_button_fits"], facts["findings"]
    assert facts["findings"]["tree_hscroll_range"] == 0, facts["findings"]
    assert facts["text"]["gutter_fits"], facts["text"]
