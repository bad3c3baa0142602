"""Benchmark: scan + validate a generated 1,000-model repository; semantic and text diff of two 5,000-line
configs. Each is printed with a reference measured in the same run (reading + text_format.Parse of the same
files; difflib on the same text).

    .venv/bin/python benchmarks/bench_repository.py
"""

from __future__ import annotations

import difflib
import sys
import tempfile
from pathlib import Path

from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_config_document import best_of, ensemble_config  # noqa: E402

from studio.config import ConfigDocument  # noqa: E402
from studio.diff import semantic_diff, side_by_side  # noqa: E402
from studio.validate import validate_repository  # noqa: E402

KINDS = [
    ('backend: "python"', "model.py"),
    ('platform: "onnxruntime_onnx"', "model.onnx"),
    ('platform: "tensorrt_plan"', "model.plan"),
    ('platform: "pytorch_libtorch"', "model.pt"),
]


def make_repo(root: Path, n: int = 1000) -> None:
    for i in range(n):
        kind, fname = KINDS[i % len(KINDS)]
        d = root / f"model_{i:04d}"
        (d / "1").mkdir(parents=True)
        (d / "1" / fname).write_bytes(b"")
        io = "" if "python" in kind else ""
        (d / "config.pbtxt").write_text(
            f'# model {i}\nname: "model_{i:04d}"\n{kind}\nmax_batch_size: 8\n{io}'
            'input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 3, 224, 224 ] } ]\n'
            'output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 1000 ] } ]\n'
            "dynamic_batching { max_queue_delay_microseconds: 100 }\n"
            "instance_group [ { kind: KIND_CPU count: 1 } ]\n"
        )


def best(fn) -> float:
    return best_of(fn, 3)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_repo(root)

        def reference():
            for p in sorted(root.glob("*/config.pbtxt")):
                text_format.Parse(p.read_text(), model_config_pb2.ModelConfig())

        findings = []

        def ours():
            findings[:] = validate_repository(root).findings

        t_ref = best(reference)
        t_ours = best(ours)
        print("repository: 1,000 models (python, onnx, tensorrt, pytorch), each with a version folder")
        print(f"  read + text_format.Parse only   {t_ref * 1000:7.0f} ms  (reference)")
        print(f"  scan + validate (all rules)     {t_ours * 1000:7.0f} ms  ratio {t_ours / t_ref:.2f}  (goal < 1000 ms)")
        print(f"  findings: {len(findings)} ({sum(f.severity == 'error' for f in findings)} errors)")

    a = ensemble_config(5000)
    b_doc = ConfigDocument.parse(a)
    msg = b_doc.to_message()
    for k in range(0, len(msg.ensemble_scheduling.step), 50):
        msg.ensemble_scheduling.step[k].model_version = 7
    b_doc.apply(msg)
    b = b_doc.text
    ma, mb = ConfigDocument.parse(a).to_message(), ConfigDocument.parse(b).to_message()
    t_sem = best(lambda: semantic_diff(ma, mb))
    t_text = best(lambda: side_by_side(a, b))
    t_ref = best(lambda: list(difflib.SequenceMatcher(None, a.splitlines(), b.splitlines(), autojunk=False).get_opcodes()))
    print(f"diff: two {a.count(chr(10))}-line ensemble configs, {len(semantic_diff(ma, mb))} changed fields")
    print(f"  difflib line opcodes            {t_ref * 1000:7.1f} ms  (reference)")
    print(f"  side_by_side (with intra-line)  {t_text * 1000:7.1f} ms  ratio {t_text / t_ref:.2f}")
    print(f"  semantic_diff                   {t_sem * 1000:7.1f} ms  ratio {t_sem / t_ref:.2f}")


if __name__ == "__main__":
    main()
