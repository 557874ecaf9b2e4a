# Two commands for a newcomer: `make run` and `make test`. Both set up .venv first: `run`
# with only what running needs, `test` with the developer tools as well.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# The browser tests drive Debian's Chromium; Playwright's package must never fetch its own.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = 1

.PHONY: run test lint typecheck pytest bench clean

$(BIN)/python:
	@echo "make: setting up $(VENV) (the first time takes a minute or two)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --quiet --upgrade pip

# What `strikebot run` needs, and nothing more.
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	@echo "make: installing strikebot and what it runs on into $(VENV)"
	@$(BIN)/python -m pip install --quiet --quiet -e .
	@touch $@

# The developer tools too (pytest, ruff, mypy, import-linter, schemathesis, ...).
$(DEV_STAMP): pyproject.toml | $(BIN)/python
	@echo "make: installing strikebot and the developer tools into $(VENV)"
	@$(BIN)/python -m pip install --quiet --quiet -e '.[dev]'
	@touch $@ $(RUN_STAMP)

run: $(RUN_STAMP)
	@$(BIN)/strikebot run

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

pytest: $(DEV_STAMP)
	@# Cached bytecode for the strikebot processes the tests start (even where
	@# PYTHONDONTWRITEBYTECODE is set, as on some CI machines); stale files are never used.
	$(BIN)/python -m compileall -q bot adapters tests bench >/dev/null
	@# Test files spread over the machine's cores (pytest-xdist; at most 4 processes, each
	@# with its own PostgreSQL databases); a file's tests stay together in one process.
	$(BIN)/pytest -q -n auto --maxprocesses 4 --dist loadfile

test: lint typecheck pytest

bench: $(DEV_STAMP)
	$(BIN)/python -m bench.fanout

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
