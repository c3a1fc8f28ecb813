# Two entry points (see README "Quick start"): `make run` and `make test`.
# Each creates .venv and installs the project from pyproject.toml when needed.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[dev,providers]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/hermes-memory serve --transport http

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench

clean:
	rm -rf $(VENV)
