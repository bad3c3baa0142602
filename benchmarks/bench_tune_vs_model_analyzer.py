"""Benchmark (issue 17): `triton-studio tune` against Model Analyzer's quick search, side by side.

    bash ../shared/tools/model-analyzer-setup.sh /tmp/trixie      # once: perf_analyzer + Model Analyzer 1.58.0
    .venv/bin/python benchmarks/bench_tune_vs_model_analyzer.py [--root /tmp/trixie] [--runs 2] [--rounds 5]
        [--models batched_sleep,heavy_items] [--p99-ms 20] [--max-concurrency 64]

For each model: one embedded Triton 2.51 (explicit model control, ports 18100-18102, which Model Analyzer's
remote mode talks to), then per run: Model Analyzer `profile` (quick search, remote mode, the same p99 budget and
concurrency limit), the model reloaded from disk, `triton-studio tune` (same budget and limit); then both winners
re-measured with perf_analyzer, alternating (MA, ours, MA, ours, ...), `--rounds` rounds. Printed: wall times,
each tool's own figures, the perf_analyzer re-measurement, and the ratios, the throughput's with the rounds' 95%
confidence interval (an interval that holds 1.0 is parity within the machine's noise). Goal: ours >= 1.0x MA's
throughput under the budget, in <= 0.5x its wall time. All runs are printed, not the best one.

Models: `batched_sleep` (the demo: 2 ms per execute + 20 us per item, batching pays) and `heavy_items` (the
same code with 400 us per item: batching pays much less).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from studio.config import ConfigDocument  # noqa: E402
from studio.runtime import ServerOptions  # noqa: E402
from studio.runtime.client import TritonClient  # noqa: E402
from studio.runtime.embedded import EmbeddedRuntime  # noqa: E402
from studio.tuning.abtest import compare  # noqa: E402

PORTS = (18100, 18101, 18102)
MODELS = {"batched_sleep": "20", "heavy_items": "400"}  # PER_ITEM_COST_US


def make_repo(dest: Path, model: str) -> Path:
    src = ROOT / "model_repository_templates" / "demo" / "batched_sleep"
    shutil.copytree(src, dest / model)
    cfg = dest / model / "config.pbtxt"
    doc = ConfigDocument.load(cfg)
    doc.set("name", model)
    text = doc.text.replace('value: { string_value: "20" }', f'value: {{ string_value: "{MODELS[model]}" }}')
    cfg.write_text(text)
    return cfg


def run_ma(root: Path, repo: Path, model: str, p99: float, max_c: int) -> dict:
    ma = root / "ma"
    shutil.rmtree(ma / "repo", ignore_errors=True)
    shutil.rmtree(ma / "out", ignore_errors=True)
    shutil.copytree(repo, ma / "repo")
    (ma / "out").mkdir()
    yaml = (Path(__file__).resolve().parents[2] / "shared" / "tools" / "model-analyzer-quick.yaml").read_text()
    yaml = yaml.replace("MODEL_NAME", model).replace("latency_budget: 20", f"latency_budget: {p99:g}")
    yaml = re.sub(r"run_config_search_max_concurrency: \d+", f"run_config_search_max_concurrency: {max_c}", yaml)
    (ma / "ma.yaml").write_text(yaml)
    t0 = time.monotonic()
    r = subprocess.run(["chroot", str(root), "/bin/bash", "-c",
                        "cd /ma && PATH=/opt/pa/perf_analyzer/bin:$PATH /ma/venv/bin/model-analyzer profile -f /ma/ma.yaml"],
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    (ma / "out" / "profile.log").write_text(r.stdout + r.stderr)
    if r.returncode != 0:
        raise SystemExit(f"model-analyzer failed ({r.returncode}): {(r.stdout + r.stderr)[-2000:]}")
    best = ma_best(ma / "out", root, p99)
    best["wall_s"] = wall
    return best


def ma_best(out: Path, root: Path, p99: float) -> dict:
    """MA's best under the budget from its exported measurements (every run config it profiled): the highest
    throughput whose p99 <= budget, and that variant's config from its output model repository."""
    with open(out / "export" / "results" / "metrics-model-inference.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    ok = [r for r in rows if float(r["p99 Latency (ms)"]) <= p99]
    if not ok:
        raise SystemExit(f"Model Analyzer measured nothing under p99 {p99} ms ({len(rows)} measurements)")
    best = max(ok, key=lambda r: float(r["Throughput (infer/sec)"]))
    variant = best["Model Config Path"]
    return {"variant": variant, "config_text": (out / "output_model_repository" / variant / "config.pbtxt").read_text(),
            "throughput": float(best["Throughput (infer/sec)"]), "p99_ms": float(best["p99 Latency (ms)"]),
            "concurrency": int(best["Concurrency"]),
            "variant_desc": f"instances {best['Instance Group']}, max_batch {best['Max Batch Size']}",
            "measurements": len(rows), "configs": len({r["Model Config Path"] for r in rows})}


def run_ours(target: str, model: str, cfg: Path, p99: float, max_c: int, window_s: float) -> dict:
    t0 = time.monotonic()
    r = subprocess.run([str(ROOT / ".venv" / "bin" / "triton-studio"), "tune", "--url", f"grpc://{target}",
                        "--model", model, "--p99-ms", f"{p99:g}", "--max-concurrency", str(max_c),
                        "--config", str(cfg), "--window-s", f"{window_s:g}", "--format", "json"],
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit(f"tune failed ({r.returncode}): {r.stderr[-2000:]}")
    data = json.loads(r.stdout)
    w = data["winner"] or data["best"]
    doc = ConfigDocument.load(cfg)
    from studio.tuning.controls import apply_edits
    from studio.tuning.search import Point

    b = data["best"]
    point = Point(b["max_batch_size"], b["max_queue_delay_microseconds"], b["instances"], b["concurrency"],
                  tuple(b["preferred"]), b["batching"])
    apply_edits(doc, point.edits())
    return {"wall_s": wall, "throughput": w.get("mean", w.get("throughput")), "p99_ms": w.get("p99_mean_ms", w.get("p99_ms")),
            "concurrency": b["concurrency"], "config": b["config"], "config_text": doc.text,
            "measurements": len(data["measurements"]), "configs": len(data["knees"]),
            "confirmation_runs": sum(len(c["throughputs"]) for c in data["confirmed"]), "notes": data["notes"],
            "trace": data["measurements"], "confirmation_trace": data.get("confirmation_runs", []),
            "machine": data["machine"]}


def print_trace(ours: dict) -> None:
    """Where our time went: every measurement of the search (reload + measuring) and the phases."""
    runs = [(m, "") for m in ours["trace"]] + [(m, " (confirmation)") for m in ours["confirmation_trace"]]
    for m, phase in sorted(runs, key=lambda r: r[0]["at_s"]):
        p99 = f"{m['p99_ms']:.1f}" if m["p99_ms"] is not None else "-"
        looks = " (mean of 2 looks)" if m.get("looks", 1) > 1 else ""
        print(f"    {m['at_s']:6.1f}s {m['seconds']:5.1f}s (reload {m['reload_s']:.1f}s, x{m['attempts']}) "
              f"{m['config']} @c{m['concurrency']}: {m['throughput']:,.0f}/s p99 {p99}{phase}{looks}")
    mach = ours["machine"]
    print(f"    phases {mach.get('phases_s')}, {mach.get('measurements')} measurements, "
          f"load average {mach.get('loadavg_start')} -> {mach.get('loadavg_end')}")


def perf_analyzer(root: Path, target: str, model: str, concurrency: int, interval_ms: int = 5000,
                  stabilities: tuple[int, ...] = (10, 25, 100)) -> tuple[float, float]:
    """perf_analyzer's throughput and p99 (5 s windows, stable within 10%; on a machine too busy for that,
    once more within 25%, and the line says so)."""
    out = ""
    for stability in stabilities:
        r = subprocess.run(["chroot", str(root), "/opt/pa/perf_analyzer/bin/perf_analyzer", "-m", model, "-u", target,
                            "-i", "grpc", "--concurrency-range", str(concurrency), "--measurement-interval",
                            str(interval_ms), "--stability-percentage", str(stability), "--percentile", "99"],
                           capture_output=True, text=True)
        out = r.stdout + r.stderr
        tp = re.findall(r"Throughput: ([\d.]+) infer/sec", out)
        p99 = re.findall(r"p99 latency: (\d+) usec", out)
        if r.returncode == 0 and tp and p99:
            if stability != stabilities[0]:
                print(f"  (perf_analyzer needed --stability-percentage {stability} on this busy machine)")
            return float(tp[-1]), int(p99[-1]) / 1000
    raise SystemExit(f"perf_analyzer failed: {out[-1500:]}")


def load_text(client: TritonClient, model: str, text: str) -> None:
    doc = ConfigDocument.parse(re.sub(r'(?m)^name: ".*"', f'name: "{model}"', text))
    if not doc.get("name"):
        doc.set("name", model)
    client.load(model, config=doc)
    client.wait_model_ready(model)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.environ.get("TMPDIR", "/tmp") + "/trixie")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5,
                    help="perf_analyzer re-measurement rounds (the issue asks for 3 or more; at 3 the rounds' 95%% "
                    "interval of the ratio was 0.3-0.9 wide on this 2-core machine)")
    ap.add_argument("--models", default="batched_sleep,heavy_items")
    ap.add_argument("--p99-ms", type=float, default=20.0)
    ap.add_argument("--max-concurrency", type=int, default=64)
    ap.add_argument("--window-s", type=float, default=0.25, help="triton-studio tune --window-s")
    ap.add_argument("--ours-only", action="store_true",
                    help="only our tune, with its trace (where the time went): for working on the search")
    ap.add_argument("--trace", action="store_true", help="print our tune's trace in the full benchmark too")
    args = ap.parse_args()
    root = Path(args.root)
    if not args.ours_only and not (root / "ma" / "venv" / "bin" / "model-analyzer").exists():
        print(f"Model Analyzer is not set up in {root}: run ../shared/tools/model-analyzer-setup.sh {root}",
              file=sys.stderr)
        return 2
    summary = []
    for model in args.models.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp) / "repo"
            cfg = make_repo(repo, model)
            rt = EmbeddedRuntime()
            ep = rt.start(repo, ServerOptions(models=[model], http_port=PORTS[0], grpc_port=PORTS[1],
                                              metrics_port=PORTS[2]))
            client = TritonClient(ep, logs=rt.logs)
            try:
                client.wait_model_ready(model)
                for run in range(1, args.runs + 1):
                    if args.ours_only:
                        ours = run_ours(ep.grpc_target, model, cfg, args.p99_ms, args.max_concurrency, args.window_s)
                        print(f"\n== {model}, run {run}: ours {ours['wall_s']:.0f} s, winner "
                              f"{ours['throughput']:,.0f}/s p99 {ours['p99_ms']:.1f} ms at concurrency "
                              f"{ours['concurrency']} ({ours['config']})")
                        print_trace(ours)
                        summary.append(f"{model} run {run}: {ours['wall_s']:.0f} s, {ours['throughput']:,.0f}/s")
                        client.load(model, config=ConfigDocument.load(cfg))
                        continue
                    ma = run_ma(root, repo, model, args.p99_ms, args.max_concurrency)
                    client.load(model, config=ConfigDocument.load(cfg))  # MA leaves its last variant loaded
                    ours = run_ours(ep.grpc_target, model, cfg, args.p99_ms, args.max_concurrency, args.window_s)
                    re_ma, re_ours = [], []
                    for _ in range(args.rounds):
                        load_text(client, model, ma["config_text"])
                        re_ma.append(perf_analyzer(root, ep.grpc_target, model, ma["concurrency"]))
                        load_text(client, model, ours["config_text"])
                        re_ours.append(perf_analyzer(root, ep.grpc_target, model, ours["concurrency"]))
                    client.load(model, config=ConfigDocument.load(cfg))
                    row = report(model, run, ma, ours, re_ma, re_ours, args.p99_ms)
                    if args.trace:
                        print_trace(ours)
                    summary.append(row)
            finally:
                client.close()
                rt.stop()
    print("\nsummary (every run):")
    for row in summary:
        print("  " + row)
    return 0


