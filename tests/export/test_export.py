"""Cluster exports validated against the real schemas, no cluster needed:
- KServe InferenceService: the v1beta1 CRD schema vendored from KServe v0.19.0 (tests/data/schemas/SOURCES.md),
  made strict like the API server (unknown fields refused), plus the predictor's container validated as a Pod
  container by `kubernetes-validate` (Kubernetes' own OpenAPI schemas);
- Helm values: every key is one the chosen Triton chart reads (its values.yaml, vendored): k8s-onprem for NFS,
  whose HorizontalPodAutoscaler and Deployment validate with `kubernetes-validate`; aws (s3://) and gcp (gs://),
  whose vendored Deployment (and Secret) templates are rendered and validated the same way;
- compose: the compose specification's JSON schema (compose-spec/compose-spec), and the same container as
  the studio's DockerRuntime.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import REPO, scaled_s

SCHEMAS = REPO / "tests" / "data" / "schemas"
DEMO = REPO / "model_repository_templates" / "demo"
DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def _need(module: str, package: str):
    try:
        return __import__(module)
    except ImportError:
        pytest.fail(f"{package} is not installed: pip install -e '.[test]' (the test extra has it)", pytrace=False)


def _yaml(text: str):
    return _need("yaml", "PyYAML").safe_load(text)


def _strict(schema):
    """The API server refuses unknown fields: additionalProperties false wherever a schema lists properties and
    does not say x-kubernetes-preserve-unknown-fields."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(x) for x in schema]
    return schema


@cache
def _kserve_validator():
    jsonschema = _need("jsonschema", "jsonschema")
    schema = _strict(json.loads((SCHEMAS / "kserve-inferenceservice-v1beta1.schema.json").read_text()))
    return jsonschema.Draft7Validator(schema)


@cache
def _compose_validator():
    jsonschema = _need("jsonschema", "jsonschema")
    return jsonschema.Draft7Validator(json.loads((SCHEMAS / "compose-spec.json").read_text()))


def _k8s(obj: dict) -> None:
    kv = _need("kubernetes_validate", "kubernetes-validate")
    kv.validate(obj, kv.latest_version(), strict=True)


def _errors(validator, doc) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def _export(repo, **kw) -> dict:
    from studio.export import ExportOptions, export

    return _yaml(export(repo, ExportOptions(**kw)))


@pytest.fixture
def gpu_repo(tmp_path) -> Path:
    """A repository whose ONNX model wants a GPU (KIND_GPU) next to the demo's CPU models."""
    import shutil

    r = tmp_path / "My Repo_1"
    shutil.copytree(DEMO, r)
    shutil.copytree(REPO / "model_repository_templates" / "onnxruntime_onnx", r / "onnx_model",
                    ignore=shutil.ignore_patterns("manifest.toml"))
    (r / "onnx_model" / "1").mkdir(exist_ok=True)
    return r


# -- KServe ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", ["v2", "grpc-v2"])
def test_kserve_inference_service_validates_against_the_crd(gpu_repo, protocol):
    isvc = _export(gpu_repo, to="kserve", storage_uri="s3://models/prod/triton", protocol=protocol, max_replicas=4)
    assert _errors(_kserve_validator(), isvc) == []
    assert isvc["apiVersion"] == "serving.kserve.io/v1beta1" and isvc["kind"] == "InferenceService"
    name = isvc["metadata"]["name"]
    assert DNS_1035.match(name) and len(name) <= 45, name
    model = isvc["spec"]["predictor"]["model"]
    assert model["modelFormat"]["name"] == "triton" and model["runtime"] == "kserve-tritonserver"
    assert model["storageUri"] == "s3://models/prod/triton"
    assert model["protocolVersion"] == protocol
    assert model["resources"]["limits"]["nvidia.com/gpu"] == "1"  # the ONNX model is KIND_GPU
    assert model["ports"][0]["containerPort"] == (9000 if protocol == "grpc-v2" else 8080)
    assert isvc["spec"]["predictor"]["maxReplicas"] == 4
    # the predictor's container, as Kubernetes sees it in the pod
    container = {k: model[k] for k in ("image", "ports", "resources")}
    _k8s({"apiVersion": "v1", "kind": "Pod", "metadata": isvc["metadata"],
          "spec": {"containers": [{"name": "kserve-container", **container}]}})


