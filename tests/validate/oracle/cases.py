"""Mutated model folders for the validator oracle: the kinds of mistakes users make, seeded and deterministic.

Each case is one model folder (plus sibling folders an ensemble needs), built on a python-backend model that the
embedded Triton really loads (a tiny model.py), or a config-only variant for another platform where Triton
refuses the config before it needs the backend (its verdict is then "refused" with a config message, or the
backend is simply absent: "unable to find backend library", which means the config passed Triton's core checks).

    cases = generate()                   # list[Case], same list every time for the same seed
    write_repository(cases, root)        # every case's folders side by side under root
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

SEED = 13

MODEL_PY = '''import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        pass
{extra}
    def execute(self, requests):
        out = []
        for r in requests:
            ts = r.inputs()
            data = ts[0].as_numpy().astype(np.float32) if ts else np.zeros((1, 4), np.float32)
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", data)]))
        return out
'''

AUTO_COMPLETE = '''
    @staticmethod
    def auto_complete_config(auto_complete_model_config):
        return auto_complete_model_config
'''


def model_py(auto_complete: bool = False) -> str:
    return MODEL_PY.format(extra=AUTO_COMPLETE if auto_complete else "")


@dataclass
class Case:
    id: str  # unique; also the model's folder name (prefixed by siblings for ensembles)
    category: str
    config: str | None  # config.pbtxt text; None: no config.pbtxt
    files: dict[str, str] = field(default_factory=dict)  # path inside the model folder -> text
    siblings: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)  # folder -> (config, files)
    folder: str = ""  # folder name when it differs from id

    @property
    def name(self) -> str:
        return self.folder or self.id


IO = '''input [ {{ name: "INPUT0" data_type: {dt} dims: [ {dims} ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ {dims} ] }} ]
'''


def py_config(name: str | None = None, *, mbs: int | None = 8, io: str | None = None, extra: str = "",
              backend: str = 'backend: "python"', group: str = "instance_group [ { kind: KIND_CPU count: 1 } ]") -> str:
    lines = []
    if name is not None:
        lines.append(f'name: "{name}"')
    if backend:
        lines.append(backend)
    if mbs is not None:
        lines.append(f"max_batch_size: {mbs}")
    lines.append(io if io is not None else IO.format(dt="TYPE_FP32", dims="4"))
    if group:
        lines.append(group)
    if extra:
        lines.append(extra)
    return "\n".join(lines) + "\n"


def v1(ac: bool = False, **more: str) -> dict[str, str]:
    files = {"1/model.py": model_py(ac)}
    files.update(more)
    return files


def _python_cases(rng: random.Random) -> list[Case]:
    C: list[Case] = []

    def add(cid, cat, config, files=None, **kw):
        C.append(Case(cid, cat, config, v1() if files is None else files, **kw))

    # -- baseline and names
    add("py_base", "baseline", py_config("py_base"))
    add("py_noname", "baseline", py_config(None))
    add("py_nombs", "baseline", py_config(None, mbs=None, io=IO.format(dt="TYPE_FP32", dims="1, 4")))
    add("py_name_mismatch", "name", py_config("other_name"))
    add("py_no_config", "auto-complete", None)
    add("py_empty_config", "auto-complete", "")
    add("py_empty_config_ac", "auto-complete", "", v1(True))
    add("py_backend_only", "auto-complete", 'backend: "python"\n')
    add("py_no_backend", "auto-complete", py_config(None, backend=""))
    # -- batch sizes
    add("py_mbs_negative", "batching", py_config(None, mbs=-1))
    for k in range(4):
        mbs = rng.randint(1, 16)
        pref = sorted({rng.randint(1, 32) for _ in range(rng.randint(1, 3))})
        add(f"py_preferred_{k}", "batching", py_config(None, mbs=mbs, extra=f"dynamic_batching {{ preferred_batch_size: {pref} }}"))
    add("py_preferred_zero", "batching", py_config(None, extra="dynamic_batching { preferred_batch_size: [ 0 ] }"))
    add("py_dynamic_mbs0", "batching", py_config(None, mbs=0, io=IO.format(dt="TYPE_FP32", dims="1, 4"), extra="dynamic_batching { }"))
    add("py_priority_default_bad", "batching", py_config(None, extra="dynamic_batching { priority_levels: 2 default_priority_level: 3 }"))
    add("py_priority_ok", "batching", py_config(None, extra="dynamic_batching { priority_levels: 2 default_priority_level: 1 }"))
    add("py_preserve_delay", "batching", py_config(None, extra="dynamic_batching { preserve_ordering: true default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 100 } }"))
    # -- dims and data types
    for dims, cid in (("-1", "py_dims_wild"), ("0", "py_dims_zero"), ("-2", "py_dims_neg2"), ("", "py_dims_empty"),
                      ("4, -1", "py_dims_wild2"), ("1000000000, 1000000000", "py_dims_huge")):
        add(cid, "dims", py_config(None, io=IO.format(dt="TYPE_FP32", dims=dims)))
    add("py_dims_empty_ac", "dims", py_config(None, io=IO.format(dt="TYPE_FP32", dims="")), v1(True))
    add("py_dims_mbs0_empty", "dims", py_config(None, mbs=0, io=IO.format(dt="TYPE_FP32", dims="")))
    for dt in ("TYPE_STRING", "TYPE_BF16", "TYPE_BOOL", "TYPE_INVALID", "TYPE_FP64"):
        add(f"py_dt_{dt[5:].lower()}", "data-type", py_config(None, io=IO.format(dt=dt, dims="4")))
    add("py_dt_missing", "data-type", py_config(None, io='input [ { name: "INPUT0" dims: [ 4 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'))
    add("py_dt_missing_ac", "data-type", py_config(None, io='input [ { name: "INPUT0" dims: [ 4 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'), v1(True))
    add("py_reshape_bad", "dims", py_config(None, io='input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] reshape { shape: [ 3 ] } } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'))
    add("py_reshape_ok", "dims", py_config(None, io='input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] reshape { shape: [ 2, 2 ] } } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'))
    add("py_format_nchw_bad", "dims", py_config(None, io='input [ { name: "INPUT0" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 4 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'))
    add("py_io_noname", "io", py_config(None, io='input [ { data_type: TYPE_FP32 dims: [ 4 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'))
    # -- duplicate IO
    add("py_dup_input", "duplicate-io", py_config(None, io=IO.format(dt="TYPE_FP32", dims="4") + 'input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]\n'))
    add("py_dup_output", "duplicate-io", py_config(None, io=IO.format(dt="TYPE_FP32", dims="4") + 'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'))
    add("py_shape_tensor", "io", py_config(None, io='input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] is_shape_tensor: true } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'))
    # -- instance groups
    for cid, g in (("py_count_neg", "{ kind: KIND_CPU count: -1 }"), ("py_count_zero", "{ kind: KIND_CPU count: 0 }"),
                   ("py_count_two", "{ kind: KIND_CPU count: 2 }"), ("py_kind_gpu", "{ kind: KIND_GPU count: 1 }"),
                   ("py_kind_gpu_ids", "{ kind: KIND_GPU gpus: [ 0 ] }"), ("py_kind_cpu_gpus", "{ kind: KIND_CPU gpus: [ 0 ] }"),
                   ("py_kind_model", "{ kind: KIND_MODEL }"), ("py_kind_model_gpus", "{ kind: KIND_MODEL gpus: [ 0 ] }"),
                   ("py_kind_auto", "{ count: 1 }"), ("py_profile", '{ kind: KIND_CPU profile: [ "0" ] }'),
                   ("py_gpu_neg", "{ kind: KIND_GPU gpus: [ -1 ] }"), ("py_two_groups", "{ kind: KIND_CPU }, { kind: KIND_CPU count: 2 }")):
        add(cid, "instance-group", py_config(None, group=f"instance_group [ {g} ]"))
    # -- backend, runtime
    for cid, be in (("py_backend_typo", 'backend: "pythn"'), ("py_backend_custom", 'backend: "diffusion"'),
                    ("py_platform_bad", 'platform: "pytorch_libtorh"'), ("py_platform_backend_pair", 'backend: "python" platform: "onnxruntime_onnx"'),
                    ("py_backend_ensemble", 'backend: "python" platform: "ensemble"')):
        add(cid, "backend", py_config(None, backend=be))
    for cid, rt in (("py_rt_rel", "../python/libtriton_python.so"), ("py_rt_lib", "libtriton_python.so"), ("py_rt_model_py", "model.py"),
                    ("py_rt_abs", "/opt/tritonserver/backends/python/libtriton_python.so"), ("py_rt_missing", "libtriton_nothere.so"),
                    ("py_rt_other_py", "other.py")):
        add(cid, "runtime", py_config(None, extra=f'runtime: "{rt}"'))
    # -- sequence batching
    add("py_seq_state_bare", "sequence", py_config(None, extra='sequence_batching { state [ { input_name: "S_IN" output_name: "S_OUT" } ] }'))
    add("py_seq_state_noname", "sequence", py_config(None, extra="sequence_batching { state [ { data_type: TYPE_FP32 dims: [ 1 ] } ] }"))
    add("py_seq_state_ok", "sequence", py_config(None, extra='sequence_batching { state [ { input_name: "S_IN" output_name: "S_OUT" data_type: TYPE_FP32 dims: [ 1 ] } ] }'))
    add("py_seq_ctl_novalues", "sequence", py_config(None, extra='sequence_batching { control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START } ] } ] }'))
    add("py_seq_ctl_ok", "sequence", py_config(None, extra='sequence_batching { control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }'))
    add("py_seq_corrid_fp", "sequence", py_config(None, extra='sequence_batching { control_input [ { name: "CID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32 } ] } ] }'))
    add("py_seq_oldest_pref", "sequence", py_config(None, extra="sequence_batching { oldest { preferred_batch_size: [ 64 ] } }"))
    add("py_seq_slot", "sequence", py_config(None, extra="sequence_batching { direct { minimum_slot_utilization: 2.0 } }"))
    add("py_seq_cache", "sequence", py_config(None, extra="sequence_batching { } response_cache { enable: true }"))
    # -- warmup
    W = 'model_warmup [ {{ name: "w" batch_size: {bs} inputs {{ key: "{key}" value: {{ data_type: {dt} dims: [ {dims} ] {data} }} }} }} ]'
    for cid, bs, key, dt, dims, data in (
        ("py_warmup_ok", 1, "INPUT0", "TYPE_FP32", "4", "zero_data: true"),
        ("py_warmup_random", 2, "INPUT0", "TYPE_FP32", "4", "random_data: true"),
        ("py_warmup_unknown_input", 1, "NOPE", "TYPE_FP32", "4", "zero_data: true"),
        ("py_warmup_shape", 1, "INPUT0", "TYPE_FP32", "5", "zero_data: true"),
        ("py_warmup_rank", 1, "INPUT0", "TYPE_FP32", "2, 2", "zero_data: true"),
        ("py_warmup_type", 1, "INPUT0", "TYPE_INT32", "4", "zero_data: true"),
        ("py_warmup_nodata", 1, "INPUT0", "TYPE_FP32", "4", ""),
        ("py_warmup_nodt", 1, "INPUT0", "TYPE_INVALID", "4", "zero_data: true"),
        ("py_warmup_var", 1, "INPUT0", "TYPE_FP32", "-1", "zero_data: true"),
        ("py_warmup_file_missing", 1, "INPUT0", "TYPE_FP32", "4", 'input_data_file: "raw_in"'),
        ("py_warmup_bs0", 0, "INPUT0", "TYPE_FP32", "4", "zero_data: true"),
    ):
        add(cid, "warmup", py_config(None, extra=W.format(bs=bs, key=key, dt=dt, dims=dims, data=data)))
    add("py_warmup_file_ok", "warmup", py_config(None, extra=W.format(bs=1, key="INPUT0", dt="TYPE_FP32", dims="4", data='input_data_file: "raw_in"')),
        v1(**{"warmup/raw_in": "\0" * 16}))
    add("py_warmup_file_short", "warmup", py_config(None, extra=W.format(bs=1, key="INPUT0", dt="TYPE_FP32", dims="4", data='input_data_file: "raw_in"')),
        v1(**{"warmup/raw_in": "\0" * 4}))
    two_in = ('input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
              'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n')
    add("py_warmup_missing_input", "warmup", py_config(None, io=two_in, extra=W.format(bs=1, key="INPUT0", dt="TYPE_FP32", dims="4", data="zero_data: true")))
    add("py_warmup_optional_missing", "warmup", py_config(None, io=two_in.replace('name: "INPUT1"', 'name: "INPUT1" optional: true'),
                                                          extra=W.format(bs=1, key="INPUT0", dt="TYPE_FP32", dims="4", data="zero_data: true")))
    add("py_warmup_nonbatch_bs2", "warmup", py_config(None, mbs=0, io=IO.format(dt="TYPE_FP32", dims="4"),
                                                      extra=W.format(bs=2, key="INPUT0", dt="TYPE_FP32", dims="4", data="zero_data: true")))
    add("py_warmup_extra_input", "warmup", py_config(None, extra='model_warmup [ { name: "w" batch_size: 1 inputs [ { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } }, { key: "NOPE" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } ] } ]'))
    add("py_warmup_bs_gt_max", "warmup", py_config(None, mbs=2, extra=W.format(bs=4, key="INPUT0", dt="TYPE_FP32", dims="4", data="zero_data: true")))
    # -- model files
    add("py_default_filename_missing", "model-files", py_config(None, extra='default_model_filename: "main.py"'))
    add("py_no_version", "model-files", py_config(None), {})
    add("py_empty_version", "model-files", py_config(None), {"1/.keep": ""})
    add("py_wrong_file", "model-files", py_config(None), {"1/model.pyc.txt": "x"})
    add("py_extra_files", "model-files", py_config(None), v1(**{"1/notes.txt": "hello", "README.md": "x", "1/sub/x.txt": "y"}))
    add("py_default_filename_ok", "model-files", py_config(None, extra='default_model_filename: "main.py"'), {"1/main.py": model_py()})
    add("py_label_missing", "model-files", py_config(None, io=IO.format(dt="TYPE_FP32", dims="4").replace('"OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ]', '"OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "labels.txt"')))
    add("py_label_ok", "model-files", py_config(None, io=IO.format(dt="TYPE_FP32", dims="4").replace('"OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ]', '"OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "labels.txt"')),
        v1(**{"labels.txt": "a\nb\nc\nd\n"}))
    add("py_version_zero_padded", "model-files", py_config(None), {"01/model.py": model_py()})
    add("py_env_abs_missing", "model-files", py_config(None, extra='parameters { key: "EXECUTION_ENV_PATH" value: { string_value: "/nonexistent/env.tar.gz" } }'))
    add("py_env_dir_missing", "model-files", py_config(None, extra='parameters { key: "EXECUTION_ENV_PATH" value: { string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz" } }'))
    add("py_model_syntax_error", "model-files", py_config(None), {"1/model.py": "def broken(:\n"})
    # -- version policies
    add("py_vp_specific_missing", "version-policy", py_config(None, extra="version_policy { specific { versions: [ 2 ] } }"))
    add("py_vp_specific_ok", "version-policy", py_config(None, extra="version_policy { specific { versions: [ 1 ] } }"))
    add("py_vp_specific_some", "version-policy", py_config(None, extra="version_policy { specific { versions: [ 1, 3 ] } }"))
    add("py_vp_latest_2", "version-policy", py_config(None, extra="version_policy { latest { num_versions: 2 } }"))
    add("py_vp_all", "version-policy", py_config(None, extra="version_policy { all { } }"), v1(**{"2/model.py": model_py()}))
    add("py_vp_latest_0", "version-policy", py_config(None, extra="version_policy { latest { num_versions: 0 } }"))
    # -- parse errors and unknown fields
    base = py_config(None)
    add("py_parse_typo", "parse", base.replace("max_batch_size", "max_batch_sise"))
    add("py_parse_enum", "parse", base.replace("KIND_CPU", "KIND_CPUU"))
    add("py_parse_unclosed", "parse", base.replace("count: 1 } ]", "count: 1 } "))
    add("py_parse_string_int", "parse", base.replace("max_batch_size: 8", 'max_batch_size: "8"'))
    add("py_parse_float_int", "parse", base.replace("max_batch_size: 8", "max_batch_size: 8.5"))
    add("py_parse_dt_enum", "parse", base.replace("TYPE_FP32", "FP32", 1))
    add("py_parse_model_metrics", "parse", base + 'model_metrics { metric_control [ { metric_identifier { family: "x" } } ] }\n')
    add("py_parse_unknown_field", "parse", base + "foo: 1\n")
    add("py_parse_template", "parse", base.replace("max_batch_size: 8", "max_batch_size: ${max_batch_size}"))
    add("py_parse_dup_scalar", "parse", base + "max_batch_size: 4\n")
    add("py_parse_json", "parse", '{"backend": "python", "max_batch_size": 8}\n')
    # -- parameters, cache, misc accepted
    add("py_params", "misc", py_config(None, extra='parameters { key: "x" value: { string_value: "1" } }'))
    add("py_decoupled", "misc", py_config(None, extra="model_transaction_policy { decoupled: true }"))
    add("py_cache_ok", "misc", py_config(None, extra="response_cache { enable: true }"))
    add("py_optional_input", "misc", py_config(None, io=two_in.replace('name: "INPUT1"', 'name: "INPUT1" optional: true')))
    add("py_batch_input", "misc", py_config(None, extra='batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "BI" data_type: TYPE_FP32 source_input: "INPUT0" } ]'))
    add("py_batch_input_bad_src", "misc", py_config(None, extra='batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "BI" data_type: TYPE_FP32 source_input: "NOPE" } ]'))
    add("py_batch_output_bad", "misc", py_config(None, extra='batch_output [ { target_name: "NOPE" kind: BATCH_SCATTER_WITH_INPUT_SHAPE source_input: "INPUT0" } ]'))
    add("py_accel_cpu", "misc", py_config(None, extra='optimization { execution_accelerators { cpu_execution_accelerator [ { name: "openvino" } ] } }'))
    return C


def _ensemble_cases() -> list[Case]:
    C: list[Case] = []
    step = py_config(None)

    def ens(cid, body, *, steps=("a",), io=None, extra_sib=None, platform='platform: "ensemble"'):
        sib = {f"{cid}__{s}": (step, v1()) for s in steps}
        if extra_sib:
            sib.update(extra_sib)
        text = platform + "\nmax_batch_size: 8\n" + (io if io is not None else IO.format(dt="TYPE_FP32", dims="4")) + body
        C.append(Case(cid, "ensemble", text, {"1/.keep": ""}, sib))

    def st(cid, s, im="INPUT0", om="OUTPUT0", src="INPUT0", dst="OUTPUT0", ver=-1):
        return (f'{{ model_name: "{cid}__{s}" model_version: {ver} input_map {{ key: "{im}" value: "{src}" }} '
                f'output_map {{ key: "{om}" value: "{dst}" }} }}')

    ens("ens_ok", "ensemble_scheduling { step [ " + st("ens_ok", "a") + " ] }\n")
    ens("ens_chain", "ensemble_scheduling { step [ " + st("ens_chain", "a", dst="MID") + ", " + st("ens_chain", "b", src="MID") + " ] }\n", steps=("a", "b"))
    ens("ens_missing_model", "ensemble_scheduling { step [ " + st("ens_missing_model", "zzz") + " ] }\n")
    ens("ens_bad_input_map", "ensemble_scheduling { step [ " + st("ens_bad_input_map", "a", im="NOPE") + " ] }\n")
    ens("ens_bad_output_map", "ensemble_scheduling { step [ " + st("ens_bad_output_map", "a", om="NOPE") + " ] }\n")
    ens("ens_output_unproduced", "ensemble_scheduling { step [ " + st("ens_output_unproduced", "a", dst="OTHER") + " ] }\n")
    ens("ens_input_unused", "ensemble_scheduling { step [ " + st("ens_input_unused", "a", src="MID") + " ] }\n")
    ens("ens_version_missing", "ensemble_scheduling { step [ " + st("ens_version_missing", "a", ver=3) + " ] }\n")
    ens("ens_no_steps", "ensemble_scheduling { }\n")
    ens("ens_backend", "ensemble_scheduling { step [ " + st("ens_backend", "a") + " ] }\n", platform='platform: "ensemble" backend: "python"')
    ens("ens_mbs_too_big", "ensemble_scheduling { step [ " + st("ens_mbs_too_big", "a") + " ] }\n".replace("", ""),
        )
    C[-1].config = C[-1].config.replace("max_batch_size: 8", "max_batch_size: 16")
    ens("ens_type_mismatch", "ensemble_scheduling { step [ " + st("ens_type_mismatch", "a") + " ] }\n", io=IO.format(dt="TYPE_INT32", dims="4"))
    ens("ens_shape_mismatch", "ensemble_scheduling { step [ " + st("ens_shape_mismatch", "a") + " ] }\n", io=IO.format(dt="TYPE_FP32", dims="3"))
    ens("ens_dup_io", "ensemble_scheduling { step [ " + st("ens_dup_io", "a") + " ] }\n",
        io=IO.format(dt="TYPE_FP32", dims="4") + 'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\n')
    ens("ens_instance_group", "ensemble_scheduling { step [ " + st("ens_instance_group", "a") + " ] }\ninstance_group [ { kind: KIND_CPU } ]\n")
    return C


def _config_only_cases() -> list[Case]:
    """Other platforms: Triton checks the config before it looks for the backend (absent from this server)."""
    C: list[Case] = []
    plat = {"onnx": ('platform: "onnxruntime_onnx"', "1/model.onnx"), "trt": ('platform: "tensorrt_plan"', "1/model.plan"),
            "pt": ('platform: "pytorch_libtorch"', "1/model.pt"), "tf": ('platform: "tensorflow_savedmodel"', "1/model.savedmodel/saved_model.pb")}
    for key, (p, f) in plat.items():
        def add(cid, config, p=p, f=f, key=key):
            C.append(Case(f"{key}_{cid}", "config-only", config, {f: "x"}))

        add("base", py_config(None, backend=p))
        add("mbs_negative", py_config(None, backend=p, mbs=-1))
        add("preferred_gt_max", py_config(None, backend=p, extra="dynamic_batching { preferred_batch_size: [ 16 ] }"))
        add("count_neg", py_config(None, backend=p, group="instance_group [ { kind: KIND_CPU count: -1 } ]"))
        add("profile", py_config(None, backend=p, group='instance_group [ { kind: KIND_CPU profile: [ "0" ] } ]'))
        add("dims_zero", py_config(None, backend=p, io=IO.format(dt="TYPE_FP32", dims="0")))
        add("kind_gpu", py_config(None, backend=p, group="instance_group [ { kind: KIND_GPU } ]"))
        add("pair", py_config(None, backend=p + ' backend: "python"'))
        add("batch_input", py_config(None, backend=p, extra='batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "BI" data_type: TYPE_FP32 source_input: "INPUT0" } ]'))
        add("seq_corrid_fp", py_config(None, backend=p, extra='sequence_batching { control_input [ { name: "CID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32 } ] } ] }'))
    return C


def generate(seed: int = SEED) -> list[Case]:
    rng = random.Random(seed)
    cases = _python_cases(rng) + _ensemble_cases() + _config_only_cases()
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    return cases


def write_case(case: Case, root: Path) -> None:
    def put(folder: str, config: str | None, files: dict[str, str]) -> None:
        d = root / folder
        d.mkdir(parents=True, exist_ok=True)
        if config is not None:
            (d / "config.pbtxt").write_text(config)
        for rel, text in files.items():
            p = d / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)

    put(case.name, case.config, case.files)
    for folder, (config, files) in case.siblings.items():
        put(folder, config, files)


def write_repository(cases: list[Case], root: Path) -> None:
    for c in cases:
        write_case(c, root)
