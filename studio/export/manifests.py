"""The three exports. Each returns plain data (dicts) and `export` writes YAML text with a header comment."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from studio import __version__
from studio.export.yamlout import dump

TARGETS = ("kserve", "helm", "compose")
QUEUE_METRIC = "nv_inference_queue_duration_us"
HELM_CHART = "https://github.com/triton-inference-server/server/tree/main/deploy/k8s-onprem"
# where KServe's storage initializer can fetch a repository from (storageUri)
KSERVE_SCHEMES = ("s3", "gs", "pvc", "https", "http", "hdfs", "webhdfs", "oci", "hf")
# what Triton reads a repository from itself (--model-repository), plus nfs:// for the chart's NFS volume
HELM_SCHEMES = ("s3", "gs", "as", "nfs")
GPU_BACKENDS = ("tensorrt", "onnxruntime", "pytorch", "tensorflow", "tensorrtllm", "vllm")


class UsageError(ValueError):
    """Bad export options (exit 2)."""


class ExportError(RuntimeError):
    """The repository cannot be exported (exit 1)."""


@dataclass
class ExportOptions:
    to: str = "kserve"
    image: str | None = None
    gpus: str | int | None = None  # None: 1 (Kubernetes) / all (compose) when a model wants a GPU, else 0
    storage_uri: str | None = None
    name: str | None = None
    replicas: int = 1
    max_replicas: int | None = None  # helm: default max(3, replicas)
    queue_target_us: int | None = None  # helm: the HPA's average queue time per request; default from the configs
    protocol: str = "v2"  # kserve: v2 (HTTP/REST) or grpc-v2
    http_port: int = 8000  # compose: published on 127.0.0.1
    grpc_port: int = 8001
    metrics_port: int = 8002
    out: str | None = None  # compose: a bind-mount source relative to this file's folder when the repository is below it


@dataclass
class RepositorySummary:
    path: Path
    models: list[str] = field(default_factory=list)
    gpu_models: list[str] = field(default_factory=list)
    max_queue_delay_us: int = 0
    size_bytes: int = 0
    broken: list[str] = field(default_factory=list)


def summarize(repo: str | os.PathLike) -> RepositorySummary:
    """The models of a repository (folders with config.pbtxt), which want a GPU, queue delays and the data size."""
    from studio.config import ConfigDocument, ParseError

    root = Path(repo).expanduser()
    if not root.is_dir():
        raise ExportError(f"{repo}: no such repository folder")
    s = RepositorySummary(root.resolve())
    for d in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        cfg = d / "config.pbtxt"
        if not cfg.is_file():
            continue
        s.models.append(d.name)
        for f in d.rglob("*"):
            if f.is_file() and not f.is_symlink():
                s.size_bytes += f.stat().st_size
        try:
            msg = ConfigDocument.load(cfg).to_message()
        except (ParseError, OSError, UnicodeDecodeError) as e:
            s.broken.append(f"{cfg}: {getattr(e, 'message', None) or e}")
            continue
        kinds = {g.kind for g in msg.instance_group}
        backend = (msg.backend or msg.platform or "").split("_")[0].lower()
        from tritonclient.grpc import model_config_pb2 as pb

        gpu_kind = pb.ModelInstanceGroup.Kind.KIND_GPU
        auto = pb.ModelInstanceGroup.Kind.KIND_AUTO
        if gpu_kind in kinds or ((not kinds or kinds == {auto}) and backend in GPU_BACKENDS):
            s.gpu_models.append(d.name)
        if msg.HasField("dynamic_batching"):
            s.max_queue_delay_us = max(s.max_queue_delay_us, int(msg.dynamic_batching.max_queue_delay_microseconds))
    if not s.models:
        raise ExportError(f"{root}: no model folders with a config.pbtxt")
    if s.broken:
        raise ExportError(f"{s.broken[0]} (fix it first: triton-studio validate {root})")
    return s


def k8s_name(text: str) -> str:
    """A DNS-1035 label (what KServe and Kubernetes accept as a name): lower case, '-', a letter first, <= 45."""
    n = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    n = re.sub(r"-{2,}", "-", n)
    if not n or not n[0].isalpha():
        n = "triton-" + n
    return n[:45].rstrip("-") or "triton"


def _gpu_count(opts: ExportOptions, s: RepositorySummary, kube: bool) -> int | str:
    g = opts.gpus
    if g is None or g == "":
        return (1 if kube else "all") if s.gpu_models else 0
    if isinstance(g, int):
        n = g
    elif str(g).lower() == "none":
        n = 0
    elif str(g).lower() == "all":
        if kube:
            raise UsageError("--gpus all: Kubernetes needs a count (e.g. --gpus 1)")
        return "all"
    else:
        try:
            n = int(str(g))
        except ValueError:
            raise UsageError(f"--gpus {g}: a count (0, 1, 2, ...){'' if kube else ', all or none'}") from None
    if n < 0:
        raise UsageError(f"--gpus {g}: a count must not be negative")
    return n


def _image(opts: ExportOptions) -> str:
    from studio.runtime.docker_runtime import DEFAULT_IMAGE

    image = opts.image or DEFAULT_IMAGE
    if not image or any(c.isspace() for c in image):
        raise UsageError(f"--image {image!r}: not an image reference")
    return image


def _check_storage(uri: str | None, schemes: tuple[str, ...], target: str) -> str:
    if not uri:
        raise UsageError(f"--to {target} needs --storage-uri (where the cluster reads the repository: "
                         f"{', '.join(s + '://' for s in schemes)})")
    u = urlparse(uri)
    if u.scheme not in schemes or not (u.netloc or u.path.strip("/")):
        raise UsageError(f"--storage-uri {uri}: {target} reads {', '.join(s + '://' for s in schemes)} URLs")
    return uri


def _header(target: str, s: RepositorySummary, extra: str = "") -> str:
    lines = [f"Generated by triton-studio {__version__} (export --to {target}) from {s.path}",
             f"models: {', '.join(s.models)}" + (f"; want a GPU: {', '.join(s.gpu_models)}" if s.gpu_models else "")]
    return "\n".join(lines) + ("\n" + extra if extra else "")


def _memory(s: RepositorySummary) -> str:
    """A memory request: 2 GiB, or 2.5x the repository's files when larger (models are held in memory)."""
    gib = max(2, math.ceil(s.size_bytes * 2.5 / 2**30))
    return f"{gib}Gi"


