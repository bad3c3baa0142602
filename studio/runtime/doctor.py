"""`triton-studio doctor`: what this machine can run, and what to fix (no Qt imports: Qt is probed by files)."""

from __future__ import annotations

import ctypes.util
import importlib.util
import os
import shutil
from dataclasses import dataclass


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None
    essential: bool = False


def run_checks() -> list[Check]:
    from studio.runtime.errors import RuntimeFailure

    checks: list[Check] = []
    # embedded server
    try:
        from studio.runtime.embedded import EmbeddedServer

        s = EmbeddedServer.find()
        checks.append(Check("embedded Triton", True, f"tritonserver {s.triton_version()} with the python backend for Python {s.python_version}"))
    except RuntimeFailure as e:
        checks.append(Check("embedded Triton", False, e.message, e.hint))
    # docker
    try:
        from studio.runtime.docker_runtime import CPU_IMAGE_REPOSITORY, docker_client

        client = docker_client()
        info = client.info()
        checks.append(Check("Docker", True, f"daemon {info.get('ServerVersion', '?')} reachable"))
        runtimes = info.get("Runtimes", {}) or {}
        has_nvidia = "nvidia" in runtimes or any("nvidia" in str(v) for v in runtimes.values())
        checks.append(Check("NVIDIA container runtime", has_nvidia,
                            "registered with Docker" if has_nvidia else "Docker has no nvidia runtime: containers get no GPU",
                            None if has_nvidia else "install nvidia-container-toolkit, run nvidia-ctk runtime configure --runtime=docker, restart Docker"))
        tags = [t for img in client.images.list(name=CPU_IMAGE_REPOSITORY) for t in img.tags]
        checks.append(Check("CPU Triton image", bool(tags), ", ".join(tags) if tags else "not built",
                            None if tags else "packaging/cpu-triton-image/build.sh"))
    except RuntimeFailure as e:
        checks.append(Check("Docker", False, e.message, e.hint))
    # GPUs
    from studio.validate import local_gpus

    gpus = local_gpus()
    smi = shutil.which("nvidia-smi")
    checks.append(Check("GPUs", bool(gpus), f"{len(gpus)} NVIDIA GPU(s)" if gpus else "no NVIDIA GPU on this machine",
                        None if gpus else ("the embedded CPU server works without one" if not smi else "nvidia-smi is there but the driver shows no GPU")))
    # Qt
    has_pyside = importlib.util.find_spec("PySide6") is not None
    checks.append(Check("PySide6", has_pyside, "installed" if has_pyside else "missing", None if has_pyside else "pip install PySide6-Essentials", True))
    missing = [lib for lib in ("xcb-cursor", "xkbcommon-x11", "xcb-icccm", "xcb-keysyms", "xcb-shape", "EGL", "fontconfig")
               if ctypes.util.find_library(lib) is None]
    checks.append(Check("Qt xcb platform libraries", not missing, "all present" if not missing else "missing: " + ", ".join(missing),
                        None if not missing else "apt-get install libxcb-cursor0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libegl1 libfontconfig1"))
    display = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    checks.append(Check("display", bool(display), display or "none (QT_QPA_PLATFORM=offscreen or xvfb-run work without one)"))
    if not any(c.ok for c in checks if c.name in ("embedded Triton", "Docker")):
        checks.append(Check("a Triton runtime", False, "neither the embedded server nor Docker is usable", "bash scripts/setup.sh embedded", True))
    return checks
