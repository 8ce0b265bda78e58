# SPDX-License-Identifier: Apache-2.0
"""Make bench/skiffbench importable from the tests without installing it."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BENCH = os.path.join(REPO, "bench")
FIXTURES = os.path.join(HERE, "fixtures")

if BENCH not in sys.path:
    sys.path.insert(0, BENCH)


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()
