#!/usr/bin/env bash
# Prove the README's Quickstart on a minimal, fresh Debian 12: build a debootstrap bookworm (minbase, plus only
# python3, git and ca-certificates) as a local Docker image, clone HEAD of this repository (committed work only),
# and run, as root in a container of that image, exactly
#
#     bash scripts/demo.sh --screenshot /tmp/out.png
#     bash scripts/test.sh
#
# unmodified and with nothing installed by hand, twice (the second round shows that setup is idempotent and
# fast).  Prints a table (round x command: wall seconds, exit status, pytest's closing line) and exits nonzero
# when any step fails.
#
#   bash scripts/fresh-debian-check.sh [--rebuild] [--keep] [--demo-only] [--rounds N] [--test-rounds N]
#                                      [--timeout S]
#                                      [--mirror URL] [--out DIR]
#
#   --rebuild     debootstrap the image again (it is cached as triton-config-studio/fresh-debian:bookworm-minbase)
#   --keep        leave the container, its /var/lib/docker volume and the clone behind (to look inside)
#   --demo-only   run only the demo command (while developing this script)
#   --rounds N    how many rounds (default 2)
#   --test-rounds N  run the test command only in the first N rounds (default: all); the later rounds run the
#                 demo command alone, which proves a second setup idempotent and fast at a fraction of the time
#                 (.ci/run uses --rounds 2 --test-rounds 1: the suite once on the host, once on fresh Debian)
#   --timeout S   limit for each command (default 3600 s)
#   --mirror URL  Debian mirror for debootstrap (default: the host's apt mirror for bookworm, else
#                 http://deb.debian.org/debian)
#   --out DIR     logs, screenshots and summary (default: test-artifacts/fresh-debian-check, git-ignored)
#
# As root, on a Debian machine.  Needs: a Docker engine (when none answers, scripts/docker-up.sh installs
# docker.io and debootstrap and starts dockerd; only a dockerd that it started here is stopped at the end, via
# scripts/docker-down.sh, as scripts/test.sh does), and network access to the Debian mirror and to PyPI.
#
# Docker-in-Docker: scripts/test.sh starts its own dockerd inside the container, so the container needs:
#   * --privileged, tried first.  Refused on a host whose capability bounding set is not complete: runc then
#     fails with "unable to apply caps: operation not permitted" (seen on the 2-core Firecracker VM, which
#     lacks CAP_SYS_RESOURCE; --privileged cannot be combined with --cap-drop).
#   * otherwise this fallback, which works there:
#       --cap-add ALL --cap-drop <every capability the host's bounding set lacks, e.g. SYS_RESOURCE>
#       --security-opt seccomp=unconfined --security-opt apparmor=unconfined
#       --security-opt systempaths=unconfined      (the inner dockerd writes /proc/sys: ip_forward, IPv6 knobs)
#       -v /sys/fs/cgroup:/sys/fs/cgroup:rw        (cgroup v1: the inner runc must create cgroups; without it:
#                                                   "mkdir /sys/fs/cgroup/cpuset/docker: read-only file system")
#   * in both cases: a named volume on /var/lib/docker (the container's own root is overlayfs, and overlay2 on
#     overlayfs fails; the volume lives on the host's file system, so the inner dockerd gets overlay2), --init
#     (a real pid 1 that reaps orphans, as systemd would: docker-down.sh waits for its dockerd to be gone), and
#     the default bridge network (not --network host: the inner dockerd would then share the host's network
#     namespace, its docker0 bridge and iptables rules with the outer one; NAT on the bridge reaches the
#     mirrors just as well).
#
# Network: apt uses the mirror as the host does (http).  pip in the container uses PyPI, as pip does on any
# fresh machine; from the host's pip settings (pip config list, PIP_* variables) only those about reaching an
# index are passed on: an http(s) index-url / extra-index-url, trusted-host, default-timeout, and the CA bundle
# named by `cert` (bind-mounted read-only and given as PIP_CERT; needed where outbound TLS is intercepted by a
# proxy whose CA only the host trusts).  Local wheel folders, file:// indexes and constraints are not passed:
# the container cannot see them and a fresh machine has none.  http(s)_proxy variables are passed when set.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
image="triton-config-studio/fresh-debian:bookworm-minbase"
rebuild=0; keep=0; demo_only=0; rounds=2; test_rounds=""; timeout_s=3600; mirror=""; out=""

