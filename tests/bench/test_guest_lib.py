# SPDX-License-Identifier: Apache-2.0
"""The testbed's guest library (tests/testbed/guest/lib.sh) as L1 runs it,
in busybox sh on the host: vmm_boot_l2's watcher, which reports a VMM
whose guest has gone silent, with a stand-in VMM (sh printing lines); and
the QEMU command line the bench and vfio-multi-qemu share."""

import os
import shutil
import subprocess
import tempfile
import unittest

import benchpath

GUEST_LIB = os.path.join(benchpath.REPO, "tests", "testbed", "guest",
                         "lib.sh")
BUSYBOX = shutil.which("busybox")


def boot(vmm, watch_s, path=None):
    """vmm_boot_l2 of `sh -c VMM` with the watcher's period at watch_s
    and its look every second, PATH led by path: (everything printed, the
    saved console, the exit status)."""
    script = (f". {GUEST_LIB}\nL2_WATCH_S={watch_s} L2_WATCH_POLL_S=1\n"
              f"vmm_boot_l2 sh -c '{vmm}'\necho \"rc=$VMM_RC\"\n")
    env = dict(os.environ)
    if path:
        env["PATH"] = path + os.pathsep + env["PATH"]
    res = subprocess.run([BUSYBOX, "sh", "-c", script], capture_output=True,
                         text=True, timeout=60, env=env)
    with open("/tmp/l2.log") as f:
        console = f.read()
    return res.stdout + res.stderr, console, res.returncode


@unittest.skipUnless(BUSYBOX, "busybox not installed")
class WatcherTest(unittest.TestCase):
    def test_silence_is_reported(self):
        out, console, rc = boot("echo up; sleep 4; echo down", 2)
        self.assertEqual(rc, 0)
        self.assertIn("rc=0", out)
        self.assertIn("l2-watch: L2 silent for 2 s", out)
        # Each thread of the VMM (sh, or the sleep it became), with its
        # state and wait channel.
        self.assertRegex(out, r"l2-watch: task \d+ \((sh|sleep)\) S .*wchan=")
        # The console the scenario reads has only the guest's lines.
        self.assertEqual(console, "up\ndown\n")

    def test_busybox_timeout(self):
        # L1's timeout is busybox's: it execs the VMM in its own process
        # and watches from a child, so the VMM is the process, not a child.
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "timeout"), "w") as f:
                f.write(f"#!/bin/sh\nexec {BUSYBOX} timeout \"$@\"\n")
            os.chmod(os.path.join(d, "timeout"), 0o755)
            out, console, rc = boot("echo up; sleep 4; echo down", 2, d)
        self.assertEqual(rc, 0)
        self.assertRegex(out, r"l2-watch: L2 silent for 2 s; VMM pid \d+ ")
        self.assertRegex(out, r"l2-watch: task \d+ \((sh|sleep)\) S .*wchan=")
        self.assertEqual(console, "up\ndown\n")

    def test_init_after_firmware_escapes(self):
        # SeaBIOS (QEMU q35: vfio-multi-qemu) clears the screen before
        # L2's first line: its init marker still times the boot.
        out, console, rc = boot(
            r'printf "\033c\033[2JSKIFF-L2: init uptime=20.44\n"', 60)
        self.assertEqual(rc, 0)
        self.assertRegex(out, r"SKIFF-METRIC: l2_start_to_init_ms=\d+")
        self.assertIn("SKIFF-METRIC: l2_uptime_at_init_s=20.44", out)

    def test_a_talking_guest_is_not_reported(self):
        out, console, rc = boot(
            "for i in 1 2 3 4 5; do echo $i; sleep 1; done", 3)
        self.assertEqual(rc, 0)
        self.assertNotIn("l2-watch", out)
        self.assertEqual(console.split(), ["1", "2", "3", "4", "5"])


def ash_out(script, *args):
    """script in busybox ash after the guest library, with args as $@."""
    res = subprocess.run([BUSYBOX, "sh", "-c", f'. "$0"; {script}',
                          GUEST_LIB, *args], capture_output=True, text=True,
                         timeout=20, check=True)
    return res.stdout


@unittest.skipUnless(BUSYBOX, "busybox not installed")
class QemuWordsTest(unittest.TestCase):
    def test_command_line_round_trip(self):
        # The bench keeps the VMM's command line quoted and replays it by
        # eval for a restore or a migration target: spaces, quotes and
        # empty words intact.
        args = ["qemu", "-append", "console=ttyS0 it's quiet",
                "-netdev", "tap,id=n0,ifname=tap0,script=no", "", "'a'b'"]
        out = ash_out('q=$(sh_quote "$@"); eval "set -- $q"; '
                      'printf "<%s>\\n" "$@"', *args)
        self.assertEqual(out.splitlines(), [f"<{a}>" for a in args])

    def test_qemu_l2_argv_is_the_bench_peer(self):
        # The words bench_vm gave its QEMU peer before they moved here
        # (qemu-vfio: q35 and the e1000e), which vfio-multi-qemu now
        # shares: a change to one is a change to both.
        out = ash_out('L2_INITRD=/l2/initrd.gz; eval "set -- $(qemu_l2_argv '
                      'q35 /l2/vmlinuz 512M 2 "console=ttyS0 quiet x=it\'s")"; '
                      'set -- "$@" -device "$(qemu_vfio_dev 0000:01:00.0)"; '
                      'printf "%s\\n" "$@"')
        self.assertEqual(out.splitlines(), [
            "qemu-system-x86_64", "-M", "q35", "-enable-kvm", "-cpu", "host",
            "-m", "512M", "-smp", "2", "-L", "/usr/share/qemu", "-nodefaults",
            "-no-user-config", "-nographic", "-serial", "stdio", "-no-reboot",
            "-name", "l2,debug-threads=on", "-kernel", "/l2/vmlinuz",
            "-initrd", "/l2/initrd.gz", "-append", "console=ttyS0 quiet x=it's",
            "-device", "vfio-pci,host=0000:01:00.0,rombar=0"])


if __name__ == "__main__":
    unittest.main()