def inference_service(s: RepositorySummary, opts: ExportOptions) -> dict:
    """A KServe v1beta1 InferenceService with the Triton runtime (kserve-tritonserver) on the whole repository."""
    uri = _check_storage(opts.storage_uri, KSERVE_SCHEMES, "kserve")
    if opts.protocol not in ("v2", "grpc-v2"):
        raise UsageError(f"--protocol {opts.protocol}: v2 or grpc-v2 (what the Triton runtime speaks)")
    gpus = _gpu_count(opts, s, kube=True)
    mem = _memory(s)
    limits: dict = {"cpu": "2", "memory": mem}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    port = ({"name": "h2c", "containerPort": 9000, "protocol": "TCP"} if opts.protocol == "grpc-v2"
            else {"name": "http1", "containerPort": 8080, "protocol": "TCP"})
    model: dict = {
        "modelFormat": {"name": "triton"},
        "protocolVersion": opts.protocol,
        "runtime": "kserve-tritonserver",
        "storageUri": uri,
        "image": _image(opts),
        "ports": [port],
        "resources": {"requests": {"cpu": "1", "memory": mem}, "limits": limits},
    }
    predictor: dict = {"minReplicas": opts.replicas, "model": model}
    if opts.max_replicas:
        predictor["maxReplicas"] = max(opts.max_replicas, opts.replicas)
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": k8s_name(opts.name or s.path.name),
            "annotations": {
                "prometheus.kserve.io/port": "8002",
                "prometheus.kserve.io/path": "/metrics",
            },
            "labels": {"app.kubernetes.io/managed-by": "triton-config-studio"},
        },
        "spec": {"predictor": predictor},
    }


