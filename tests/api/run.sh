#!/usr/bin/env bash
# The API tests (tests/api/run.py): skiff unconfigured on its API socket,
# every endpoint and the bad requests, each exchange checked against
# Firecracker's OpenAPI description. No KVM needed. Uses Debian's python3
# (python3-yaml, python3-jsonschema).
set -euo pipefail
cd "$(dirname "$0")/../.."
SKIFF=${SKIFF:-build/skiff}
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
exec "$PY" -u tests/api/run.py "$SKIFF"
