#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The test runners' bounds (issue 32.4): a unit test binary, a CLI command
# and the API tests that hang each fail with their name, and the runner
# goes on (run-unit.sh) or ends (api) instead of stalling until CI's limit.
# Fakes stand in for the hanging programs. Run by tests/cli/run.sh; prints
# one line, exits non-zero with what went wrong.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
bad=0
# want WHAT FILE PATTERN: FILE has a line matching the ERE PATTERN.
want() {
	grep -qE -- "$3" "$2" && return 0
	echo "$1: no line matching /$3/ in:"
	sed 's/^/  /' "$2"
	bad=1
}

# A unit test binary that hangs, between two that pass.
printf '#!/bin/sh\necho "[  PASSED  ] 1 test(s)."\n' >"$T/test_ok"
printf '#!/bin/sh\nexec sleep 600\n' >"$T/test_hang"
chmod +x "$T/test_ok" "$T/test_hang"
SKIFF_UNIT_TIMEOUT_S=1 timeout 30 tests/run-unit.sh "$T/test_ok" "$T/test_hang" "$T/test_ok" >"$T/unit" 2>&1
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
	echo "run-unit.sh: exit $rc for a hanging binary"
	bad=1
fi
want run-unit.sh "$T/unit" '^test_hang: timed out after 1 s$'
want run-unit.sh "$T/unit" '^unit: 2 passed, 1 failed$'

# A skiff that hangs on one bad option and answers every other in one line.
printf '#!/bin/sh\ncase "$*" in *--frobnicate*) exec sleep 600 ;; esac\necho "skiff: fake" >&2\nexit 2\n' \
	>"$T/skiff"
chmod +x "$T/skiff"
SKIFF="$T/skiff" SKIFF_CLI_TIMEOUT_S=1 SKIFF_CLI_NESTED=1 timeout 30 tests/cli/run.sh >"$T/cli" 2>&1
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
	echo "cli/run.sh: exit $rc with a hanging skiff"
	bad=1
fi
want cli/run.sh "$T/cli" '^FAIL .* --frobnicate: timed out after 1 s$'
want cli/run.sh "$T/cli" '^cli: [0-9]+ passed, [1-9][0-9]* failed$'

# A skiff whose API socket accepts and never answers.
cat >"$T/skiff-api" <<'EOP'
#!/usr/bin/env python3
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[sys.argv.index("--api-sock") + 1])
s.listen(8)
time.sleep(600)
EOP
chmod +x "$T/skiff-api"
SKIFF="$T/skiff-api" SKIFF_API_TIMEOUT_S=2 timeout 30 tests/api/run.sh >"$T/api" 2>&1
rc=$?
[ "$rc" -eq 124 ] || {
	echo "api/run.sh: exit $rc with a silent skiff (want 124)"
	bad=1
}
want api/run.sh "$T/api" '^api: timed out after 2 s$'

[ "$bad" -eq 0 ] && echo "a hanging unit binary, CLI command and API run each failed by name"
exit "$bad"
