#!/usr/bin/env bash
# Idempotent setup for a Debian machine: the system libraries Qt needs (and Xvfb for real windows without a
# screen), a Python virtual environment in .venv, and the project installed in it (editable) with the extras
# given as arguments (default: test).  Run as root, or as a user who may sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${1:-all}"

apt_packages=(
  python3 python3-venv python3-pip libpython3.11
  libxcb-cursor0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-xinerama0
  libxcb-randr0 libxcb-render-util0 libxcb-image0 libxcb-xkb1 libegl1 libgl1 libfontconfig1 libdbus-1-3
  fonts-dejavu-core xvfb xauth
)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing system packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian's interpreter: the python backend stub of the embedded Triton links the system libpython3.X.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($py --version)"
  "$py" -m venv .venv
fi

stamp=".venv/.setup-stamp"
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $extras"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing triton-config-studio[$extras] into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[$extras]"
  echo "$want" > "$stamp"
fi
