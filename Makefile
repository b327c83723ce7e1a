# Two entry points for a fresh clone: `make demo` and `make test` (see README).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

.PHONY: setup demo test lint unit
setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m ferrymq.demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench tools examples
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

test: lint unit
