"""`triton-studio export REPO --to kserve|helm|compose`: the subcommand's parser and its run (no Qt)."""

from __future__ import annotations

import sys
from pathlib import Path

from studio.export.manifests import TARGETS, ExportError, ExportOptions, UsageError, export


def _positive(text: str) -> int:
    import argparse

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: at least 1")
    return n


def add_parser(sub) -> None:
    e = sub.add_parser("export", help="write a KServe InferenceService, Helm values or a compose file for a repository")
    e.add_argument("repository", metavar="REPO", help="a repository folder, or an s3:// gs:// az:// URL (read through the "
                   "cloud extra; it is then the default --storage-uri)")
    e.add_argument("--to", required=True, choices=TARGETS, help="kserve: InferenceService; helm: values for Triton's "
                   "chart that reads --storage-uri (k8s-onprem, aws or gcp); compose: the studio's local container "
                   "as a compose file")
    e.add_argument("--image", metavar="I", help="Triton image (default NVIDIA's tritonserver 24.10-py3)")
    e.add_argument("--gpus", metavar="N", help="GPUs per replica: a count (compose: also all/none); default 1 (all "
                   "for compose) when a model wants a GPU, else 0")
    e.add_argument("--storage-uri", metavar="URI", help="where the cluster reads the repository: kserve s3:// gs:// "
                   "pvc:// https:// ...; helm nfs://SERVER/PATH (chart k8s-onprem), s3:// (chart aws), gs:// (chart gcp)")
    e.add_argument("--name", help="the service's name (default: the repository folder's, DNS-1035)")
    e.add_argument("--replicas", type=_positive, default=1, help="minimum replicas (default 1)")
    e.add_argument("--max-replicas", type=_positive, help="autoscaling maximum (helm default 3)")
    e.add_argument("--queue-target-us", type=_positive, metavar="US",
                   help="helm: average queue time per request the autoscaler holds (default max(50, 2x the largest "
                        "max_queue_delay_microseconds))")
    e.add_argument("--protocol", choices=("v2", "grpc-v2"), default="v2", help="kserve: the predictor's protocol")
    e.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    e.set_defaults(func=run)


def run(args) -> int:
    opts = ExportOptions(to=args.to, image=args.image, gpus=args.gpus, storage_uri=args.storage_uri, name=args.name,
                         replicas=args.replicas, max_replicas=args.max_replicas, queue_target_us=args.queue_target_us,
                         protocol=args.protocol, out=args.out)
    try:
        text = export(args.repository, opts)
    except UsageError as e:
        print(f"export: {e}", file=sys.stderr)
        return 2
    except ExportError as e:
        print(f"export: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"export: {getattr(e, 'filename', None) or args.repository}: {e.strerror or e}", file=sys.stderr)
        return 1
    if not args.out:
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    try:
        from studio.config import atomic_write

        atomic_write(out, text)
    except OSError as e:
        print(f"export: cannot write {out}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"wrote {out} ({args.to})", file=sys.stderr)
    return 0
