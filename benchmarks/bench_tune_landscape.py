"""Benchmark (issue 17): what the auto-tune is up against on this machine, measured, not assumed.

    bash ../shared/tools/model-analyzer-setup.sh /tmp/trixie      # once: perf_analyzer in a trixie chroot
    .venv/bin/python benchmarks/bench_tune_landscape.py [--root /tmp/trixie] [--model batched_sleep]
        [--instances 2,3,4,5,6,8] [--max-batch 8,16,32] [--concurrency 64] [--rounds 2] [--repeats 8]

Three parts, on one embedded Triton 2.51 (the models of bench_tune_vs_model_analyzer.py):

1. **Client CPU per request**: our load generator and perf_analyzer at the same configuration and load, each
   alone, with the process CPU time they used. (Issue 17 suspected that our Python client's CPU hid differences
   between configurations that perf_analyzer's C++ client shows; this measures it.)
2. **Noise of one configuration**: the tune's own measurement (TuningSession.measure, 3 windows within 10%)
   repeated `--repeats` times on one configuration, for 0.25 s and 1 s windows: the mean and the coefficient
   of variation. This is the noise the walk's 5% threshold and the confirmation's rounds work against.
3. **The landscape**: perf_analyzer's throughput and p99 over the grid instances x max_batch_size at one load,
   in `--rounds` alternating passes (the judge of the Model Analyzer benchmark), best first.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_tune_vs_model_analyzer import PORTS, make_repo, perf_analyzer  # noqa: E402

from studio.config import ConfigDocument  # noqa: E402
from studio.runtime import ServerOptions  # noqa: E402
from studio.runtime.client import TritonClient  # noqa: E402
from studio.runtime.embedded import EmbeddedRuntime  # noqa: E402
from studio.tuning.controls import apply_edits  # noqa: E402
from studio.tuning.inputs import synthesize  # noqa: E402
from studio.tuning.loadgen import LoadGenerator, LoadSpec  # noqa: E402
from studio.tuning.remote import fetch_config  # noqa: E402
from studio.tuning.sampler import Sampler  # noqa: E402
from studio.tuning.search import Point  # noqa: E402
from studio.tuning.session import TuningSession  # noqa: E402


def pa(root: Path, target: str, model: str, concurrency: int) -> tuple[float, float, float]:
    """perf_analyzer's throughput, p99 (ms; 3 s windows within 25%) and its own CPU use (cores) over the run."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    tp, p99 = perf_analyzer(root, target, model, concurrency, interval_ms=3000, stabilities=(25,))
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return tp, p99, (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / wall


def load(client: TritonClient, cfg: Path, model: str, instances: int, max_batch: int, concurrency: int,
         delay_us: int = 0) -> None:
    doc = ConfigDocument.load(cfg)
    apply_edits(doc, Point(max_batch, delay_us, instances, concurrency).edits())
    client.load(model, config=doc)
    client.wait_model_ready(model)


def landscape(root: Path, ep, client: TritonClient, cfg: Path, model: str, insts: list[int], sizes: list[int],
              delays: list[int], c: int, rounds: int) -> None:
    print(f"\n== 3. perf_analyzer over instances {insts} x max_batch {sizes} x queue delay {delays} us at "
          f"concurrency {c}, {rounds} alternating passes")
    grid: dict[tuple[int, int, int], list[tuple[float, float]]] = {}
    for _ in range(rounds):
        for d in delays:
            for mb in sizes:
                for n in insts:
                    load(client, cfg, model, n, mb, c, d)
                    tp, p99, _ = pa(root, ep.grpc_target, model, c)
                    grid.setdefault((n, mb, d), []).append((tp, p99))
    ranked = sorted(grid.items(), key=lambda kv: -statistics.fmean(x for x, _ in kv[1]))
    top = statistics.fmean(x for x, _ in ranked[0][1])
    for (n, mb, d), runs in ranked:
        mean = statistics.fmean(x for x, _ in runs)
        print(f"  instances {n}, max_batch {mb:3d}, delay {d:5d} us: {mean:8,.0f}/s ({mean / top:.2f} of the best)  "
              "passes " + ", ".join(f"{x:,.0f}/s@{p:.1f}ms" for x, p in runs), flush=True)


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.environ.get("TMPDIR", "/tmp") + "/trixie")
    ap.add_argument("--model", default="batched_sleep", choices=["batched_sleep", "heavy_items"])
    ap.add_argument("--instances", default="2,3,4,5,6,8")
    ap.add_argument("--max-batch", default="8,16,32")
    ap.add_argument("--delays", default="0", help="max_queue_delay_microseconds values for part 3")
    ap.add_argument("--grid-only", action="store_true", help="part 3 only")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=8)
    args = ap.parse_args()
    root = Path(args.root)
    if not (root / "opt" / "pa" / "perf_analyzer" / "bin" / "perf_analyzer").exists():
        print(f"perf_analyzer is not set up in {root}: run ../shared/tools/model-analyzer-setup.sh {root}",
              file=sys.stderr)
        return 2
    insts = [int(x) for x in args.instances.split(",")]
    sizes = [int(x) for x in args.max_batch.split(",")]
    delays = [int(x) for x in args.delays.split(",")]
    c = args.concurrency
    model = args.model
    with tempfile.TemporaryDirectory() as tmp:
        cfg = make_repo(Path(tmp) / "repo", model)
        rt = EmbeddedRuntime()
        ep = rt.start(Path(tmp) / "repo", ServerOptions(models=[model], http_port=PORTS[0], grpc_port=PORTS[1],
                                                        metrics_port=PORTS[2]))
        client = TritonClient(ep, logs=rt.logs)
        try:
            client.wait_model_ready(model)
            requests = synthesize(model, fetch_config(ep.grpc_target, model), 1, {})
            mid = insts[len(insts) // 2], sizes[len(sizes) // 2]
            load(client, cfg, model, *mid, c)

            if args.grid_only:
                landscape(root, ep, client, cfg, model, insts, sizes, delays, c, args.rounds)
                return 0
            print(f"== 1. client CPU per request ({model}, instances {mid[0]}, max_batch {mid[1]}, concurrency {c})")
            for _ in range(2):
                gen = LoadGenerator(ep.grpc_target, requests, LoadSpec(concurrency=c, duration_s=None)).start()
                time.sleep(1.5)
                gen.window()
                c0, t0 = own_cpu(), time.monotonic()
                time.sleep(6)
                w = gen.window()
                c1, t1 = own_cpu(), time.monotonic()
                gen.stop()
                ours_cpu = (c1 - c0) / (t1 - t0)
                tp, p99, pa_cpu = pa(root, ep.grpc_target, model, c)
                print(f"  ours          {w.completed / (t1 - t0):8,.0f}/s  p99 {w.histogram.percentile(99) / 1000:5.1f} ms"
                      f"  {ours_cpu:.2f} cores  {ours_cpu / (w.completed / (t1 - t0)) * 1e6:4.0f} us/request")
                print(f"  perf_analyzer {tp:8,.0f}/s  p99 {p99:5.1f} ms  {pa_cpu:.2f} cores  "
                      f"{pa_cpu / tp * 1e6:4.0f} us/request (its whole run)")

            print(f"\n== 2. noise of one configuration: the tune's measurement repeated {args.repeats}x, alternating")
            gen = LoadGenerator(ep.grpc_target, requests, LoadSpec(concurrency=c, duration_s=None)).start()
            sampler = Sampler(gen, client, model).start()
            session = TuningSession(client, model, ConfigDocument.load(cfg), sampler, window_s=0.25, max_window_s=2.0)
            time.sleep(1.0)
            figures: dict[float, list[float]] = {0.25: [], 1.0: []}
            for _ in range(args.repeats):
                for w_s in figures:
                    session.window_s = w_s
                    figures[w_s].append(session.measure(budget_s=10.0).throughput)
            gen.stop()
            sampler.stop()
            for w_s, xs in figures.items():
                print(f"  windows {w_s:4.2f} s: mean {statistics.fmean(xs):8,.0f}/s, coefficient of variation "
                      f"{statistics.stdev(xs) / statistics.fmean(xs):.1%}  ({', '.join(f'{x:,.0f}' for x in xs)})")

            landscape(root, ep, client, cfg, model, insts, sizes, delays, c, args.rounds)
        finally:
            client.close()
            rt.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
