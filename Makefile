# dpnotes: two entry points, each doing its whole set-up from nothing and idempotent.
#   make book   set up .venv, execute every notebook with papermill, build _build/html
#   make test   set up .venv, run pytest (unit, property, statistical, nbval)
# Helpers: make setup | nbval-refresh | mathjax | clean
# Variables: PROFILE (smoke|quick|paper, default quick), DEVICE (default cpu), YES (1: start runs
#   estimated over an hour without asking; otherwise a chapter with such runs missing stops and says so),
#   PYTHON (interpreter that creates .venv), TORCH (cpu, default; cuda: PyPI's CUDA build of the
#   pinned torch version; cuXYZ, e.g. cu126: that CUDA build from download.pytorch.org; remembered
#   in .venv/.torch, so later targets keep it), TORCH_PIP_ARGS (e.g. --index-url of CPU wheels),
#   PYTEST_ARGS (extra pytest arguments), OFFLINE (1, default: MathJax bundled, the build fails
#   without npm; 0: MathJax from a CDN), BOOK_JOBS (chapters executed at once, default 2).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PROFILE ?= quick
DEVICE ?= cpu
YES ?=
TORCH_PIP_ARGS ?=
PYTEST_ARGS ?=
OFFLINE ?= 1
BOOK_JOBS ?= 2
NPM ?= npm
PAPERS := dplis dpis gdp labeldp sadpsgd
EXECUTED := book/executed
MATHJAX_VERSION := 3.2.2
# build/ is ignored by git; build/mathjax/mathjax/ is copied to _build/html/mathjax/ (html_extra_path).
MATHJAX_JS := build/mathjax/mathjax/tex-chtml.js
# torch's build: cpu (the pin of constraints.txt, torch==X+cpu) or a CUDA build of the same version X.
TORCH ?= $(shell cat $(VENV)/.torch 2>/dev/null || echo cpu)
TORCH_VERSION := $(shell sed -n 's/^torch==\([^+]*\).*/\1/p' constraints.txt)
ifeq ($(TORCH),cpu)
TORCH_REQ := $$(grep '^torch==' constraints.txt)
CONSTRAINTS := constraints.txt
else ifeq ($(TORCH),cuda)
TORCH_REQ := torch==$(TORCH_VERSION)
CONSTRAINTS := $(VENV)/constraints-$(TORCH).txt
else ifneq ($(filter-out cu,$(filter cu%,$(TORCH))),)
TORCH_REQ := torch==$(TORCH_VERSION)+$(TORCH)
TORCH_INDEX := --extra-index-url https://download.pytorch.org/whl/$(TORCH)
CONSTRAINTS := $(VENV)/constraints-$(TORCH).txt
else
$(error TORCH must be cpu, cuda or a CUDA variant of download.pytorch.org such as cu126, got '$(TORCH)')
endif
# The set-up is keyed on the content of the files that define the environment (and on TORCH).
STAMP := $(VENV)/.setup-$(shell { cat pyproject.toml constraints.txt; $(if $(filter-out cpu,$(TORCH)),echo $(TORCH);) } \
  | sha256sum | cut -c1-16)

# Kernels come from this environment whatever else the machine has installed.
export JUPYTER_PATH := $(CURDIR)/$(VENV)/share/jupyter
export JUPYTER_PLATFORM_DIRS := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: help setup book notebooks test nbval-refresh mathjax clean

help:
	@echo "make book   # set up .venv, execute the notebooks (PROFILE=$(PROFILE)), build _build/html"
	@echo "make test   # set up .venv, run the test suite including nbval"
	@echo "make setup TORCH=cuda   # the set-up alone, with a CUDA build of the pinned torch (default TORCH=$(TORCH))"

setup: $(STAMP)

# torch first, from constraints.txt: otherwise pip resolves torch for its dependants
# and may pull a multi-GB CUDA build. With TORCH=cuda or cuXYZ, the constraints are
# constraints.txt with torch's pin swapped for that build of the same version, and a CPU build
# already installed is removed first (torch==X would accept X+cpu).
$(STAMP):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
ifneq ($(TORCH),cpu)
	sed 's/^torch==.*/$(TORCH_REQ)/' constraints.txt > $(CONSTRAINTS)
	$(BIN)/python -c 'import sys, torch; sys.exit(torch.version.cuda is None)' 2>/dev/null \
	  || $(BIN)/python -m pip uninstall -y torch
