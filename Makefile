# Two entry points, both from a fresh machine (see README):
#   make reproduce   install irqsim and reproduce every implemented seed study
#   make test        install irqsim with its test extras and run every test
#   make figures     redraw each study's reproduction figure into docs/figures
PY ?= python3

.PHONY: install install-test reproduce test test-rust test-python bench figures

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

test-python: install-test
	$(PY) -m pytest

test: test-rust test-python

bench: install
	irqsim bench

figures: install
	$(PY) -m irqsim.figures docs/figures
