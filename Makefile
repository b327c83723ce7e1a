# Two entry points for a fresh clone: `make demo` and `make test` (see README).
# Each installs only what it needs: the demo the package itself (five small libraries),
# the tests the `dev` extra (test tools, ruff, mypy, and the spark and bench extras).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two workers: most tests wait on processes and sockets, so two overlap well even on two cores.
# A file's tests stay on one worker (--dist loadfile): its module fixtures start once, and a test
# may rely on what an earlier one in its file left (the Spark batch tests do).
TEST_WORKERS ?= 2
BASE := $(VENV)/.installed-base
DEV := $(VENV)/.installed-dev

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(BASE): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $(BASE)

$(DEV): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(DEV) $(BASE)

.PHONY: setup demo test lint unit prereqs bytecode
setup: $(DEV)

# Compiled modules (and the protocol's generated frame code) written ahead, even where the
# environment says PYTHONDONTWRITEBYTECODE: every `ferrymq` process, client and queue manager
# would otherwise compile all of ferrymq again at start (0.8-1 s; the tests start hundreds).
# Only changed files are compiled again.
bytecode: $(BASE)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m compileall -q src
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -c "import ferrymq.protocol.codec"

demo: $(BASE) bytecode
	$(BIN)/python -m ferrymq.demo

prereqs:
	@sh tools/prereqs.sh $(PY)

lint: prereqs $(DEV)
	$(BIN)/ruff check src tests bench tools examples
	$(BIN)/mypy

unit: prereqs $(DEV) bytecode
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile

test: lint unit
