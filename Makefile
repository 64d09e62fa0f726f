# InfoNCE, executable: two commands from a fresh clone.
#   make book   builds the website into _build/html (creates .venv on first use)
#   make test   runs everything: lint, library tests, nbval over every chapter (with one and
#               with two BLAS threads), strict build, and the offline browser test of the site
# Other targets: fuzz (property tests with fresh draws, many examples), lab, notebooks
# (re-execute and store outputs), bench, pdf (the book as one PDF), serve (the built site on
# http://127.0.0.1:8000, which the in-browser JupyterLite needs), clean.
# `make book PYODIDE=local` bundles Pyodide into the site (checked against its official lock)
# so that the chapters run in the browser with no internet; by default Pyodide comes from the web.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python

# One BLAS thread everywhere: stored notebook outputs and nbval must see the same digits.
export OPENBLAS_NUM_THREADS := 1
export OMP_NUM_THREADS      := 1
export MKL_NUM_THREADS      := 1
export PYTHONHASHSEED       := 0
export PYDEVD_DISABLE_FILE_VALIDATION := 1

BOOK_STAMP := $(VENV)/.installed-book
TEST_STAMP := $(VENV)/.installed-test
NBVAL_OPTS := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
              -p no:cacheprovider

.PHONY: book test lint unit fuzz nbval prose nbval-2threads build-strict site lab notebooks bench clean \
        pdf pdf-test serve

$(BIN)/pip:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(BOOK_STAMP): pyproject.toml | $(BIN)/pip
	$(BIN)/pip install --quiet -e ".[book]"
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/pip
	$(BIN)/pip install --quiet -e ".[book,test]"
	touch $@ $(BOOK_STAMP)

book: $(BOOK_STAMP)
	$(BIN)/jupyter-book build . --keep-going
	@echo "The book is at $(CURDIR)/_build/html/index.html"

test: $(TEST_STAMP)
	$(MAKE) lint unit nbval prose nbval-2threads build-strict site

lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

unit: $(TEST_STAMP)
	$(PY) -m pytest --doctest-modules infonce_lib tests --ignore=tests/site

# Exploration, not part of `make test`: the property and fuzz tests with fresh random draws
# and many more examples (Hypothesis profile "explore", see tests/conftest.py).
fuzz: $(TEST_STAMP)
	HYPOTHESIS_PROFILE=explore $(PY) -m pytest -q tests --ignore=tests/site

nbval: $(TEST_STAMP)
	$(PY) -m pytest $(NBVAL_OPTS) $$($(PY) tools/notebooks.py list)

# nbval compares code cells only; the numbers in the prose ({eval}`name`, stored in the
# markdown cells' metadata) are compared by re-executing each chapter (tools/notebooks.py).
prose: $(TEST_STAMP)
	$(PY) tools/notebooks.py verify $$($(PY) tools/notebooks.py list)

# The stored outputs must not depend on the BLAS thread count: compare again with two
# threads (this is also the second nbval run in a row).
nbval-2threads: $(TEST_STAMP)
	OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 \
	    $(PY) -m pytest $(NBVAL_OPTS) $$($(PY) tools/notebooks.py list)

build-strict: $(TEST_STAMP)
	rm -rf _build/html _build/.doctrees _build/jupyter_execute
	$(BIN)/jupyter-book build . -n -W --keep-going

# The browser test runs every chapter in JupyterLite with the network cut, so the strict
# build bundles Pyodide (see _ext/lite.py and tools/pyodide_bundle.py).
build-strict: export PYODIDE = local

# Browser tests: the site's pages, every chapter in JupyterLite, and the PDF (made first).
site: $(TEST_STAMP)
	$(MAKE) pdf
	$(PY) -m pytest tests/site

# The book as one PDF: the single-page build printed by headless Chromium (no LaTeX).
pdf: $(TEST_STAMP)
	rm -rf _build/singlehtml
	$(BIN)/jupyter-book build . --builder singlehtml --keep-going
	$(PY) tools/book_pdf.py _build/singlehtml/book.html _build/pdf/book.pdf
	if [ -d _build/html ]; then cp _build/pdf/book.pdf _build/html/book.pdf; fi

# The PDF's test alone (after `make pdf`).
pdf-test: $(TEST_STAMP)
	$(PY) -m pytest tests/site/test_pdf.py

# Serve the built site on 127.0.0.1 (JupyterLite does not run from file://).
PORT ?= 8000
serve:
	@test -f _build/html/index.html || { echo "no site: run 'make book' first"; exit 1; }
	@echo "Serving _build/html at http://127.0.0.1:$(PORT)/ (Ctrl-C stops)"
	$(PYTHON) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

lab: $(TEST_STAMP)
	$(BIN)/pip install --quiet -e ".[lab]"
	cd chapters && ../$(BIN)/jupyter lab

# Benchmarks (not timed tests): one table, JSON in _build/bench/. Installs the optional
# PyTorch peer (torch==2.13.0, a CPU build on this machine's disk) into .venv.
bench: $(TEST_STAMP)
	$(BIN)/pip install --quiet -e ".[bench]"
	$(PY) benchmarks/run.py

notebooks: $(TEST_STAMP)
	$(PY) tools/notebooks.py execute $$($(PY) tools/notebooks.py list)

clean:
	rm -rf _build .pytest_cache .hypothesis .ruff_cache
