"""The wheel works outside the checkout: built from a copy of the sources, installed into a fresh venv in a temporary
folder, and run from a folder that is not the checkout (--version, templates, validate on a bundled template,
the GUI's --screenshot path offscreen).

Dependencies: the fresh venv is made without pip and gets the wheel alone (--no-deps); its third-party
dependencies (PySide6, protobuf, tritonclient, ...) come from the project venv's site-packages through one .pth
file appended after the venv's own site-packages. A .pth line adds a folder to sys.path but does not run the
.pth files inside it, so the project's editable install of `studio` stays invisible: the test asserts that
`studio` is imported from the fresh venv. Installing the dependencies for real would download ~400 MB.
The build itself runs in pip's isolated build environment (setuptools>=77 from PyPI, or pip's cache when
offline after one run).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.conftest import REPO, scaled_s

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SOURCES = ("pyproject.toml", "README.md", "studio", "resources", "model_repository_templates")


def _run(cmd, cwd, env=None, timeout=60.0) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=scaled_s(timeout))
    return r


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv folder, its bin folder, a work folder outside the checkout, env for running there)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        p = REPO / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(p, src / name)
    dist = tmp / "dist"
    r = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(src)],
             cwd=tmp, timeout=180)
    assert r.returncode == 0, f"pip wheel failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    wheels = list(dist.glob("triton_config_studio-*.whl"))
    assert len(wheels) == 1, wheels

    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    vpy = env_dir / "bin" / "python"
    r = _run([sys.executable, "-m", "pip", "--python", str(vpy), "install", "--no-deps", "--no-index", str(wheels[0])],
             cwd=tmp, timeout=120)
    assert r.returncode == 0, f"installing the wheel failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    purelib = Path(_run([str(vpy), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp).stdout.strip())
    (purelib / "zz_project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    work = tmp / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp / "home"), XDG_CONFIG_HOME=str(tmp / "home" / "config"),
               XDG_STATE_HOME=str(tmp / "home" / "state"), XDG_CACHE_HOME=str(tmp / "home" / "cache"),
               PATH=f"{env_dir / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    (tmp / "home").mkdir()
    return env_dir, env_dir / "bin", work, env, wheels[0]


def test_the_wheel_carries_the_data_and_every_code_package(installed):
    import zipfile

    *_, wheel = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in (REPO / "resources").rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts:
            assert f"studio/_data/resources/{f.relative_to(REPO / 'resources').as_posix()}" in names
    templates = REPO / "model_repository_templates"
    for f in templates.rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
            assert f"studio/_data/model_repository_templates/{f.relative_to(templates).as_posix()}" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    # pyproject lists the code packages: a studio/ folder with Python files that is not listed would be left out
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {".".join(d.relative_to(REPO).parts) for d in (REPO / "studio").rglob("*")
               if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py"))}
    missing = sorted(folders - listed)
    assert not missing, f"add these to [tool.setuptools] packages in pyproject.toml, or the wheel lacks them: {missing}"


def test_installed_cli_runs_outside_the_checkout(installed):
    env_dir, bin_dir, work, env, _ = installed
    exe = str(bin_dir / "triton-studio")
    py = str(bin_dir / "python")
    r = _run([py, "-c", "import json, studio, studio.resources as r; print(json.dumps([studio.__file__, "
                        "str(r.resources_dir()), str(r.templates_dir())]))"], cwd=work, env=env)
    assert r.returncode == 0, r.stderr
    mod, res, tpl = json.loads(r.stdout)
    for p in (mod, res, tpl):
        assert Path(p).is_relative_to(env_dir), f"{p} is not in the fresh venv {env_dir}"
        assert not Path(p).is_relative_to(REPO)

    r = _run([exe, "--version"], cwd=work, env=env)
    assert r.returncode == 0 and r.stdout.strip().startswith("triton-studio "), (r.stdout, r.stderr)

    r = _run([exe, "templates"], cwd=work, env=env)
    assert r.returncode == 0, r.stderr
    for key in ("pytorch_libtorch", "onnxruntime_onnx", "python", "ensemble"):
        assert key in r.stdout

    template = Path(tpl) / "python" / "config.pbtxt"
    r = _run([exe, "validate", str(template)], cwd=work, env=env)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "0 error(s)" in r.stderr

    demo = Path(tpl) / "demo"
    r = _run([exe, "validate", str(demo)], cwd=work, env=env)
    assert r.returncode == 0, (r.stdout, r.stderr)

    r = _run([exe, "new", "m", "--template", "ensemble", "--repo", str(work)], cwd=work, env=env)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert (work / "m" / "config.pbtxt").is_file()


def test_installed_gui_takes_a_screenshot_offscreen(installed):
    env_dir, bin_dir, work, env, _ = installed
    py = str(bin_dir / "python")
    demo = _run([py, "-c", "from studio.resources import demo_repository; print(demo_repository())"], cwd=work, env=env)
    assert demo.returncode == 0, demo.stderr
    out = work / "window.png"
    r = _run([str(bin_dir / "triton-studio"), demo.stdout.strip(), "--screenshot", str(out)], cwd=work, env=env, timeout=90)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    assert out.is_file() and out.stat().st_size > 10_000, "no screenshot written"
