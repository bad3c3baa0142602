"""serve / status / doctor as a user runs them."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from tests.cli.test_cli import run
from tests.conftest import REPO, scaled_s


def test_serve_prints_endpoints_lists_in_status_and_stops_on_ctrl_c(tmp_path):
    env_repo = REPO / "model_repository_templates" / "demo"
    p = subprocess.Popen([sys.executable, "-m", "studio.cli", "serve", str(env_repo), "--runtime", "embedded",
                          "--models", "add_sub"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        assert line.startswith("ready: http http://127.0.0.1:"), line + p.stderr.read()
        assert " add_sub 1 READY" in p.stdout.readline()
        st = run("status")
        assert st.returncode == 0 and "embedded" in st.stdout and str(env_repo) in st.stdout
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=scaled_s(30)) == 0
        assert "serve: stopped" in p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
    deadline = time.monotonic() + scaled_s(10)  # the record goes once the server is gone
    while str(env_repo) in run("status").stdout:
        assert time.monotonic() < deadline, "serve's record outlived it"
        time.sleep(0.2)


def test_serve_with_a_missing_repository_is_a_clear_error(tmp_path):
    r = run("serve", str(tmp_path / "nope"), "--runtime", "embedded")
    assert r.returncode == 1 and "does not exist" in r.stderr and "Traceback" not in r.stderr


def test_doctor_reports_each_check():
    r = run("doctor")
    assert "embedded Triton: tritonserver 2.51.0" in r.stdout
    assert "[ok  ] PySide6" in r.stdout
    assert "GPUs:" in r.stdout and "Docker" in r.stdout