def test_kserve_without_gpu_models_asks_for_none_and_gpus_override(tmp_path):
    isvc = _export(DEMO, to="kserve", storage_uri="gs://bucket/repo")
    assert "nvidia.com/gpu" not in isvc["spec"]["predictor"]["model"]["resources"]["limits"]
    isvc = _export(DEMO, to="kserve", storage_uri="pvc://models-pvc/repo", gpus="2", image="registry.local/triton:1")
    model = isvc["spec"]["predictor"]["model"]
    assert model["resources"]["limits"]["nvidia.com/gpu"] == "2" and model["image"] == "registry.local/triton:1"
    assert _errors(_kserve_validator(), isvc) == []


def test_the_strict_crd_schema_refuses_what_kserve_refuses():
    isvc = _export(DEMO, to="kserve", storage_uri="s3://b/m")
    bad = copy.deepcopy(isvc)
    bad["spec"]["predictor"]["model"]["storageURI"] = bad["spec"]["predictor"]["model"].pop("storageUri")
    assert any("storageURI" in e for e in _errors(_kserve_validator(), bad))
    bad = copy.deepcopy(isvc)
    bad["spec"]["predictor"]["minReplicas"] = "one"
    assert _errors(_kserve_validator(), bad)


# -- Helm ------------------------------------------------------------------------------------------------------

def _chart_values() -> dict:
    return _yaml((SCHEMAS / "triton-helm-k8s-onprem-values.yaml").read_text())


def _unknown_keys(ours, chart, path="") -> list[str]:
    out = []
    if isinstance(ours, dict):
        for k, v in ours.items():
            if not isinstance(chart, dict) or k not in chart:
                out.append(f"{path}{k}")
            else:
                out += _unknown_keys(v, chart[k], f"{path}{k}.")
    return out


def _render_chart(values: dict) -> list[dict]:
    """The HorizontalPodAutoscaler and Deployment of deploy/k8s-onprem/templates/, filled as Helm would
    (chart defaults merged under our values; lists replace). The chart's HPA says autoscaling/v2beta2, gone
    since Kubernetes 1.26; v2 has the same spec, so it is validated as autoscaling/v2."""
    merged = copy.deepcopy(_chart_values())

    def merge(a, b):
        for k, v in b.items():
            if isinstance(v, dict) and isinstance(a.get(k), dict):
                merge(a[k], v)
            else:
                a[k] = v

    merge(merged, values)
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "triton-hpa", "namespace": "default"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "triton"},
                    "minReplicas": merged["autoscaling"]["minReplicas"], "maxReplicas": merged["autoscaling"]["maxReplicas"],
                    "metrics": merged["autoscaling"]["metrics"]}}
    img = merged["image"]
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "triton", "namespace": "default"},
                  "spec": {"replicas": merged["autoscaling"]["minReplicas"],
                           "selector": {"matchLabels": {"app": "triton"}},
                           "template": {"metadata": {"labels": {"app": "triton"}}, "spec": {
                               "volumes": [{"name": "models", "nfs": {"server": str(img["modelRepositoryServer"]),
                                                                      "path": img["modelRepositoryPath"], "readOnly": False}}],
                               "containers": [{"name": "triton-inference-server", "image": img["imageName"],
                                               "imagePullPolicy": img["pullPolicy"],
                                               "volumeMounts": [{"mountPath": "/models", "name": "models"}],
                                               "resources": {"limits": {"nvidia.com/gpu": img["numGpus"]}},
                                               "args": ["tritonserver", *merged["serverArgs"]],
                                               "ports": [{"containerPort": 8000, "name": "http"},
                                                         {"containerPort": 8001, "name": "grpc"},
                                                         {"containerPort": 8002, "name": "metrics"}]}]}}}}
    return [hpa, deployment]


