# Dagger Workbench — every target sets up what it needs first (idempotent).
#   make demo    set up, then run the demo dagger on the embedded default
#   make test    set up, then run the whole test suite (every tier)
#   make test-fast  the unit tier only (pytest -m unit: no broker, JVM, browser or kernel) for
#                the inner loop, in a few minutes; needs only the venv (tiers: tests/tiers.py)
#   make check   import-linter (layers, no cycle), ruff (lint + format check), mypy on workbench/,
#                ESLint + prettier on the extension
#   make kernel  install the "Dagger Workbench (PySpark)" Jupyter kernel into .venv (pip
#                install enables the job service's Jupyter server extension there)
#   make labextension  build the JupyterLab extension (extensions/dagger-workbench) into
#                workbench/labextension and point .venv's copy at it
#   make lab     set up, install the kernel and the lab extension, then start JupyterLab on
#                notebooks/ (LAB_DIR=folder for another; LAB_ARGS="--no-browser --port 8888 ..."
#                passes options to it, a --ServerApp.root_dir or --notebook-dir there wins)

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
export WORKBENCH_HOME ?= $(CURDIR)/.workbench

# pytest workers (pytest-xdist; whole test files per worker, each with its own servers)
TEST_WORKERS ?= 3
FAST_WORKERS ?= 2

LABEXT := $(VENV)/share/jupyter/labextensions/@dagger-workbench/lab

.PHONY: setup demo test test-fast check clean kernel lab labextension
LAB_ARGS ?=
LAB_DIR ?= notebooks
# the lab's folder: LAB_DIR, unless LAB_ARGS names one (Jupyter refuses two)
LAB_ROOT = $(if $(findstring root_dir,$(LAB_ARGS))$(findstring notebook-dir,$(LAB_ARGS))$(findstring notebook_dir,$(LAB_ARGS)),,--ServerApp.root_dir=$(LAB_DIR))

setup: $(STAMP) system
	$(BIN)/workbench setup

# Node.js (from `system`) first: pip's build hook compiles the lab extension
$(STAMP): pyproject.toml | system
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	@rm -f $(VENV)/.installed-* && touch $@

.PHONY: system test-system
system:
	@bash scripts/system-deps.sh

test-system:
	@bash scripts/system-deps.sh test

demo: setup
	$(BIN)/workbench demo

test: setup labextension test-system
	$(BIN)/lint-imports
	cd extensions/dagger-workbench && PATH="$(abspath $(BIN)):$$PATH" jlpm test
	@$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

# Not `test-fast: $(STAMP)`: the stamp's order-only `system` would install a JDK and Maven,
# which unit tests never use. A venv set up before is enough; otherwise it is set up now.
test-fast:
	@test -f $(STAMP) || $(MAKE) --no-print-directory $(STAMP)
	@$(BIN)/pytest -m unit -n $(FAST_WORKERS) --dist loadfile; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

kernel: $(STAMP)
	$(BIN)/workbench kernel install

labextension: $(STAMP)
	cd extensions/dagger-workbench && PATH="$(abspath $(BIN)):$$PATH" jlpm install
	cd extensions/dagger-workbench && PATH="$(abspath $(BIN)):$$PATH" jlpm build:prod
	rm -rf $(LABEXT) && mkdir -p $(dir $(LABEXT)) && ln -s $(CURDIR)/workbench/labextension $(LABEXT)

lab: setup kernel labextension
	$(BIN)/jupyter lab $(LAB_ROOT) $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

check: $(STAMP) labextension
	$(BIN)/lint-imports
	$(BIN)/ruff check workbench tests benchmarks
	$(BIN)/ruff format --check workbench tests benchmarks
	$(BIN)/mypy workbench
	cd extensions/dagger-workbench && PATH="$(abspath $(BIN)):$$PATH" jlpm lint

clean:
	rm -rf $(VENV) .workbench .pytest_cache workbench/labextension extensions/*/node_modules
