#!/usr/bin/env bash
# Set up (idempotent) and run the full test suite: ruff, then pytest (unit, GUI offscreen, and integration
# tests against the embedded Triton and a real Docker engine).  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh all
started_docker=0
if [ "${STUDIO_SKIP_DOCKER_SETUP:-0}" != "1" ]; then
  [ -f .dockerd.pid ] || started_docker=1
  bash scripts/docker-up.sh
  [ -f .dockerd.pid ] || started_docker=0
fi
cleanup() { [ $started_docker -eq 1 ] && bash scripts/docker-down.sh; true; }
trap cleanup EXIT
export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
.venv/bin/ruff check studio tests benchmarks
set +e
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
rc=$?
set -e
if [ $rc -eq 5 ]; then
  echo "test: pytest collected no tests; that is a failure here" >&2
  exit 1
fi
exit $rc
