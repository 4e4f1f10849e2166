# Two commands do everything on a fresh machine (Python 3.11+, Node and make):
#   make run    install what running needs, then serve the built-in demo agent on 127.0.0.1:8000 (click the URL it prints)
#   make test   set up (Debian's chromium included), then run every test
#   make test-fast   set up, then run the tests without a browser and without the slow sweeps, two workers per core
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
VENDOR := static/vendor/htmx.min.js static/vendor/ws.min.js static/vendor/xterm.mjs static/vendor/xterm.css \
	static/vendor/addon-fit.mjs static/vendor/addon-web-links.mjs
TS_AGENTS := tests/agents/ts/node_modules/.package-lock.json
# Python writes no bytecode where PYTHONDONTWRITEBYTECODE is set (some images set it): every server, agent and test
# worker would compile the package again, and pytest rewrite every test module's asserts again, each time it starts.
unexport PYTHONDONTWRITEBYTECODE
# The tests wait on agents and servers more than they compute: two workers per core keep the cores busy.
WORKERS ?= $(shell $(PYTHON) -c "import os; print(2 * (os.cpu_count() or 1))")

.PHONY: setup setup-test run test test-fast ts-agents bench lint clean

# What running needs, quietly: `make run` installs no test or dev tools.
setup: $(STAMP) $(VENDOR)

# And the test and dev tools (pytest, Playwright, mypy, ruff, ...), for the test and lint targets only.
setup-test: setup $(TEST_STAMP)

# pip's and setuptools' chatter (upgrade notices, the editable build's warnings) would bury the sign-in URL: it is
# kept in a log, shown only when the install fails.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e . >$(VENV)/install.log 2>&1 \
		|| { cat $(VENV)/install.log; exit 1; }
	touch $@

$(TEST_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,dev]' >$(VENV)/install.log 2>&1 \
		|| { cat $(VENV)/install.log; exit 1; }
	touch $@

# htmx and xterm.js come from the npm registry, pinned by package-lock.json, checked against its published hash.
$(VENDOR) &: package.json package-lock.json $(STAMP)
	npm ci --no-audit --no-fund --loglevel=error
	$(BIN)/python scripts/vendor_assets.py

# The test agents written with the official ACP TypeScript SDK, and claude-agent-acp: pinned by their own
# package-lock.json (tests/agents/ts), installed for the tests only.
ts-agents: $(TS_AGENTS)

$(TS_AGENTS): tests/agents/ts/package.json tests/agents/ts/package-lock.json
	npm ci --prefix tests/agents/ts --no-audit --no-fund --loglevel=error

run: setup
	$(BIN)/webclient $(ARGS)

# Every test: those that need no browser on two workers per core, then the browser and slow ones on two workers, then the few
# that time or measure the server (marked alone) one at a time, as a second test beside them would skew them.
test: setup-test ts-agents
	scripts/ensure-chromium
	scripts/ensure-postgresql
	scripts/ensure-nginx
	scripts/ensure-bubblewrap
	scripts/ensure-slirp4netns
	$(BIN)/python -m pytest -m "not browser and not slow" -n $(WORKERS) $(PYTEST_ARGS)
	$(BIN)/python -m pytest -m "(browser or slow) and not alone" -n 2 $(PYTEST_ARGS)
	$(BIN)/python -m pytest -m "alone" $(PYTEST_ARGS)

# The edit-test loop: no Chromium, no server process of its own, none of the slow sweeps (the markers in pyproject.toml).
test-fast: setup-test ts-agents
	scripts/ensure-postgresql
	scripts/ensure-nginx
	scripts/ensure-bubblewrap
	scripts/ensure-slirp4netns
	$(BIN)/python -m pytest -m "not browser and not slow and not process" -n $(WORKERS) $(PYTEST_ARGS)

bench: setup-test
	$(BIN)/python bench/flood.py

lint: setup-test
	$(BIN)/ruff check webclient tests bench
	$(BIN)/mypy

clean:
	rm -rf $(VENV) node_modules static/vendor tests/agents/ts/node_modules
