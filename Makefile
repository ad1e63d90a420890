# Set-up and entry points. Override the torch and PyG releases with, e.g.,
#   make test TORCH_SPEC='torch==2.14.1' PLAIN_TORCH_SPEC='torch==2.8.0'
# CI runs the suite at both ends of the supported range (.ci/run).
PYTHON ?= python3
VENV ?= .venv
# The plain install most users have: no torch-sparse or torch-scatter.
PLAIN_VENV ?= .venv-plain
TORCH_SPEC ?= torch==2.13.0
PYG_SPEC ?= torch_geometric==2.8.1
PLAIN_TORCH_SPEC ?= $(TORCH_SPEC)
PLAIN_PYG_SPEC ?= $(PYG_SPEC)
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: demo test wheels bench clean browser

# The core: a virtual environment, torch, the package and its examples.
$(VENV)/.core: pyproject.toml lab/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip setuptools wheel
	$(PIP) install --quiet "$(TORCH_SPEC)" "$(PYG_SPEC)"
	$(PIP) install --quiet -e ".[examples]" -e lab
	touch $@

# The test set-up adds the optional accelerators, built against the torch
# above (PyPI only has source releases: 9 minutes measured on 2 quiet
# cores, then the wheels kept per torch release make it instant), and the
# test tools.
$(VENV)/.test: $(VENV)/.core
	bash scripts/install_sparse.sh $(PY)
	$(PIP) install --quiet -e ".[test,sparse,examples,docs]" -e lab
	touch $@

# The second test environment: the package as a plain 'pip install' gives
# it (no accelerators), with the test tools.
$(PLAIN_VENV)/.test: pyproject.toml lab/pyproject.toml
	$(PYTHON) -m venv $(PLAIN_VENV)
	$(PLAIN_VENV)/bin/python -m pip install --quiet --upgrade pip setuptools wheel
	$(PLAIN_VENV)/bin/python -m pip install --quiet \
		"$(PLAIN_TORCH_SPEC)" "$(PLAIN_PYG_SPEC)"
	$(PLAIN_VENV)/bin/python -m pip install --quiet \
		-e ".[test,examples,docs]" -e lab
	touch $@

demo: $(VENV)/.core  ## the main job on the built-in data: GCN vs. BeMap(sym)
	$(VENV)/bin/pyg-bemap compare --dataset german --method sym --seeds 10

# The docs' layout check measures the rendered pages in Debian's Chromium:
# installed here where apt-get can (as root); elsewhere the check says that
# it did not run (CI sets PYG_BEMAP_REQUIRE_BROWSER=1: then it fails).
APT_BROWSER := DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	chromium chromium-driver >/dev/null
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null \
	|| { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	     && { $(APT_BROWSER) || { apt-get update -q && $(APT_BROWSER); }; }; } \
	|| echo 'note: no Chromium here: the docs layout check will not run'

test: $(VENV)/.test $(PLAIN_VENV)/.test browser  ## lint, types, docs, the tests in both installs, a summary
	PYG_BEMAP_REQUIRE_SPARSE=1 $(PY) scripts/check.py \
		--plain-python $(PLAIN_VENV)/bin/python

wheels: $(VENV)/.test  ## build, check, install and run both distributions
	$(PY) scripts/check_wheels.py --torch "$(TORCH_SPEC)"

bench: $(VENV)/.core
	$(PY) benchmarks/bench_core.py

clean:
	rm -rf $(VENV) $(PLAIN_VENV) build *.egg-info src/*.egg-info docs/_build
