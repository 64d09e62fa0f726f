# InfoNCE, executable: two commands from a fresh clone.
#   make book   builds the website into _build/html (creates .venv on first use)
#   make test   runs everything: lint, library tests, nbval over every chapter (with one and
#               with two BLAS threads), strict build, and the offline browser test of the site
# Other targets: fuzz (property tests with fresh draws, many examples), lab (JupyterLab on the
# chapters; options via LAB_ARGS), kernel (register the book's kernel for your own Jupyter or
# VS Code), notebooks (re-execute and store outputs), seeds (every chapter with seeds 1-10),
# lock (refresh requirements/*.txt), bench,
# pdf (the book as one PDF), serve (the built site on http://127.0.0.1:8000, which the
# in-browser JupyterLite needs), clean.
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
# One arithmetic on every x86-64 machine with AVX2: chapter 8's training turns last-bit
# differences into different third decimals, and both OpenBLAS (by its kernel) and NumPy (by
# its AVX-512 loops) round differently on an AVX-512 processor. These pins give such a
# machine the arithmetic that produced the stored outputs; tools/notebooks.py applies the same
# (ARITHMETIC_PINS), and tests/test_notebooks.py checks that the two agree.
ifeq ($(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && uname -m),x86_64)
export OPENBLAS_CORETYPE        := Haswell
export NPY_DISABLE_CPU_FEATURES := X86_V4 AVX512_ICL AVX512_SPR
endif
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# Let Python cache the library's bytecode (__pycache__, ignored by git), as it does on a
# reader's machine: with PYTHONDONTWRITEBYTECODE set, every kernel compiles infonce_lib again
# (about 0.25 s per notebook on a slow machine).
unexport PYTHONDONTWRITEBYTECODE

BOOK_STAMP := $(VENV)/.installed-book
LAB_STAMP  := $(VENV)/.installed-lab
TEST_STAMP := $(VENV)/.installed-test
# The lock files: the exact versions that produced the stored outputs (see `make lock`).
# book.txt and lab.txt are the subsets of test.txt that `make book` and `make lab` need.
LOCK_DIR   := requirements
# The kernel the notebooks name (their kernelspec metadata; tools/notebooks.py writes it).
KERNEL_NAME    := infonce
KERNEL_DISPLAY := Python 3 (infonce)
LAB_ARGS   ?=
UV_VERSION := 0.13.8
NBVAL_OPTS := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
              -p no:cacheprovider

.PHONY: book test test-site-lane test-notebook-lane lint unit fuzz nbval prose nbval-2threads \
        build-strict site lab-test lab \
        kernel notebooks lock bench clean pdf pdf-test serve seeds

$(BIN)/pip:
	$(PYTHON) -m venv $(VENV)

# Each stamp installs one lock file exactly (no resolver, no newer versions), then the project
# itself without dependencies, checks that the result is consistent, and registers the
# notebooks' kernel inside .venv (so the venv's own Jupyter and tools/notebooks.py find it).
define install_lock
	$(BIN)/pip install --quiet --no-deps -r $(LOCK_DIR)/$(1).txt
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/pip check
	$(PY) -m ipykernel install --sys-prefix --name $(KERNEL_NAME) \
	    --display-name "$(KERNEL_DISPLAY)" >/dev/null
endef

$(BOOK_STAMP): $(LOCK_DIR)/book.txt pyproject.toml | $(BIN)/pip
	$(call install_lock,book)
	touch $@

$(LAB_STAMP): $(LOCK_DIR)/lab.txt pyproject.toml | $(BIN)/pip
	$(call install_lock,lab)
	touch $@ $(BOOK_STAMP)

$(TEST_STAMP): $(LOCK_DIR)/test.txt pyproject.toml | $(BIN)/pip
	$(call install_lock,test)
	touch $@ $(LAB_STAMP) $(BOOK_STAMP)

book: $(BOOK_STAMP)
	$(BIN)/jupyter-book build . --keep-going
	@echo "The book is at $(CURDIR)/_build/html/index.html"

# The checks run in two lanes, one per core (make -j2; the output of each step is printed
# when it ends): first the strict build beside the unit tests, then the PDF and the browser
# tests of the site beside nbval (two BLAS threads, then one), the prose check and
# JupyterLab. No step writes what the other lane reads.
test: $(TEST_STAMP)
	$(MAKE) lint
	$(MAKE) -j2 --output-sync=target build-strict unit
	$(MAKE) -j2 --output-sync=recurse test-site-lane test-notebook-lane

test-site-lane: $(TEST_STAMP)
	$(MAKE) site

test-notebook-lane: $(TEST_STAMP)
	$(MAKE) nbval-2threads nbval prose lab-test

lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

unit: $(TEST_STAMP)
	$(PY) -m pytest --doctest-modules infonce_lib tests --ignore=tests/site --ignore=tests/lab

# Exploration, not part of `make test`: the property and fuzz tests with fresh random draws
# and many more examples (Hypothesis profile "explore", see tests/conftest.py).
fuzz: $(TEST_STAMP)
	HYPOTHESIS_PROFILE=explore $(PY) -m pytest -q tests --ignore=tests/site --ignore=tests/lab

