#!/usr/bin/env bash
# Build the self-contained one-folder bundle: <dist>/triton-studio/triton-studio (window and CLI).
#
#   packaging/pyinstaller/build.sh [--dist DIR] [--with-cloud]
#
# DIR defaults to dist/pyinstaller in the checkout. The embedded Triton (nvidia-pytriton) is left out; the bundle
# serves through Docker or a remote Triton. --with-cloud adds fsspec and s3fs (s3:// repositories) when installed.
# Needs PyInstaller in the Python that runs it: the `test` extra has it (pip install -e '.[test]').
# Prints the build time and the bundle's size last.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dist="$root/dist/pyinstaller"
export STUDIO_BUNDLE_CLOUD=0
while [ $# -gt 0 ]; do
    case "$1" in
        --dist) dist="$2"; shift 2 ;;
        --with-cloud) STUDIO_BUNDLE_CLOUD=1; shift ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        *) echo "build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
python="${PYTHON:-}"
if [ -z "$python" ]; then
    if [ -x "$root/.venv/bin/python" ]; then python="$root/.venv/bin/python"; else python="$(command -v python3)"; fi
fi
if ! "$python" -c "import PyInstaller" 2>/dev/null; then
    echo "build.sh: PyInstaller is not installed for $python (pip install -e '.[test]')" >&2
    exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
"$python" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$dist" --workpath "$work" "$here/triton-studio.spec"
end=$(date +%s)
size=$(du -sm "$dist/triton-studio" | cut -f1)
echo "bundle: $dist/triton-studio/triton-studio  (built in $((end - start)) s, ${size} MiB)"
