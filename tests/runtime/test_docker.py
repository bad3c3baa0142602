"""The Docker runtime against the real engine, with the CPU Triton image built locally
(scripts/docker-up.sh builds it; the test command runs that first)."""

from __future__ import annotations

import socket
import subprocess
import time

import docker
import pytest

from studio.runtime import DockerUnavailable, GpuUnavailable, ImageMissing, PortInUse, ServerOptions, Status
from studio.runtime.base import LABEL
from studio.runtime.docker_runtime import (
    CPU_IMAGE_REPOSITORY,
    DockerRuntime,
    docker_client,
    studio_containers,
)
from tests.conftest import REPO, scaled_s
from tests.runtime.helpers import demo_copy, full_scenario


@pytest.fixture(scope="module")
def client():
    try:
        return docker_client()
    except DockerUnavailable as e:
        pytest.fail(f"{e}\nThe Docker tests need a running engine: bash scripts/docker-up.sh (the test command runs it)")


@pytest.fixture(scope="module")
def cpu_image(client) -> str:
    tag_file = REPO / ".cpu-image-tag"
    tags = [t for img in client.images.list(name=CPU_IMAGE_REPOSITORY) for t in img.tags]
    if tag_file.exists() and tag_file.read_text().strip() in tags:
        return tag_file.read_text().strip()
    if not tags:
        pytest.fail("the CPU Triton image is missing: bash scripts/docker-up.sh builds it")
    return sorted(tags)[-1]


def _running_studio_containers(client) -> list:
    return [c for c in studio_containers(client)]


def test_docker_full_scenario_and_nothing_left_behind(client, cpu_image, tmp_path):
    before = {c.id for c in _running_studio_containers(client)}
    rt = DockerRuntime(image=cpu_image, gpus="none")
    try:
        full_scenario(rt, demo_copy(tmp_path))
    finally:
        rt.stop()
    assert {c.id for c in _running_studio_containers(client)} == before


def test_security_defaults_of_the_created_container(client, cpu_image, tmp_path):
    rt = DockerRuntime(image=cpu_image, gpus="none")
    repo = demo_copy(tmp_path)
    rt.start(repo, ServerOptions(models=["add_sub"]))
    try:
        c = client.containers.get(rt.container.id)
        host = c.attrs["HostConfig"]
        for bindings in host["PortBindings"].values():
            assert all(b["HostIp"] == "127.0.0.1" for b in bindings)
        mounts = c.attrs["Mounts"]
        assert [(m["Source"], m["Destination"], m["RW"]) for m in mounts] == [(str(repo.resolve()), "/models", False)]
        assert not any("docker.sock" in m["Source"] for m in mounts)
        assert host["Privileged"] is False
        assert host["NetworkMode"] != "host"
        assert host["ShmSize"] == 1024**3
        # the python backend's recommended limits, unless this host forbids raising them (then the log says so)
        lowered = any("does not allow raising memlock" in ln for ln in rt.logs.lines())
        assert {u["Name"] for u in host["Ulimits"] or []} == (set() if lowered else {"memlock", "stack"})
        assert isinstance(c.attrs["Config"]["Cmd"], list) and c.attrs["Config"]["Cmd"][0] == "tritonserver"
        assert c.labels[LABEL] == "1"
        # a write to the repository from inside the container fails: read-only mount
        r = c.exec_run(["sh", "-c", "touch /models/x"])
        assert r.exit_code != 0
    finally:
        rt.stop()


def test_reattach_after_restart_and_others_untouched(client, cpu_image, tmp_path):
    other = client.containers.create(cpu_image, command=["sleep", "60"], name=f"not-ours-{int(time.time())}")
    rt = DockerRuntime(image=cpu_image, gpus="none")
    rt.start(demo_copy(tmp_path), ServerOptions(models=["add_sub"]))
    try:
        ours = studio_containers(client)
        assert rt.container.id in {c.id for c in ours}
        assert other.id not in {c.id for c in ours}
        again = DockerRuntime.attach(client.containers.get(rt.container.id), client)
        assert again.endpoints == rt.endpoints and again.poll() == Status.READY
    finally:
        rt.stop()
        other.remove(force=True)


def test_container_killed_from_outside(client, cpu_image, tmp_path):
    rt = DockerRuntime(image=cpu_image, gpus="none")
    rt.start(demo_copy(tmp_path), ServerOptions(models=["add_sub"]))
    try:
        subprocess.run(["docker", "kill", rt.container.id], check=True, capture_output=True)
        deadline = time.monotonic() + scaled_s(15)
        while rt.poll() != Status.EXITED and time.monotonic() < deadline:
            time.sleep(0.2)
        assert rt.status == Status.EXITED
        assert "stopped from outside" in rt.exit_reason
    finally:
        rt.stop()


def test_port_already_taken(cpu_image, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(PortInUse):
            DockerRuntime(image=cpu_image, gpus="none").start(demo_copy(tmp_path), ServerOptions(grpc_port=port))


def test_image_missing_without_registry(tmp_path):
    with pytest.raises(ImageMissing) as e:
        DockerRuntime(image="triton-config-studio/does-not-exist:0.0", gpus="none").start(demo_copy(tmp_path))
    assert "build" in e.value.hint


def test_no_gpu_runtime_is_a_clear_error(client, cpu_image, tmp_path):
    info = client.info()
    if "nvidia" in (info.get("Runtimes") or {}):
        pytest.fail("this test needs a Docker engine without the NVIDIA runtime (CI has none)")
    with pytest.raises(GpuUnavailable) as e:
        DockerRuntime(image=cpu_image, gpus="all").start(demo_copy(tmp_path))
    assert "nvidia-container-toolkit" in e.value.hint
    assert not [c for c in studio_containers(client) if c.status == "created"]


def test_daemon_unreachable(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/dead.sock")
    with pytest.raises(DockerUnavailable) as e:
        DockerRuntime(image="x", gpus="none").start(demo_copy(tmp_path))
    assert "dead.sock" in e.value.message


def test_exit_during_start(cpu_image, tmp_path):
    rt = DockerRuntime(image=cpu_image, gpus="none")
    with pytest.raises(Exception) as e:
        rt.start(demo_copy(tmp_path), ServerOptions(extra_args=["--no-such-flag"], ready_timeout_s=scaled_s(30)))
    assert "exited during start" in str(e.value) and "no-such-flag" in str(e.value)
    assert rt.container is None


def test_docker_module_is_real():
    assert docker.__version__
