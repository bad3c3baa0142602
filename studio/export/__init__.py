"""Export a model repository for a cluster: KServe, Triton's Helm chart, docker compose (no Qt)."""
