"""Runtimes: an embedded CPU Triton (child process) and a Docker Triton (GPU), one interface (no Qt)."""

from studio.runtime.base import Endpoints, LogStream, Runtime, ServerOptions, Status
from studio.runtime.errors import (
    DockerUnavailable,
    EmbeddedUnavailable,
    GpuUnavailable,
    ImageMissing,
    LoadFailed,
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


def make_runtime(kind: str | None = None, image: str | None = None, gpus=None) -> Runtime:
    """'embedded', 'docker', or None: Docker with GPUs when both are there, else the embedded CPU server."""
    from studio.runtime.docker_runtime import DEFAULT_IMAGE, DockerRuntime, docker_client
    from studio.runtime.embedded import EmbeddedRuntime

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
        return DockerRuntime(image=image or DEFAULT_IMAGE, gpus="all" if gpus is None else gpus)
    raise ValueError(f"unknown runtime {kind!r}: embedded or docker")
