# Everything runs inside .venv, created on first use: `make example`, `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: example test lint bench clean

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(INSTALLED)

example: $(INSTALLED)
	$(BIN)/langtree check examples/

test: $(INSTALLED)
	$(BIN)/python -m pytest -q

lint: $(INSTALLED)
	$(BIN)/ruff check langtree tests benchmarks examples
	$(BIN)/ruff format --check langtree tests benchmarks examples
	$(BIN)/mypy

bench: $(INSTALLED)
	$(BIN)/python benchmarks/parse_benchmark.py
	$(BIN)/python benchmarks/structure_benchmark.py
	$(BIN)/python benchmarks/prompts_benchmark.py

clean:
	rm -rf $(VENV)
