"""One test per rule: a config that breaks it (the rule fires) and a close variant that keeps it (it does not).

A meta test checks that every rule id the validator can emit is covered here or in test_repository_rules.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from studio.config import ConfigDocument
from studio.validate import Options, validate_config

IO = 'input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ] output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
BASE = 'name: "m" backend: "identity" max_batch_size: 8\n' + IO
NOBATCH = 'name: "m" backend: "identity" max_batch_size: 0\n' + IO
TORCH = 'name: "m" platform: "pytorch_libtorch" max_batch_size: 8\n'
TRT = 'name: "m" platform: "tensorrt_plan" max_batch_size: 8\n'
ORT = 'name: "m" platform: "onnxruntime_onnx" max_batch_size: 8\n'
SEQ_CTL = "control_input [ {{ name: \"{n}\" control [ {{ kind: {k} {v} }} ] }} ]"
ENS_IO = 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] } ] output [ { name: "B" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
ENS = 'name: "e" platform: "ensemble" max_batch_size: 8\n' + ENS_IO
STEP = 'step [ { model_name: "m" model_version: -1 input_map { key: "IN" value: "A" } output_map { key: "OUT" value: "B" } } ]'
WARM = 'model_warmup [ { name: "w" batch_size: %d inputs { key: "IN" value: { data_type: TYPE_FP32 dims: [ 4 ] %s } } } ]'
METRIC = 'model_metrics { metric_control [ { %s } ] }'
NO_AC = Options(auto_complete=False)

# rule id -> (bad config, good config, options)
CASES = {
    "name.missing": ('backend: "identity"\n' + IO, BASE, None),
    "platform.unknown": ('name: "m" platform: "onnxruntime"\n' + IO, ORT + IO, None),
    "ensemble.backend": (ENS + 'backend: "identity" ensemble_scheduling { ' + STEP + " }", ENS + "ensemble_scheduling { " + STEP + " }", None),
    "platform.backend-pair": (ORT + 'backend: "pytorch"\n' + IO, ORT + 'backend: "onnxruntime"\n' + IO, None),
    "batching.max-batch-size-negative": (BASE.replace("max_batch_size: 8", "max_batch_size: -1"), BASE, None),
    "batching.dynamic-without-batch-dim": (NOBATCH + "dynamic_batching { }", BASE + "dynamic_batching { }", None),
    "dynamic-batching.preferred-positive": (BASE + "dynamic_batching { preferred_batch_size: [ 0 ] }", BASE + "dynamic_batching { preferred_batch_size: [ 4 ] }", None),
    "dynamic-batching.preferred-le-max": (BASE + "dynamic_batching { preferred_batch_size: [ 16 ] }", BASE + "dynamic_batching { preferred_batch_size: [ 4 ] }", None),
    "dynamic-batching.preferred-redundant": (BASE + "dynamic_batching { preferred_batch_size: [ 8 ] }", BASE + "dynamic_batching { }", None),
    "dynamic-batching.default-priority-range": (BASE + "dynamic_batching { priority_levels: 3 }", BASE + "dynamic_batching { priority_levels: 3 default_priority_level: 2 }", None),
    "dynamic-batching.priority-policy-range": (
        BASE + "dynamic_batching { priority_levels: 2 default_priority_level: 1 priority_queue_policy { key: 3 value { max_queue_size: 1 } } }",
        BASE + "dynamic_batching { priority_levels: 2 default_priority_level: 1 priority_queue_policy { key: 2 value { max_queue_size: 1 } } }", None),
    "dynamic-batching.preserve-ordering-priorities": (
        BASE + "dynamic_batching { preserve_ordering: true priority_levels: 2 default_priority_level: 1 }",
        BASE + "dynamic_batching { preserve_ordering: true priority_levels: 1 default_priority_level: 1 }", None),
    "dynamic-batching.preserve-ordering-delay": (
        BASE + "dynamic_batching { preserve_ordering: true default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 10 } }",
        BASE + "dynamic_batching { preserve_ordering: true default_queue_policy { timeout_action: REJECT default_timeout_microseconds: 10 } }", None),
    "cache.sequence": (BASE + "sequence_batching { } response_cache { enable: true }", BASE + "sequence_batching { }", None),
    "sequence.control-name": (BASE + "sequence_batching { control_input [ { control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }",
                              BASE + "sequence_batching { " + SEQ_CTL.format(n="S", k="CONTROL_SEQUENCE_START", v="int32_false_true: [ 0, 1 ]") + " }", None),
    "sequence.control-tensor-reused": (
        BASE + 'sequence_batching { control_input [ { name: "S" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] }, { name: "S" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] } ] }',
        BASE + 'sequence_batching { control_input [ { name: "S" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] }, { name: "E" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] } ] }', None),
    "sequence.control-multiple": (
        BASE + 'sequence_batching { control_input [ { name: "S" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] }, { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }',
        BASE + "sequence_batching { " + SEQ_CTL.format(n="S", k="CONTROL_SEQUENCE_START", v="int32_false_true: [ 0, 1 ]") + " }", None),
    "sequence.control-values": (BASE + "sequence_batching { " + SEQ_CTL.format(n="S", k="CONTROL_SEQUENCE_READY", v="") + " }",
                                BASE + "sequence_batching { " + SEQ_CTL.format(n="S", k="CONTROL_SEQUENCE_READY", v="bool_false_true: [ false, true ]") + " }", None),
    "sequence.corrid-type": (BASE + "sequence_batching { " + SEQ_CTL.format(n="C", k="CONTROL_SEQUENCE_CORRID", v="data_type: TYPE_FP32") + " }",
                             BASE + "sequence_batching { " + SEQ_CTL.format(n="C", k="CONTROL_SEQUENCE_CORRID", v="data_type: TYPE_UINT64") + " }", None),
    "sequence.preferred-positive": (BASE + "sequence_batching { oldest { preferred_batch_size: [ 0 ] } }", BASE + "sequence_batching { oldest { preferred_batch_size: [ 2 ] } }", None),
    "sequence.preferred-le-max": (BASE + "sequence_batching { oldest { preferred_batch_size: [ 9 ] } }", BASE + "sequence_batching { oldest { preferred_batch_size: [ 8 ] } }", None),
    "sequence.slot-utilization": (BASE + "sequence_batching { direct { minimum_slot_utilization: 1.5 } }", BASE + "sequence_batching { direct { minimum_slot_utilization: 0.5 } }", None),
    "sequence.state-names": (BASE + 'sequence_batching { state [ { input_name: "I" data_type: TYPE_FP32 dims: 1 } ] }',
                             BASE + 'sequence_batching { state [ { input_name: "I" output_name: "O" data_type: TYPE_FP32 dims: 1 } ] }', None),
    "sequence.state-type": (BASE + 'sequence_batching { state [ { input_name: "I" output_name: "O" dims: 1 } ] }',
                            BASE + 'sequence_batching { state [ { input_name: "I" output_name: "O" data_type: TYPE_FP32 dims: 1 } ] }', None),
    "sequence.state-dims": (BASE + 'sequence_batching { state [ { input_name: "I" output_name: "O" data_type: TYPE_FP32 } ] }',
                            BASE + 'sequence_batching { state [ { input_name: "I" output_name: "O" data_type: TYPE_FP32 dims: 1 } ] }', None),
    "ensemble.platform": (BASE + "ensemble_scheduling { " + STEP + " }", BASE, None),
    "ensemble.instance-group": (ENS + "ensemble_scheduling { " + STEP + " } instance_group [ { kind: KIND_CPU } ]", ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.optimization": (ENS + "ensemble_scheduling { " + STEP + " } optimization { }", ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.warmup": (ENS + "ensemble_scheduling { " + STEP + ' } model_warmup [ { name: "w" } ]', ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.no-step": (ENS + "ensemble_scheduling { }", ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.step-model-name": (ENS + 'ensemble_scheduling { step [ { input_map { key: "IN" value: "A" } output_map { key: "OUT" value: "B" } } ] }', ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.step-input-map": (ENS + 'ensemble_scheduling { step [ { model_name: "m" output_map { key: "OUT" value: "B" } } ] }', ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.step-output-map": (ENS + 'ensemble_scheduling { step [ { model_name: "m" input_map { key: "IN" value: "A" } } ] }', ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.scheduling-missing": (ENS, ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.tensor-written-twice": (ENS + 'ensemble_scheduling { step [ { model_name: "m" input_map { key: "IN" value: "A" } output_map { key: "OUT" value: "B" } }, { model_name: "m" input_map { key: "IN" value: "A" } output_map { key: "OUT" value: "B" } } ] }',
                                      ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.input-unused": (ENS + 'input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ] ensemble_scheduling { ' + STEP + " }", ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.output-unused": (ENS + 'output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ] ensemble_scheduling { ' + STEP + " }", ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.output-not-written": (ENS + 'ensemble_scheduling { step [ { model_name: "m" input_map { key: "IN" value: "T" } output_map { key: "OUT" value: "B" } } ] }', ENS + "ensemble_scheduling { " + STEP + " }", None),
    "ensemble.tensor-unused": (ENS + 'ensemble_scheduling { step [ { model_name: "m" input_map { key: "IN" value: "A" } output_map [ { key: "OUT" value: "B" }, { key: "OUT2" value: "C" } ] } ] }', ENS + "ensemble_scheduling { " + STEP + " }", None),
    "cache.decoupled": (BASE + "model_transaction_policy { decoupled: true } response_cache { enable: true }", BASE + "model_transaction_policy { decoupled: true }", None),
    "metrics.identifier": (BASE + METRIC % "histogram_options { buckets: [ 1 ] }", BASE + METRIC % 'metric_identifier { family: "f" } histogram_options { buckets: [ 1 ] }', None),
    "metrics.family": (BASE + METRIC % "metric_identifier { } histogram_options { buckets: [ 1 ] }", BASE + METRIC % 'metric_identifier { family: "f" } histogram_options { buckets: [ 1 ] }', None),
    "metrics.histogram": (BASE + METRIC % 'metric_identifier { family: "f" }', BASE + METRIC % 'metric_identifier { family: "f" } histogram_options { buckets: [ 1 ] }', None),
    "metrics.buckets": (BASE + METRIC % 'metric_identifier { family: "f" } histogram_options { }', BASE + METRIC % 'metric_identifier { family: "f" } histogram_options { buckets: [ 1 ] }', None),
    "io.input-name": ('name: "m" backend: "identity" input [ { data_type: TYPE_FP32 dims: [ 1 ] } ]', BASE, None),
    "io.output-name": ('name: "m" backend: "identity" output [ { data_type: TYPE_FP32 dims: [ 1 ] } ]', BASE, None),
    "io.input-data-type": ('name: "m" backend: "identity" input [ { name: "I" dims: [ 1 ] } ]', BASE, None),
    "io.output-data-type": ('name: "m" backend: "identity" output [ { name: "O" dims: [ 1 ] } ]', BASE, None),
    "io.input-dims": ('name: "m" backend: "identity" input [ { name: "I" data_type: TYPE_FP32 } ]', BASE, None),
    "io.output-dims": ('name: "m" backend: "identity" output [ { name: "O" data_type: TYPE_FP32 } ]', BASE, None),
    "io.autocomplete": (ORT + 'input [ { name: "I" } ]', ORT + 'input [ { name: "I" data_type: TYPE_FP32 dims: [ 1 ] } ]', None),
    "io.input-duplicate": (BASE + 'input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]', BASE, None),
    "io.output-duplicate": (BASE + 'output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]', BASE, None),
    "io.reshape-empty-nobatch": ('name: "m" backend: "identity" input [ { name: "I" data_type: TYPE_FP32 dims: [ 1 ] reshape { } } ]',
                                 'name: "m" backend: "identity" max_batch_size: 2 input [ { name: "I" data_type: TYPE_FP32 dims: [ 1 ] reshape { } } ]', None),
    "io.dims-positive": (BASE.replace("dims: [ 4 ] } ] output", "dims: [ 0 ] } ] output"), BASE, None),
    "io.reshape-positive": (BASE.replace("dims: [ 4 ] } ] output", "dims: [ 4 ] reshape { shape: [ 0 ] } } ] output"), BASE.replace("dims: [ 4 ] } ] output", "dims: [ 4 ] reshape { shape: [ 2, 2 ] } } ] output"), None),
    "io.reshape-size": (BASE.replace("dims: [ 4 ] } ] output", "dims: [ 4 ] reshape { shape: [ 3 ] } } ] output"), BASE.replace("dims: [ 4 ] } ] output", "dims: [ 4 ] reshape { shape: [ 1, 4 ] } } ] output"), None),
    "io.reshape-variable": (BASE.replace("dims: [ 4 ] } ] output", "dims: [ 2, -1 ] reshape { shape: [ -1, 2, -1 ] } } ] output"), BASE.replace("dims: [ 4 ] } ] output", "dims: [ 2, -1 ] reshape { shape: [ 2, 1, -1 ] } } ] output"), None),
    "io.format-dims": (BASE.replace("dims: [ 4 ] } ] output", "format: FORMAT_NCHW dims: [ 4 ] } ] output"), BASE.replace("dims: [ 4 ] } ] output", "format: FORMAT_NCHW dims: [ 3, 4, 4 ] } ] output"), None),
    "io.shape-tensor": (ORT + 'input [ { name: "I" data_type: TYPE_INT32 dims: [ 1 ] is_shape_tensor: true } ]', TRT + 'input [ { name: "I" data_type: TYPE_INT32 dims: [ 1 ] is_shape_tensor: true } ]', None),
    "io.non-linear-format": (ORT + 'input [ { name: "I" data_type: TYPE_FP32 dims: [ 3, 4, 4 ] is_non_linear_format_io: true } ]', TRT + 'input [ { name: "I" data_type: TYPE_FP32 dims: [ 3, 4, 4 ] is_non_linear_format_io: true } ]', None),
    "io.no-inputs": ('name: "m" backend: "identity" output [ { name: "O" data_type: TYPE_FP32 dims: [ 1 ] } ]', BASE, NO_AC),
    "batch-io.source-count": (TRT + IO + 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "T" data_type: TYPE_FP32 } ]', TRT + IO + 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "T" data_type: TYPE_FP32 source_input: "IN" } ]', None),
    "batch-io.data-type": (TRT + IO + 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "T" data_type: TYPE_INT64 source_input: "IN" } ]', TRT + IO + 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "T" data_type: TYPE_INT32 source_input: "IN" } ]', None),
    "batch-io.unknown-source": (TRT + IO + 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "T" data_type: TYPE_FP32 source_input: "NOPE" } ]', TRT + IO + 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "T" data_type: TYPE_FP32 source_input: "IN" } ]', None),
    "batch-io.unknown-target": (TRT + IO + 'batch_output [ { kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: "NOPE" source_input: "IN" } ]', TRT + IO + 'batch_output [ { kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: "OUT" source_input: "IN" } ]', None),
    "batch-io.target-twice": (TRT + IO + 'batch_output [ { kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: [ "OUT", "OUT" ] source_input: "IN" } ]', TRT + IO + 'batch_output [ { kind: BATCH_SCATTER_WITH_INPUT_SHAPE target_name: "OUT" source_input: "IN" } ]', None),
    "batch-io.unsupported": (ORT + IO + 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "T" data_type: TYPE_FP32 source_input: "IN" } ]', TRT + IO + 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "T" data_type: TYPE_FP32 source_input: "IN" } ]', None),
    "instance-group.model-gpus": (BASE + "instance_group [ { kind: KIND_MODEL gpus: [ 0 ] } ]", BASE + "instance_group [ { kind: KIND_MODEL } ]", None),
    "instance-group.gpu-id": (BASE + "instance_group [ { kind: KIND_GPU gpus: [ -1 ] } ]", BASE + "instance_group [ { kind: KIND_GPU gpus: [ 0 ] } ]", None),
    "instance-group.no-gpu-here": (BASE + "instance_group [ { kind: KIND_GPU } ]", BASE + "instance_group [ { kind: KIND_CPU } ]", None),
    "instance-group.gpu-absent-here": (BASE + "instance_group [ { kind: KIND_GPU gpus: [ 3 ] } ]", BASE + "instance_group [ { kind: KIND_GPU gpus: [ 0 ] } ]", Options(gpus={0})),
    "instance-group.cpu-gpus": (BASE + "instance_group [ { kind: KIND_CPU gpus: [ 0 ] } ]", BASE + "instance_group [ { kind: KIND_CPU } ]", None),
    "instance-group.count": (BASE + "instance_group [ { kind: KIND_CPU count: -2 } ]", BASE + "instance_group [ { kind: KIND_CPU count: 2 } ]", None),
    "instance-group.profile": (ORT + IO + 'instance_group [ { kind: KIND_GPU profile: "0" } ]', TRT + IO + 'instance_group [ { kind: KIND_GPU profile: "0" } ]', None),
    "backend.runtime-escape": (BASE + 'runtime: "../lib/libtriton_identity.so"', BASE + 'runtime: "libtriton_identity.so"', None),
    # Triton 2.51 refuses runtime "model.py" for backend python (oracle: py_rt_model_py)
    "backend.runtime-python": (BASE.replace('"identity"', '"python"') + 'runtime: "model.py"',
                               BASE.replace('"identity"', '"python"') + 'runtime: "libtriton_python.so"', None),
    "backend.runtime-path": (BASE + 'runtime: "/opt/x/libtriton_identity.so"', BASE + 'runtime: "libtriton_identity.so"', None),
    "backend.runtime-unknown": (BASE.replace('"identity"', '"python"') + 'runtime: "libtriton_other.so"',
                                BASE.replace('"identity"', '"python"') + 'runtime: "../python/libtriton_python.so"', None),
    "warmup.shape": (BASE + WARM.replace("dims: [ 4 ]", "dims: [ 5 ]") % (1, "zero_data: true"), BASE + WARM % (1, "zero_data: true"), None),
    "warmup.missing-input": (BASE.replace('input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]', 'input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "IN2" data_type: TYPE_FP32 dims: [ 4 ] } ]') + WARM % (1, "zero_data: true"),
                             BASE + WARM % (1, "zero_data: true"), None),
    "backend.unknown": (BASE.replace('"identity"', '"identiy"'), BASE, None),
    "warmup.batch-size": (BASE + WARM % (16, "zero_data: true"), BASE + WARM % (8, "zero_data: true"), None),
    "warmup.unknown-input": (BASE + (WARM % (1, "zero_data: true")).replace('key: "IN"', 'key: "NOPE"'), BASE + WARM % (1, "zero_data: true"), None),
    "warmup.input-data": (BASE + WARM % (1, ""), BASE + WARM % (1, "random_data: true"), None),
    "warmup.data-type": (BASE + (WARM % (1, "zero_data: true")).replace("data_type: TYPE_FP32 ", ""), BASE + WARM % (1, "zero_data: true"), None),
    "warmup.dims": (BASE + (WARM % (1, "zero_data: true")).replace("dims: [ 4 ]", "dims: [ -1 ]"), BASE + WARM % (1, "zero_data: true"), None),
    "pytorch.io-naming": (TORCH + IO, TORCH + IO.replace('"IN"', '"IN__0"').replace('"OUT"', '"OUT__0"'), None),
    "pytorch.control-naming": (TORCH + 'input [ { name: "IN__0" data_type: TYPE_FP32 dims: [ 1 ] } ] sequence_batching { ' + SEQ_CTL.format(n="START", k="CONTROL_SEQUENCE_START", v="int32_false_true: [ 0, 1 ]") + " }",
                               TORCH + 'input [ { name: "IN__0" data_type: TYPE_FP32 dims: [ 1 ] } ] sequence_batching { ' + SEQ_CTL.format(n="START__1", k="CONTROL_SEQUENCE_START", v="int32_false_true: [ 0, 1 ]") + " }", None),
    "pytorch.state-naming": (TORCH + 'sequence_batching { state [ { input_name: "S_IN" output_name: "S_OUT" data_type: TYPE_FP32 dims: 1 } ] }',
                             TORCH + 'sequence_batching { state [ { input_name: "S__0" output_name: "S__1" data_type: TYPE_FP32 dims: 1 } ] }', None),
    "tensorflow.signature": ('name: "m" platform: "tensorflow_savedmodel"\n' + IO, 'name: "m" platform: "tensorflow_savedmodel"\n', NO_AC),
    "optimization.accelerator": (ORT + IO + 'optimization { execution_accelerators { cpu_execution_accelerator [ { name: "tensorrt" } ] } }',
                                 ORT + IO + 'optimization { execution_accelerators { cpu_execution_accelerator [ { name: "openvino" } ] } }', None),
    "ensemble.step-version-unset": (ENS + "ensemble_scheduling { " + STEP.replace("model_version: -1 ", "") + " }", ENS + "ensemble_scheduling { " + STEP + " }", None),
    "platform.missing": ('name: "m" default_model_filename: "model.bin"\n' + IO, BASE, None),
}
# Rules that need a repository (files, several models): covered in test_repository_rules.py.
REPOSITORY_RULES = {
    "backend.undetermined", "backend.from-files", "warmup.data-file", "io.label-file", "decoupled.backend", "python.execution-env", "syntax",
    "ensemble.batch-size", "ensemble.circular", "ensemble.decoupled-branches", "ensemble.tensor-shape",
    "ensemble.tensor-type", "ensemble.unknown-input", "ensemble.unknown-output", "ensemble.unmapped-input",
    "ensemble.missing-models", "ensemble.required-version", "repository.cc-model-file", "repository.empty-version",
    "repository.model-file", "repository.name-mismatch", "repository.no-config", "repository.no-version",
    "repository.specific-version-missing", "repository.symlink-outside", "repository.unreadable",
    "repository.version-ignored", "repository.misplaced-config", "repository.config-only-checkout",
    "python.model-syntax", "python.platform-handler", "release.unknown-field", "release.unknown-enum-value",  # test_oracle_rules.py
}


def rules_of(text: str, options: Options | None) -> set[str]:
    doc = ConfigDocument.parse(text)
    return {f.rule for f in validate_config(doc, model_name="m" if "ensemble" not in text else "e", options=options or Options())}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_fires_on_the_bad_config_only(rule):
    bad, good, options = CASES[rule]
    if rule == "name.missing":
        doc = ConfigDocument.parse(bad)
        assert rule in {f.rule for f in validate_config(doc, model_name="", options=Options())}
    else:
        assert rule in rules_of(bad, options), f"{rule} did not fire"
    assert rule not in rules_of(good, options), f"{rule} fired on the good variant"


def test_every_rule_has_a_test():
    src = "\n".join(p.read_text() for p in Path(__file__).resolve().parents[2].joinpath("studio", "validate").glob("*.py"))
    ids = set(re.findall(r'"((?:[a-z0-9]+-?)+\.(?:[a-z0-9]+-?)+)"', src))
    ids |= {f"io.{k}-{r}" for k in ("input", "output") for r in ("name", "data-type", "dims", "duplicate")}
    ids |= {f"ensemble.step-{r}" for r in ("model-name", "input-map", "output-map")}
    ids = {i for i in ids if not i.endswith((".py", ".so", ".pbtxt", ".onnx", ".plan", ".pt", ".pt2", ".xml", ".graphdef", ".savedmodel", ".dali", ".json"))}
    ids = {i for i in ids if not re.fullmatch(r"[\d.]+", i)}  # version strings
    missing = ids - set(CASES) - REPOSITORY_RULES
    assert not missing, sorted(missing)


def test_findings_point_at_the_line_and_carry_fixes():
    text = 'name: "m"\nbackend: "identity"\nmax_batch_size: 4\n' + IO + "dynamic_batching {\n  preferred_batch_size: [ 8 ]\n}\n"
    doc = ConfigDocument.parse(text)
    f = next(f for f in validate_config(doc, model_name="m") if f.rule == "dynamic-batching.preferred-le-max")
    assert (f.line, f.column) == (6, 27)
    assert f.message == "dynamic batching preferred size must be <= max batch size for m"
    for e in f.edits:
        e.apply(doc)
    assert "dynamic-batching.preferred-le-max" not in {x.rule for x in validate_config(doc, model_name="m")}
    assert "max_batch_size: 8" in doc.text


def test_a_misspelt_field_name_gets_a_text_fix():
    from studio.config import ConfigDocument, ParseError
    from studio.validate import Finding

    text = 'name: "m"\nbackend: "python"\n  max_batch_sise: 4\n'
    try:
        ConfigDocument.parse(text)
    except ParseError as e:
        f = Finding.from_parse_error(e, file="m/config.pbtxt")
    assert (f.line, f.column, f.rule) == (3, 3, "syntax")
    (edit,) = f.edits
    fixed = edit.apply_to_text(text)
    assert fixed == text.replace("sise", "size")
    assert ConfigDocument.parse(fixed).get("max_batch_size") == 4
