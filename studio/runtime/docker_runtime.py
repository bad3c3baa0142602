"""DockerRuntime: a Triton container started with docker-py (GPU when asked), watched and removed.

Security defaults: ports published on 127.0.0.1 only, the repository mounted read-only at /models, never
privileged, no host network, the Docker socket never mounted, commands as argument lists.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from studio.runtime.base import (
    LABEL,
    Endpoints,
    Runtime,
    ServerOptions,
    Status,
    check_repository,
    choose_ports,
    wait_ready,
)
from studio.runtime.errors import (
    DockerUnavailable,
    GpuUnavailable,
    ImageMissing,
    PortInUse,
    RuntimeFailure,
    ServerExited,
)


class ImageNotLocal(ImageMissing):
    """The image is not on this engine and pulling was not allowed (the user is asked first)."""

DEFAULT_IMAGE = "nvcr.io/nvidia/tritonserver:24.10-py3"  # Triton 2.51
CPU_IMAGE_REPOSITORY = "triton-config-studio/tritonserver-cpu"


def docker_client(base_url: str | None = None):
    """A docker-py client, or DockerUnavailable saying which socket and what to do."""
    import docker

    where = base_url or __import__("os").environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        client = docker.DockerClient(base_url=base_url) if base_url else docker.from_env()
        client.ping()
        return client
    except docker.errors.DockerException as e:
        text = str(e)
        if "Permission denied" in text or "PermissionError" in text:
            raise DockerUnavailable(
                f"cannot reach the Docker daemon at {where}: permission denied",
                "add your user to the docker group (sudo usermod -aG docker $USER) and log in again",
            ) from None
        raise DockerUnavailable(
            f"cannot reach the Docker daemon at {where}: {text.splitlines()[0][:200]}",
            "start Docker (sudo systemctl start docker, or dockerd), or set DOCKER_HOST to a running daemon",
        ) from None


def gpu_requests(gpus):
    """docker DeviceRequests for 'all', a list of ids, or None/'none'."""
    from docker.types import DeviceRequest

    if gpus in (None, "none", [], ""):
        return None
    if gpus == "all":
        return [DeviceRequest(count=-1, capabilities=[["gpu"]])]
    ids = [str(g) for g in (gpus if isinstance(gpus, (list, tuple)) else str(gpus).split(","))]
    return [DeviceRequest(device_ids=ids, capabilities=[["gpu"]])]


def studio_containers(client) -> list:
    """Containers this studio started (by label); never others."""
    return client.containers.list(all=True, filters={"label": LABEL})


class DockerRuntime(Runtime):
    kind = "docker"

    def __init__(self, image: str = DEFAULT_IMAGE, gpus="all", base_url: str | None = None, shm_size: str = "1g",
                 on_pull_progress: Callable[[dict], None] | None = None, allow_pull: bool = False) -> None:
        super().__init__()
        self.allow_pull = allow_pull  # False: a missing image is an error that says to pull it (asked first)
        self.image = image
        self.gpus = gpus
        self.base_url = base_url
        self.shm_size = shm_size
        self.on_pull_progress = on_pull_progress
        self.container = None
        self._client = None
        self._follower: threading.Thread | None = None

    @property
    def client(self):
        if self._client is None:
            self._client = docker_client(self.base_url)
        return self._client

    # -- image -----------------------------------------------------------------------------------------------
    def ensure_image(self) -> None:
        import docker

        try:
            self.client.images.get(self.image)
            return
        except docker.errors.ImageNotFound:
            pass
        if not self.allow_pull:
            from studio.runtime.images import NGC_IMAGE, NGC_TYPICAL_SIZE

            size = f" (NGC Triton images are {NGC_TYPICAL_SIZE})" if self.image.startswith(NGC_IMAGE) else ""
            hint = ("pull it (the studio asks first; triton-studio deploy --pull), choose a local image, or build a CPU "
                    "Triton without a registry: packaging/cpu-triton-image/build.sh")
            if self.image.startswith(CPU_IMAGE_REPOSITORY):
                hint = "build it: packaging/cpu-triton-image/build.sh"
            raise ImageNotLocal(f"image {self.image} is not on this machine{size}", hint)
        from studio.runtime.images import Pull

        def progress(layers: dict) -> None:
            if self.on_pull_progress:
                self.on_pull_progress(layers)

        self.logs.append(f"studio: pulling {self.image} …")
        try:
            Pull(self.image, on_progress=progress, base_url=self.base_url).start().wait()
        except ImageMissing:
            raise
        except RuntimeFailure as e:
            raise ImageMissing(f"image {self.image} is not on this machine and could not be pulled: {e.message}",
                               e.hint) from None

    # -- lifecycle -------------------------------------------------------------------------------------------
    def command(self, options: ServerOptions) -> list[str]:
        models = options.models if options.models is not None else ["*"]  # []: none (load on demand)
        return [
            "tritonserver",
            "--model-repository=/models",
            "--model-control-mode=explicit",
            *[f"--load-model={m}" for m in models],
            "--exit-on-error=false",
            "--strict-readiness=false",
            *options.extra_args,
        ]

    def start(self, repository, options: ServerOptions | None = None) -> Endpoints:
        import docker
        from docker.types import Ulimit

        options = options or ServerOptions()
        repo = check_repository(repository)
        client = self.client
        self.ensure_image()
        http, grpc, metrics = choose_ports(options)
        self.repository = repo
        self.status = Status.STARTING
        self.exit_reason = None
        name = f"triton-studio-{uuid.uuid4().hex[:8]}"
        # the python backend's recommended limits; a host that forbids raising them gets Docker's defaults
        ulimits = [Ulimit(name="memlock", soft=-1, hard=-1), Ulimit(name="stack", soft=67108864, hard=67108864)]

        def run(limits):
            return client.containers.run(
                self.image,
                command=self.command(options),
                name=name,
                detach=True,
                ports={"8000/tcp": ("127.0.0.1", http), "8001/tcp": ("127.0.0.1", grpc), "8002/tcp": ("127.0.0.1", metrics)},
                volumes={str(repo): {"bind": "/models", "mode": "ro"}},
                shm_size=self.shm_size,
                ulimits=limits,
                labels={LABEL: "1", f"{LABEL}.repository": str(repo), f"{LABEL}.kind": "docker"},
                device_requests=gpu_requests(self.gpus),
                privileged=False,
            )

        try:
            try:
                self.container = run(ulimits)
            except docker.errors.APIError as e:
                if "error setting rlimit" not in str(e):
                    raise
                self._remove_by_name(name)
                self.logs.append("studio: this host does not allow raising memlock/stack limits; starting with Docker's defaults")
                self.container = run(None)
        except docker.errors.APIError as e:
            self.status = Status.FAILED
            text = str(e)
            self._remove_by_name(name)
            if "could not select device driver" in text:
                raise GpuUnavailable(
                    'Docker cannot give GPUs to containers: could not select device driver "" with capabilities: [[gpu]]',
                    "install the NVIDIA Container Toolkit (nvidia-container-toolkit) and restart Docker, or run with --gpus none",
                ) from None
            if "port is already allocated" in text or "address already in use" in text:
                port = next((p for p in (http, grpc, metrics) if str(p) in text), http)
                raise PortInUse(port, "published port") from None
            raise
        self.endpoints = Endpoints(f"http://127.0.0.1:{http}", f"grpc://127.0.0.1:{grpc}", f"http://127.0.0.1:{metrics}")
        self._follow_logs()
        try:
            wait_ready(self.endpoints.http, options.ready_timeout_s, self._alive, self._exited_error)
        except BaseException:
            self.status = Status.FAILED
            self._remove(options.stop_grace_s)
            raise
        self.status = Status.READY
        return self.endpoints

    def _alive(self) -> bool:
        try:
            self.container.reload()
        except Exception:  # noqa: BLE001 - gone
            return False
        return self.container.status in ("created", "running")

    def _exited_error(self) -> ServerExited:
        code = None
        try:
            self.container.reload()
            code = self.container.attrs["State"]["ExitCode"]
        except Exception:  # noqa: BLE001
            pass
        if self._follower is not None:
            self._follower.join(timeout=2)
        return ServerExited("the Triton container exited during start", code, self.logs.lines())

    def _follow_logs(self) -> None:
        container = self.container

        def run() -> None:
            buf = b""
            try:
                for chunk in container.logs(stream=True, follow=True):
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        self.logs.append(line.decode("utf-8", "replace"))
            except Exception:  # noqa: BLE001 - the container went away
                pass
            if buf:
                self.logs.append(buf.decode("utf-8", "replace"))

        self._follower = threading.Thread(target=run, name="triton-container-log", daemon=True)
        self._follower.start()

    def poll(self) -> Status:
        if self.container is not None and self.status == Status.READY and not self._alive():
            self.status = Status.EXITED
            try:
                state = self.container.attrs["State"]
                self.exit_code = state.get("ExitCode")
                if state.get("OOMKilled"):
                    self.exit_reason = "the container ran out of memory (OOM-killed)"
                else:
                    self.exit_reason = f"the container stopped from outside the studio (exit code {state.get('ExitCode')})"
            except Exception:  # noqa: BLE001
                self.exit_reason = "the container was removed from outside the studio"
        return self.status

    def _remove_by_name(self, name: str) -> None:
        try:
            self.client.containers.get(name).remove(force=True)
        except Exception:  # noqa: BLE001
            pass

    def _remove(self, grace: float) -> None:
        c = self.container
        if c is None:
            return
        try:
            c.stop(timeout=int(grace))
        except Exception:  # noqa: BLE001 - already stopped or gone
            pass
        try:
            c.remove(force=True)
        except Exception:  # noqa: BLE001
            pass
        if self._follower is not None:
            self._follower.join(timeout=5)
        self.container = None

    def stop(self) -> None:
        self._remove(10.0)
        if self.status in (Status.READY, Status.STARTING, Status.EXITED):
            self.status = Status.STOPPED

    @classmethod
    def attach(cls, container, client=None) -> DockerRuntime:
        """Re-attach to a studio-owned container found after a restart (by label)."""
        rt = cls(image=container.image.tags[0] if container.image.tags else container.image.id)
        rt._client = client
        rt.container = container
        ports = container.attrs["NetworkSettings"]["Ports"] or {}

        def port(p: str) -> int:
            return int(ports[p][0]["HostPort"])

        rt.endpoints = Endpoints(f"http://127.0.0.1:{port('8000/tcp')}", f"grpc://127.0.0.1:{port('8001/tcp')}",
                                 f"http://127.0.0.1:{port('8002/tcp')}")
        rt.repository = Path(container.labels.get(f"{LABEL}.repository", ""))
        rt.status = Status.READY if container.status == "running" else Status.EXITED
        rt._follow_logs()
        return rt


def running_studio_containers(client, repository: str | Path | None = None) -> list:
    """Running containers this studio started (by label), optionally only those serving `repository`."""
    out = []
    for c in client.containers.list(filters={"label": LABEL}):
        if repository is not None and c.labels.get(f"{LABEL}.repository") != str(Path(repository).resolve()):
            continue
        out.append(c)
    return out


def reattach(client, repository: str | Path | None = None) -> DockerRuntime | None:
    """A runtime on a studio-owned container still running from an earlier launch, or None."""
    found = running_studio_containers(client, repository)
    return DockerRuntime.attach(found[0], client) if found else None


def wait_gone(client, name: str, timeout: float = 10.0) -> bool:
    import docker

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            client.containers.get(name)
        except docker.errors.NotFound:
            return True
        time.sleep(0.1)
    return False
