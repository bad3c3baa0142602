"""The scripted dashboard on the Docker path, for real: `triton-studio dashboard REPO --model M --server docker`
starts the local CPU Triton image (packaging/cpu-triton-image/build.sh; NVIDIA's default image is not on this
machine and is never pulled), plays a script (batching on), records samples, changes and the container's RSS,
and leaves no container behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO, scaled_s
from tests.runtime.helpers import demo_copy

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def engine():
    from studio.runtime.docker_runtime import CPU_IMAGE_REPOSITORY, docker_client
    from studio.runtime.errors import DockerUnavailable

    try:
        client = docker_client()
    except DockerUnavailable as e:
        pytest.fail(f"{e}\nThe Docker tests need a running engine: bash scripts/docker-up.sh (the test command runs it)")
    if not client.images.list(name=CPU_IMAGE_REPOSITORY):
        pytest.fail("the CPU Triton image is missing: bash scripts/docker-up.sh builds it")
    return client


def test_scripted_dashboard_on_docker(engine, tmp_path):
    from studio.runtime.docker_runtime import studio_containers

    before = {c.id for c in studio_containers(engine)}
    repo = demo_copy(tmp_path)
    script = tmp_path / "steps.json"
    script.write_text(json.dumps([{"at_s": 3, "set": {"dynamic_batching.max_queue_delay_microseconds": 500}}]))
    out, shot = tmp_path / "out.json", tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    p = subprocess.run([sys.executable, "-m", "studio.cli", "dashboard", str(repo), "--model", "batched_sleep",
                        "--server", "docker", "--concurrency", "16", "--script", str(script), "--record", str(out),
                        "--screenshot", str(shot), "--exit-after", "10"],
                       capture_output=True, text=True, timeout=scaled_s(120), env=env, cwd=REPO)
    print(p.stderr)
    assert p.returncode == 0, p.stderr
    assert "image triton-config-studio/tritonserver-cpu:" in p.stderr  # the local CPU image, no pull
    rec = json.loads(out.read_text())
    assert rec["server"] == "docker"
    changes = rec["changes"]
    assert changes[0]["diff"] == "initial config" and len(changes) == 2, changes
    ch = changes[-1]
    assert ch["diff"] == "batching off->on, max_queue_delay 0->500 us" and ch["source"] == "script", ch
    assert ch["edits"] == {"dynamic_batching.max_queue_delay_microseconds": 500}, ch
    assert ch["ok"] and ch["t_live"] is not None and ch["reload_s"] > 0
    before_tp = [s["throughput"] for s in rec["samples"] if 1.0 < s["t"] < ch["t_requested"] and s["throughput"]]
    after_tp = [s["throughput"] for s in rec["samples"] if s["t"] > ch["t_live"] + 1.5 and s["throughput"]]
    assert before_tp and after_tp
    print(f"docker: batching off {sum(before_tp) / len(before_tp):.0f}/s -> on {sum(after_tp) / len(after_tp):.0f}/s")
    assert sum(after_tp) / len(after_tp) > 3 * sum(before_tp) / len(before_tp)
    # the container's process tree on this host: its RSS is in the record (the memory plot)
    rss = [s["mem_mb"] for s in rec["samples"] if s.get("mem_mb")]
    assert rss and 30 < max(rss) < 4000, rss[-3:]
    assert shot.stat().st_size > 10_000
    assert {c.id for c in studio_containers(engine)} == before  # the container is gone
