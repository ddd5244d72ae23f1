# Two commands matter: `make run` and `make test`. Both build .venv on first use.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test server bench lint screenshots clean lock dist translations

$(PY):
	@PYTHON=$$(scripts/find-python.sh) && echo "Creating $(VENV) with $$PYTHON" && "$$PYTHON" -m venv $(VENV)

# Installs exactly what requirements.lock pins, checked against its hashes (no resolution:
# a fresh install is downloads only), then the project itself without its dependencies.
$(VENV)/.packages: $(PY) pyproject.toml requirements.lock
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --require-hashes --no-deps -r requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	@touch $@

# The window's translations: the .ts sources are committed, the .qm files the window loads
# are compiled from them here (build output, git-ignored; decision 0206). `make run`,
# `make test` and `make dist` all depend on the stamp, so they always have current .qm files.
TS := $(wildcard ui/translations/converge_*.ts)
QM := $(TS:.ts=.qm)

ui/translations/%.qm: ui/translations/%.ts $(VENV)/.packages
	$(VENV)/bin/pyside6-lrelease -silent $< -qm $@

$(STAMP): $(VENV)/.packages $(QM)
	@touch $(STAMP)

# Refresh the .ts sources from the code (new strings arrive `unfinished`: translate them;
# tests/ui/test_translation_files.py fails while one is left). Then `make` compiles them.
translations: $(VENV)/.packages
	$(VENV)/bin/pyside6-lupdate -no-obsolete -locations none $(wildcard ui/*.py ui/*/*.py app/*.py) \
		-ts $(TS)

# Re-pin after changing the dependencies in pyproject.toml (uv resolves for every platform
# and Python >= 3.12, with hashes).
lock: $(PY)
	$(PY) -m pip install --quiet uv
	$(VENV)/bin/uv pip compile pyproject.toml --extra dev --generate-hashes --universal \
		--python-version 3.12 -o requirements.lock

run: $(STAMP)
	@scripts/check-display.sh
	$(VENV)/bin/converge

# The quality gates (ruff, mypy) run first: a red lint is a red build.
# Two worker processes, each test handed to whichever is free (docs/performance.md, "The
# suite"); `make test WORKERS=0` runs the suite in one process.
WORKERS ?= 2
test: lint
	$(PY) -m pytest $(if $(filter 0,$(WORKERS)),,-n $(WORKERS) --dist worksteal)

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
	$(PY) scripts/render_languages.py
	$(PY) scripts/render_markdown.py

# The standalone bundle, runnable without Python: dist/converge/converge (PyInstaller onedir,
# decision 0200). The desktop entry, metainfo and their installer go beside it:
# dist/converge/install-desktop-entry.sh adds it to this user's application menu.
dist: $(STAMP)
	$(VENV)/bin/pyinstaller --noconfirm --clean --log-level WARN --distpath dist \
		--workpath build/pyinstaller packaging/converge.spec
	cp packaging/converge.desktop packaging/io.converge.Converge.metainfo.xml \
		packaging/install-desktop-entry.sh dist/converge/
	@echo "Built dist/converge/converge; add it to the application menu with dist/converge/install-desktop-entry.sh"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
