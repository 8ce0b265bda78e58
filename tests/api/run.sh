#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The API tests (tests/api/run.py): skiff unconfigured on its API socket,
# every endpoint and the bad requests, each exchange checked against
# Firecracker's OpenAPI description. No KVM needed. Uses Debian's python3
# (python3-yaml, python3-jsonschema). Under a bound (SKIFF_API_TIMEOUT_S,
# default 300 s; a run takes well under a minute): a hang fails as
# "api: timed out after N s".
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/timeout.sh
. tests/timeout.sh
SKIFF=${SKIFF:-build/skiff}
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
bounded api "${SKIFF_API_TIMEOUT_S:-300}" "$PY" -u tests/api/run.py "$SKIFF"
