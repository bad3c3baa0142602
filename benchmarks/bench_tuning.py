"""Benchmark: auto-tune search against an exhaustive grid on the demo model, in the same run.

    .venv/bin/python benchmarks/bench_tuning.py [--p99-ms 25]

Goal: the search finds a config within 5% of the grid's best throughput (under the same p99 budget) in at
most 25% of the grid's time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from demo_server import demo_server  # noqa: E402

from studio.tuning.inputs import synthesize  # noqa: E402
from studio.tuning.loadgen import LoadGenerator, LoadSpec  # noqa: E402
from studio.tuning.sampler import Sampler  # noqa: E402
from studio.tuning.search import Space, Tuner  # noqa: E402
from studio.tuning.session import TuningSession  # noqa: E402

MODEL = "batched_sleep"


def run(kind: str, p99: float, space: Space) -> object:
    with demo_server(MODEL) as (ep, client, doc):
        gen = LoadGenerator(ep.grpc_target, synthesize(MODEL, doc.to_message()), LoadSpec(concurrency=8, duration_s=None)).start()
        sampler = Sampler(gen, client, MODEL).start()
        session = TuningSession(client, MODEL, doc, sampler, window_s=0.5)
        tuner = Tuner(session, p99, point_budget_s=8.0)
        try:
            return tuner.grid(space) if kind == "grid" else tuner.search(space)
        finally:
            gen.stop()
            sampler.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--p99-ms", type=float, default=25.0)
    args = ap.parse_args()
    space = Space()
    grid = run("grid", args.p99_ms, space)
    search = run("search", args.p99_ms, space)
    gb, sb = grid.best, search.best
    print(f"space: {len(space.points())} points; p99 budget {args.p99_ms} ms")
    print(f"  grid    {len(grid.measurements):3d} points {grid.seconds:6.0f} s  best {gb.throughput:7.0f} infer/s  p99 {gb.p99_ms:5.1f} ms  {gb.point}")
    print(f"  search  {len(search.measurements):3d} points {search.seconds:6.0f} s  best {sb.throughput:7.0f} infer/s  p99 {sb.p99_ms:5.1f} ms  {sb.point}")
    print(f"  search/grid: throughput {sb.throughput / gb.throughput:.2f}x (goal >= 0.95), time {search.seconds / grid.seconds:.2f}x (goal <= 0.25)")
    print("  frontier (grid): " + ", ".join(f"{m.throughput:.0f}/s@{m.p99_ms:.1f}ms" for m in grid.frontier))


if __name__ == "__main__":
    main()
