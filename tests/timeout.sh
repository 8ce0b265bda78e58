# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Source it. bounded NAME SECS CMD...: runs CMD under timeout(1), SIGTERM
# after SECS seconds and SIGKILL 5 s later, so that a hang is a failure
# with a name ("NAME: timed out after SECS s", on stdout, status 124)
# rather than a stall until CI's own limit. Otherwise CMD's status.
bounded() {
	local name=$1 secs=$2 rc=0
	shift 2
	timeout -k 5 "$secs" "$@" || rc=$?
	# 124: timeout's TERM ended it; 137: it ignored TERM and got KILL.
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "$name: timed out after $secs s"
		return 124
	fi
	return "$rc"
}
