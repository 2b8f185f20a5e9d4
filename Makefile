# Two entry points, both from a fresh machine (see README):
#   make reproduce   install irqsim and reproduce every implemented seed study
#   make test        install irqsim with its test extras and run every test
#   make figures     redraw each study's reproduction figure into docs/figures
#   make validate    check the simulator against independent oracles (M/D/1, LRU, the livelock knee, NAPI)
PY ?= python3

.PHONY: install install-test reproduce test test-rust test-python bench figures fuzz programs validate

install:
	@echo "Building irqsim's Rust core in release mode (about a minute and a half on 2 cores, silent meanwhile)..."
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet .

install-test:
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet ".[test]"

reproduce: install
	irqsim reproduce

test-rust:
	cargo test -p irqsim-params --quiet
	cargo test -p irqsim-core --quiet
	cargo test -p irqsim-mips --quiet
	cargo test -p irqsim-firmware --quiet

test-python: install-test
	$(PY) -m pytest

test: test-rust test-python

# M/D/1 against Pollaczek-Khinchine (51 M frames), the L1D against an LRU
# reference, the livelock knee and NAPI's plateau against their formulas:
# about 12 s (docs/design.md, "Validation").
validate: install
	$(PY) -m irqsim.oracles

bench: install
	irqsim bench

figures: install
	$(PY) -m irqsim.figures docs/figures

# Fuzz every target for SECONDS seconds each, one after another (nightly Rust and
# cargo-fuzz; see docs/reliability.md). New inputs go to fuzz/corpus/ (not committed),
# crashes to fuzz/artifacts/; keep a fixed crash's input in fuzz/regressions/TARGET/.
SECONDS ?= 60
# An input that makes a target hold more than this is a finding (libFuzzer's -rss_limit_mb).
RSS_MB ?= 1024
# Optimised, with debug assertions and overflow checks; no sanitizer, as no crate has `unsafe`
# code (SANITIZER=address adds AddressSanitizer, about 2x slower; docs/reliability.md).
SANITIZER ?= none
FUZZ_TARGETS := pcap strace scenario short_run trace_run elf program
fuzz:
	rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
	cargo +nightly fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked
	cd fuzz && for t in $(FUZZ_TARGETS); do \
		dict=$$t; [ $$t = short_run ] && dict=scenario; [ $$t = trace_run ] && dict=pcap; [ $$t = program ] && dict=elf; \
		mkdir -p corpus/$$t regressions/$$t && \
		cargo +nightly fuzz run -O -a -s $(SANITIZER) $$t corpus/$$t seeds/$$t regressions/$$t -- \
			-dict=dict/$$dict.dict -max_total_time=$(SECONDS) -timeout=10 -rss_limit_mb=$(RSS_MB) -print_final_stats=1 \
			|| exit 1; \
	done

# MIPS programs (C) -> python/irqsim/programs/*.elf; needs gcc-mips-linux-gnu.
programs:
	programs/build.sh
