#!/usr/bin/env bash
# Build a CPU-only Triton image locally, without any registry: a minimal Debian (debootstrap from the mirror
# apt already uses) with python3, numpy and libpython, plus the tritonserver binary, its libraries and the
# python backend from the nvidia-pytriton wheel, laid out like NVIDIA's images (/opt/tritonserver).
#
#   packaging/cpu-triton-image/build.sh [--force]     (as root; needs docker, debootstrap, nvidia-pytriton)
#
# Idempotent: does nothing when the image exists. Prints the image tag on its last line.
set -euo pipefail
cd "$(dirname "$0")/../.."

PYTHON="${PYTHON:-.venv/bin/python}"
force=0
[ "${1:-}" = "--force" ] && force=1

fail() { echo "build: $*" >&2; exit 1; }
command -v docker >/dev/null || fail "docker is not installed (bash scripts/docker-up.sh installs it)"
command -v debootstrap >/dev/null || fail "debootstrap is not installed (apt-get install debootstrap)"
version="$("$PYTHON" -c 'from studio.runtime.embedded import EmbeddedServer; print(EmbeddedServer.find().triton_version())')" \
  || fail "the embedded Triton (nvidia-pytriton) is not installed in $PYTHON's environment (bash scripts/setup.sh all)"
tag="${TAG:-triton-config-studio/tritonserver-cpu:${version}}"

if [ $force -eq 0 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "image $tag exists"
  echo "$tag"
  exit 0
fi

mirror="$(bash scripts/debian-mirror.sh)"

work="$(mktemp -d /tmp/triton-cpu-image.XXXXXX)"
trap 'rm -rf "$work"' EXIT
root="$work/root"

echo "build: debootstrap bookworm from $mirror"
debootstrap --variant=minbase --include=python3,python3-numpy,libpython3.11,ca-certificates bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -n 30 "$work/debootstrap.log" >&2; fail "debootstrap of bookworm from $mirror failed (log above)"; }

site="$("$PYTHON" -c 'import pytriton, os; print(os.path.dirname(os.path.dirname(pytriton.__file__)))')"
ts="$site/pytriton/tritonserver"
dst="$root/opt/tritonserver"
mkdir -p "$dst/bin" "$dst/lib" "$dst/backends/python"
cp "$ts/bin/tritonserver" "$dst/bin/"
cp -a "$site/nvidia_pytriton.libs/." "$dst/lib/"
cp "$ts/backends/python/libtriton_python.so" "$ts/backends/python/triton_python_backend_utils.py" "$dst/backends/python/"
cp "$ts/python_backend_stubs/3.11/triton_python_backend_stub" "$dst/backends/python/"
rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*

echo "build: docker import $tag"
tar -C "$root" -c . | docker import \
  -c 'ENV LD_LIBRARY_PATH=/opt/tritonserver/lib' \
  -c 'ENV PATH=/opt/tritonserver/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'WORKDIR /opt/tritonserver' \
  -c 'LABEL org.opencontainers.image.title="Triton (CPU, built by triton-config-studio)"' \
  - "$tag" >/dev/null || fail "docker import of $tag failed"
echo "$tag"