nbval: $(TEST_STAMP)
	$(PY) -m pytest $(NBVAL_OPTS) $$($(PY) tools/notebooks.py list)

# nbval compares code cells only; the numbers in the prose ({eval}`name`, stored in the
# markdown cells' metadata) are compared by re-executing each chapter (tools/notebooks.py).
prose: $(TEST_STAMP)
	$(PY) tools/notebooks.py verify $$($(PY) tools/notebooks.py list)

# The stored outputs must not depend on the BLAS thread count: compare with two threads
# too. In `make test` this runs first in its lane, while the other lane makes the PDF: when
# it ran after nbval, beside JupyterLite's two busy tabs on two cores, its BLAS threads spun
# for CPU (2026-12-03: 651 s, against 112 s for the one-thread run).
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

# Every chapter opened in JupyterLab (headless Chromium) opens unmodified and shows the same
# numbers in its prose as the built site, with boxes and math; chapter 2 also runs to the end
# (LAB_TEST_RUN=all: every chapter). A bare second Jupyter runs a chapter via `make kernel`.
lab-test: $(TEST_STAMP)
	$(PY) -m pytest tests/lab

# JupyterLab on chapters/ with the book's kernel. Options go through LAB_ARGS, e.g.
#   make lab LAB_ARGS="--no-browser --port 8899"       (as root in a container: --allow-root)
lab: $(LAB_STAMP)
	cd chapters && ../$(BIN)/jupyter lab $(LAB_ARGS)

# Register the book's kernel for your own Jupyter, VS Code or any other front end (user-wide,
# pointing at this clone's .venv). Undo with `jupyter kernelspec remove infonce`.
kernel: $(BOOK_STAMP)
	$(PY) -m ipykernel install --user --name $(KERNEL_NAME) --display-name "$(KERNEL_DISPLAY)"

# The book as one PDF: the single-page build printed by headless Chromium (no LaTeX), made a
# book by tools/book_pdf.py (.js, .css): solutions at each chapter's end, a contents with page
# numbers, bookmarks, links inside the PDF. See the README's "The book as a PDF".
pdf: $(TEST_STAMP)
	rm -rf _build/singlehtml
	$(BIN)/jupyter-book build . --builder singlehtml --keep-going
	$(PY) tools/book_pdf.py _build/singlehtml/book.html _build/pdf/book.pdf
	# Without a browser book_pdf.py prints nothing (and says so) outside CI: copy only a PDF.
	if [ -d _build/html ] && [ -f _build/pdf/book.pdf ]; then cp _build/pdf/book.pdf _build/html/book.pdf; fi

# The PDF's test alone (after `make pdf`).
pdf-test: $(TEST_STAMP)
	$(PY) -m pytest tests/site/test_pdf.py

# Serve the built site on 127.0.0.1 (JupyterLite does not run from file://).
PORT ?= 8000
serve:
	@test -f _build/html/index.html || { echo "no site: run 'make book' first"; exit 1; }
	@echo "Serving _build/html at http://127.0.0.1:$(PORT)/ (Ctrl-C stops)"
	$(PYTHON) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html


# Benchmarks (not timed tests): one table, JSON in _build/bench/. Installs the optional
# PyTorch peer (torch==2.13.0, a CPU build on this machine's disk) into .venv.
bench: $(TEST_STAMP)
	$(BIN)/pip install --quiet -e ".[bench]"
	$(PY) benchmarks/run.py

# Not part of `make test`: every chapter executed again with INFONCE_SEED = 1 to 10
# (tools/seeds.py, two at a time); it lists each check that fails and for which seeds, and
# fails if one fails for more than one of the ten. `make seeds CHAPTERS=chapters/04_...ipynb
# SEEDS=1-3` runs a part of it.
SEEDS    ?= 1-10
CHAPTERS ?= $$($(PY) tools/notebooks.py list)
seeds: $(TEST_STAMP)
	$(PY) tools/seeds.py --seeds $(SEEDS) $(CHAPTERS)

notebooks: $(TEST_STAMP)
	$(PY) tools/notebooks.py execute $$($(PY) tools/notebooks.py list)

# Refresh the lock files after editing the dependencies in pyproject.toml. Existing pins are
# kept where they still fit; `make lock LOCK_ARGS=--upgrade` moves everything to the newest
# allowed versions (then run `make notebooks` and `make test`: the outputs may change).
# Locks are universal (every platform) for Python >= 3.11.5.
LOCK_ARGS ?=
UV_COMPILE = $(BIN)/uv pip compile pyproject.toml --universal --python-version 3.11.5 \
             --annotation-style line --custom-compile-command "make lock" --quiet $(LOCK_ARGS)
lock: | $(BIN)/pip
	$(BIN)/pip install --quiet uv==$(UV_VERSION)
	$(UV_COMPILE) --extra book --extra lab --extra test -o $(LOCK_DIR)/test.txt
	$(UV_COMPILE) --extra book --extra lab -c $(LOCK_DIR)/test.txt -o $(LOCK_DIR)/lab.txt
	$(UV_COMPILE) --extra book -c $(LOCK_DIR)/test.txt -o $(LOCK_DIR)/book.txt

clean:
	rm -rf _build .pytest_cache .hypothesis .ruff_cache
