# SPDX-License-Identifier: Apache-2.0
"""Run every tests/bench/test_*.py and end with the exact summary line
`bench: N passed, N failed` that tests/run-all.sh style scripts grep for.
Skipped tests are neither (they are listed on a line of their own)."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    sys.path.insert(0, HERE)
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py",
                                                top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=1, stream=sys.stdout).run(suite)
    failed = (len(result.failures) + len(result.errors)
              + len(result.unexpectedSuccesses))
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    if skipped:
        for test, why in result.skipped:
            print(f"bench: skipped {test.id()}: {why}")
    print(f"bench: {passed} passed, {failed} failed")
    return 0 if failed == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
