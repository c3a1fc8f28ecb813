# Two entry points (see README "Quick start"): `make run` and `make test`.
# Each creates .venv and installs the project from pyproject.toml when needed.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[dev,providers,postgres,embeddings]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/hermes-memory serve --transport http

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

# lint: ruff; no citation outside docs/; the import-layer contract ([tool.importlinter] in
# pyproject.toml); mypy over src/ and tests/ (test files of the packages in [tool.mypy] exclude excepted).
# The CLI-commands-in-README check is a test (tests/cli/test_cli_reference.py).
# Design notes that were never in the repository: code cites docs/<page>.md §N instead (issue 18).
# tests/foundation/test_docs_citations.py runs the same check and also checks pages, sections and case ids.
OUTSIDE_DOCS := reference-behaviou?r|failure-cases-2|house-style\.md|splits\.md|landscape\.md|shared/(spec|cases)/|(^|[^/[:alnum:]_.-])(architecture|reference|providers|failure-cases|security|benchmarks|style)\.md|reference §

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	@if grep -rnIiE '$(OUTSIDE_DOCS)' src tests bench pyproject.toml --exclude=test_docs_citations.py; then \
	  echo "lint: the lines above cite design notes outside the repository; cite docs/<page>.md §N (docs/README.md)"; exit 1; fi
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV)
