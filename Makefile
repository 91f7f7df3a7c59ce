# Two commands on a fresh machine with Python 3.11 and make:  make demo  /  make test
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed-test

.PHONY: demo test lint docs bench clean distclean chromium wheel kernel-checks

KERNELS := $(wildcard harness/*/*.pyx harness/*/*.pxd harness/*/*.h)

# the package and its run-time dependencies, installed editable with its compiled kernels (rebuilt when a kernel's
# source changes): all the demo needs
$(RUN_STAMP): pyproject.toml setup.py $(KERNELS)
	@echo "harness: creating $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "harness: installing harness and its dependencies (numpy, pandas, pyarrow, scipy, mlflow, ...) and compiling its kernels (about 1.5 minutes on 2 cores)"
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUN_STAMP)
	@echo "harness: installed; run it as $(BIN)/harness (or: source $(BIN)/activate)"

# the test extra on top (pytest, the linters, the peers, dask, playwright): its requirements only, so the kernels
# are not built twice
$(STAMP): $(RUN_STAMP) pyproject.toml
	$(BIN)/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['test']))" > $(VENV)/test-requirements.txt
	$(BIN)/python -m pip install --quiet -r $(VENV)/test-requirements.txt
	touch $(STAMP)

demo: $(RUN_STAMP)
	@echo "harness: generating the bundled data and running configs/demo.yaml (about 30 s)"
	$(BIN)/python -m harness.demo

lint: $(STAMP)
	$(BIN)/ruff check harness tests benchmarks
	$(BIN)/ruff format --check harness tests benchmarks setup.py
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m harness.config.reference --check
	$(BIN)/python -m harness.measures.reference --check

# The report is tested in Debian's chromium (a real browser, never a download).
chromium:
	@command -v chromium >/dev/null 2>&1 || { echo "installing Debian's chromium for the report tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# the documentation site (docs/ -> site/, opened from disk), warnings as errors: the docs extra only
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(RUN_STAMP) pyproject.toml
	$(BIN)/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['docs']))" > $(VENV)/docs-requirements.txt
	$(BIN)/python -m pip install --quiet -r $(VENV)/docs-requirements.txt
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# every tier (plain pytest is the fast one: tests/tiers.py), the slowest tests listed at the end
test: lint docs chromium kernel-checks
	$(BIN)/pytest -q -m "" --durations=15

# The kernels run without bounds checks and check their arguments at their boundary. Here they are built again with
# Cython's checks on every access (HARNESS_KERNEL_CHECKS=1, setup.py), from a copy of the sources (never beside the
# ordinary build's generated C), and the kernel and reader tests run on that build: an access past an array fails.
CHECKED := $(VENV)/checked
CHECKED_TESTS := tests/kernels tests/stats/test_exact.py tests/data/test_align.py tests/data/test_align_engines.py \
	tests/data/test_plain_reader.py tests/data/test_positions.py

$(CHECKED)/.built: $(STAMP) $(KERNELS) setup.py pyproject.toml
	rm -rf $(CHECKED) && mkdir -p $(CHECKED)/src $(CHECKED)/run
	cp -r harness setup.py pyproject.toml MANIFEST.in README.md $(CHECKED)/src/
	find $(CHECKED)/src \( -name '*.so' -o -name '*.c' -o -name __pycache__ \) -prune -exec rm -rf {} +
	cd $(CHECKED)/src && HARNESS_KERNEL_CHECKS=1 ../../bin/python -m pip wheel --quiet --no-deps --wheel-dir ../wheel .
	cd $(CHECKED)/run && ../../bin/python -m zipfile -e ../wheel/*.whl . && cp -r ../../../tests ../../../configs ../../../pyproject.toml .
	touch $@

kernel-checks: $(CHECKED)/.built
	cd $(CHECKED)/run && HARNESS_KERNEL_CHECKS=1 PYTHONPATH=. ../../bin/pytest -q -p no:cacheprovider -m "" $(CHECKED_TESTS)

# a wheel with the compiled kernels for this machine (cibuildwheel builds the others: pyproject.toml)
wheel: $(STAMP)
	$(BIN)/python -m pip wheel --quiet --no-deps --wheel-dir dist .

# Microsoft Recommenders' own evaluation code, with its pins (numpy<2, pandas<3), beside harness's virtualenv: the peer
# of the beyond-accuracy benchmark (its other dependencies are for its models, not its metrics)
PEERS := $(VENV)/peers
$(PEERS)/.installed:
	$(PYTHON) -m venv $(PEERS)
	$(PEERS)/bin/python -m pip install --quiet 'numpy<2' 'pandas<3' scikit-learn
	$(PEERS)/bin/python -m pip install --quiet --no-deps 'recommenders==1.2.0'
	touch $@

# LensKit's list metrics: lenskit without its torch requirement (they never call it; benchmarks/peers/torch_stub stands
# in), with the rest of its requirements
$(PEERS)-lenskit/.installed:
	$(PYTHON) -m venv $(PEERS)-lenskit
	$(PEERS)-lenskit/bin/python -m pip install --quiet 'numpy>=2' 'pandas~=2.0' 'pyarrow>=20,!=21.*' scipy more-itertools \
	  structlog threadpoolctl 'pydantic~=2.7' 'pydantic-settings~=2.8' rich 'humanize~=4.2' 'prettytable~=3.14' \
	  typing-extensions 'click~=8.1' 'requests~=2.28' packaging psutil py-cpuinfo pyzmq lazy-loader xopen deepmerge \
	  'setuptools>=80'
	$(PEERS)-lenskit/bin/python -m pip install --quiet --no-deps 'lenskit==2025.8.1'
	touch $@

# RecBole 1.2.1's metric classes, from PyPI without its requirements: torch and its models, which the metrics never
# call (benchmarks/peers/beyond_recbole.py loads them without RecBole's package __init__ modules)
$(PEERS)-recbole/.installed:
	$(PYTHON) -m venv $(PEERS)-recbole
	$(PEERS)-recbole/bin/python -m pip install --quiet numpy pandas scipy scikit-learn
	$(PEERS)-recbole/bin/python -m pip install --quiet --no-deps 'recbole==1.2.1'
	touch $@

# pyxclib's evaluation code, not on PyPI: built from a checkout of kunaldahiya/pyxclib (PYXCLIB_SRC=DIR; the golden
# case's values are from commit 5d130862df91a06d03b296ad264c89b037c33db7) with its own setup.py, without the
# requirements of its classifiers and embeddings (nmslib, fasttext), which its metrics never import. Elliot's metrics
# run from a checkout too (ELLIOT_SRC=DIR): benchmarks/peers/fairness_elliot.py. Without one, make bench skips that
# peer's rows with a line saying so.
$(PEERS)-pyxclib/.installed:
	$(PYTHON) -m venv $(PEERS)-pyxclib
	$(PEERS)-pyxclib/bin/python -m pip install --quiet numpy scipy scikit-learn pandas numba six cython setuptools wheel
	rm -rf $(PEERS)-pyxclib/src && mkdir -p $(PEERS)-pyxclib/src
	cp -r "$(PYXCLIB_SRC)/." $(PEERS)-pyxclib/src && rm -rf $(PEERS)-pyxclib/src/.git  # built there: the checkout stays clean
	$(PEERS)-pyxclib/bin/python -m pip install --quiet --no-deps --no-build-isolation $(PEERS)-pyxclib/src
	touch $@

bench: $(STAMP) $(PEERS)/.installed $(PEERS)-lenskit/.installed $(PEERS)-recbole/.installed $(if $(PYXCLIB_SRC),$(PEERS)-pyxclib/.installed)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)
	$(BIN)/python benchmarks/csv_bench.py
	$(BIN)/python benchmarks/stats_bench.py --ranx
	$(BIN)/python benchmarks/betting_width.py
	$(BIN)/python benchmarks/compare_memory.py
	$(BIN)/python benchmarks/explain_bench.py
	$(BIN)/python benchmarks/pipeline_bench.py --whole
	$(BIN)/python benchmarks/pipeline_bench.py --whole --scenario ml100k
	$(BIN)/python benchmarks/record_bench.py
	$(BIN)/python benchmarks/beyond_bench.py
	$(BIN)/python benchmarks/beyond_bench.py --fairness
	$(BIN)/python benchmarks/beyond_peers.py
	$(BIN)/python benchmarks/judge_bench.py
	$(BIN)/python benchmarks/dask_bench.py

# clean keeps reports/ and the generated runs; distclean removes those too
clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache benchmarks/data site build dist harness/*/*.so harness/*/*.c

distclean: clean
	rm -rf runs/demo runs/trec-demo .test-output .hypothesis
	find reports -mindepth 1 ! -name .gitkeep -exec rm -rf {} +
