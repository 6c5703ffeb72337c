# The two set-up commands of the README.  Both create .venv on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
EXAMPLE ?= examples/gemm_loop.s

.PHONY: demo test venv venv-test bench clean

$(BIN)/stinkywait: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	@# editable: tests and `make demo` run the working tree; pyproject.toml's package-dir makes
	@# it a plain path .pth (no import hook to load at every interpreter start)
	$(BIN)/pip install -q -e .
	@# byte-compile now: start-up matters for a CLI run per keystroke-save, and some
	@# environments set PYTHONDONTWRITEBYTECODE, which would recompile on every run
	$(BIN)/python -m compileall -q stinkywait_core stinkywait_lsp >/dev/null
	@touch $@

$(VENV)/.test-deps: $(BIN)/stinkywait
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

venv: $(BIN)/stinkywait
venv-test: $(VENV)/.test-deps

demo: $(BIN)/stinkywait
	$(BIN)/stinkywait plan $(EXAMPLE)
	@echo
	$(BIN)/stinkywait insert --explain $(EXAMPLE) -o -

# one worker per CPU (pytest-xdist); a module's tests stay on one worker, so a module
# fixture is made once (`--dist loadscope`; `xdist_group` marks do not group under pytest 9
# with xdist 3.8); `make test XDIST=` runs them in this process
XDIST ?= -n auto --dist loadscope
test: $(VENV)/.test-deps
	$(BIN)/python -m pytest -q -p no:cacheprovider $(XDIST) $(PYTEST_ARGS)

bench: $(BIN)/stinkywait
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info