def test_helm_values_for_nfs_are_the_k8s_onprem_charts_and_render_valid_objects(gpu_repo):
    values = _export(gpu_repo, to="helm", storage_uri="nfs://10.0.0.5/srv/models", replicas=2, max_replicas=6)
    assert _unknown_keys(values, _chart_values()) == []
    assert values["image"]["numGpus"] == 1
    assert values["autoscaling"]["minReplicas"] == 2 and values["autoscaling"]["maxReplicas"] == 6
    rule = values["prometheus-adapter"]["rules"]["custom"][0]
    assert "nv_inference_queue_duration_us" in rule["seriesQuery"] and rule["name"]["as"] == "avg_time_queue_us"
    assert values["autoscaling"]["metrics"][0]["pods"]["metric"]["name"] == "avg_time_queue_us"
    assert values["image"]["modelRepositoryServer"] == "10.0.0.5"
    assert values["image"]["modelRepositoryPath"] == "/srv/models"
    assert "--model-repository=/models" in values["serverArgs"]
    for obj in _render_chart(values):
        _k8s(obj)


# Triton's k8s-onprem chart always mounts its NFS volume (modelRepositoryServer), so an object-store repository
# goes to the chart that passes the URL to --model-store and mounts nothing: deploy/aws (s3://, with its
# aws-credentials Secret) or deploy/gcp (gs://). Their templates are vendored (tests/data/schemas/SOURCES.md) and
# rendered here as Helm would, with the few constructs they use; any other construct fails the test.
_HELM_EXPR = re.compile(r"{{-?\s*(.*?)\s*-?}}")


def _render_template(text: str, values: dict) -> list[dict]:
    ctx = {".Release.Name": "triton", ".Release.Namespace": "default", ".Release.Service": "Helm",
           ".Chart.Name": "triton-inference-server"}

    def value(expr: str) -> str:
        if expr in ctx:
            return ctx[expr]
        if expr.startswith('template "triton-inference-server.'):
            return "triton-triton-inference-server" if "fullname" in expr else "triton-inference-server"
        if expr.startswith(".Values."):
            v = values
            for k in expr[len(".Values."):].split("."):
                assert isinstance(v, dict) and k in v, f"the chart reads {expr}, which the values do not set"
                v = v[k]
            return str(v)
        raise AssertionError(f"a template construct this renderer does not know: {{{{ {expr} }}}}")

    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    return [d for d in _yaml_all(_HELM_EXPR.sub(lambda m: value(m.group(1)), "\n".join(lines))) if d]


def _yaml_all(text: str) -> list:
    return list(_need("yaml", "PyYAML").safe_load_all(text))


def _chart_merge(chart: str, values: dict, sets: dict | None = None) -> dict:
    merged = copy.deepcopy(_yaml((SCHEMAS / f"triton-helm-{chart}-values.yaml").read_text()))
    for k, v in {**values, **(sets or {})}.items():
        if isinstance(v, dict) and isinstance(merged.get(k), dict):
            merged[k].update(v)
        else:
            merged[k] = v
    return merged


