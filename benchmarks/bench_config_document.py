"""Benchmark: the config document against google.protobuf.text_format, measured in the same run.

    .venv/bin/python benchmarks/bench_config_document.py

1. Parse the whole shared corpus with ConfigDocument.parse and with text_format.Parse; print the ratio
   (goal: <= 1.0). Also parse + to_message(), for a like-for-like view of building the message.
2. A generated 5,000-line ensemble config: time doc.set(existing scalar) + doc.text, and set(new field) + text
   (goal: < 20 ms each).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from studio.config import ConfigDocument  # noqa: E402


def corpus_texts() -> list[str]:
    corpus = ROOT.parent / "shared" / "corpus"
    texts = []
    for p in sorted(corpus.rglob("*.pbtxt")):
        t = p.read_text(encoding="utf-8")
        try:
            text_format.Parse(t, model_config_pb2.ModelConfig())
        except text_format.ParseError:
            continue
        texts.append(t)
    return texts


def best_of(fn, repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def ensemble_config(lines_wanted: int = 5000) -> str:
    out = ['# generated ensemble', 'name: "big_ensemble"', 'platform: "ensemble"', "max_batch_size: 8"]
    out += ['input [ { name: "IN" data_type: TYPE_FP32 dims: [ 16 ] } ]']
    out += ['output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 16 ] } ]', "ensemble_scheduling {", "  step ["]
    i = 0
    while len(out) < lines_wanted - 3:
        src = "IN" if i == 0 else f"t{i - 1}"
        out += [
            "    {",
            f'      model_name: "stage_{i}"',
            "      model_version: -1",
            f'      input_map {{ key: "INPUT0" value: "{src}" }}',
            f'      output_map {{ key: "OUTPUT0" value: "t{i}" }}  # step {i}',
            "    },",
        ]
        i += 1
    out[-1] = "    }"
    out += ["  ]", "}", ""]
    return "\n".join(out)


def main() -> None:
    texts = corpus_texts()
    size = sum(len(t) for t in texts)

    def ours():
        for t in texts:
            ConfigDocument.parse(t)

    def ours_message():
        for t in texts:
            ConfigDocument.parse(t).to_message()

    def reference():
        for t in texts:
            text_format.Parse(t, model_config_pb2.ModelConfig())

    ours()
    reference()
    t_ref = best_of(reference)
    t_ours = best_of(ours)
    t_ours_msg = best_of(ours_message)
    print(f"corpus: {len(texts)} files, {size / 1024:.0f} KiB")
    print(f"  text_format.Parse              {t_ref * 1000:8.1f} ms  (reference)")
    print(f"  ConfigDocument.parse           {t_ours * 1000:8.1f} ms  ratio {t_ours / t_ref:.2f}  (goal <= 1.0)")
    print(f"  ConfigDocument.parse+message   {t_ours_msg * 1000:8.1f} ms  ratio {t_ours_msg / t_ref:.2f}")

    big = ensemble_config()
    n_lines = big.count("\n")
    t_parse_big = best_of(lambda: ConfigDocument.parse(big), 3)
    t_ref_big = best_of(lambda: text_format.Parse(big, model_config_pb2.ModelConfig()), 3)
    doc = ConfigDocument.parse(big)
    steps = len(doc.to_message().ensemble_scheduling.step)
    samples = []
    for k in range(30):
        t0 = time.perf_counter()
        doc.set(f"ensemble_scheduling.step[{(k * 37) % steps}].model_version", k)
        _ = doc.text
        samples.append(time.perf_counter() - t0)
    new_field = []
    for k in range(10):
        t0 = time.perf_counter()
        doc.set(f"ensemble_scheduling.step[{(k * 53) % steps}].model_namespace", f"ns{k}")
        _ = doc.text
        new_field.append(time.perf_counter() - t0)
    print(f"ensemble config: {n_lines} lines, {steps} steps")
    print(f"  parse {t_parse_big * 1000:.1f} ms (text_format {t_ref_big * 1000:.1f} ms, ratio {t_parse_big / t_ref_big:.2f})")
    print(
        f"  set existing scalar + text: median {statistics.median(samples) * 1000:.2f} ms, "
        f"max {max(samples) * 1000:.2f} ms  (goal < 20 ms)"
    )
    print(
        f"  set new field + text:       median {statistics.median(new_field) * 1000:.2f} ms, "
        f"max {max(new_field) * 1000:.2f} ms  (goal < 20 ms)"
    )


if __name__ == "__main__":
    main()
