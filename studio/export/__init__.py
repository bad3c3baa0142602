"""Export a model repository for a cluster (no Qt): a KServe InferenceService with the Triton serving runtime,
values for Triton's Helm chart (deploy/k8s-onprem, autoscaling on queue time), and a docker-compose file
equivalent to the studio's local Docker container.

    text = export(repo, ExportOptions(to="kserve", storage_uri="s3://bucket/models", gpus=1))

ExportOptions errors (a bad storage URI for the target, GPUs as "all" for Kubernetes, ...) raise UsageError;
a repository that cannot be read or has no models raises ExportError.
"""

from __future__ import annotations

from studio.export.manifests import (
    TARGETS,
    ExportError,
    ExportOptions,
    RepositorySummary,
    UsageError,
    compose,
    export,
    helm_values,
    inference_service,
    k8s_name,
    summarize,
)

__all__ = [
    "TARGETS", "ExportError", "ExportOptions", "RepositorySummary", "UsageError", "compose", "export", "helm_values",
    "inference_service", "k8s_name", "summarize",
]