@pytest.mark.parametrize("uri, chart", [("s3://bucket/triton/prod", "aws"), ("gs://b/r", "gcp")])
def test_helm_values_for_object_stores_are_the_aws_and_gcp_charts_and_render_valid_objects(gpu_repo, uri, chart):
    import base64

    from studio.export import ExportOptions, export

    text = export(gpu_repo, ExportOptions(to="helm", storage_uri=uri, replicas=2))
    values = _yaml(text)
    chart_values = _yaml((SCHEMAS / f"triton-helm-{chart}-values.yaml").read_text())
    assert _unknown_keys(values, chart_values) == []
    assert values["image"]["modelRepositoryPath"] == uri and values["replicaCount"] == 2
    assert values["image"]["numGpus"] == 1
    assert f"deploy/{chart}" in text.split("\n", 3)[2] and "modelRepositoryServer" not in text
    sets = {}
    if chart == "aws":  # the header's --set lines: the Secret's data, base64, never in the values file
        assert "secret" not in values and "--set secret.key=" in text
        b64 = {k: base64.b64encode(v.encode()).decode() for k, v in
               (("region", "us-east-1"), ("id", "AKIAEXAMPLE"), ("key", "wJalrEXAMPLEKEY"))}
        sets = {"secret": b64}
    merged = _chart_merge(chart, values, sets)
    objs = _render_template((SCHEMAS / f"triton-helm-{chart}-deployment.yaml").read_text(), merged)
    if chart == "aws":
        objs += _render_template((SCHEMAS / "triton-helm-aws-secrets.yaml").read_text(), merged)
    kinds = sorted(o["kind"] for o in objs)
    assert kinds == (["Deployment", "Secret"] if chart == "aws" else ["Deployment"])
    for obj in objs:
        _k8s(obj)
    dep = next(o for o in objs if o["kind"] == "Deployment")
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert f"--model-store={uri}" in container["args"] and "volumes" not in dep["spec"]["template"]["spec"]
    assert dep["spec"]["replicas"] == 2 and container["resources"]["limits"]["nvidia.com/gpu"] == 1


def test_helm_refuses_what_no_triton_chart_serves(gpu_repo):
    from studio.export import ExportOptions, UsageError, export

    with pytest.raises(UsageError, match="none Azure storage: use --to kserve"):
        export(gpu_repo, ExportOptions(to="helm", storage_uri="as://acct/container/r"))
    with pytest.raises(UsageError, match="no autoscaler"):
        export(gpu_repo, ExportOptions(to="helm", storage_uri="s3://b/r", max_replicas=4))


def test_helm_queue_target_follows_the_batching_delay():
    from studio.export import summarize

    s = summarize(DEMO)
    values = _export(DEMO, to="helm", storage_uri="nfs://nas/models")
    assert values["autoscaling"]["metrics"][0]["pods"]["target"]["averageValue"] == max(50, 2 * s.max_queue_delay_us)
    values = _export(DEMO, to="helm", storage_uri="nfs://nas/models", queue_target_us=5000)
    assert values["autoscaling"]["metrics"][0]["pods"]["target"]["averageValue"] == 5000


# -- compose ---------------------------------------------------------------------------------------------------

def test_compose_validates_and_equals_the_studios_container(gpu_repo):
    from studio.runtime.base import LABEL, ServerOptions
    from studio.runtime.docker_runtime import DEFAULT_IMAGE, DockerRuntime

    doc = _export(gpu_repo, to="compose")
    assert _errors(_compose_validator(), doc) == []
    assert DNS_1035.match(doc["name"])
    svc = doc["services"]["triton"]
    rt = DockerRuntime()
    assert svc["image"] == DEFAULT_IMAGE
    assert svc["command"] == rt.command(ServerOptions())
    assert {(p["host_ip"], p["target"], p["published"]) for p in svc["ports"]} == {
        ("127.0.0.1", 8000, "8000"), ("127.0.0.1", 8001, "8001"), ("127.0.0.1", 8002, "8002")}
    assert svc["volumes"] == [{"type": "bind", "source": str(gpu_repo.resolve()), "target": "/models", "read_only": True}]
    assert svc["shm_size"] == rt.shm_size and svc["privileged"] is False
    assert svc["labels"] == {LABEL: "1", f"{LABEL}.repository": str(gpu_repo.resolve()), f"{LABEL}.kind": "docker"}
    assert svc["ulimits"]["memlock"] == {"soft": -1, "hard": -1}
    assert svc["deploy"]["resources"]["reservations"]["devices"] == [{"driver": "nvidia", "capabilities": ["gpu"], "count": "all"}]
    assert "network_mode" not in svc and "/var/run/docker.sock" not in json.dumps(svc)


