# Dagger Workbench — every target sets up what it needs first (idempotent).
#   make demo    set up, then run the demo dagger on the embedded default
#   make test    set up, then run the whole test suite
#   make check   ruff (lint + format check) and mypy on workbench/
#   make kernel  install the "Dagger Workbench (PySpark)" Jupyter kernel into .venv and
#                enable the job service's Jupyter server extension there
#   make lab     set up, install the kernel, then start JupyterLab on notebooks/
#                (LAB_ARGS="--no-browser --port 8888 ..." passes options to jupyter lab)

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
export WORKBENCH_HOME ?= $(CURDIR)/.workbench

.PHONY: setup demo test check clean kernel lab
LAB_ARGS ?=

setup: $(STAMP) system
	$(BIN)/workbench setup

$(STAMP): pyproject.toml
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

test: setup test-system
	@$(BIN)/pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

kernel: $(STAMP)
	$(BIN)/workbench kernel install
	install -D -m 644 jupyter-config/jupyter_server_config.d/dagger_workbench.json \
		$(VENV)/etc/jupyter/jupyter_server_config.d/dagger_workbench.json

lab: setup kernel
	$(BIN)/jupyter lab --notebook-dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

check: $(STAMP)
	$(BIN)/ruff check workbench tests benchmarks
	$(BIN)/ruff format --check workbench tests benchmarks
	$(BIN)/mypy workbench

clean:
	rm -rf $(VENV) .workbench .pytest_cache
