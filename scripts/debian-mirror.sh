#!/usr/bin/env bash
# Print the Debian mirror this machine's apt uses (deb822 .sources files or one-line sources.list), or the
# official one when none is configured.  Used by the image builds (debootstrap needs a mirror).
set -uo pipefail
etc="${APT_ETC:-/etc/apt}"   # APT_ETC: another apt folder (tests)
mirror=""
for f in "$etc"/sources.list.d/*.sources; do
  [ -r "$f" ] || continue
  mirror=$(awk 'tolower($1)=="uris:" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\/.*debian\/?$/) { print $i; exit } }' "$f")
  [ -n "$mirror" ] && break
done
if [ -z "$mirror" ]; then
  for f in "$etc"/sources.list "$etc"/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    # deb [options] URI suite components...
    mirror=$(awk '$1=="deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\/.*debian\/?$/) { print $i; exit } }' "$f")
    [ -n "$mirror" ] && break
  done
fi
echo "${mirror%/}" | grep . || echo "http://deb.debian.org/debian"