endif
	$(BIN)/python -m pip install $(TORCH_PIP_ARGS) $(TORCH_INDEX) -c $(CONSTRAINTS) "$(TORCH_REQ)"
	$(BIN)/python -m pip install -c $(CONSTRAINTS) -e ".[dev]"
ifneq ($(TORCH),cpu)
	$(BIN)/python -c 'import sys, torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, \
	  "GPUs visible:", torch.cuda.device_count()); sys.exit(torch.version.cuda is None and "not a CUDA build")'
endif
	echo $(TORCH) > $(VENV)/.torch
	rm -f $(VENV)/.setup-*
	touch $@

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pytest -n 2 --dist loadfile --nbval-lax --nbval-current-env --durations=15 $(PYTEST_ARGS)

# Every notebook, executed at PROFILE into the ignored book/executed/ by book/execute.py, which
# skips a notebook whose inputs (the notebook, the package source, the records it reads) are
# unchanged since its last execution; the runner skips runs whose records already exist.
notebooks: $(STAMP)
	$(BIN)/python book/execute.py $(EXECUTED) $(foreach p,$(PAPERS),notebooks/$(p).ipynb) \
	  notebooks/audit.ipynb notebooks/compare.ipynb book/scoreboard.ipynb -p profile $(PROFILE) -p device $(DEVICE) \
	  $(if $(filter 1,$(YES)),-p yes True) --jobs $(BOOK_JOBS)

# Warnings are errors (-W). Sphinx rebuilds only the pages whose sources changed (`make clean`
# for a build from nothing). The book is offline: MathJax is bundled (`make mathjax`) and no page
# may load a script or a style from the web. OFFLINE=0 is the explicit opt-out: MathJax from a CDN.
book: notebooks $(if $(filter 0,$(OFFLINE)),,mathjax)
ifeq ($(OFFLINE),0)
	@echo "OFFLINE=0: the book loads MathJax from a CDN" >&2
	mkdir -p build
	grep -v -e '^    mathjax_path:' -e '^    html_extra_path:' _config.yml > build/_config.cdn.yml
	$(BIN)/jupyter-book build . -W --keep-going --config build/_config.cdn.yml
else
	$(BIN)/jupyter-book build . -W --keep-going
	if grep -rlE '<(script[^>]* src|link[^>]* href)="(https?:)?//' --include='*.html' _build/html; then \
	  echo "error: the pages above load scripts or styles from the web" >&2; exit 1; \
	fi
endif
	test -f _build/html/index.html
	@echo "Book: $(CURDIR)/_build/html/index.html"

# MathJax from npm, bundled with the book. Without npm (or with npm failing) this fails: the
# book never falls back to a CDN unless asked to (make book OFFLINE=0).
mathjax: $(MATHJAX_JS)

$(MATHJAX_JS):
	@command -v $(NPM) >/dev/null || { echo "error: npm ($(NPM)) is needed to bundle MathJax for the offline book" \
	  "(apt-get install npm); or build with MathJax from a CDN: make book OFFLINE=0" >&2; exit 1; }
	mkdir -p build
	$(NPM) install --prefix build/npm --no-save --no-audit --no-fund --loglevel=error mathjax@$(MATHJAX_VERSION)
	rm -rf build/mathjax && mkdir -p build/mathjax
	cp -r build/npm/node_modules/mathjax/es5 build/mathjax/mathjax

# Reference notebooks for nbval: each notebook executed at the smoke profile, as nbval
# will run it (cwd tests/notebooks, an empty results store).
nbval-refresh: $(STAMP)
	mkdir -p tests/notebooks
	for paper in $(PAPERS) audit compare; do \
	  store=$$(mktemp -d); \
	  DPNOTES_RESULTS=$$store $(BIN)/papermill --no-progress-bar --cwd tests/notebooks \
	    -p profile smoke notebooks/$$paper.ipynb tests/notebooks/$$paper.ipynb; \
	  rm -rf $$store; \
	done
	store=$$(mktemp -d); \
	DPNOTES_RESULTS=$$store $(BIN)/papermill --no-progress-bar --cwd tests/notebooks \
	  book/scoreboard.ipynb tests/notebooks/scoreboard.ipynb; \
	rm -rf $$store

clean:
	rm -rf _build $(EXECUTED) build
