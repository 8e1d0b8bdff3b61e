# Two commands: `make run` and `make test`. Both set up first (idempotent, fast
# the second time): see scripts/setup.sh.

VENV := .venv
PY := $(VENV)/bin/python
URL := http://127.0.0.1:8501

.PHONY: run test bench load setup setup-test replicas

setup:
	bash scripts/setup.sh

setup-test:
	bash scripts/setup.sh --test

run: setup
	@echo "Inside the Transformer: open $(URL)"
	$(VENV)/bin/streamlit run app.py --server.address 127.0.0.1 --server.port 8501

# A class on one machine: N replicas (default 2) and nginx in front on port 8080; Ctrl-C stops all.
N ?= 2
replicas: setup
	$(PY) scripts/replicas.py --replicas $(N)

# Three workers (pyproject.toml's addopts; `-n 0` for one process): docs/testing.md.
test: setup-test
	node --test tests/js/
	$(PY) -m pytest

bench: setup
	$(PY) scripts/bench.py
	$(PY) scripts/bench_memory.py

# How many learners one server holds (K = 5, 10, 20, 30), at a stress pace (0.5-2 s between
# inputs) and at a reading pace (5-15 s), then through nginx in front of 1, 2 and 3 replicas:
# scripts/load_driver.py. About 40 minutes on 2 cores.
load: setup-test
	$(PY) scripts/load_driver.py
	$(PY) scripts/load_driver.py --think 5 15
	for n in 1 2 3; do $(PY) scripts/load_driver.py --think 5 15 --learners 10 --replicas $$n --nginx; done

# The container image `inside-transformer`: docker where its daemon runs, podman otherwise, a local
# Debian base where the official one cannot be pulled (deploy/build-image.sh, docs/deploy.md).
.PHONY: image
image:
	bash deploy/build-image.sh
