# Two commands for a newcomer: `make run` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/strikebot run

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	@# Cached bytecode for the strikebot processes the tests start (even where
	@# PYTHONDONTWRITEBYTECODE is set, as on some CI machines); stale files are never used.
	$(BIN)/python -m compileall -q bot adapters tests bench >/dev/null
	@# Test files spread over the machine's cores (pytest-xdist; at most 4 processes, each
	@# with its own PostgreSQL databases); a file's tests stay together in one process.
	$(BIN)/pytest -q -n auto --maxprocesses 4 --dist loadfile

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python -m bench.fanout

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
