# Two entry points, both from a fresh machine (see README):
#   make reproduce   install irqsim and reproduce every implemented seed study
#   make test        install irqsim with its test extras and run every test
PY ?= python3

.PHONY: install install-test reproduce test test-rust test-python bench programs

install:
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet .

install-test:
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet ".[test]"

reproduce: install
	irqsim reproduce

test-rust:
	cargo test -p irqsim-core --quiet
	cargo test -p irqsim-mips --quiet

test-python: install-test
	$(PY) -m pytest

test: test-rust test-python

bench: install
	irqsim bench

# MIPS programs (C) -> python/irqsim/programs/*.elf; needs gcc-mips-linux-gnu.
programs:
	programs/build.sh
