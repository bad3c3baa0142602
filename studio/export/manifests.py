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
# Triton's charts by where the repository is: k8s-onprem mounts it over NFS (and has the queue-time autoscaler);
# aws and gcp pass an s3:// or gs:// URL to --model-store and mount nothing (no autoscaler in them)
HELM_CHARTS = {
    "nfs": "https://github.com/triton-inference-server/server/tree/main/deploy/k8s-onprem",
    "s3": "https://github.com/triton-inference-server/server/tree/main/deploy/aws",
    "gs": "https://github.com/triton-inference-server/server/tree/main/deploy/gcp",
}
# where KServe's storage initializer can fetch a repository from (storageUri)
KSERVE_SCHEMES = ("s3", "gs", "pvc", "https", "http", "hdfs", "webhdfs", "oci", "hf")
# the charts Triton ships: NFS (k8s-onprem), S3 (aws), Google Cloud Storage (gcp); none reads Azure
HELM_SCHEMES = ("nfs", "s3", "gs")
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
    location: str | None = None  # an object-store repository's URL (path is then its local snapshot)
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
    lines = [f"Generated by triton-studio {__version__} (export --to {target}) from {s.location or s.path}",
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


def helm_chart(uri: str) -> str:
    """The chart of Triton's that serves a repository at `uri` (see HELM_CHARTS)."""
    return HELM_CHARTS[urlparse(uri).scheme]


def _helm_uri(opts: ExportOptions) -> str:
    uri = opts.storage_uri or ""
    if urlparse(uri).scheme in ("as", "az", "abfs"):
        raise UsageError(f"--storage-uri {uri}: Triton's Helm charts read NFS (k8s-onprem), s3:// (aws) and gs:// (gcp), "
                         "none Azure storage: use --to kserve --storage-uri https://ACCOUNT.blob.core.windows.net/CONTAINER/PATH")
    return _check_storage(opts.storage_uri, HELM_SCHEMES, "helm")


def helm_values(s: RepositorySummary, opts: ExportOptions) -> dict:
    """Values for the Triton chart that reads the repository where it is (helm_chart): k8s-onprem for nfs://
    (image, GPUs, NFS volume, replicas, HPA on queue time); aws for s3:// and gcp for gs:// (image, GPUs,
    modelRepositoryPath = the URL, replicaCount). Credentials never go into the values (see export's header)."""
    uri = _helm_uri(opts)
    gpus = _gpu_count(opts, s, kube=True)
    if opts.replicas < 1:
        raise UsageError(f"--replicas {opts.replicas}: at least 1")
    u = urlparse(uri)
    image: dict = {"imageName": _image(opts), "pullPolicy": "IfNotPresent", "numGpus": gpus}
    if u.scheme != "nfs":
        if opts.max_replicas or opts.queue_target_us:
            raise UsageError(f"--max-replicas/--queue-target-us: Triton's {u.scheme}:// chart ({helm_chart(uri)}) has no "
                             "autoscaler; use --to kserve, or the k8s-onprem chart with the repository on NFS")
        image["modelRepositoryPath"] = uri
        return {"replicaCount": opts.replicas, "image": image}
    image["modelRepositoryServer"] = u.netloc
    image["modelRepositoryPath"] = u.path or "/"
    max_r = max(opts.max_replicas or 3, opts.replicas)
    target = opts.queue_target_us or max(50, 2 * s.max_queue_delay_us)
    return {
        "tags": {"autoscaling": True, "loadBalancing": True, "openshift": False},
        "image": image,
        "serverArgs": ["--model-repository=/models", "--model-control-mode=none", "--strict-readiness=true"],
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


def _helm_note(uri: str) -> str:
    chart = helm_chart(uri)
    folder = chart.rsplit("/", 2)[-2] + "/" + chart.rsplit("/", 1)[-1]
    scheme = urlparse(uri).scheme
    lines = [f"values for Triton's Helm chart {chart}:",
             f"  helm install triton <server checkout>/{folder} -f this-file.yaml"]
    if scheme == "nfs":
        lines.append(f"The HPA scales on avg_time_queue_us (from {QUEUE_METRIC} via prometheus-adapter).")
    elif scheme == "s3":
        lines += ["    --set secret.region=$(printf %s \"$AWS_DEFAULT_REGION\" | base64)"
                  " --set secret.id=$(printf %s \"$AWS_ACCESS_KEY_ID\" | base64)"
                  " --set secret.key=$(printf %s \"$AWS_SECRET_ACCESS_KEY\" | base64)",
                  "The chart's Secret aws-credentials holds them base64-encoded; they are never written here.",
                  "This chart has no autoscaler (queue-time autoscaling: --to kserve, or k8s-onprem over NFS)."]
    else:
        lines += ["The pods read the bucket as their Kubernetes service account (GKE Workload Identity or the node's",
                  "service account) with roles/storage.objectViewer on it; no credentials go into the values.",
                  "This chart has no autoscaler (queue-time autoscaling: --to kserve, or k8s-onprem over NFS)."]
    return "\n".join(lines)


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
    from studio.repository.storage import is_url

    if is_url(repo):
        return _export_remote(str(repo), opts)
    s = summarize(repo)
    return _export_summary(s, opts)


def default_storage_uri(url: str, to: str) -> str | None:
    """Where the cluster reads an object-store repository the studio read at `url` (None: it must be given)."""
    u = urlparse(url)
    if u.scheme == "s3" or (u.scheme == "gs" and to in ("kserve", "helm")):
        return url.rstrip("/")
    if u.scheme == "gcs":
        return "gs://" + url.split("://", 1)[1].rstrip("/")
    return None  # az:// names no account; Triton and KServe want it in the URL


def _export_remote(url: str, opts: ExportOptions) -> str:
    from dataclasses import replace

    from studio.repository.storage import StorageError, snapshot

    if opts.to == "compose":
        raise UsageError(f"{url}: compose mounts a local folder; copy the repository to one first")
    if not opts.storage_uri:
        uri = default_storage_uri(url, opts.to)
        if uri is None:
            raise UsageError(f"{url}: give --storage-uri (where the cluster reads it, e.g. "
                             "https://ACCOUNT.blob.core.windows.net/CONTAINER/PATH for kserve)")
        opts = replace(opts, storage_uri=uri)
    try:
        snap = snapshot(url)
    except StorageError as e:
        raise ExportError(str(e)) from None
    with snap:
        try:
            s = summarize(snap.local)
        except ExportError as e:
            raise ExportError(snap.to_url(str(e))) from None
        s.location = snap.url
        if opts.name is None:
            opts = replace(opts, name=snap.local.name)
        return _export_summary(s, opts)


def _export_summary(s: RepositorySummary, opts: ExportOptions) -> str:
    if opts.to == "kserve":
        data = inference_service(s, opts)
        note = ("kubectl apply -f this file (KServe with the kserve-tritonserver ClusterServingRuntime installed);\n"
                "the storage initializer copies the repository from storageUri to /mnt/models.")
    elif opts.to == "helm":
        data = helm_values(s, opts)
        note = _helm_note(opts.storage_uri or "")
    else:
        data = compose(s, opts)
        note = ("docker compose -f this-file.yaml up  (what `triton-studio serve --runtime docker` runs; ports on "
                "127.0.0.1 only)")
    return dump(data, _header(opts.to, s, note))