log() { printf 'fresh-debian-check: %s\n' "$*" >&2; }
die() { printf 'fresh-debian-check: FAILED: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --rebuild) rebuild=1 ;;
    --keep) keep=1 ;;
    --demo-only) demo_only=1 ;;
    --rounds) rounds="${2:?--rounds needs a number}"; shift ;;
    --test-rounds) test_rounds="${2:?--test-rounds needs a number}"; shift ;;
    --timeout) timeout_s="${2:?--timeout needs seconds}"; shift ;;
    --mirror) mirror="${2:?--mirror needs a URL}"; shift ;;
    --out) out="${2:?--out needs a folder}"; shift ;;
    -h|--help) sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds wants a positive number, not $rounds"
test_rounds="${test_rounds:-$rounds}"
[[ "$test_rounds" =~ ^[0-9]+$ ]] || die "--test-rounds wants a number, not $test_rounds"
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die "--timeout wants seconds, not $timeout_s"
[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, dockerd)"

out="${out:-$repo/test-artifacts/fresh-debian-check}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -f "$out"/*.log "$out"/*.png "$out"/summary.txt
work="$(mktemp -d /tmp/fresh-debian-check.XXXXXX)"
cname="fresh-debian-check-$$"
volume="fresh-debian-check-$$-var-lib-docker"
started_docker=0
container_up=0

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

