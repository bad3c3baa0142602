"""Triton images on a Docker engine: list the local ones, ask the registry about one, pull with per-layer
progress and a real cancel, and turn Docker's errors into one clear line each. No Qt.

    images = local_triton_images(client)                  # [ImageInfo(tag, size, created, id)]
    info = registry_info(client, "nvcr.io/nvidia/tritonserver:24.10-py3")   # before asking the user
    puller = Pull(image, on_progress=lambda layers: ..., base_url=None).start();  puller.cancel();  puller.wait()

A pull runs in a child process (`python -m studio.runtime.images pull IMAGE`) that prints Docker's progress
events as JSON lines: cancelling kills that process, which closes its connection, and the daemon abandons the
pull. (A blocked HTTP read inside docker-py cannot be interrupted from another thread.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from studio.runtime.errors import (
    DockerUnavailable,
    GpuUnavailable,
    ImageMissing,
    PortInUse,
    RuntimeFailure,
)

NGC_IMAGE = "nvcr.io/nvidia/tritonserver"
NGC_TAG = "24.10-py3"  # Triton 2.51, the version the embedded server and the validator follow
DEFAULT_SUGGESTION = f"{NGC_IMAGE}:{NGC_TAG}"
NGC_TYPICAL_SIZE = "about 10–20 GB"


class RegistryUnreachable(ImageMissing):
    """The image is not local and its registry cannot be reached."""


class PullCancelled(RuntimeFailure):
    pass


@dataclass
class ImageInfo:
    tag: str
    size: int  # bytes
    created: str  # ISO time
    id: str

    def size_text(self) -> str:
        return human_size(self.size)


def human_size(n: int | None) -> str:
    if n is None:
        return "unknown size"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n} B"


def split_image(image: str) -> tuple[str, str]:
    """(repository, tag); the tag defaults to latest (a digest stays in the repository part)."""
    if "@" in image:
        return image, ""
    last = image.split("/")[-1]
    if ":" in last:
        repo, _, tag = image.rpartition(":")
        return repo, tag
    return image, "latest"


def _is_triton(img) -> bool:
    attrs = img.attrs or {}
    cfg = attrs.get("Config") or {}
    text = " ".join(img.tags) + " " + " ".join(cfg.get("Env") or []) + " " + json.dumps(cfg.get("Labels") or {})
    text += " " + " ".join(cfg.get("Entrypoint") or []) + " " + " ".join(cfg.get("Cmd") or [])
    return "tritonserver" in text.lower() or "triton" in json.dumps(cfg.get("Labels") or {}).lower()


def local_triton_images(client) -> list[ImageInfo]:
    """Local images that contain tritonserver (by tag, PATH, entrypoint or label), newest first."""
    out = []
    for img in client.images.list():
        if not img.tags or not _is_triton(img):
            continue
        for tag in img.tags:
            out.append(ImageInfo(tag, int(img.attrs.get("Size") or 0), str(img.attrs.get("Created") or "")[:19], img.short_id))
    out.sort(key=lambda i: i.created, reverse=True)
    return out


def image_is_local(client, image: str) -> bool:
    import docker

    try:
        client.images.get(image)
        return True
    except docker.errors.ImageNotFound:
        return False


def nvidia_runtime(client) -> bool:
    """The engine can give GPUs to containers (an nvidia runtime or CDI devices are configured)."""
    try:
        info = client.info()
    except Exception:  # noqa: BLE001
        return False
    runtimes = info.get("Runtimes") or {}
    return "nvidia" in runtimes or info.get("DefaultRuntime") == "nvidia" or bool(info.get("CDISpecDirs") and
                                                                                  os.path.exists("/etc/cdi/nvidia.yaml"))


def engine_is_remote(base_url: str | None = None) -> str | None:
    """The remote engine's address when the engine is not this machine's (DOCKER_HOST or a base URL)."""
    where = base_url or os.environ.get("DOCKER_HOST") or ""
    if where and not where.startswith("unix://") and not where.startswith("npipe://"):
        return where
    return None


@dataclass
class RegistryInfo:
    exists: bool | None  # None: the registry could not be asked
    size: int | None  # bytes, when the registry says
    platforms: list[str] = field(default_factory=list)
    error: str | None = None

    def size_text(self) -> str:
        return human_size(self.size) if self.size is not None else "size not reported by the registry"


def registry_info(client, image: str, timeout_s: float = 5.0) -> RegistryInfo:
    """What the registry says about an image before a pull (through the engine: its network, its credentials).
    A registry that does not answer within timeout_s is reported as unreachable."""
    box: dict = {}

    def ask() -> None:
        try:
            box["data"] = client.api.inspect_distribution(image)
        except Exception as e:  # noqa: BLE001 - classified below
            box["error"] = e

    t = threading.Thread(target=ask, daemon=True, name="registry-info")
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        return RegistryInfo(None, None, error=f"the registry of {image} did not answer within {timeout_s:.0f} s")
    try:
        if "error" in box:
            raise box["error"]
        data = box["data"]
    except Exception as e:  # noqa: BLE001 - classified below
        err = classify(e, image)
        return RegistryInfo(None if isinstance(err, RegistryUnreachable) else False, None, error=err.message)
    plats = [f"{p.get('os')}/{p.get('architecture')}" for p in data.get("Platforms") or []]
    desc = data.get("Descriptor") or {}
    size = None
    if desc.get("mediaType", "").endswith("manifest.v2+json") or desc.get("mediaType", "").endswith("image.manifest.v1+json"):
        size = None  # the descriptor's size is the manifest's own, not the image's: never show it as such
    return RegistryInfo(True, size, plats)


def classify(e: Exception, image: str | None = None) -> RuntimeFailure:
    """One clear error for Docker's many ways to fail."""
    if isinstance(e, RuntimeFailure):
        return e
    text = str(e)
    explanation = getattr(e, "explanation", None)
    detail = (explanation if isinstance(explanation, str) and explanation else text).strip()
    low = text.lower()
    try:
        import docker

        from_engine = isinstance(e, docker.errors.APIError)  # the daemon answered: the failure is past it
    except ImportError:  # pragma: no cover
        from_engine = False
    if not from_engine and "permission denied" in low:
        return DockerUnavailable("cannot reach the Docker daemon: permission denied on its socket",
                                 "add your user to the docker group (sudo usermod -aG docker $USER) and log in again")
    if not from_engine and ("connection refused" in low or "filenotfounderror" in low or "no such file" in low
                            or "error while fetching server api version" in low):
        return DockerUnavailable(f"no Docker daemon answers: {detail[:200]}",
                                 "start Docker (sudo systemctl start docker, or dockerd), or set DOCKER_HOST")
    if "could not select device driver" in low or "nvidia-container-cli" in low or "unknown runtime" in low and "nvidia" in low:
        return GpuUnavailable("this Docker engine cannot give GPUs to containers (no NVIDIA runtime)",
                              "install the NVIDIA Container Toolkit and restart Docker, or choose GPUs: none")
    if "port is already allocated" in low or "address already in use" in low:
        import re

        m = re.search(r":(\d{2,5})\b", text)
        return PortInUse(int(m.group(1)) if m else 0, "published port")
    name = image or "the image"
    if any(s in low for s in ("no such host", "dial tcp", "i/o timeout", "network is unreachable",
                              "tls handshake timeout", "connection reset", "temporary failure in name resolution",
                              "connection refused", "context deadline exceeded")):
        return RegistryUnreachable(f"{name} is not on this machine and its registry cannot be reached: {_short(detail)}",
                                   "check the network or proxy of the Docker engine, or pick a local image "
                                   "(packaging/cpu-triton-image/build.sh builds a CPU Triton without a registry)")
    if any(s in low for s in ("manifest unknown", "not found", "pull access denied", "repository does not exist",
                              "unauthorized", "denied")):
        return ImageMissing(f"image {name} not found in its registry (or access denied): {_short(detail)}",
                            "check the name and tag (NGC tags look like 24.10-py3); for NGC run docker login nvcr.io")
    return RuntimeFailure(f"Docker: {_short(detail)}")


