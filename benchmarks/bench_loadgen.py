"""Benchmark: our load generator against NVIDIA's perf_analyzer on the same server, model and concurrency, in
the same run (perf_analyzer from ../shared/tools/perf-analyzer-setup.sh, in a Debian trixie chroot).

    bash ../shared/tools/perf-analyzer-setup.sh /tmp/trixie     # once
    .venv/bin/python benchmarks/bench_loadgen.py [--root /tmp/trixie] [--concurrency 32] [--seconds 8]

Prints throughput and p50/p99 for both, with batching off and on, and the ratios (goal with batching on:
throughput >= 0.95x perf_analyzer, p50 and p99 within 10%).
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from demo_server import demo_server  # noqa: E402

from studio.tuning.inputs import synthesize  # noqa: E402
from studio.tuning.loadgen import LoadGenerator, LoadSpec  # noqa: E402
from studio.tuning.sampler import Sampler  # noqa: E402
from studio.tuning.session import TuningSession  # noqa: E402

MODEL = "batched_sleep"


def perf_analyzer(root: Path, target: str, concurrency: int, seconds: float) -> dict:
    out = root / "tmp" / "pa.csv"
    out.unlink(missing_ok=True)
    cmd = ["chroot", str(root), "/opt/pa/perf_analyzer/bin/perf_analyzer", "-m", MODEL, "-u", target, "-i", "grpc",
           "--concurrency-range", str(concurrency), "--measurement-interval", str(int(seconds * 1000 / 3)),
           "--stability-percentage", "10", "-f", "/tmp/pa.csv"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"perf_analyzer failed: {r.stdout[-2000:]} {r.stderr[-2000:]}")
    row = next(csv.DictReader(out.open()))
    return {"throughput": float(row["Inferences/Second"]), "p50_ms": float(row["p50 latency"]) / 1000,
            "p99_ms": float(row["p99 latency"]) / 1000}


def ours(session: TuningSession, seconds: float) -> dict:
    s = session.measure(since=time.monotonic(), budget_s=seconds * 3)
    return {"throughput": s.throughput, "p50_ms": s.p50_ms, "p99_ms": s.p99_ms, "stable": s.stable}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/tmp/trixie")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=6.0)
    args = ap.parse_args()
    root = Path(args.root)
    with demo_server(MODEL) as (ep, client, doc):
        reqs = synthesize(MODEL, doc.to_message())
        for label, delay in (("batching off", None), ("batching on (100 us)", 100)):
            if delay is None:
                doc.clear("dynamic_batching")
            else:
                doc.set("dynamic_batching.max_queue_delay_microseconds", delay)
            client.load(MODEL, config=doc)
            pa = perf_analyzer(root, ep.grpc_target, args.concurrency, args.seconds)
            gen = LoadGenerator(ep.grpc_target, reqs, LoadSpec(concurrency=args.concurrency, duration_s=None)).start()
            sampler = Sampler(gen, client, MODEL).start()
            session = TuningSession(client, MODEL, doc, sampler, window_s=args.seconds / 3)
            time.sleep(1.0)  # warm-up
            us = ours(session, args.seconds)
            gen.stop()
            sampler.stop()
            print(f"{label}, concurrency {args.concurrency}:")
            print(f"  perf_analyzer   {pa['throughput']:8.0f} infer/s  p50 {pa['p50_ms']:6.2f} ms  p99 {pa['p99_ms']:6.2f} ms")
            print(f"  studio loadgen  {us['throughput']:8.0f} infer/s  p50 {us['p50_ms']:6.2f} ms  p99 {us['p99_ms']:6.2f} ms"
                  f"{'' if us['stable'] else '  (not stable)'}")
            print(f"  ratio           {us['throughput'] / pa['throughput']:8.2f}x         "
                  f"p50 {us['p50_ms'] / pa['p50_ms']:5.2f}x      p99 {us['p99_ms'] / pa['p99_ms']:5.2f}x")


if __name__ == "__main__":
    main()
