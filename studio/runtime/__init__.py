"""Runtimes: an embedded CPU Triton (child process) and a Docker Triton (GPU), one interface (no Qt)."""

from studio.runtime.base import Endpoints, LogStream, Runtime, ServerOptions, Status
from studio.runtime.errors import (
    DockerUnavailable,
    EmbeddedUnavailable,
    GpuUnavailable,
    ImageMissing,
    LoadFailed,
    LoadTimeout,
    PortInUse,
    ReadinessTimeout,
    RepositoryNotFound,
    RuntimeFailure,
    ServerExited,
)

__all__ = [
    "DockerUnavailable",
    "EmbeddedUnavailable",
    "Endpoints",
    "GpuUnavailable",
    "ImageMissing",
    "LoadFailed",
    "LoadTimeout",
    "LogStream",
    "PortInUse",
    "ReadinessTimeout",
    "RepositoryNotFound",
    "Runtime",
    "RuntimeFailure",
    "ServerExited",
    "ServerOptions",
    "Status",
    "make_runtime",
]


def make_runtime(kind: str | None = None, image: str | None = None, gpus=None, *, allow_pull: bool = False,
                 base_url: str | None = None, shm_size: str = "1g") -> Runtime:
    """'embedded', 'docker', a Triton URL (http://HOST:PORT, grpc://HOST:PORT: a server the studio does not own),
    or None: Docker with GPUs when both are there, else the embedded CPU server. For Docker, gpus=None means all
    GPUs when the engine has the NVIDIA runtime, else none."""
    from studio.runtime.docker_runtime import DEFAULT_IMAGE, DockerRuntime, docker_client
    from studio.runtime.embedded import EmbeddedRuntime

    if kind is not None and "://" in kind:
        from studio.runtime.remote import RemoteRuntime

        return RemoteRuntime(kind)
    if kind is None:
        from studio.validate import local_gpus

        try:
            docker_client()
            kind = "docker" if local_gpus() else "embedded"
        except DockerUnavailable:
            kind = "embedded"
    if kind == "embedded":
        return EmbeddedRuntime()
    if kind == "docker":
        if gpus is None:
            from studio.runtime.images import nvidia_runtime

            try:
                gpus = "all" if nvidia_runtime(docker_client(base_url)) else "none"
            except DockerUnavailable:
                gpus = "all"
        return DockerRuntime(image=image or DEFAULT_IMAGE, gpus=gpus, allow_pull=allow_pull, base_url=base_url,
                             shm_size=shm_size)
    raise ValueError(f"unknown runtime {kind!r}: embedded, docker or a URL (http://HOST:PORT, grpc://HOST:PORT)")
