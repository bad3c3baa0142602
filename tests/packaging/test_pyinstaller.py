"""The self-contained bundle: packaging/pyinstaller/build.sh builds the one-folder bundle (about 20 s on two cores)
into a temporary folder, and the bundled executable runs from a folder outside the checkout with no Python
environment around it: --version, validate on a bundled template, and the window's --screenshot path offscreen.
The embedded Triton (nvidia-pytriton) and the test tooling stay out of it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, scaled_s

BUILD = REPO / "packaging" / "pyinstaller" / "build.sh"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        pytest.fail("PyInstaller is not installed: pip install -e '.[test]' (the test extra has it)", pytrace=False)
    tmp = tmp_path_factory.mktemp("bundle")
    import sys

    env = {**os.environ, "PYTHON": sys.executable}
    r = subprocess.run(["bash", str(BUILD), "--dist", str(tmp / "dist")], capture_output=True, text=True,
                       timeout=scaled_s(300), env=env, cwd=tmp)
    assert r.returncode == 0, f"build.sh failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert "bundle:" in r.stdout.strip().splitlines()[-1], r.stdout
    folder = tmp / "dist" / "triton-studio"
    work = tmp / "elsewhere"
    (work / "home").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("STUDIO_")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(work / "home"), XDG_STATE_HOME=str(work / "home" / "state"),
               XDG_CONFIG_HOME=str(work / "home" / "config"), XDG_CACHE_HOME=str(work / "home" / "cache"),
               PATH="/usr/bin:/bin")
    return folder, work, env


def _run(bundle, *args, timeout=60.0):
    folder, work, env = bundle
    return subprocess.run([str(folder / "triton-studio"), *map(str, args)], capture_output=True, text=True,
                          timeout=scaled_s(timeout), cwd=work, env=env)


def test_the_bundle_starts_and_reports_its_version(bundle):
    from studio import __version__

    r = _run(bundle, "--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"triton-studio {__version__}"


def test_the_bundle_validates_a_bundled_template(bundle):
    folder = bundle[0]
    demo = folder / "_internal" / "studio" / "_data" / "model_repository_templates" / "demo"
    assert (demo / "add_sub" / "config.pbtxt").is_file(), "the demo repository is not in the bundle"
    r = _run(bundle, "validate", demo)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "4 model(s): 0 error(s)" in r.stderr
    r = _run(bundle, "templates")
    assert r.returncode == 0 and "onnxruntime_onnx" in r.stdout, r.stderr


def test_the_bundled_window_takes_a_screenshot(bundle):
    folder, work, _ = bundle
    demo = folder / "_internal" / "studio" / "_data" / "model_repository_templates" / "demo"
    shot = work / "shot.png"
    r = _run(bundle, demo / "add_sub" / "config.pbtxt", "--screenshot", shot, timeout=120)
    assert r.returncode == 0, r.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_the_bundle_leaves_out_the_embedded_triton_and_test_tools(bundle):
    internal = bundle[0] / "_internal"
    present = {p.name.split(".")[0] for p in internal.iterdir()}
    for left_out in ("pytriton", "tritonserver", "pytest", "hypothesis", "moto"):
        assert left_out not in present, f"{left_out} is in the bundle"
    assert not list(internal.rglob("libtritonserver*")), "the embedded Triton's server library is in the bundle"
    assert (internal / "PySide6").is_dir() and (internal / "studio" / "_data" / "resources").is_dir()
    size = sum(p.stat().st_size for p in Path(bundle[0]).rglob("*") if p.is_file() and not p.is_symlink())
    assert size < 600 * 2**20, f"the bundle grew to {size / 2**20:.0f} MiB"