def _short(text: str) -> str:
    text = " ".join(text.split())
    if 'Internal Server Error ("' in text:
        text = text.split('Internal Server Error ("', 1)[1].rstrip('")')
    return text[:240]


class Pull:
    """Pull an image in a child process. on_progress(layers) gets {layer id: {status, current, total}} after
    each event (from the reader thread). wait() returns normally, or raises PullCancelled / a classified error."""

    def __init__(self, image: str, on_progress: Callable[[dict], None] | None = None, base_url: str | None = None,
                 on_event: Callable[[dict], None] | None = None) -> None:
        self.image = image
        self.base_url = base_url
        self.on_progress = on_progress
        self.on_event = on_event
        self.layers: dict[str, dict] = {}
        self.error: RuntimeFailure | None = None
        self.cancelled = False
        self._proc: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None
        self.started = 0.0

    def start(self) -> Pull:
        args = [sys.executable, "-m", "studio.runtime.images", "pull", self.image]
        if self.base_url:
            args.append(self.base_url)
        self.started = time.monotonic()
        self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True, start_new_session=True)
        self._thread = threading.Thread(target=self._read, name="image-pull", daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "studio_error" in ev:
                self.error = _error_from_child(ev)
                continue
            if self.on_event:
                self.on_event(ev)
            lid = ev.get("id")
            if lid and ("progressDetail" in ev or ev.get("status")):
                detail = ev.get("progressDetail") or {}
                entry = self.layers.setdefault(lid, {})
                entry["status"] = ev.get("status", "")
                if detail.get("total"):
                    entry["current"] = detail.get("current", 0)
                    entry["total"] = detail["total"]
                if self.on_progress:
                    self.on_progress(dict(self.layers))
        self._proc.wait()

    def cancel(self) -> None:
        self.cancelled = True
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()

    def wait(self, timeout: float | None = None) -> None:
        assert self._thread is not None
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError("the pull is still running")
        if self.cancelled:
            raise PullCancelled(f"pull of {self.image} cancelled")
        if self.error is not None:
            raise self.error
        if self._proc is not None and self._proc.returncode != 0:
            raise RuntimeFailure(f"the pull of {self.image} ended with code {self._proc.returncode}")

    @property
    def done(self) -> bool:
        return self._thread is not None and not self._thread.is_alive()


def _error_from_child(ev: dict) -> RuntimeFailure:
    kinds = {c.__name__: c for c in (DockerUnavailable, GpuUnavailable, ImageMissing, RegistryUnreachable, RuntimeFailure)}
    cls = kinds.get(ev.get("kind"), RuntimeFailure)
    return cls(ev["studio_error"], ev.get("hint"))


def _pull_main(image: str, base_url: str | None) -> int:
    """The child: stream Docker's pull events as JSON lines; a failure as {"studio_error": ...}."""
    from studio.runtime.docker_runtime import docker_client

    try:
        client = docker_client(base_url)
        repo, tag = split_image(image)
        for ev in client.api.pull(repo, tag=tag or None, stream=True, decode=True):
            if "error" in ev:
                raise RuntimeError(ev["error"])
            print(json.dumps(ev), flush=True)
    except Exception as e:  # noqa: BLE001 - reported to the parent as one classified line
        err = classify(e, image)
        print(json.dumps({"studio_error": err.message, "hint": err.hint, "kind": type(err).__name__}), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "pull":
        sys.exit(_pull_main(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
    print("usage: python -m studio.runtime.images pull IMAGE [BASE_URL]", file=sys.stderr)
    sys.exit(2)
