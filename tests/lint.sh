#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make lint`: shellcheck over every shell script, and the include layers
# (tests/check-layers.sh). Scenario files and the guests' scripts are POSIX
# sh fragments read by the testbed: their settings look unused to the
# linter (SC2034/SC2154), and `[ a ] && [ b ] || fail` is their assertion
# idiom (SC2015).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
status=0
mapfile -t frags < <(git ls-files 'tests/testbed/scenarios/*.sh' 'tests/testbed/guest/*.sh' bench/bench-round.sh bench/bench-snapmig.sh bench/bench-vsock.sh bench/bench-trace.sh)
mapfile -t scripts < <(git ls-files '*.sh' | grep -v -e '^tests/testbed/scenarios/' -e '^tests/testbed/guest/' -e '^bench/bench-round.sh' -e '^bench/bench-snapmig.sh' -e '^bench/bench-vsock.sh' -e '^bench/bench-trace.sh')
shellcheck -x "${scripts[@]}" .ci/run || status=1
shellcheck -s sh -e SC2034,SC2154,SC2015 "${frags[@]}" || status=1
tests/check-layers.sh || status=1
tests/check-layers-test.sh || status=1
# Issue 35.4: the VMM's messages go through src/core/log.h (levels, rate
# limits); only the front ends (src/main.c, src/cli/, src/jailer/) print
# to stderr themselves. A deliberate exception says "not a log line" in
# the comment just above it.
# shellcheck disable=SC2016 # awk's $0, not the shell's
if ! git ls-files 'src/*.c' | grep -v -e '^src/main.c$' -e '^src/cli/' -e '^src/jailer/' \
	-e '^src/core/log.c$' | xargs awk '
	FNR == 1 { prev1 = prev2 = "" }
	/fprintf\(stderr|fputs\(.*stderr|perror\(|dprintf\((2|STDERR_FILENO)/ &&
	    (prev1 prev2) !~ /not a log line/ { print "lint: " FILENAME ":" FNR ": stderr outside src/core/log.h: " $0; bad = 1 }
	{ prev2 = prev1; prev1 = $0 }
	END { exit bad }'; then
	status=1
fi
[ "$status" = 0 ] && echo "lint: shellcheck and layers clean"
exit "$status"
