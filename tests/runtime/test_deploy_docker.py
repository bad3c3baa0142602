"""Deploy, health, reattach and images against the real Docker engine and the locally built CPU Triton image."""

from __future__ import annotations

import socket
import threading
import time

import numpy as np
import pytest

from studio.runtime import ImageMissing, make_runtime
from studio.runtime.deploy import DeployRequest, deploy
from studio.runtime.docker_runtime import DockerRuntime, ImageNotLocal, reattach, running_studio_containers
from studio.runtime.health import Watchdog
from studio.runtime.images import (
    DEFAULT_SUGGESTION,
    Pull,
    PullCancelled,
    RegistryUnreachable,
    classify,
    local_triton_images,
    nvidia_runtime,
    registry_info,
)
from tests.conftest import scaled_s
from tests.runtime.helpers import demo_copy
from tests.runtime.test_docker import client, cpu_image  # noqa: F401 - shared fixtures


def test_docker_deploy_ready_right_values_then_container_kill_seen_within_2s(client, cpu_image, tmp_path):  # noqa: F811
    repo = demo_copy(tmp_path)
    a = np.arange(16, dtype=np.float32).reshape(1, 16)
    b = np.full((1, 16), 2.0, dtype=np.float32)
    res = deploy(DeployRequest(repo, "add_sub", make_runtime=lambda: make_runtime("docker", image=cpu_image),
                               test_inputs={"INPUT0": a, "INPUT1": b}))
    rt = res.runtime
    try:
        assert res.ok, res.error
        assert rt.gpus == "none" and not nvidia_runtime(client)  # no NVIDIA runtime here: no GPUs asked for
        print(f"docker: server {res.server_start_s:.2f} s, load to READY {res.time_to_ready_s:.2f} s")
        np.testing.assert_array_equal(res.inference.outputs["OUTPUT0"], a + b)
        # reattach from a "new launch": finds this studio-owned container by label and repository
        again = reattach(client, repo)
        assert again is not None and again.container.id == rt.container.id and again.endpoints == rt.endpoints
        dead = threading.Event()
        dog = Watchdog(rt, on_dead=lambda d: dead.set()).start()
        t0 = time.monotonic()
        rt.container.kill()
        assert dead.wait(scaled_s(2)), "container exit not detected within 2 s"
        print(f"docker: container kill detected in {(time.monotonic() - t0) * 1000:.0f} ms")
        assert dog.death.exit_code == 137 and "exit code 137" in dog.death.message()
    finally:
        rt.stop()


def test_containers_the_studio_did_not_start_are_never_listed(client, cpu_image, tmp_path):  # noqa: F811
    other = client.containers.run(cpu_image, ["sleep", "60"], detach=True, remove=True)
    try:
        assert other.id not in {c.id for c in running_studio_containers(client)}
        assert reattach(client, tmp_path) is None
    finally:
        other.kill()


def test_local_triton_images_list_the_cpu_image(client, cpu_image):  # noqa: F811
    imgs = {i.tag: i for i in local_triton_images(client)}
    assert cpu_image in imgs and imgs[cpu_image].size > 100_000_000 and imgs[cpu_image].created[:2] == "20"
    assert "MB" in imgs[cpu_image].size_text()


def test_a_missing_image_is_never_pulled_without_asking(client, tmp_path):  # noqa: F811
    rt = DockerRuntime(image=DEFAULT_SUGGESTION, gpus="none")
    t0 = time.monotonic()
    with pytest.raises(ImageNotLocal) as e:
        rt.start(demo_copy(tmp_path))
    assert "is not on this machine" in e.value.message and "10–20 GB" in e.value.message
    assert time.monotonic() - t0 < 5 and rt.container is None


def test_pulling_an_image_whose_registry_is_unreachable_is_one_clear_error(client):  # noqa: F811
    info = registry_info(client, DEFAULT_SUGGESTION)
    assert info.exists is None and "registry cannot be reached" in info.error
    p = Pull(DEFAULT_SUGGESTION).start()
    with pytest.raises(RegistryUnreachable) as e:
        p.wait(scaled_s(30))
    assert "nvcr.io" in e.value.message and "\n" not in e.value.message and "Traceback" not in str(e.value)


def test_a_pull_that_hangs_is_cancelled_for_real(client):  # noqa: F811
    # a real registry endpoint that accepts connections and never answers: the pull blocks inside the daemon
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        image = f"127.0.0.1:{s.getsockname()[1]}/studio/never:1"
        p = Pull(image).start()
        time.sleep(0.5)  # let it reach the daemon (nothing to wait on: the pull must still be running)
        assert not p.done
        t0 = time.monotonic()
        p.cancel()
        with pytest.raises(PullCancelled):
            p.wait(scaled_s(5))
        assert time.monotonic() - t0 < scaled_s(1)


def test_docker_error_classification_of_engine_answers():
    import docker

    e = docker.errors.APIError("500 Server Error", explanation='Get "https://nvcr.io/v2/": dial tcp: lookup nvcr.io: no such host')
    assert isinstance(classify(e, "nvcr.io/x:1"), RegistryUnreachable)
    e = docker.errors.APIError("404", explanation="manifest unknown: manifest unknown")
    err = classify(e, "nvcr.io/nvidia/tritonserver:99.99-py3")
    assert isinstance(err, ImageMissing) and "not found" in err.message
    e = docker.errors.APIError("500", explanation="driver failed programming external connectivity: Bind for 127.0.0.1:8000 failed: port is already allocated")
    assert classify(e).port == 8000
    e = docker.errors.APIError("500", explanation='could not select device driver "" with capabilities: [[gpu]]')
    assert "NVIDIA runtime" in classify(e).message
