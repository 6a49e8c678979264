# Vigil: the two entry points a fresh Debian machine needs.
#   make test   install build deps, build, run every test (ctest)
#   make lint   formatting and include layering (STYLE.md, DESIGN.md); CI runs it
#   make demo   install, build, run a simulated LLM GPU fleet live with 3 h
#               of history, Vigil scraping it with the LLM rule pack, alerts
#               printed as they change (Ctrl-C stops; DEMO_SECONDS=N: N s, check)
BUILD   ?= build
JOBS    ?= $(shell nproc)
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages the build and the tests need.
DEB_BUILD := g++ cmake ninja-build pkg-config python3 \
  librocksdb-dev libabsl-dev libre2-dev libyaml-cpp-dev libfmt-dev \
  catch2 libbenchmark-dev libcpp-httplib-dev zlib1g-dev libsnappy-dev \
  libcurl4-openssl-dev rapidjson-dev protobuf-compiler libprotobuf-dev
# The web UI (docs/ui.md): node + npm build it, chromium runs its test;
# command:package, checked by command (node may come from another source).
DEB_UI := node:nodejs npm:npm chromium:chromium
# Real peers used by tests and bench (promtool, VictoriaMetrics,
# blackbox_exporter for the /probe differential test).
DEB_PEERS := prometheus victoria-metrics prometheus-alertmanager prometheus-node-exporter prometheus-blackbox-exporter curl bc time

.PHONY: deps build vigil test lint demo calibrate-demo bench clean test-sanitize test-tsan \
  build-sanitize build-tsan deps-clang fuzz release

# Build packages must install; the real peers (promtool, VictoriaMetrics,
# used by cross-check tests and benches) are installed too, but if that
# fails the build goes on and those comparisons are skipped, saying so.
deps:
	@missing=""; for p in $(DEB_BUILD); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	peers=""; for p in $(DEB_PEERS); do \
	  dpkg -s $$p >/dev/null 2>&1 || peers="$$peers $$p"; done; \
	if [ -n "$$missing$$peers" ]; then $(SUDO) apt-get update -q; fi; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$missing || exit 1; \
	fi; \
	if [ -n "$$peers" ]; then \
	  echo "installing peers:$$peers"; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$peers || \
	    echo "warning: could not install$$peers; promtool/VictoriaMetrics comparisons will be skipped"; \
	fi
	@ui=""; for c in $(DEB_UI); do \
	  command -v $${c%%:*} >/dev/null 2>&1 || ui="$$ui $${c#*:}"; done; \
	if [ -n "$$ui" ]; then \
	  echo "installing the web UI's toolchain / test browser:$$ui"; $(SUDO) apt-get update -q; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$ui || \
	    echo "warning: could not install$$ui; vigil is built without its web UI, or the UI test is skipped (docs/ui.md)"; \
	fi

# Line tables only (-g1): backtraces keep file:line, and compiling is
# about a quarter faster with objects a fifth of the size (full -g: set
# CMAKE_CXX_FLAGS_RELWITHDEBINFO yourself).
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

vigil: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target vigil

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Lint: the linter's self-test first (a second), then the tree: clang-format
# 14 over every tracked *.cc/*.h and the include graph of DESIGN.md (the
# table is at the top of .ci/layering.py). Installs clang-format and python3
# if they are missing, so it runs first on CI's fresh machine.
lint:
	@missing=""; \
	command -v clang-format-14 >/dev/null 2>&1 || command -v clang-format >/dev/null 2>&1 || \
	  missing="$$missing clang-format"; \
	command -v python3 >/dev/null 2>&1 || missing="$$missing python3"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$missing || exit 1; \
	fi
	@bash .ci/lint_selftest.sh
	@bash .ci/lint.sh