def test_compose_cpu_only_and_counted_gpus():
    doc = _export(DEMO, to="compose")
    assert "deploy" not in doc["services"]["triton"]
    doc = _export(DEMO, to="compose", gpus="2", image="triton-config-studio/tritonserver-cpu:2.51.0")
    assert _errors(_compose_validator(), doc) == []
    assert doc["services"]["triton"]["deploy"]["resources"]["reservations"]["devices"][0]["count"] == 2


# -- CLI -------------------------------------------------------------------------------------------------------

def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "studio.cli", "export", *map(str, args)], capture_output=True,
                          text=True, timeout=scaled_s(60), cwd=cwd or REPO)


def test_cli_writes_each_target(tmp_path):
    import shutil

    repo = tmp_path / "models"
    shutil.copytree(DEMO, repo)
    out = tmp_path / "isvc.yaml"
    r = _cli(repo, "--to", "kserve", "--storage-uri", "s3://b/models", "--out", out)
    assert r.returncode == 0, r.stderr
    assert _errors(_kserve_validator(), _yaml(out.read_text())) == []
    r = _cli(repo, "--to", "helm", "--storage-uri", "nfs://nas/models", "--gpus", "1")
    assert r.returncode == 0, r.stderr
    assert _yaml(r.stdout)["image"]["numGpus"] == 1
    compose_file = tmp_path / "compose.yaml"
    r = _cli(repo, "--to", "compose", "--out", compose_file)
    assert r.returncode == 0, r.stderr
    doc = _yaml(compose_file.read_text())
    assert _errors(_compose_validator(), doc) == []
    # beside the compose file, the repository is mounted by a relative path: the folder can be handed on
    assert doc["services"]["triton"]["volumes"][0]["source"] == "./models"


@pytest.mark.parametrize("args, code, says", [
    (["--to", "kserve"], 2, "needs --storage-uri"),
    (["--to", "kserve", "--storage-uri", "ftp://host/x"], 2, "kserve reads"),
    (["--to", "helm", "--storage-uri", "pvc://claim/x"], 2, "helm reads"),
    (["--to", "kserve", "--storage-uri", "s3://b/m", "--gpus", "all"], 2, "needs a count"),
    (["--to", "compose", "--gpus", "many"], 2, "--gpus many"),
    (["--to", "compose", "--storage-uri", "s3://b/m"], 2, "compose mounts the local repository"),
    (["--to", "kubernetes"], 2, "invalid choice"),
    (["--to", "helm", "--storage-uri", "s3://b/m", "--replicas", "0"], 2, "at least 1"),
    (["--to", "helm", "--storage-uri", "as://acct/c/m"], 2, "use --to kserve"),
    ([], 2, "--to"),
])
def test_cli_bad_arguments_exit_2_with_one_clear_line(args, code, says):
    r = _cli(DEMO, *args)
    assert r.returncode == code, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert says in last and last.startswith(("export:", "triton-studio export: error:")), r.stderr


def test_cli_failures_exit_1(tmp_path):
    r = _cli(tmp_path / "missing", "--to", "compose")
    assert r.returncode == 1 and r.stderr.strip() == f"export: {tmp_path / 'missing'}: no such repository folder"
    (tmp_path / "empty").mkdir()
    r = _cli(tmp_path / "empty", "--to", "compose")
    assert r.returncode == 1 and "no model folders" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "bad" / "m"
    bad.mkdir(parents=True)
    (bad / "config.pbtxt").write_text("name: 'm'\nmax_batch_sise: 4\n")
    r = _cli(tmp_path / "bad", "--to", "compose")
    assert r.returncode == 1 and "validate" in r.stderr and "Traceback" not in r.stderr
    r = _cli(DEMO, "--to", "compose", "--out", tmp_path / "no" / "such" / "dir" / "c.yaml")
    assert r.returncode == 1 and "cannot write" in r.stderr and "Traceback" not in r.stderr
