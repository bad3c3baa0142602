#!/usr/bin/env bash
# Install (or remove) Triton Config Studio's desktop entry, icons and the config.pbtxt MIME type.
#
#   packaging/install-desktop.sh [--user] [--uninstall] [--exec PATH]
#
#   --user       into $XDG_DATA_HOME (default ~/.local/share) instead of /usr/local/share (system: needs root)
#   --uninstall  remove what an install put there
#   --exec PATH  the triton-studio to start (default: the one on PATH, else this checkout's .venv/bin/triton-studio);
#                written into the entry as an absolute path, so the menu finds it without the venv on PATH
#
# Files: applications/triton-config-studio.desktop, mime/packages/triton-config-studio.xml,
# icons/hicolor/{16x16..256x256}/apps/triton-config-studio.png and icons/hicolor/scalable/apps/...svg.
# The caches are refreshed with update-mime-database, update-desktop-database and gtk-update-icon-cache when
# those tools are installed (shared-mime-info, desktop-file-utils, gtk-update-icon-cache); missing ones are skipped.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
ICONS="$ROOT/resources/icons"
NAME=triton-config-studio
SIZES="16 22 24 32 48 64 128 256"

user=0 uninstall=0 exe=""
while [ $# -gt 0 ]; do
    case "$1" in
        --user) user=1 ;;
        --uninstall) uninstall=1 ;;
        --exec) shift; exe="${1:?--exec needs a path}" ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-desktop.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

if [ "$user" = 1 ]; then
    DATA="${XDG_DATA_HOME:-$HOME/.local/share}"
else
    DATA="${PREFIX:-/usr/local}/share"
    if [ "$(id -u)" != 0 ] && [ ! -w "$DATA" ]; then
        echo "install-desktop.sh: $DATA is not writable: run as root, or pass --user" >&2
        exit 1
    fi
fi

refresh() {
    if command -v update-mime-database >/dev/null; then update-mime-database "$DATA/mime" >/dev/null 2>&1 || true; fi
    if command -v update-desktop-database >/dev/null; then update-desktop-database "$DATA/applications" >/dev/null 2>&1 || true; fi
    if command -v gtk-update-icon-cache >/dev/null && [ -f "$DATA/icons/hicolor/index.theme" ]; then
        gtk-update-icon-cache -q -t "$DATA/icons/hicolor" >/dev/null 2>&1 || true
    fi
}

if [ "$uninstall" = 1 ]; then
    rm -f "$DATA/applications/$NAME.desktop" "$DATA/mime/packages/$NAME.xml" "$DATA/icons/hicolor/scalable/apps/$NAME.svg"
    for s in $SIZES; do rm -f "$DATA/icons/hicolor/${s}x${s}/apps/$NAME.png"; done
    refresh
    echo "removed Triton Config Studio's desktop entry, icons and MIME type from $DATA"
    exit 0
fi

if [ -z "$exe" ]; then
    if command -v triton-studio >/dev/null; then
        exe="$(command -v triton-studio)"
    elif [ -x "$ROOT/.venv/bin/triton-studio" ]; then
        exe="$ROOT/.venv/bin/triton-studio"
    else
        echo "install-desktop.sh: no triton-studio on PATH: install the studio first (pip install triton-config-studio) or pass --exec PATH" >&2
        exit 1
    fi
fi
case "$exe" in /*) ;; *) exe="$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")" ;; esac
case "$exe" in *[[:space:]\"\'\\\$\`]*)
    echo "install-desktop.sh: $exe: a path with spaces or quotes cannot go into Exec= here; pass --exec with a simple path" >&2
    exit 1 ;;
esac

install -d "$DATA/applications" "$DATA/mime/packages" "$DATA/icons/hicolor/scalable/apps"
sed -e "s|^Exec=triton-studio |Exec=$exe |" -e "s|^TryExec=triton-studio$|TryExec=$exe|" \
    "$HERE/$NAME.desktop" > "$DATA/applications/$NAME.desktop"
chmod 644 "$DATA/applications/$NAME.desktop"
install -m 644 "$HERE/$NAME-mime.xml" "$DATA/mime/packages/$NAME.xml"
install -m 644 "$ICONS/$NAME.svg" "$DATA/icons/hicolor/scalable/apps/$NAME.svg"
for s in $SIZES; do
    install -d "$DATA/icons/hicolor/${s}x${s}/apps"
    install -m 644 "$ICONS/$NAME-$s.png" "$DATA/icons/hicolor/${s}x${s}/apps/$NAME.png"
done
refresh
echo "installed Triton Config Studio's desktop entry ($exe), icons and MIME type text/x-triton-config into $DATA"