def report(model, run, ma, ours, re_ma, re_ours, budget) -> str:
    def mean(xs, i):
        return statistics.fmean(x[i] for x in xs)

    tm, to = mean(re_ma, 0), mean(re_ours, 0)
    pm, po = mean(re_ma, 1), mean(re_ours, 1)
    print(f"\n== {model}, run {run} (p99 budget {budget:g} ms)")
    print(f"  Model Analyzer : {ma['wall_s']:6.0f} s  {ma['configs']} configs / {ma['measurements']} measurements; "
          f"its best {ma['throughput']:,.0f}/s p99 {ma['p99_ms']:.1f} ms at concurrency {ma['concurrency']} "
          f"({ma['variant_desc']})")
    print(f"  triton-studio  : {ours['wall_s']:6.0f} s  {ours['configs']} configs / {ours['measurements']} points + "
          f"{ours['confirmation_runs']} confirmation runs; its winner {ours['throughput']:,.0f}/s p99 "
          f"{ours['p99_ms']:.1f} ms at concurrency {ours['concurrency']} ({ours['config']})")
    for note in ours["notes"]:
        print(f"    note: {note}")
    print("  perf_analyzer re-measurement, alternating: MA " +
          ", ".join(f"{t:,.0f}/s@{p:.1f}ms" for t, p in re_ma) + " | ours " +
          ", ".join(f"{t:,.0f}/s@{p:.1f}ms" for t, p in re_ours))
    under = "both under" if pm <= budget and po <= budget else f"p99 MA {pm:.1f} ms, ours {po:.1f} ms"
    line = (f"{model} run {run}: ours/MA throughput {to / tm:.2f}x ({ratio_interval(re_ma, re_ours)}; {under} the "
            "budget), "
            f"wall time {ours['wall_s'] / ma['wall_s']:.2f}x ({ours['wall_s']:.0f} s vs {ma['wall_s']:.0f} s)")
    print("  " + line)
    return line


def ratio_interval(re_ma, re_ours) -> str:
    """The rounds' 95% confidence interval of ours/MA (Welch's, over the difference of the means, as the tune's
    own margin): a ratio whose interval holds 1.0 is parity within this machine's noise, not a win or a loss."""
    if len(re_ma) < 2 or len(re_ours) < 2:
        return "one round: no interval"
    cmp = compare([t for t, _ in re_ma], [t for t, _ in re_ours])
    low, high = 1 + cmp.low / cmp.mean_a, 1 + cmp.high / cmp.mean_a
    verdict = "significant" if cmp.significant else "holds 1.0: within the noise"
    return f"95% CI {low:.2f}-{high:.2f}x, {verdict}"


if __name__ == "__main__":
    raise SystemExit(main())
