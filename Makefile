# ember's front door. Each target installs what it needs (tools/bootstrap.sh).
#   make demo       build, then train the demo CNN on Fashion-MNIST (config/fashion_mnist_cnn.yaml)
#   make test       build everything and run the unit, golden, cuda, distributed, onnx and tensorboard tests (CUDA tests skip
#                   without a GPU; onnx and tensorboard install onnxruntime and tensorboard from PyPI into venvs under
#                   the build folder once),
#                   the same cuda tests on the CPU emulator (test-cuda-emu),
#                   then the libtorch-compatibility example and the installed-tree check
#   make test-cuda-emu  build the CUDA sources for the CPU emulator and run the cuda tests there
#   make test-slow  the tests labelled slow
#   make sanitize   ASan + UBSan build, unit and autograd tests
#   make tsan       ThreadSanitizer build; the concurrency, thread-pool, data-loader and allocator tests
#   make fuzz       clang + libFuzzer build; each reader of untrusted bytes fuzzed FUZZ_SECONDS (60) seconds
#   make bench      build and run the benchmarks (and the libtorch side-by-side when libtorch is installed), then
#                   `ember bench`: every kernel against the roofline and its reference (build/bench.json, build/roofline.svg)
#   make bench-doc  rewrite docs/performance.md's kernel table from build/bench.json
#   make install    install into build/install (or PREFIX=...)

PRESET ?= release
# make builds one CUDA architecture (Hopper) to keep CI short; the release
# preset alone builds 80;90. Override: make CUDA_ARCHS="80;90".
CUDA_ARCHS ?= 90
BUILD := build/$(PRESET)
PREFIX ?= $(CURDIR)/build/install
JOBS ?= $(shell nproc)
CTEST := ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

.PHONY: all bootstrap configure build demo test test-cuda-emu test-slow sanitize tsan fuzz bench bench-doc install embed-check clean

all: build

bootstrap:
	@tools/bootstrap.sh

configure: bootstrap
	@cmake --preset $(PRESET) -DCMAKE_CUDA_ARCHITECTURES="$(CUDA_ARCHS)" > /dev/null

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/ember train --config config/fashion_mnist_cnn.yaml

test: build
	$(CTEST) -L 'unit|autograd|golden|cuda|distributed|onnx|tensorboard'
	$(MAKE) --no-print-directory test-cuda-emu
	$(BUILD)/examples/libtorch_compat
	$(MAKE) --no-print-directory embed-check

# Files shared with the real CUDA build compile identically here, so ccache serves them.
test-cuda-emu: bootstrap
	cmake --preset cuda-emulate > /dev/null
	cmake --build build/cuda-emulate -j $(JOBS) --target ember_cuda-emu_tests
	ctest --test-dir build/cuda-emulate --output-on-failure -j $(JOBS) -L cuda-emu

test-slow: build
	$(CTEST) -L slow

# Installs ember, then builds and runs examples/embed against the installed tree.
embed-check: install
	cmake -S examples/embed -B build/embed -DCMAKE_PREFIX_PATH=$(PREFIX) > /dev/null
	cmake --build build/embed -j $(JOBS)
	build/embed/embed_example

install: build
	cmake --install $(BUILD) --prefix $(PREFIX) > /dev/null

sanitize: bootstrap
	cmake --preset sanitize > /dev/null
	cmake --build build/sanitize -j $(JOBS) --target ember_unit_tests ember_autograd_tests ember_cuda-emu_tests
	ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build/sanitize --output-on-failure -j $(JOBS) -L 'unit|autograd|cuda-emu'

# The suites whose code threads share; TSan reports any data race as a failure.
TSAN_TESTS := Concurrency.*:DataLoader.*:BlockPool.*:MatmulThreads.*:OpInfo/OpInfoTest.ThreadCountInvariance/*
tsan: bootstrap
	cmake --preset tsan > /dev/null
	cmake --build build/tsan -j $(JOBS) --target ember_unit_tests
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" build/tsan/tests/ember_unit_tests --gtest_filter='$(TSAN_TESTS)'

FUZZ_SECONDS ?= 60
fuzz:
	@tools/bootstrap.sh fuzz
	cmake --preset fuzz > /dev/null
	cmake --build build/fuzz -j $(JOBS) --target ember_fuzz_targets
	tools/fuzz.sh $(FUZZ_SECONDS)

bench: configure
	@tools/bootstrap.sh bench
	cmake --preset $(PRESET) -DCMAKE_CUDA_ARCHITECTURES="$(CUDA_ARCHS)" -DEMBER_BENCH_LIBTORCH=ON > /dev/null
	cmake --build $(BUILD) -j $(JOBS)
	bench/run_all.sh $(BUILD)
	$(BUILD)/ember bench --machine --json build/machine.json
	$(BUILD)/ember bench --machine-file build/machine.json --json build/bench.json --svg build/roofline.svg \
	  $$([ -f $(BUILD)/libember_bench_torch.so ] && echo --vs-torch)

# Rewrites docs/performance.md's kernel table from the last `make bench` (build/bench.json).
bench-doc:
	$(BUILD)/ember bench --update-doc docs/performance.md --from build/bench.json

clean:
	rm -rf build
