#!/usr/bin/env bash
# Builds the course's image, tagged inside-transformer (`make image`).
#
# Docker where its daemon answers, podman otherwise (ENGINE=docker|podman chooses). Settings, all
# optional, from the environment:
#   IMAGE        the tag (default inside-transformer)
#   BASE_IMAGE   a Debian bookworm image with Python 3.11. Default: the official slim image; with
#                podman, when it cannot be pulled, a local one built by mmdebstrap from Debian's
#                bookworm with Debian's python3.11 (its tar kept in .cache/image/, imported once)
#   PROXY_CA     a CA bundle for a proxy that re-signs HTTPS (default: the `cert` in pip's own
#                configuration, if any); copied into deploy/proxy-ca/ for the build stage
#   TORCH_WHEELS a folder holding torch's CPU wheel (default: pip's configured find-links folder
#                when it holds one); podman only (mounted into the build, no torch index then)
#   PODMAN_FLAGS what podman runs with (default: runc as the runtime and fixed ulimits, which
#                also work where crun refuses the machine's cgroup layout)
# Layers are cached by the engine: a second build with the same sources takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE="${IMAGE:-inside-transformer}"
OFFICIAL=python:3.11-slim-bookworm
LOCAL_BASE=localhost/inside-transformer-base:bookworm-python3.11
CACHE=.cache/image
start=$(date +%s)
log() { printf '[image] %s\n' "$*"; }

# One build at a time from this checkout: two at once (the image and compose tests build it from
# separate pytest workers) would both write the base's tar under the same name and delete the
# proxy CA file the other is building with. The second waits, then finds every layer cached.
mkdir -p "$CACHE"
exec 9>"$CACHE/build.lock"
flock -n 9 || { log "another build of this checkout is running: waiting for it"; flock 9; }

if [ -z "${ENGINE:-}" ]; then
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then ENGINE=docker
  elif command -v podman >/dev/null 2>&1; then ENGINE=podman
  else log "neither a running docker nor podman: install one (Debian: apt-get install podman)"; exit 1
  fi
fi

pip_config() { # a key of pip's configuration (global or env), empty when unset
  local pip=.venv/bin/pip
  [ -x "$pip" ] || pip="python3 -m pip"
  $pip config list 2>/dev/null | sed -n "s/^[a-z:]*\.$1='\(.*\)'$/\1/p" | head -n 1
}

# The proxy's CA bundle, for the build stage only (deploy/proxy-ca/ is git-ignored but for its README).
PROXY_CA="${PROXY_CA-$(pip_config cert)}"
rm -f deploy/proxy-ca/proxy-ca.pem
if [ -n "$PROXY_CA" ]; then
  log "proxy CA bundle: $PROXY_CA"
  cp "$PROXY_CA" deploy/proxy-ca/proxy-ca.pem
fi

args=(-t "$IMAGE")
if [ "$ENGINE" = podman ]; then
  read -r -a flags <<< "${PODMAN_FLAGS:---runtime runc}"
  run=(podman "${flags[@]}")
  # --format docker keeps the HEALTHCHECK (the OCI format has none).
  args+=(--format docker --network host --ulimit nofile=20000:20000 --ulimit nproc=4096:4096)
  TORCH_WHEELS="${TORCH_WHEELS-$(pip_config find-links)}"
  if [ -n "$TORCH_WHEELS" ] && ls "$TORCH_WHEELS"/torch-*+cpu-cp311-*.whl >/dev/null 2>&1; then
    log "torch from the wheel folder $TORCH_WHEELS"
    args+=(-v "$(realpath "$TORCH_WHEELS"):/wheels:ro" --build-arg TORCH_WHEELS=/wheels --build-arg TORCH_INDEX_URL=)
  fi
  if [ -z "${BASE_IMAGE:-}" ]; then
    if podman image exists "$OFFICIAL" || timeout 120 podman pull -q "docker.io/library/$OFFICIAL" >/dev/null 2>&1; then
      BASE_IMAGE=$OFFICIAL
    else
      # Imported once: a new import is a new image id, which would rebuild every layer.
      if ! podman image exists "$LOCAL_BASE"; then
        tar="$CACHE/bookworm-python3.11.tar"
        if [ ! -s "$tar" ]; then
          log "building a bookworm base with Debian's python3.11 (mmdebstrap, $tar)"
          command -v mmdebstrap >/dev/null || { log "mmdebstrap is missing: apt-get install mmdebstrap"; exit 1; }
          mkdir -p "$CACHE"
          mmdebstrap --quiet --format=tar --variant=minbase --include=python3,python3-venv,ca-certificates,passwd \
            bookworm "$tar.tmp"
          mv "$tar.tmp" "$tar"
        fi
        podman import -q "$tar" "$LOCAL_BASE" >/dev/null
      fi
      BASE_IMAGE=$LOCAL_BASE
    fi
  fi
else
  run=(docker)
fi
[ -n "${BASE_IMAGE:-}" ] && args+=(--build-arg "BASE_IMAGE=$BASE_IMAGE")

log "${run[*]} build ${args[*]} ."
previous=$("${run[@]}" image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
status=0
"${run[@]}" build "${args[@]}" . || status=$?
rm -f deploy/proxy-ca/proxy-ca.pem
[ "$status" = 0 ] || exit "$status"
# The image this build replaced lost its tag: removed, so that builds do not fill the disk with
# untagged images (kept if a container still uses it).
current=$("${run[@]}" image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
if [ -n "$previous" ] && [ "$previous" != "$current" ]; then
  "${run[@]}" rmi "$previous" >/dev/null 2>&1 && log "removed the image it replaced (${previous:0:12})" || true
fi
log "built $IMAGE in $(( $(date +%s) - start )) s with $ENGINE"