DEMO_DIR ?= demo-data
# The live demo (examples/llm/demo/run.sh): vigil-sim writes 3 h of history of
# 4 engine hosts (vLLM V1, SGLang, vLLM V0) + 1 TRT-LLM host x 8 H100s and
# keeps serving it live, `vigil tsdb import openmetrics` loads the history,
# then vigil serves examples/llm/demo/prometheus.yml on 127.0.0.1:$(DEMO_PORT).
# scenario.yml fills gpu-node-0's KV cache at +2 min and puts an XID 79 on
# gpu-node-1 at +3 min; the console shows KVCacheCritical and XidError go
# pending, firing, resolved within about 9 minutes. Runs until Ctrl-C, or
# DEMO_SECONDS=N seconds and then exits 0 only if the check passes (540
# covers the whole timeline).
DEMO_PORT    ?= 9090
DEMO_SECONDS ?= 0
demo: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target vigil vigil-sim
	BUILD=$(BUILD) DEMO_DIR=$(DEMO_DIR) DEMO_PORT=$(DEMO_PORT) DEMO_SECONDS=$(DEMO_SECONDS) \
	  bash examples/llm/demo/run.sh

# Threshold calibration (docs/calibration.md): the simulator backfills 70 /
# 90 / 110 % load steps (examples/llm/calibrate/steps.yml), vigil imports
# them, `vigil calibrate` prints the table and writes the proposed rule file
# and the threshold ledger into $(CALIB_DIR)/proposed/.
CALIB_DIR ?= calibrate-data
calibrate-demo: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target vigil vigil-sim
	BUILD=$(BUILD) CALIB_DIR=$(CALIB_DIR) bash examples/llm/calibrate/run.sh

# ---- sanitizers (docs/reliability.md) -------------------------------------
# make test-sanitize   clang ASan + UBSan build in $(ASAN_BUILD) (the fuzz
#                      targets' build too), then ctest on it: every test, and
#                      the vigil / vigil-sim they spawn are the sanitized ones.
#                      Any report fails the test (halt_on_error; leaks too).
#                      SANITIZE_TESTS=regex runs only the ctest names matching
#                      it (e.g. '^(core|storage):'); SANITIZE_TARGETS lists
#                      the binaries to build for them (default: all).
# make test-tsan       clang TSAN build in $(TSAN_BUILD), then the test cases
#                      tagged [concurrency] in each of TSAN_TESTS (the
#                      binaries are built from only the files holding them).
# In the sanitizer builds CTest runs a test file's cases in one process
# (VIGIL_TESTS_BY_FILE): a sanitized process costs ~0.3 s of CPU to start.
# The suppression files (tests/sanitize/*.supp) name uninstrumented
# third-party code only, never Vigil's.
DEB_CLANG  := clang libclang-rt-14-dev
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
SAN_JOBS   ?= $(JOBS)
SAN_CMAKE  := -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ $(if $(VIGIL_SHARED_DIR),-DVIGIL_SHARED_DIR=$(VIGIL_SHARED_DIR)) \
  $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
SANITIZE_TESTS   ?=
SANITIZE_TARGETS ?= all
TSAN_TESTS       ?= core_test storage_test promql_test rules_test server_test
SAN_SUPP := $(CURDIR)/tests/sanitize

deps-clang:
	@missing=""; for p in $(DEB_CLANG); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$missing || exit 1; fi

# No Google Benchmarks under the sanitizers: nothing runs them there (the
# main build keeps them compiling), and they cost CI minutes to build.
$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) $(SAN_CMAKE) -DVIGIL_SANITIZE=address,undefined -DVIGIL_FUZZ=ON \
	  -DVIGIL_BUILD_BENCHMARKS=OFF

$(TSAN_BUILD)/build.ninja:
	cmake -S . -B $(TSAN_BUILD) $(SAN_CMAKE) -DVIGIL_SANITIZE=thread -DVIGIL_BUILD_UI=OFF \
	  -DVIGIL_BUILD_BENCHMARKS=OFF -DVIGIL_TEST_TAG=concurrency

# The builds alone (.ci/run starts them in the background, at idle
# priority, while other stages' tests wait on sockets and processes).
build-sanitize: deps deps-clang $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target $(SANITIZE_TARGETS)

build-tsan: deps deps-clang $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TESTS)

