"""Desktop integration: the .desktop entry validates (desktop-file-validate), the MIME type and icons are sound,
install-desktop.sh installs and removes them, and `triton-studio FILE.pbtxt` / `REPO` open the right thing."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from configparser import ConfigParser
from pathlib import Path

import pytest

from tests.conftest import REPO, scaled, scaled_s

PACKAGING = REPO / "packaging"
DESKTOP = PACKAGING / "triton-config-studio.desktop"
MIME = PACKAGING / "triton-config-studio-mime.xml"
ICONS = REPO / "resources" / "icons"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256)
DEMO = REPO / "model_repository_templates" / "demo"


def _entry() -> dict[str, str]:
    cp = ConfigParser(interpolation=None)
    cp.optionxform = str
    cp.read(DESKTOP, encoding="utf-8")
    return dict(cp["Desktop Entry"])


def test_desktop_entry_validates():
    tool = shutil.which("desktop-file-validate")
    assert tool, ("desktop-file-validate is missing: apt-get install desktop-file-utils "
                  "(scripts/setup.sh installs it for the tests)")
    r = subprocess.run([tool, str(DESKTOP)], capture_output=True, text=True, timeout=scaled_s(30))
    assert r.returncode == 0 and not r.stdout.strip(), r.stdout + r.stderr
    e = _entry()
    assert e["Exec"].split()[0] == "triton-studio" and "%f" in e["Exec"].split()
    assert e["Icon"] == "triton-config-studio"
    assert "text/x-triton-config" in e["MimeType"].split(";")


def test_mime_type_claims_pbtxt():
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    root = ET.parse(MIME).getroot()
    t = root.find("m:mime-type", ns)
    assert t.get("type") == "text/x-triton-config"
    globs = {g.get("pattern") for g in t.findall("m:glob", ns)}
    assert {"*.pbtxt", "config.pbtxt"} <= globs
    assert t.find("m:sub-class-of", ns).get("type") == "text/plain"


def test_icons_are_rendered_at_every_size():
    assert (ICONS / "triton-config-studio.svg").is_file()
    ET.parse(ICONS / "triton-config-studio.svg")
    for s in SIZES:
        data = (ICONS / f"triton-config-studio-{s}.png").read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        w, h = struct.unpack(">II", data[16:24])
        assert (w, h) == (s, s), f"{s}px icon is {w}x{h}"


def test_install_desktop_user_installs_and_uninstalls(tmp_path):
    data = tmp_path / "share"
    fake = tmp_path / "bin" / "triton-studio"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    env = {**os.environ, "XDG_DATA_HOME": str(data), "HOME": str(tmp_path)}
    r = subprocess.run(["bash", str(PACKAGING / "install-desktop.sh"), "--user", "--exec", str(fake)], env=env,
                       capture_output=True, text=True, timeout=scaled_s(60))
    assert r.returncode == 0, r.stderr
    installed = data / "applications" / "triton-config-studio.desktop"
    assert f"Exec={fake} %f" in installed.read_text()
    assert (data / "mime" / "packages" / "triton-config-studio.xml").is_file()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / "triton-config-studio.svg").is_file()
    for s in SIZES:
        assert (data / "icons" / "hicolor" / f"{s}x{s}" / "apps" / "triton-config-studio.png").is_file()
    tool = shutil.which("desktop-file-validate")
    assert tool, "desktop-file-validate is missing: apt-get install desktop-file-utils"
    r2 = subprocess.run([tool, str(installed)], capture_output=True, text=True, timeout=scaled_s(30))
    assert r2.returncode == 0, r2.stdout + r2.stderr
    assert shutil.which("update-mime-database"), "update-mime-database is missing: apt-get install shared-mime-info"
    assert (data / "mime" / "text" / "x-triton-config.xml").is_file(), "the MIME database was not updated"

    r = subprocess.run(["bash", str(PACKAGING / "install-desktop.sh"), "--user", "--uninstall"], env=env,
                       capture_output=True, text=True, timeout=scaled_s(60))
    assert r.returncode == 0, r.stderr
    assert not list(data.rglob("triton-config-studio*")), list(data.rglob("triton-config-studio*"))
    assert not (data / "mime" / "text" / "x-triton-config.xml").exists()


def test_gui_target_resolves_files_models_and_repositories(tmp_path):
    from studio.cli import gui_target

    repo = tmp_path / "repo"
    shutil.copytree(DEMO, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    assert gui_target(str(cfg)) == (str(repo), str(cfg))
    assert gui_target(str(repo)) == (str(repo), None)
    assert gui_target(str(repo / "add_sub")) == (str(repo), str(cfg))
    alt = repo / "add_sub" / "configs" / "big.pbtxt"
    alt.parent.mkdir()
    alt.write_text(cfg.read_text())
    assert gui_target(str(alt)) == (str(repo), str(alt))
    with pytest.raises(ValueError, match="no such"):
        gui_target(str(tmp_path / "nope"))
    (tmp_path / "x.txt").write_text("")
    with pytest.raises(ValueError, match="not a model repository"):
        gui_target(str(tmp_path / "x.txt"))


def test_cli_refuses_a_missing_path_with_one_line(capsys):
    from studio.cli import main

    assert main(["/nonexistent/config.pbtxt"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no such folder or file" in err


@pytest.mark.gui
def test_opening_a_config_file_opens_its_repository_and_the_file(qtbot, qapp, tmp_path, monkeypatch):
    """`triton-studio repo/model/config.pbtxt --screenshot out.png`, through cli.main and run_gui: the window's
    repository is the model's parent, the file is the current editor tab, and the window has the icon."""
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    repo = tmp_path / "repo"
    shutil.copytree(DEMO, repo)
    target = sorted(p for p in repo.iterdir() if p.is_dir())[-1] / "config.pbtxt"  # not the first model
    seen: dict = {}

    def look() -> None:
        from studio.ui.shell.main_window import MainWindow

        for w in QApplication.topLevelWidgets():
            if isinstance(w, MainWindow) and w.isVisible():
                ed = w.current_editor()
                seen.update(repository=w.repository, title=w.windowTitle(),
                            current=ed.controller.path if ed else None, icon=not w.windowIcon().isNull())

    timer = QTimer()
    timer.timeout.connect(look)
    timer.start(50)
    out = tmp_path / "shot.png"
    from studio.cli import main

    guard = QTimer(singleShot=True, interval=scaled(60000))  # a hang fails below instead of blocking the suite
    guard.timeout.connect(QApplication.quit)
    guard.start()
    assert main([str(target), "--screenshot", str(out)]) == 0
    timer.stop()
    guard.stop()
    assert out.is_file()
    assert Path(seen["repository"]) == repo.resolve()
    assert seen["current"] == str(target.resolve())
    assert seen["title"].startswith(target.parent.name)
    assert seen["icon"] and not qapp.windowIcon().isNull()
