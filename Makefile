# Vigil: the two entry points a fresh Debian machine needs.
#   make test   install build deps, build, run every test (ctest)
#   make demo   install, build, generate LLM-cluster data, import, analyze
BUILD   ?= build
JOBS    ?= $(shell nproc)
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages the build and the tests need.
DEB_BUILD := g++ cmake ninja-build pkg-config python3 \
  librocksdb-dev libabsl-dev libre2-dev libyaml-cpp-dev libfmt-dev \
  catch2 libbenchmark-dev libcpp-httplib-dev zlib1g-dev libsnappy-dev
# Real peers used by tests and bench (promtool, VictoriaMetrics).
DEB_PEERS := prometheus victoria-metrics curl bc time

.PHONY: deps build vigil test demo bench clean

deps:
	@missing=""; for p in $(DEB_BUILD) $(DEB_PEERS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$missing; \
	fi

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

vigil: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target vigil

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

DEMO_DIR ?= demo-data
demo: vigil
	rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR)
	python3 examples/gen_cluster.py $(DEMO_DIR)/cluster.om --hosts 4 --hours 3
	$(BUILD)/vigil tsdb import openmetrics $(DEMO_DIR)/cluster.om $(DEMO_DIR)/tsdb
	$(BUILD)/vigil tsdb analyze $(DEMO_DIR)/tsdb

bench: build
	bash bench/compare_import.sh

clean:
	rm -rf $(BUILD) $(DEMO_DIR)
