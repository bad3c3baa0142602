#!/usr/bin/env bash
# Stop the dockerd that docker-up.sh started (and only that one).
cd "$(dirname "$0")/.."
if [ -f .dockerd.pid ]; then
  pid=$(cat .dockerd.pid)
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f .dockerd.pid
  echo "docker-down: stopped dockerd"
fi
