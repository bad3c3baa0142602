#!/usr/bin/env bash
# Make a Docker engine available for the integration tests: install docker.io and debootstrap when missing,
# start dockerd when no daemon answers (its pid goes to .dockerd.pid so docker-down.sh stops only that one),
# and build the local CPU Triton image when it is missing.  Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  echo "docker-up: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  echo "docker-up: starting dockerd"
  $sudo sh -c 'dockerd >/tmp/triton-studio-dockerd.log 2>&1 & echo $! > '"$PWD"'/.dockerd.pid'
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || { echo "docker-up: dockerd did not start:"; tail -n 20 /tmp/triton-studio-dockerd.log; exit 1; }
fi

start=$(date +%s)
tag=$(bash packaging/cpu-triton-image/build.sh | tee /dev/stderr | tail -n 1) \
  || { echo "docker-up: building the CPU Triton image failed (packaging/cpu-triton-image/build.sh, messages above)" >&2; exit 1; }
echo "$tag" > .cpu-image-tag
echo "docker-up: CPU image $(cat .cpu-image-tag) ready ($(( $(date +%s) - start )) s)"