cleanup() {
  local rc=$?
  set +e
  if [ $keep -eq 1 ]; then
    [ $container_up -eq 1 ] && log "kept container $cname (docker exec -it $cname bash), volume $volume, clone $work/src"
  else
    [ $container_up -eq 1 ] && docker rm -f "$cname" >/dev/null 2>&1
    docker volume rm "$volume" >/dev/null 2>&1
    rm -rf "$work"
  fi
  if [ $started_docker -eq 1 ]; then
    if [ $keep -eq 1 ]; then log "left running the dockerd this check started (stop it: bash scripts/docker-down.sh)"
    else bash "$repo/scripts/docker-down.sh" >&2; fi
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- 1. a Docker engine, and debootstrap -----------------------------------------------------------------------
if ! docker info >/dev/null 2>&1; then
  log "no Docker engine answers: running scripts/docker-up.sh (log: $out/docker-up.log)"
  had_pid=0; [ -f "$repo/.dockerd.pid" ] && had_pid=1
  set +e; bash "$repo/scripts/docker-up.sh" >"$out/docker-up.log" 2>&1; up_rc=$?; set -e
  [ $had_pid -eq 0 ] && [ -f "$repo/.dockerd.pid" ] && started_docker=1
  if ! docker info >/dev/null 2>&1; then
    tail -n 30 "$out/docker-up.log" >&2
    die "scripts/docker-up.sh did not bring up a Docker engine (exit $up_rc)"
  fi
  if [ $up_rc -ne 0 ]; then
    # docker-up.sh also builds the CPU Triton image for this checkout's .venv; the check does not need it.
    log "note: scripts/docker-up.sh exited $up_rc after dockerd was up (its CPU image step for the host checkout," \
        "not needed here): $(tail -n 1 "$out/docker-up.log")"
  fi
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  log "installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap \
    >/dev/null || die "could not install debootstrap"
fi

# --- 2. the minimal bookworm image -----------------------------------------------------------------------------
host_mirror() {
  # deb822 stanzas (Types: deb, a Suites word "bookworm", not Enabled: no), then one-line "deb URL bookworm ...".
  local f m
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    m="$(awk '
      function flush() { if (!found && types ~ /(^| )deb( |$)/ && suites ~ /(^| )bookworm( |$)/ && enabled !~ /^[Nn]o/ && uris != "") { split(uris, u, " "); print u[1]; found = 1; exit } types = suites = uris = enabled = "" }
      /^[[:space:]]*$/ { flush(); next }
      /^[[:space:]]*#/ { next }
      tolower($1) == "types:"   { $1 = ""; types = $0 }
      tolower($1) == "suites:"  { $1 = ""; suites = $0 }
      tolower($1) == "uris:"    { $1 = ""; sub(/^ +/, ""); uris = $0 }
      tolower($1) == "enabled:" { enabled = $2 }
      END { flush() }' "$f")"
    [ -n "$m" ] && { echo "$m"; return; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    m="$(awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ } if ($(i+1) == "bookworm") { print $i; exit } }' "$f")"
    [ -n "$m" ] && { echo "$m"; return; }
  done
}

image_s="cached"
if [ $rebuild -eq 1 ] || ! docker image inspect "$image" >/dev/null 2>&1; then
  [ -n "$mirror" ] || mirror="$(host_mirror)"
  [ -n "$mirror" ] || mirror="http://deb.debian.org/debian"
  mirror="${mirror%/}"
  [[ "$mirror" =~ ^(https?|file)://[^[:space:]]+$ ]] || die "not a mirror URL: $mirror"
  root="$work/rootfs"
  t0="$(now)"
  log "debootstrap --variant=minbase --include=python3,git,ca-certificates bookworm from $mirror" \
      "(log: $out/debootstrap.log)"
  debootstrap --variant=minbase --include=python3,git,ca-certificates bookworm "$root" "$mirror" \
    >"$out/debootstrap.log" 2>&1 || { tail -n 30 "$out/debootstrap.log" >&2; die "debootstrap failed"; }
  # debootstrap writes /etc/apt/sources.list ("deb MIRROR bookworm main"); make sure it is there.
  if ! grep -qs '^deb .* bookworm ' "$root/etc/apt/sources.list"; then
    printf 'deb %s bookworm main\n' "$mirror" >"$root/etc/apt/sources.list"
  fi
  # Nothing added; only debootstrap's package cache and lists go (like Debian's own container images).
  rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
  tar -C "$root" -c . | docker import \
    -c "LABEL org.opencontainers.image.title=\"debootstrap bookworm minbase + python3 git ca-certificates\"" \
    -c "LABEL org.opencontainers.image.source=\"$mirror\"" - "$image" >/dev/null || die "docker import failed"
  rm -rf "$root"
  image_s="$(since "$t0") s"
  log "image $image built in $image_s"
fi
image_mirror="$(docker image inspect -f '{{index .Config.Labels "org.opencontainers.image.source"}}' "$image")"

# --- 3. a clean clone of HEAD -----------------------------------------------------------------------------------
git clone --quiet --no-local "$repo" "$work/src" || die "git clone of $repo failed"
head="$(git -C "$work/src" log -1 --format='%h %s')"
log "clone of HEAD: $head"

# --- 4. the container ------------------------------------------------------------------------------------------
refused=()
probe() {  # docker run options...: can such a container start, and create a cgroup (as an inner runc must)?
  docker run --rm "$@" "$image" sh -c \
    'd=/sys/fs/cgroup/cpu; [ -d "$d" ] || d=/sys/fs/cgroup; mkdir "$d/fresh-debian-check-probe" && rmdir "$d/fresh-debian-check-probe"' \
    >"$work/probe.log" 2>&1
}
probe_error() { grep -m1 -v '^$' "$work/probe.log" | sed 's/^docker: //; s/Error response from daemon: //' | cut -c1-200; }

dind_opts=(--privileged)
if ! probe "${dind_opts[@]}"; then
  refused+=("--privileged: $(probe_error)")
  cap_names=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE
    NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE
    SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL
    SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF CHECKPOINT_RESTORE)
  bnd=$((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)))
  drops=()
  for i in "${!cap_names[@]}"; do
    (( (bnd >> i) & 1 )) || drops+=(--cap-drop "${cap_names[$i]}")
  done
  confined=(--security-opt seccomp=unconfined --security-opt apparmor=unconfined
            --security-opt systempaths=unconfined -v /sys/fs/cgroup:/sys/fs/cgroup:rw)
  dind_opts=(--cap-add ALL "${drops[@]}" "${confined[@]}")
  # An older engine does not know the newest names (docker 20.10: "unknown capability: \"CAP_PERFMON\""),
  # and then does not grant them either: leave those out of the drops.
  ok=0
  while :; do
    probe "${dind_opts[@]}" && { ok=1; break; }
    unknown="$(grep -o -m1 'unknown capability: "CAP_[A-Z_]*"' "$work/probe.log" | head -n1)" || break
    unknown="${unknown##*\"CAP_}"; unknown="${unknown%\"}"
    kept=(); for ((i = 0; i < ${#drops[@]}; i += 2)); do
      [ "${drops[i+1]}" = "$unknown" ] || kept+=(--cap-drop "${drops[i+1]}")
    done
    [ ${#kept[@]} -lt ${#drops[@]} ] || break
    refused+=("--cap-drop $unknown: $(probe_error)")
    drops=("${kept[@]}")
    dind_opts=(--cap-add ALL "${drops[@]}" "${confined[@]}")
  done
  if [ $ok -eq 0 ]; then
    refused+=("${dind_opts[*]}: $(probe_error)")
    dind_opts=(--cap-add SYS_ADMIN --cap-add NET_ADMIN --cap-add MKNOD "${confined[@]}")
    probe "${dind_opts[@]}" || { refused+=("${dind_opts[*]}: $(probe_error)"); printf '  refused: %s\n' "${refused[@]}" >&2
      die "this Docker engine will not run a container that can host its own dockerd"; }
  fi
fi
for r in "${refused[@]}"; do log "refused: $r"; done
log "Docker-in-Docker options: ${dind_opts[*]}"

# The host's pip settings about reaching an index (see the header).
pip_list="$( { python3 -m pip config list || /usr/bin/python3 -m pip config list; } 2>/dev/null || true)"
pip_get() {  # key: the :env: value if any, else the global one
  local v
  v="$(sed -n "s/^:env:\.$1='\(.*\)'\$/\1/p" <<<"$pip_list" | head -n1)"
  [ -n "$v" ] || v="$(sed -n "s/^global\.$1='\(.*\)'\$/\1/p" <<<"$pip_list" | head -n1)"
  printf '%s' "$v"
}
net_opts=(); passed=(); not_passed=()
cert="$(pip_get cert)"
if [ -n "$cert" ] && [ -f "$cert" ]; then
  net_opts+=(-v "$cert:/run/fresh-debian-check/pip-cert.pem:ro" -e PIP_CERT=/run/fresh-debian-check/pip-cert.pem)
  passed+=("cert=$cert (as PIP_CERT)")
fi
v="$(pip_get index-url)"
if [[ "$v" =~ ^https?:// ]]; then net_opts+=(-e "PIP_INDEX_URL=$v"); passed+=("index-url=$v")
elif [ -n "$v" ]; then not_passed+=("index-url=$v"); fi
extra=(); for u in $(pip_get extra-index-url); do
  if [[ "$u" =~ ^https?:// ]]; then extra+=("$u"); else not_passed+=("extra-index-url $u"); fi
done
[ ${#extra[@]} -gt 0 ] && { net_opts+=(-e "PIP_EXTRA_INDEX_URL=${extra[*]}"); passed+=("extra-index-url=${extra[*]}"); }
for k in trusted-host default-timeout; do
  v="$(pip_get "$k")"
  if [ -n "$v" ]; then env_name="PIP_$(tr 'a-z-' 'A-Z_' <<<"$k")"; net_opts+=(-e "$env_name=$v"); passed+=("$k=$v"); fi
done
for k in find-links constraint; do v="$(pip_get "$k")"; [ -n "$v" ] && not_passed+=("$k=$v"); done
for k in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
  [ -n "${!k:-}" ] && { net_opts+=(-e "$k=${!k}"); passed+=("$k"); }
done
log "host pip settings passed on: ${passed[*]:-none}"
[ ${#not_passed[@]} -gt 0 ] && log "host pip settings not passed on (local to the host): ${not_passed[*]}"

docker volume create "$volume" >/dev/null
# an IPv6 loopback, as a desktop has (Docker leaves ::1 off in containers; the port tests bind [::1])
run_opts=(--name "$cname" --init "${dind_opts[@]}" -v "$volume:/var/lib/docker" -v "$work/src:/src" -w /src "${net_opts[@]}"
          --sysctl net.ipv6.conf.all.disable_ipv6=0 --sysctl net.ipv6.conf.lo.disable_ipv6=0)
docker run -d "${run_opts[@]}" "$image" sleep infinity >/dev/null || die "docker run ${run_opts[*]} $image failed"
container_up=1
log "container $cname: docker run -d ${run_opts[*]} $image sleep infinity"

# Can the container reach the mirror and PyPI?  (A clear message here beats a pip traceback later.)
docker exec "$cname" python3 -c '
import os, re, ssl, sys, urllib.request
mirror = re.search(r"^deb\s+(\S+)\s+bookworm\s", open("/etc/apt/sources.list").read(), re.M).group(1)
ctx = ssl.create_default_context(cafile=os.environ.get("PIP_CERT") or None)
index = (os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple").rstrip("/") + "/pip/"
for url in (mirror.rstrip("/") + "/dists/bookworm/Release", index):
    try:
        urllib.request.urlopen(url, timeout=30, context=ctx).read(1)
    except Exception as e:
        sys.exit(f"the container cannot reach {url}: {e}")
' || die "network check inside the container failed (see above)"

# --- 5. the README's two commands, twice --------------------------------------------------------------------------
declare -A secs rcs closing
failed=0
run() {  # label, then the command's argv, run in /src as root
  local label="$1"; shift
  local t0; t0="$(now)"
  log "$label: $*"
  set +e
  docker exec -w /src "$cname" timeout --kill-after=30 "$timeout_s" "$@" 2>&1 | tee "$out/$label.log" | sed "s/^/[$label] /"
  rcs[$label]=${PIPESTATUS[0]}
  set -e
  secs[$label]="$(since "$t0")"
  [ "${rcs[$label]}" -eq 124 ] && log "$label: timed out after $timeout_s s"
  log "$label: exit ${rcs[$label]} after ${secs[$label]} s"
}

for r in $(seq 1 "$rounds"); do
  docker exec "$cname" rm -f /tmp/out.png
  run "run$r-demo" bash scripts/demo.sh --screenshot /tmp/out.png
  shot="$out/demo-run$r.png"
  if docker cp "$cname:/tmp/out.png" "$shot" >/dev/null 2>&1 && [ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; then
    dims="$(od -An -tu1 -j16 -N8 "$shot" | awk '{ printf "%dx%d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8 }')"
    closing[run$r-demo]="screenshot $dims, $(stat -c %s "$shot") bytes: $shot"
  else
    rm -f "$shot"
    closing[run$r-demo]="no screenshot (/tmp/out.png missing or not a PNG)"
    [ "${rcs[run$r-demo]}" -eq 0 ] && rcs[run$r-demo]=99
  fi
  [ "${rcs[run$r-demo]}" -eq 0 ] || failed=1
  if [ $demo_only -eq 0 ] && [ "$r" -le "$test_rounds" ]; then
    run "run$r-test" bash scripts/test.sh
    closing[run$r-test]="$(sed 's/\x1b\[[0-9;]*m//g' "$out/run$r-test.log" \
      | grep -E '([0-9]+ (passed|failed|errors?|skipped|xfailed|xpassed|deselected)|no tests ran).* in [0-9.]+s' | tail -n1)"
    [ -n "${closing[run$r-test]}" ] || closing[run$r-test]="(no pytest summary line; last: $(tail -n1 "$out/run$r-test.log" | cut -c1-120))"
    [ "${rcs[run$r-test]}" -eq 0 ] || failed=1
  fi
done

# --- 6. summary -----------------------------------------------------------------------------------------------------
{
  echo "fresh-debian-check: $(date -u +%FT%TZ), HEAD $head"
  echo "image: $image ($image_s; mirror $image_mirror)"
  echo "docker run options: ${run_opts[*]}"
  for r in "${refused[@]}"; do echo "refused: $r"; done
  printf '%-6s %-5s %9s %5s  %s\n' round cmd "wall s" exit "pytest closing line / screenshot"
  for r in $(seq 1 "$rounds"); do
    for c in demo test; do
      [ -n "${rcs[run$r-$c]:-}" ] || continue
      printf '%-6s %-5s %9s %5s  %s\n' "$r" "$c" "${secs[run$r-$c]}" "${rcs[run$r-$c]}" "${closing[run$r-$c]}"
    done
  done
  echo "logs: $out/run*-{demo,test}.log"
} | tee "$out/summary.txt"

for l in "$out"/run*.log; do
  label="$(basename "$l" .log)"
  if [ "${rcs[$label]:-0}" -ne 0 ]; then
    echo; echo "=== $label failed (exit ${rcs[$label]}); last 60 lines of $l:"; tail -n 60 "$l"
  fi
done | tee -a "$out/summary.txt"
[ $failed -eq 0 ] || die "a command of the README did not succeed on fresh Debian 12 (see the table above)"
log "OK: the README's commands work on a fresh debootstrap bookworm"
