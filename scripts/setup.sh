#!/usr/bin/env bash
# Idempotent setup for a Debian 12 or 13 machine: the system libraries Qt needs (and Xvfb for real windows without
# a screen), a Python virtual environment in .venv, and the project installed in it (editable) with the extras
# given as arguments (default: all).  Run as root, or as a user who may sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${1:-all}"
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"

# What PySide6's loaded parts link (ldd of QtCore/QtGui/QtWidgets/QtSvg/QtTest, the xcb and offscreen platform
# plugins, the xcb GLX integration and the image-format plugins), reduced to the Debian packages that own those
# libraries; "a|b" = Debian 12 name | Debian 13 name (the t64 transition).  Plus Xvfb for a window without a
# screen, a font, and what the embedded Triton's python backend links (libpython3.X, below).
apt_packages=(
  python3 python3-venv python3-pip ca-certificates
  "libglib2.0-0|libglib2.0-0t64" libdbus-1-3 libegl1 libgl1 libglx0 libopengl0 libfontconfig1 libfreetype6
  "libpng16-16|libpng16-16t64" zlib1g libzstd1 libx11-6 libx11-xcb1 libxkbcommon0 libxkbcommon-x11-0
  libxcb1 libxcb-cursor0 libxcb-glx0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
  libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1 libxcb-util1 libxcb-xfixes0
  libxcb-xinerama0 libxcb-xkb1
  fonts-dejavu-core xvfb xauth
  desktop-file-utils shared-mime-info
  binutils  # objdump: PyInstaller refuses to build the bundle on Linux without it (packaging/pyinstaller)
)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
updated=0
apt_install() {
  # $@: entries as above; installs the first available name of each entry that has none installed
  local want=() entry alt pick
  for entry in "$@"; do
    pick=""
    for alt in ${entry//|/ }; do installed "$alt" && { pick="-"; break; }; done
    [ "$pick" = "-" ] && continue
    want+=("$entry")
  done
  [ ${#want[@]} -gt 0 ] || return 0
  if [ $updated -eq 0 ]; then
    # another apt run (unattended-upgrades on a fresh machine, a second setup) holds the lock: wait, do not fail
    echo "setup: apt-get update"
    $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq || { echo "setup: apt-get update failed (no network or no apt sources?)" >&2; exit 1; }
    updated=1
  fi
  local names=()
  for entry in "${want[@]}"; do
    pick=""
    for alt in ${entry//|/ }; do
      if apt-cache show "$alt" >/dev/null 2>&1; then pick="$alt"; break; fi
    done
    [ -n "$pick" ] || { echo "setup: no Debian package for $entry on this system" >&2; exit 1; }
    names+=("$pick")
  done
  echo "setup: installing system packages: ${names[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${names[@]}" >/dev/null \
    || { echo "setup: apt-get install ${names[*]} failed" >&2; exit 1; }
}
apt_install "${apt_packages[@]}"

# Debian's interpreter: the python backend stub of the embedded Triton links the system libpython3.X.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
apt_install "libpython$("$py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"

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
