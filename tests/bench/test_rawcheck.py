# SPDX-License-Identifier: Apache-2.0
"""bench/skiffbench/rawcheck.py: the samples whose raw files (replaced
by an extra round's before issue 35.1) do not reproduce them."""

import os
import tempfile
import unittest

import benchpath  # noqa: F401

from skiffbench import rawcheck


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class RawCheckTest(unittest.TestCase):
    def test_sample_not_reproduced_by_its_raw_files(self):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "raw/r1/vm/a/metrics"), "kvm_exits=5\n")
            # The extra round's run of b, unpacked over the counted one.
            write(os.path.join(d, "raw/r1/vm/b/metrics"), "kvm_exits=9\n")
            doc = {"samples": [
                {"config": "vm", "workload": "a", "rep": 1,
                 "metrics": {"kvm_exits": 5}},
                {"config": "vm", "workload": "b", "rep": 1,
                 "metrics": {"kvm_exits": 7}},
                {"config": "vm", "workload": "c", "rep": 1, "metrics": {},
                 "error": "contaminated"},
                {"config": "vm", "workload": "d", "rep": 1,
                 "metrics": {"kvm_exits": 1}}]}
            counted, bad = rawcheck.check(doc, d)
            self.assertEqual(len(counted), 3)
            self.assertEqual([(s["workload"], why.split(":")[0])
                              for s, why in bad],
                             [("b", "raw/r1/vm/b"), ("d", "raw/r1/vm/d")])
            self.assertIn("kvm_exits differ", bad[0][1])


if __name__ == "__main__":
    unittest.main()
