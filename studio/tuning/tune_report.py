"""The tune's result as text: the frontier, the winner with its confidence interval, its margin over the
runner-up and the baseline, the time spent, what the machine was doing, and the perf_analyzer command that
reproduces the winner's measurement."""

from __future__ import annotations

from studio.tuning.search import TuneResult


def _ms(x: float | None) -> str:
    return f"{x:.1f} ms" if x is not None else "-"


def report_text(result: TuneResult, model: str, budget_ms: float, perf_analyzer: str | None) -> str:
    lines: list[str] = []
    n = len(result.measurements)
    reps = sum(len(c.throughputs) for c in result.confirmed)
    lines.append(f"# tune {model}: p99 budget {budget_ms:g} ms; {n} points searched, {reps} confirmation runs, "
                 f"{result.seconds:.0f} s")
    lines.append("# frontier (each configuration at its highest load under the budget):")
    for k in sorted(result.knees, key=lambda m: -m.throughput):
        flag = "" if k.within(budget_ms) else "   (over budget)"
        err = f"   failed: {k.error}" if k.error else ""
        lines.append(f"#   {k.throughput:8,.0f} infer/s  p99 {_ms(k.p99_ms):>8}  concurrency {k.point.concurrency:4d}  "
                     f"{k.point.label()}{flag}{err}")
    if result.baseline is not None:
        b = result.baseline
        lines.append(f"# baseline (the file's config): {b.throughput:,.0f} infer/s at p99 {_ms(b.p99_ms)}, "
                     f"concurrency {b.point.concurrency}")
    w = result.winner
    if w is not None and result.best is not None:
        lo, hi = w.ci()
        lines.append(f"# winner: {w.point.label()} at concurrency {w.point.concurrency}: {w.mean:,.0f} infer/s "
                     f"(95% CI {lo:,.0f}..{hi:,.0f}; the search's figure + {len(w.throughputs) - 1} alternating re-measurements), "
                     f"p99 {_ms(w.p99_mean)}")
        if result.margin:
            m = result.margin
            lines.append(f"#   vs runner-up ({m['runner_up']}): {m['diff']:+,.0f} infer/s "
                         f"(95% CI {m['ci95'][0]:+,.0f}..{m['ci95'][1]:+,.0f})")
        if result.baseline is not None and result.baseline.throughput > 0:
            lines.append(f"#   vs baseline: {w.mean / result.baseline.throughput:.2f}x")
    elif result.best is not None:
        b = result.best
        lines.append(f"# best: {b.point.label()} at concurrency {b.point.concurrency}: {b.throughput:,.0f} infer/s, "
                     f"p99 {_ms(b.p99_ms)} (not confirmed)")
    mach = result.machine
    if mach:
        share = mach.get("client_cpu_share")
        other = mach.get("other_cpu_start")
        lines.append(f"# machine: {mach.get('cpus')} CPUs"
                     + (f", {other:.1f} busy outside the tune when it started" if other is not None else "")
                     + f", load average {mach.get('loadavg_start')} -> {mach.get('loadavg_end')}"
                     + (f", the client used {share:.0%} of a core" if share else ""))
    phases = mach.get("phases_s") if mach else None
    if phases:
        lines.append(f"# time: baseline {phases['baseline']:.0f} s, search {phases['search']:.0f} s, "
                     f"confirmation {phases['confirmation']:.0f} s"
                     + (f"; {mach['measurements']} measurements, {phases['of_which_reloads']:.0f} s of them waiting "
                        "for the server to load a configuration" if "of_which_reloads" in phases else ""))
    for note in result.notes:
        lines.append(f"# note: {note}")
    if perf_analyzer:
        lines.append(f"# reproduce: {perf_analyzer}")
    if result.best is not None:
        lines.append("# the winning settings:")
        lines.append(result.best.point.fragment().rstrip("\n"))
    return "\n".join(lines) + "\n"
