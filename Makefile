# The two README commands (`make run`, `make test`) and their helpers. Everything installs into
# .venv/ at the repository root; a stamp keyed on pyproject.toml skips re-installing.
VENV   := .venv
PYTHON := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)
# p4runtime-shell, the operator's interactive shell (`sliceportal shell SWITCH`), lives in its
# own environment: it pins protobuf<3.21 and p4runtime==1.4.1, which must never reach .venv.
# Its stamp is keyed on the pin below, so changing the pin reinstalls it.
SHELL_VENV  := .venv-shell
SHELL_PIN   := p4runtime-shell==0.0.6
SHELL_STAMP := $(SHELL_VENV)/.installed-$(shell echo '$(SHELL_PIN)' | sha1sum | cut -c1-12)

UI_SOURCES := $(shell find frontend/src frontend/index.html frontend/package-lock.json -type f 2>/dev/null)

.PHONY: setup run test bench lint mutation

setup: $(STAMP) $(SHELL_STAMP)

$(STAMP): pyproject.toml
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-* && touch $@

$(SHELL_STAMP):
	test -x $(SHELL_VENV)/bin/python || python3 -m venv $(SHELL_VENV)
	$(SHELL_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SHELL_VENV)/bin/python -m pip install --quiet '$(SHELL_PIN)'
	rm -f $(SHELL_VENV)/.installed-* && touch $@

# The API serves the built UI at /.
frontend/dist/index.html: $(UI_SOURCES)
	scripts/setup-frontend --no-browser
	cd frontend && npm run build --silent

run: setup frontend/dist/index.html
	$(VENV)/bin/sliceportal serve

test: setup
	scripts/run-tests

bench: setup
	scripts/run-benchmarks

lint: setup
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy

# Mutation testing (mutmut) of the data-plane arithmetic and the domain math against the shared
# test vectors and the domain tests; prints the surviving mutants and the score. Not part of
# `make test` (about 6 minutes on 2 cores). scripts/run-mutation says how it works and why
# kernel.py (numba-compiled) is left out.
mutation: setup
	scripts/run-mutation
