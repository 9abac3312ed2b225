# quire — the two commands a newcomer needs:
#   make run    set up, build, render the bundled example (+ two reminders) for Anthropic
#   make test   set up, build, run every test suite (ctest)
BUILD     ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_ARGS ?=
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all setup build run test bench fuzz clean asan

all: build

setup:
	@sh scripts/setup.sh

$(BUILD)/CMakeCache.txt: | setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/quire render --provider anthropic --model claude-sonnet-4-5 --pretty \
	    --remind examples/remind.jsonl --events /dev/stderr examples/transcript.json

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 900 -j $(JOBS)

asan:
	$(MAKE) test BUILD=build-asan BUILD_TYPE=Debug CMAKE_ARGS="-DQUIRE_WERROR=ON -DQUIRE_SANITIZER=address,undefined"

bench:
	@sh bench/run.sh

FUZZ_SECONDS ?= 60
fuzz:
	@sh fuzz/run.sh $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) build-asan build-fuzz build-bench
