"""`bench` against the real embedded Triton that dies mid-run (issue 14): it stops within a couple of seconds with
one line and exit 1 instead of averaging the dead time into figures (it took 28-91 s before)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from studio.runtime import ServerOptions
from studio.runtime.embedded import EmbeddedRuntime
from tests.conftest import scaled_s
from tests.runtime.helpers import demo_copy

EXE = [sys.executable, "-m", "studio.cli"]


def inference_count(client, model: str) -> int:
    stats = client.get_inference_statistics(model)
    return sum(int(s.inference_count) for s in stats.model_stats)


def test_bench_stops_when_the_server_dies_mid_run(tmp_path):
    import tritonclient.grpc as grpcclient

    rt = EmbeddedRuntime()
    ep = rt.start(demo_copy(tmp_path), ServerOptions(models=["add_sub"]))
    bench = None
    try:
        target = ep.grpc.removeprefix("grpc://")
        bench = subprocess.Popen([*EXE, "bench", "--url", ep.grpc, "--model", "add_sub", "--duration", "120",
                                  "--concurrency", "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        client = grpcclient.InferenceServerClient(target)
        deadline = time.monotonic() + scaled_s(60)
        while inference_count(client, "add_sub") < 200:  # the run is under way: the server answers bench
            assert bench.poll() is None, bench.communicate()
            assert time.monotonic() < deadline, "bench sent no load within a minute"
            time.sleep(0.1)
        client.close()
        os.killpg(rt.pid, signal.SIGKILL)  # the server dies
        t0 = time.monotonic()
        out, err = bench.communicate(timeout=scaled_s(30))
        took = time.monotonic() - t0
    finally:
        if bench is not None and bench.poll() is None:
            bench.kill()
            bench.wait()
        rt.stop()
    print(f"bench stopped {took:.2f} s after the server was killed")
    assert took < scaled_s(3), f"bench took {took:.1f} s to notice the dead server"
    assert bench.returncode == 1, (bench.returncode, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"bench: the server at {target} stopped answering ")
    assert "UNAVAILABLE" in lines[0] and "no figures" in lines[0]
    assert "throughput" not in out, out