# The options reach every process the tests start (vigil, vigil-sim).
# ASan's frames are several times larger (redzones), so the 10000-deep
# nesting the PromQL parser accepts needs a 64 MiB stack, not 8 MiB. The
# package tests build an unsanitized consumer and the UI test drives a
# browser: neither runs here.
test-sanitize: export ASAN_OPTIONS = halt_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:suppressions=$(SAN_SUPP)/asan.supp
test-sanitize: export LSAN_OPTIONS = suppressions=$(SAN_SUPP)/lsan.supp:print_suppressions=0
test-sanitize: export UBSAN_OPTIONS = halt_on_error=1:print_stacktrace=1:suppressions=$(SAN_SUPP)/ubsan.supp
test-sanitize: build-sanitize
	ulimit -s 65536 || echo "warning: cannot raise the stack limit; deep-nesting tests may overflow"; \
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(SAN_JOBS) -LE '^(package|ui)$$' \
	  $(if $(SANITIZE_TESTS),-R '$(SANITIZE_TESTS)')

test-tsan: export TSAN_OPTIONS = halt_on_error=1:second_deadlock_stack=1:suppressions=$(SAN_SUPP)/tsan.supp
test-tsan: build-tsan
	@if find $(TSAN_BUILD)/CMakeFiles -name '*.o' -print0 | xargs -0 nm -u 2>/dev/null | \
	  grep -q ' _ZdlPvm$$'; then echo "test-tsan: Vigil's objects call the sized operator delete; \
	  tests/sanitize/tsan.supp assumes only third-party code does (see there)"; exit 1; fi
	@rc=0; for t in $(TSAN_TESTS); do echo "== TSAN: $$t [concurrency]"; \
	  $(TSAN_BUILD)/$$t "[concurrency]" -w NoTests || rc=1; done; exit $$rc

# Fuzzing (docs/reliability.md): the libFuzzer targets of tests/fuzz/ in
# the ASan + UBSan build dir (clang), each run FUZZ_SECONDS, FUZZ_JOBS at a
# time, then every regression input and seed replayed once. Inputs found
# go to $(ASAN_BUILD)/fuzz/findings/<surface>/ and fail the run.
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 2
# FUZZ_TARGETS="a b" limits building, fuzzing and replay to those surfaces.
FUZZ_TARGETS ?=
FUZZ_BINS = $(if $(FUZZ_TARGETS),$(addprefix fuzz_,$(FUZZ_TARGETS)),\
  $(patsubst tests/fuzz/%_fuzz.cc,fuzz_%,$(wildcard tests/fuzz/*_fuzz.cc)))
fuzz: deps deps-clang $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target $(FUZZ_BINS)
	FUZZ_TARGETS="$(FUZZ_TARGETS)" bash tests/fuzz/run.sh fuzz $(ASAN_BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS)
	FUZZ_TARGETS="$(FUZZ_TARGETS)" bash tests/fuzz/run.sh replay-all $(ASAN_BUILD)

bench: build
	bash bench/compare_import.sh

# The release binary (README.md "Release build"): vigil built twice, instrumented
# and then optimised with the profile of a training run on the simulated
# fleet (bench/pgo_train.sh), with link-time optimisation. Measured: 4-7 %
# less CPU per scraped sample than `make vigil`'s (bench/README.md). The
# release directory is rebuilt from nothing each time, so that every
# object is compiled with the new profile.
RELEASE_BUILD ?= build-release
PGO_GEN_BUILD ?= build-pgo-gen
PGO_SECONDS   ?= 150
PGO_PROFILE   := $(abspath $(PGO_GEN_BUILD))/profile
RELEASE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DVIGIL_PGO_DIR=$(PGO_PROFILE)
release: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target vigil-sim
	cmake -S . -B $(PGO_GEN_BUILD) $(RELEASE_FLAGS) -DVIGIL_PGO=generate
	cmake --build $(PGO_GEN_BUILD) -j $(JOBS) --target vigil
	rm -rf $(PGO_PROFILE)
	bash bench/pgo_train.sh $(PGO_GEN_BUILD)/vigil $(BUILD)/vigil-sim $(PGO_SECONDS)
	rm -rf $(RELEASE_BUILD)
	cmake -S . -B $(RELEASE_BUILD) $(RELEASE_FLAGS) -DVIGIL_PGO=use \
	  -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON
	cmake --build $(RELEASE_BUILD) -j $(JOBS) --target vigil
	@echo "release: $(RELEASE_BUILD)/vigil"

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(DEMO_DIR) $(CALIB_DIR) $(RELEASE_BUILD) $(PGO_GEN_BUILD)
