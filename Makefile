# SPDX-License-Identifier: Apache-2.0
# skiff — see README.md and CONTRIBUTING.md. `make` builds, `make check`
# tests (no root, QEMU or network), `make test` runs everything (CI: it
# installs what is missing first), `make run` boots, `make install` installs.
CC      ?= cc
BUILD   ?= build
OPT     ?= -O2 -g
PREFIX  ?= /usr/local
# -Werror only when asked (.ci/run sets WERROR=1): a newer compiler's new
# warning must not break a user's build.
WERROR  ?= 0
# Libraries through pkg-config, as NAME:DEBIAN-PACKAGE (the package names
# the one-line hint libs-check prints). http-parser ships no .pc file on
# Debian: it is linked by name and libs-check looks for its header.
LIBS_PC   := liburing:liburing-dev libxxhash:libxxhash-dev json-c:libjson-c-dev \
	liblzma:liblzma-dev libseccomp:libseccomp-dev
PC_NAMES  := $(foreach l,$(LIBS_PC),$(firstword $(subst :, ,$(l))))
PC_CFLAGS := $(shell pkg-config --cflags $(PC_NAMES) 2>/dev/null)
PC_LIBS   := $(shell pkg-config --libs $(PC_NAMES) 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -Isrc \
	$(PC_CFLAGS) -MMD -MP $(OPT) $(EXTRA_CFLAGS)
LDLIBS_ALL = -lpthread $(PC_LIBS) -lhttp_parser
# `skiff --version`: the build's commit; a tarball's VERSION file; unknown.
VERSION_STR := $(shell [ -e .git ] && git describe --always --dirty 2>/dev/null || \
	cat VERSION 2>/dev/null || echo unknown)

SRCS      := $(shell find src -name '*.c' ! -name main.c | sort)
OBJS      := $(SRCS:%.c=$(BUILD)/%.o)
TEST_SRCS := $(wildcard tests/unit/test_*.c)
TESTS     := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

.SECONDARY:
.PHONY: all deps deps-fuzz run check test unit unit-asan testbed soak bench dma-fenced format \
	format-check lint check-layers clean fuzz fuzz-ci fuzz-build fuzz-bins fuzz-tools install \
	uninstall libs-check cmocka-check benchmarks-md FORCE
all: $(BUILD)/skiff $(BUILD)/skiff-jailer $(BUILD)/skiff-static

$(BUILD)/%.o: %.c | libs-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libskiff.a: $(OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/skiff: $(BUILD)/src/main.o $(BUILD)/libskiff.a
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

# The jailer (src/jailer/, SECURITY.md) links nothing else of skiff; the
# static skiff is the one it can exec: a jail holds no libraries.
JAILER_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/jailer/*.c))
$(BUILD)/skiff-jailer: $(JAILER_OBJS)
	$(CC) $(CFLAGS_ALL) -o $@ $^

$(BUILD)/skiff-static: $(BUILD)/src/main.o $(BUILD)/libskiff.a
	$(CC) $(CFLAGS_ALL) -static -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(BUILD)/libskiff.a | cmocka-check
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(TEST_LDFLAGS) $(CMOCKA_LIBS) $(LDLIBS_ALL)

# test_blk_flush looks at what the disk submits to io_uring.
$(BUILD)/tests/test_blk_flush: TEST_LDFLAGS = -Wl,--wrap=io_uring_submit
# test_log counts the logger's write(2) calls: one per line.
$(BUILD)/tests/test_log: TEST_LDFLAGS = -Wl,--wrap=write
# test_review11_jailer acts when the jailer makes a device node.
$(BUILD)/tests/test_review11_jailer: TEST_LDFLAGS = -Wl,--wrap=mknodat

# The version header changes only when the version does (then help.o is
# rebuilt, nothing else).
$(BUILD)/gen/skiff_version.h: FORCE
	@mkdir -p $(dir $@)
	@echo '#define SKIFF_VERSION "$(VERSION_STR)"' >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
$(BUILD)/src/cli/help.o: $(BUILD)/gen/skiff_version.h
$(BUILD)/src/cli/help.o: CFLAGS_ALL += -I$(BUILD)/gen
FORCE:

# Building never installs anything: a missing library is one line naming
# its package (`make deps` installs them all).
libs-check:
	@command -v pkg-config >/dev/null || \
		{ echo "skiff: pkg-config not found: install pkg-config (or run 'make deps')" >&2; exit 1; }
	@for l in $(LIBS_PC); do pkg-config --exists "$${l%%:*}" || { echo \
		"skiff: library $${l%%:*} not found: install $${l#*:} (or run 'make deps')" >&2; exit 1; }; done
	@echo '#include <http_parser.h>' | $(CC) -E -x c - >/dev/null 2>&1 || { echo \
		"skiff: http_parser.h not found: install libhttp-parser-dev (or run 'make deps')" >&2; exit 1; }

cmocka-check:
	@pkg-config --exists cmocka || \
		{ echo "skiff: library cmocka not found: install libcmocka-dev (or run 'make deps')" >&2; exit 1; }

# The man page and bash completion, printed from the option tables.
$(BUILD)/skiff.1: $(BUILD)/skiff
	$< help --man >$@.tmp && mv -f $@.tmp $@

$(BUILD)/skiff.bash: $(BUILD)/skiff
	$< help --bash-completion >$@.tmp && mv -f $@.tmp $@

# skiff-jailer and the static skiff it execs in a jail (SECURITY.md) go
# beside skiff, as Firecracker's release ships its jailer.
install: $(BUILD)/skiff $(BUILD)/skiff-jailer $(BUILD)/skiff-static $(BUILD)/skiff.1 $(BUILD)/skiff.bash
	install -D -m 0755 $(BUILD)/skiff $(DESTDIR)$(PREFIX)/bin/skiff
	install -D -m 0755 $(BUILD)/skiff-jailer $(DESTDIR)$(PREFIX)/bin/skiff-jailer
	install -D -m 0755 $(BUILD)/skiff-static $(DESTDIR)$(PREFIX)/bin/skiff-static
	install -D -m 0644 $(BUILD)/skiff.1 $(DESTDIR)$(PREFIX)/share/man/man1/skiff.1
	install -D -m 0644 $(BUILD)/skiff.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/skiff

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/skiff $(DESTDIR)$(PREFIX)/bin/skiff-jailer \
		$(DESTDIR)$(PREFIX)/bin/skiff-static $(DESTDIR)$(PREFIX)/share/man/man1/skiff.1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/skiff

# What the build, `make run` and the testbed need; deps-fuzz adds clang
# and its fuzzing runtime. Never a prerequisite of building or checking.
deps:
	@tests/install-deps.sh

deps-fuzz:
	@tests/install-deps.sh --fuzz

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

# clang with libFuzzer, or one line naming what to install.
fuzz-tools:
	@echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' | \
		clang -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1 || { echo \
		"fuzz: clang with libFuzzer not found: install clang libclang-rt-dev (or run 'make deps-fuzz')" >&2; \
		exit 1; }

fuzz-build: fuzz-tools
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

# Test tiers (CONTRIBUTING.md). check: unit (plain and ASan/UBSan), the
# benchmark harness's tests, CLI, API and the fuzz corpora replayed; no
# root, QEMU or network needed. testbed: the nested scenarios. test (CI):
# installs what is missing, then both.
check: all
	@SKIFF_SKIP_TESTBED=1 tests/run-all.sh

test: deps
	@tests/install-deps.sh --fuzz
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

# Include edges follow the layers (tests/check-layers.sh lists them), and
# the checker finds deliberate violations (tests/check-layers-test.sh).
check-layers:
	@tests/check-layers.sh
	@tests/check-layers-test.sh

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
