# Two commands: `make run` and `make test`. Both set up first (idempotent, fast
# the second time): see scripts/setup.sh.

VENV := .venv
PY := $(VENV)/bin/python
URL := http://127.0.0.1:8501

.PHONY: run test bench setup setup-test

setup:
	bash scripts/setup.sh

setup-test:
	bash scripts/setup.sh --test

run: setup
	@echo "Inside the Transformer: open $(URL)"
	$(VENV)/bin/streamlit run app.py --server.address 127.0.0.1 --server.port 8501

test: setup-test
	$(PY) -m pytest

bench: setup
	$(PY) scripts/bench.py
	$(PY) scripts/bench_memory.py
