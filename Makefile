# Vigil: the two entry points a fresh Debian machine needs.
#   make test   install build deps, build, run every test (ctest)
#   make lint   formatting and include layering (STYLE.md, DESIGN.md); CI runs it
#   make demo   install, build, simulate an LLM cluster with two incidents,
#               import it, replay the LLM rule pack, print the alert timeline
BUILD   ?= build
JOBS    ?= $(shell nproc)
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages the build and the tests need.
DEB_BUILD := g++ cmake ninja-build pkg-config python3 \
  librocksdb-dev libabsl-dev libre2-dev libyaml-cpp-dev libfmt-dev \
  catch2 libbenchmark-dev libcpp-httplib-dev zlib1g-dev libsnappy-dev \
  libcurl4-openssl-dev rapidjson-dev
# Real peers used by tests and bench (promtool, VictoriaMetrics).
DEB_PEERS := prometheus victoria-metrics prometheus-alertmanager prometheus-node-exporter curl bc time

.PHONY: deps build vigil test lint demo bench clean

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

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

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
# The demo cluster: 3 h of 4 hosts x 8 H100s starting 2026-01-01T00:00:00Z,
# with a KV-cache saturation on gpu-node-0 (40-60 % of the run) and an
# XID 79 on gpu-node-1 GPU 3 (from 70 %). The LLM rule pack is replayed over
# it: the alert timeline shows both incidents.
DEMO_START := 2026-01-01T00:00:00Z
DEMO_END   := 2026-01-01T02:59:45Z
DEMO_AT    := 2026-01-01T01:30:00Z
demo: vigil
	rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR)
	python3 examples/gen_cluster.py $(DEMO_DIR)/cluster.om --hosts 4 --hours 3
	$(BUILD)/vigil tsdb import openmetrics $(DEMO_DIR)/cluster.om $(DEMO_DIR)/tsdb
	$(BUILD)/vigil tsdb analyze $(DEMO_DIR)/tsdb --limit 5
	$(BUILD)/vigil check rules examples/llm/rules/recording.yml examples/llm/rules/alerts.yml
	$(BUILD)/vigil rules replay --storage.tsdb.path=$(DEMO_DIR)/tsdb \
	  --start=$(DEMO_START) --end=$(DEMO_END) \
	  examples/llm/rules/recording.yml examples/llm/rules/alerts.yml
	@echo; echo "== llm:* at $(DEMO_AT), during the KV-cache saturation of gpu-node-0 =="
	@for q in 'llm:kv_usage:1m' 'llm:queue_max:1m' 'llm:ttft_p95:5m' 'llm:out_tps:5m'; do \
	  $(BUILD)/vigil query instant --time=$(DEMO_AT) "$$q" --storage.tsdb.path=$(DEMO_DIR)/tsdb; done

bench: build
	bash bench/compare_import.sh

clean:
	rm -rf $(BUILD) $(DEMO_DIR)
