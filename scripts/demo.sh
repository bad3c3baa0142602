#!/usr/bin/env bash
# Set up (idempotent) and launch the studio on the bundled demo repository.  Extra arguments go to the studio.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh all
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
  echo "demo: no display found; running the studio in a virtual X server (xvfb-run)." >&2
  exec xvfb-run -a -s "-screen 0 1280x800x24" .venv/bin/triton-studio model_repository_templates/demo --serve embedded "$@"
fi
exec .venv/bin/triton-studio model_repository_templates/demo --serve embedded "$@"
