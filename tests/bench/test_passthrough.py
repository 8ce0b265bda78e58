# SPDX-License-Identifier: Apache-2.0
"""The harness's passthrough configurations (issue 11): which ones need
L0's e1000e and L1's vfio, how @PT becomes the device's address, and that
bench/run.sh treats pt-native as a configuration without a VM."""

import os
import subprocess
import unittest

import benchpath

SCENARIO = os.path.join(benchpath.REPO, "bench", "bench-round.sh")
RUN = os.path.join(benchpath.REPO, "bench", "run.sh")


def scenario_sh(script):
    """Run script in sh with bench-round.sh sourced (as L1 does)."""
    return subprocess.run(["sh", "-c", f'. "{SCENARIO}"; {script}'],
                          capture_output=True, text=True, check=True).stdout


class PassthroughRuleTest(unittest.TestCase):
    def test_pt_configs(self):
        names = scenario_sh("bench_pt_configs").split()
        self.assertEqual(sorted(names),
                         ["pt-native", "qemu-vfio", "skiff-vfio", "skiff-vfio-trap"])

    def test_subst_replaces_only_the_placeholder(self):
        out = scenario_sh('bench_pt_subst 0000:01:00.0 --vfio-pci @PT,mmap=off '
                          '--stats x@PT')
        self.assertEqual(out.split(),
                         ["--vfio-pci", "0000:01:00.0,mmap=off", "--stats",
                          "x@PT"])
        # QEMU's form: a key's value (issue 37.4, qemu-vfio)
        out = scenario_sh('bench_pt_subst 0000:01:00.0 machine=q35 pt=@PT')
        self.assertEqual(out.split(), ["machine=q35", "pt=0000:01:00.0"])

    def test_qemu_vfio_passes_the_device_not_a_tap(self):
        """qemu-vfio's words make bench_qemu_opts name the device, which
        bench_vm gives QEMU as -device vfio-pci instead of its tap NIC."""
        out = scenario_sh('bench_qemu_opts vhost=off machine=q35 pt=0000:01:00.0; '
                          'echo "$vm_m|$vm_pt_addr|$vm_o"')
        self.assertEqual(out.strip(), "q35|0000:01:00.0|,vhost=off")

    def test_l0_gets_the_e1000e_and_an_iommu(self):
        args = scenario_sh('echo $BENCH_PT_L0_ARGS')
        self.assertIn("intel-iommu", args)
        self.assertIn("e1000e,netdev=h0", args)
        self.assertIn("virtio-net-pci,netdev=h1", args)
        # Inside the emulated machine only: NICs joined by a hub.
        self.assertNotIn("tap", args)
        self.assertNotIn("user", args)
        self.assertIn("iommu=pt", scenario_sh('echo $BENCH_PT_L1_APPEND'))

    def test_list_shows_them(self):
        out = subprocess.run([RUN, "--list"], capture_output=True, text=True,
                             check=True).stdout
        for name in ("pt-native", "skiff-vfio", "skiff-vfio-trap", "qemu-vfio"):
            self.assertIn(name, out)


if __name__ == "__main__":
    unittest.main()
