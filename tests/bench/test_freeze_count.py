# SPDX-License-Identifier: Apache-2.0
"""tests/testbed/wilson.py (a 95% Wilson score interval) and
tests/testbed/freeze-count.sh (issue 39.1) with a fake run-one.sh and a
fake L0 QEMU: one line per life in the results file, outcomes classified,
counts over every session with the same QEMU."""

import os
import subprocess
import tempfile
import unittest

import benchpath

TB = os.path.join(benchpath.REPO, "tests", "testbed")

# Fails every third life with L1 stuck, passes the others.
FAKE = r"""#!/bin/bash
mkdir -p "$TB_CACHE/logs"
echo x >>"$TB_CACHE/count"
printf 'SKIFF-L1: ready uptime=4.1\r\n' >"$TB_CACHE/logs/$1.log"
if [ $(($(wc -l <"$TB_CACHE/count") % 3)) = 0 ]; then
	echo "testbed: L1 stuck: cpu 0: halted, IF=1, IRR 236 above PPR 0x10 (L0 lost the wake-up), at 70 s" >>"$TB_CACHE/logs/$1.log"
	echo "FAIL $1: L1 stuck: ...; L0 stopped early (80s)"
	exit 1
fi
echo "PASS $1 (30s)"
"""


def wilson(*args):
    res = subprocess.run(["python3", os.path.join(TB, "wilson.py"), *args],
                         capture_output=True, text=True, timeout=30)
    return res.returncode, res.stdout.strip(), res.stderr


class Wilson(unittest.TestCase):
    def test_known_intervals(self):
        # Wilson's interval by hand (z = 1.96): 1/100 is 0.18%-5.45%.
        self.assertEqual(wilson("1", "100")[1], "1 in 100: 1.0 per 100 (95% CI 0.2-5.4)")
        self.assertEqual(wilson("10", "100")[1], "10 in 100: 10.0 per 100 (95% CI 5.5-17.4)")
        # None seen is not a rate of 0: 30 lives leave up to 11.4 per 100.
        self.assertEqual(wilson("0", "30")[1], "0 in 30: 0.0 per 100 (95% CI 0.0-11.4)")
        self.assertEqual(wilson("4", "4")[1], "4 in 4: 100.0 per 100 (95% CI 51.0-100.0)")

    def test_bad_input(self):
        for args in (("3", "2"), ("1", "0"), ("x", "4"), ("1",), ("-1", "4")):
            rc, out, err = wilson(*args)
            self.assertEqual(rc, 2, args)
            self.assertEqual(out, "")
            self.assertEqual(len(err.splitlines()), 1)


def fakes(d, version, lives):
    """The fake run-one.sh and a QEMU that says VERSION in directory d:
    the environment and the command that count LIVES lives with them."""
    for name, text in (("run-one.sh", FAKE),
                       ("qemu", f"#!/bin/sh\necho 'QEMU emulator version {version}'\n")):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
        os.chmod(os.path.join(d, name), 0o755)
    env = dict(os.environ, TB_CACHE=os.path.join(d, "cache"),
               TB_RUN_ONE=os.path.join(d, "run-one.sh"))
    cmd = ["bash", os.path.join(TB, "freeze-count.sh"), str(lives), "--qemu",
           os.path.join(d, "qemu"), "--scenario", "life"]
    return env, cmd


class FreezeCount(unittest.TestCase):
    def test_lives_counted_across_sessions(self):
        with tempfile.TemporaryDirectory() as d:
            env, cmd = fakes(d, "10.0.2", 3)
            for _ in range(2):  # two sessions of 3 lives
                res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
                self.assertEqual(res.returncode, 0, res.stderr)
            out = res.stdout.splitlines()
            self.assertIn("freeze-count: QEMU 10.0.2, life: testbed failures"
                          " 2 in 6: 33.3 per 100 (95% CI 9.7-70.0)", out)
            self.assertIn("freeze-count:   l1-stuck: 2", out)
            with open(os.path.join(d, "cache", "freeze-count.tsv")) as f:
                rows = [line.rstrip("\n").split("\t") for line in f]
            self.assertEqual(len(rows), 6)
            self.assertEqual([r[3] for r in rows], ["ok", "ok", "testbed"] * 2)
            self.assertTrue(rows[2][4].startswith("l1-stuck: cpu 0: halted"), rows[2][4])
            self.assertEqual({r[1] for r in rows}, {"10.0.2"})

    def test_lever_counted_apart(self):
        # Issue 39.3: a lever's lives are not the default L0's.
        with tempfile.TemporaryDirectory() as d:
            env, cmd = fakes(d, "7.2.22", 2)
            for extra in ({}, {"TB_L0_ACCEL": "tcg,thread=single"}, {"TB_L0_SMP": "1"}):
                res = subprocess.run(cmd, env=dict(env, **extra), capture_output=True,
                                     text=True, timeout=120)
                self.assertEqual(res.returncode, 0, res.stderr)
            self.assertIn("freeze-count: QEMU 7.2.22 smp=1, life: testbed failures"
                          " 1 in 2: 50.0 per 100 (95% CI 9.5-90.5)", res.stdout.splitlines())
            with open(os.path.join(d, "cache", "freeze-count.tsv")) as f:
                versions = [line.split("\t")[1] for line in f]
            self.assertEqual(versions, ["7.2.22"] * 2 + ["7.2.22 accel=tcg,thread=single"] * 2
                             + ["7.2.22 smp=1"] * 2)

    def test_bad_count(self):
        res = subprocess.run(["bash", os.path.join(TB, "freeze-count.sh"), "many"],
                             capture_output=True, text=True, timeout=30)
        self.assertNotEqual(res.returncode, 0)
        self.assertEqual(len(res.stderr.splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
