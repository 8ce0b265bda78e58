# skiff — see README.md. `make` builds, `make test` tests, `make run` boots.
CC      ?= cc
BUILD   ?= build
OPT     ?= -O2 -g
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Isrc -MMD -MP $(OPT) $(EXTRA_CFLAGS)
LDLIBS_ALL = -lpthread -llzma -luring -lxxhash -lhttp_parser -ljson-c $(shell pkg-config --libs libseccomp 2>/dev/null)

SRCS      := $(shell find src -name '*.c' ! -name main.c | sort)
OBJS      := $(SRCS:%.c=$(BUILD)/%.o)
TEST_SRCS := $(wildcard tests/unit/test_*.c)
TESTS     := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

.SECONDARY:
.PHONY: all deps run test unit unit-asan testbed soak bench benchmarks-md dma-fenced format format-check lint \
	check-layers clean fuzz fuzz-ci fuzz-build fuzz-bins
all: $(BUILD)/skiff

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libskiff.a: $(OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/skiff: $(BUILD)/src/main.o $(BUILD)/libskiff.a
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(BUILD)/libskiff.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $^ -lcmocka $(LDLIBS_ALL)

deps:
	@tests/install-deps.sh

unit: $(TESTS)
	@tests/run-unit.sh $(TESTS)

# The same unit tests under AddressSanitizer and UndefinedBehaviorSanitizer.
unit-asan:
	@$(MAKE) --no-print-directory BUILD=build/asan \
		OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" unit

# libFuzzer targets (tests/fuzz/README.md): clang, ASan + UBSan, the
# library built again with coverage. `make fuzz [SECS=N]` runs each target
# N seconds; `make fuzz-ci` runs each briefly on its committed corpus.
FUZZ_BUILD := build/fuzz
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_MAKE  := $(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang \
	OPT="-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN)" \
	EXTRA_CFLAGS="-Wno-missing-field-initializers -Wno-gnu-variable-sized-type-not-at-end"
FUZZ_NAMES := $(filter-out common,$(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS  := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz_%)
comma := ,
# Guest-memory entry points the fake RAM's mutator hooks, and the
# virtqueue calls targets observe (fuzz_common.h).
FUZZ_WRAP  := $(patsubst %,-Wl$(comma)--wrap=%,guest_mem_ptr dma_read dma_read_relaxed \
	dma_sg_read dma_sg_read_relaxed virtq_pop virtq_push_batch)
SECS ?= 60

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.c tests/fuzz/fuzz_common.h \
		$(FUZZ_BUILD)/libskiff.a
	$(CC) $(filter-out -MMD -MP,$(CFLAGS_ALL)) -fsanitize=fuzzer -Itests/fuzz -Itests/unit \
		-o $@ $< tests/fuzz/fuzz_common.c $(FUZZ_BUILD)/libskiff.a $(FUZZ_WRAP) $(LDLIBS_ALL)

fuzz-bins: $(FUZZ_BINS)

fuzz-build:
	@tests/install-deps.sh --fuzz
	@$(FUZZ_MAKE) fuzz-bins

fuzz: fuzz-build
	@tests/fuzz/run.sh --secs $(SECS) $(FUZZ_NAMES)

fuzz-ci: fuzz-build
	@tests/fuzz/run.sh --ci $(FUZZ_NAMES)

testbed: $(BUILD)/skiff
	@tests/testbed/run-scenarios.sh

# The soak (SLOW, ~15 min): tests/testbed/scenarios/soak.sh.
soak: $(BUILD)/skiff
	@tests/testbed/run-one.sh soak

test: deps
	@$(MAKE) --no-print-directory all
	@tests/run-all.sh

run: deps
	@$(MAKE) --no-print-directory all
	@tests/testbed/make-run.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@bench/run.sh $(if $(QUICK),--quick)

# BENCHMARKS.md from the committed runs docs/bench/HEADLINE.json names
# (tests/bench/test_headline.py checks it is up to date).
benchmarks-md:
	@python3 bench/benchmarks_md.py

# The benchmark's skiff-dma-fenced: every DMA accessor fences, relaxed
# ones too (src/core/dma.c), to measure what the ordering rule saves.
dma-fenced:
	@$(MAKE) --no-print-directory BUILD=build/dma-fenced EXTRA_CFLAGS=-DSKIFF_DMA_ALWAYS_FENCE \
		build/dma-fenced/skiff

# Include edges follow the layers (tests/check-layers.sh lists them).
check-layers:
	@tests/check-layers.sh

# shellcheck over the scripts, then the layers.
lint:
	@tests/lint.sh

format:
	clang-format -i $$(find src tests bench -name '*.[ch]')

format-check:
	@clang-format --dry-run -Werror $$(find src tests bench -name '*.[ch]')

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
