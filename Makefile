# The two commands of the README: `make run` and `make test`. Both install missing Debian
# packages first (as root), then configure and build with CMake + Ninja.
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_SECONDS ?= 25
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps build run test test-asan test-tsan fuzz bench format clean readme bands python

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The main job: the planner on its built-in example (pre-train Llama 3.1 70B on 2T tokens within
# 60 days for the least money, over six node types at 256-1,024 GPUs): the recommendation with its
# reasons and the ranked candidates, and the HTML report. Then a tour of the layers beneath: the
# topology of a 32-node DGX H100 fat-tree, its all_reduce as nccl-tests prints it, the input
# pipeline of a DGX A100 training ResNet-50, a training step of Llama 3.1 8B, and Llama 3.1 70B
# served on a DGX H100 with 64 clients.
run: build
	./$(BUILD)/gpufabric plan --report $(BUILD)/plan-report.html
	./$(BUILD)/gpufabric topo --preset dgx-h100 --nodes 32 --fabric fat-tree
	./$(BUILD)/gpufabric collective all_reduce --preset dgx-h100 --nodes 32 --fabric fat-tree -b 8 -e 8G -f 4
	./$(BUILD)/gpufabric pipeline --preset dgx-a100 --input resnet50-imagenet
	./$(BUILD)/gpufabric train --preset dgx-h100 --nodes 4 --model llama3.1-8b --tp 2 --sequence-parallel --recompute selective --distributed-optimizer --global-batch 256 --scale 1,2,4,16
	./$(BUILD)/gpufabric serve --preset dgx-h100 --model llama3.1-70b --tp 8 --precision fp8 --kv-dtype fp8 --isl 1024 --osl 256 --concurrency 64
	./$(BUILD)/gpufabric schedule --trace data/traces/alibaba-pai-2023/openb_pod_list_default.csv --nodes-file data/traces/alibaba-pai-2023/openb_node_list_gpu_node.csv --compare --repeats 3 --report $(BUILD)/schedule-report.html
	./$(BUILD)/gpufabric schedule --trace data/traces/examples/training-mix.csv --preset dgx-h100 --nodes 24 --fabric fat-tree --oversubscription 7 --compare --no-fill
	./$(BUILD)/gpufabric schedule --autoscale data/services/llama3.1-8b-chat.yaml --load diurnal:20

# Reruns every command whose output README.md shows (each block after a `<!-- readme-output: ... -->`
# comment) and rewrites those blocks; the test readme_outputs fails while one of them differs.
readme: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target gpufabric
	python3 scripts/readme_outputs.py --update $(BUILD)/gpufabric

# Recomputes the error bands every command prints (data/validation/error_bands.yaml) from the
# validation suites, then rebuilds so the binary carries them; run after a model or row change.
bands: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target gpufabric
	./$(BUILD)/gpufabric validate --bands > data/validation/error_bands.yaml.tmp
	mv data/validation/error_bands.yaml.tmp data/validation/error_bands.yaml
	cmake --build $(BUILD) -j $(JOBS) --target gpufabric

# The Python module (`import gpufabric`) in $(BUILD)/python, for Debian's python3: use it with
# PYTHONPATH=$(BUILD)/python, or install it with `pip install --no-build-isolation .` (setup.py).
python: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target _gpufabric
	@echo "python: built $(BUILD)/python/gpufabric; use it with PYTHONPATH=$(CURDIR)/$(BUILD)/python python3"

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The same suite under AddressSanitizer and UndefinedBehaviorSanitizer (run by CI), built by Clang
# at -O1 (a third of -O0's run time, and still every report) with libFuzzer's coverage
# instrumentation, so that `make fuzz` reuses this one build for its targets instead of compiling
# everything a third time.
# (A build directory configured earlier with another compiler is started afresh: CMake cannot
# change the compiler of an existing cache.)
SANITIZE_CONFIGURE = { grep -qs 'CMAKE_CXX_COMPILER:[A-Z]*=.*clang' $(ASAN_BUILD)/CMakeCache.txt || rm -rf $(ASAN_BUILD); } && \
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
	-DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DGPUFABRIC_SANITIZE=ON -DGPUFABRIC_FUZZ=ON \
	-DGPUFABRIC_BUILD_BENCH=OFF -DGPUFABRIC_PYTHON=OFF
test-asan: deps
	$(SANITIZE_CONFIGURE)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

# The threaded tests (planner workers, shared tables and caches, the decode probe) under
# ThreadSanitizer (run by CI). Only the libraries they link are built.
test-tsan: deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DGPUFABRIC_TSAN=ON -DGPUFABRIC_BUILD_BENCH=OFF \
	  -DGPUFABRIC_PYTHON=OFF
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target gpufabric_thread_tests
	ctest --test-dir $(TSAN_BUILD) --output-on-failure -j $(JOBS)

# Every reader under libFuzzer (Clang, ASan + UBSan) for FUZZ_SECONDS each, seeded from data/
# (run by CI; see fuzz/run.sh), in the sanitizer build above. A longer hunt: make fuzz FUZZ_SECONDS=600.
fuzz: deps
	@test -f $(ASAN_BUILD)/build.ninja || $(SANITIZE_CONFIGURE)
	FUZZ_BUILD=$(ASAN_BUILD) FUZZ_JOBS=$(JOBS) fuzz/run.sh $(FUZZ_SECONDS)

bench: build
	./$(BUILD)/bench/gpufabric_bench

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
