# Two commands matter: `make run` and `make test`. Both build .venv on first use.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test server bench lint screenshots clean

$(PY):
	@PYTHON=$$(scripts/find-python.sh) && echo "Creating $(VENV) with $$PYTHON" && "$$PYTHON" -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

run: $(STAMP)
	@scripts/check-display.sh
	$(VENV)/bin/converge

# The quality gates (ruff, mypy) run first: a red lint is a red build.
test: lint
	$(PY) -m pytest

server: $(STAMP)
	$(VENV)/bin/converge-server --seed demo

bench: $(STAMP)
	$(PY) -m bench all

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

screenshots: $(STAMP)
	$(PY) scripts/render_screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