def helm_values(s: RepositorySummary, opts: ExportOptions) -> dict:
    """Values for Triton's chart deploy/k8s-onprem: image, GPUs, repository, replicas, HPA on queue time."""
    uri = _check_storage(opts.storage_uri, HELM_SCHEMES, "helm")
    gpus = _gpu_count(opts, s, kube=True)
    u = urlparse(uri)
    image: dict = {"imageName": _image(opts), "pullPolicy": "IfNotPresent", "numGpus": gpus}
    if u.scheme == "nfs":
        image["modelRepositoryServer"] = u.netloc
        image["modelRepositoryPath"] = u.path or "/"
        repo_arg = "--model-repository=/models"
    else:
        repo_arg = f"--model-repository={uri}"  # Triton reads s3:// gs:// as:// itself (credentials: see docs)
    if opts.replicas < 1:
        raise UsageError(f"--replicas {opts.replicas}: at least 1")
    max_r = max(opts.max_replicas or 3, opts.replicas)
    target = opts.queue_target_us or max(50, 2 * s.max_queue_delay_us)
    return {
        "tags": {"autoscaling": True, "loadBalancing": True, "openshift": False},
        "image": image,
        "serverArgs": [repo_arg, "--model-control-mode=none", "--strict-readiness=true"],
        "autoscaling": {
            "minReplicas": opts.replicas,
            "maxReplicas": max_r,
            "metrics": [{
                "type": "Pods",
                "pods": {"metric": {"name": "avg_time_queue_us"},
                         "target": {"type": "AverageValue", "averageValue": target}},
            }],
        },
        "prometheus-adapter": {"rules": {"custom": [{
            "seriesQuery": f'{QUEUE_METRIC}{{namespace="default",pod!=""}}',
            "resources": {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}},
            "name": {"matches": QUEUE_METRIC, "as": "avg_time_queue_us"},
            "metricsQuery": (f"avg(delta({QUEUE_METRIC}{{<<.LabelMatchers>>}}[30s])/"
                             "(1+delta(nv_inference_request_success{<<.LabelMatchers>>}[30s]))) by (<<.GroupBy>>)"),
        }]}},
    }


def compose(s: RepositorySummary, opts: ExportOptions) -> dict:
    """A compose file for the container the studio runs locally (DockerRuntime): same image, command, ports on
    127.0.0.1, repository read-only at /models, shm, ulimits, labels, never privileged, GPUs as device requests."""
    from studio.runtime.base import LABEL, ServerOptions
    from studio.runtime.docker_runtime import DockerRuntime

    if opts.storage_uri:
        raise UsageError("--storage-uri is for kserve and helm: compose mounts the local repository")
    gpus = _gpu_count(opts, s, kube=False)
    for p in (opts.http_port, opts.grpc_port, opts.metrics_port):
        if not 0 < p < 65536:
            raise UsageError(f"port {p}: 1-65535")
    rt = DockerRuntime(image=_image(opts))
    source = str(s.path)
    if opts.out:
        base = Path(opts.out).expanduser().resolve().parent
        if s.path.is_relative_to(base):
            source = "./" + s.path.relative_to(base).as_posix() if s.path != base else "."
    service: dict = {
        "image": rt.image,
        "command": rt.command(ServerOptions()),
        "ports": [
            {"name": name, "target": target, "published": str(pub), "host_ip": "127.0.0.1", "protocol": "tcp"}
            for name, target, pub in (("http", 8000, opts.http_port), ("grpc", 8001, opts.grpc_port),
                                      ("metrics", 8002, opts.metrics_port))
        ],
        "volumes": [{"type": "bind", "source": source, "target": "/models", "read_only": True}],
        "shm_size": rt.shm_size,
        "ulimits": {"memlock": {"soft": -1, "hard": -1}, "stack": {"soft": 67108864, "hard": 67108864}},
        "labels": {LABEL: "1", f"{LABEL}.repository": str(s.path), f"{LABEL}.kind": "docker"},
        "privileged": False,
    }
    if gpus:
        dev = {"driver": "nvidia", "capabilities": ["gpu"], "count": gpus}
        service["deploy"] = {"resources": {"reservations": {"devices": [dev]}}}
    return {"name": k8s_name(opts.name or f"triton-{s.path.name}"), "services": {"triton": service}}


def export(repo: str | os.PathLike, opts: ExportOptions) -> str:
    """The YAML text of one export of `repo`."""
    if opts.to not in TARGETS:
        raise UsageError(f"--to {opts.to}: one of {', '.join(TARGETS)}")
    if opts.replicas < 1:
        raise UsageError(f"--replicas {opts.replicas}: at least 1")
    s = summarize(repo)
    if opts.to == "kserve":
        data = inference_service(s, opts)
        note = ("kubectl apply -f this file (KServe with the kserve-tritonserver ClusterServingRuntime installed);\n"
                "the storage initializer copies the repository from storageUri to /mnt/models.")
    elif opts.to == "helm":
        data = helm_values(s, opts)
        note = (f"values for Triton's Helm chart {HELM_CHART}:\n"
                "  helm install triton <server checkout>/deploy/k8s-onprem -f this-file.yaml\n"
                f"The HPA scales on avg_time_queue_us (from {QUEUE_METRIC} via prometheus-adapter).")
    else:
        data = compose(s, opts)
        note = ("docker compose -f this-file.yaml up  (what `triton-studio serve --runtime docker` runs; ports on "
                "127.0.0.1 only)")
    return dump(data, _header(opts.to, s, note))
