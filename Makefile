# The two commands a newcomer needs: `make run` and `make test`. Each creates .venv by itself.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# The gtk extra (PyGObject) builds only where the GTK/cairo development files are installed.
GTK    := $(shell pkg-config --exists gobject-introspection-1.0 cairo 2>/dev/null && echo ,gtk)
STAMP  := $(VENV)/.installed$(if $(GTK),-gtk,)

.PHONY: run test lint bench clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test$(GTK)]'
	@rm -f $(VENV)/.installed*
	@touch $@

run: venv
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

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache bench/out
