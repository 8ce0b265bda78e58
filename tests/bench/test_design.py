# SPDX-License-Identifier: Apache-2.0
"""Run orders: Williams squares and their randomised blocks."""

import itertools
import unittest

import benchpath  # noqa: F401
from skiffbench import design


class WilliamsTest(unittest.TestCase):
    def check_square(self, n):
        rows = design.williams(n)
        self.assertEqual(len(rows), design.block_size(n))
        reps = len(rows) // n
        for row in rows:
            self.assertEqual(sorted(row), list(range(n)))
        # Latin: every value in every column equally often.
        for col in range(n):
            self.assertEqual(sorted(r[col] for r in rows),
                             sorted(list(range(n)) * reps))
        # Carry-over: every ordered pair adjacent equally often.
        pairs = design.follower_counts(rows)
        want = {(a, b): reps for a, b in itertools.permutations(range(n), 2)}
        self.assertEqual(pairs, want)

    def test_squares_even_and_odd(self):
        for n in range(1, 9):
            with self.subTest(n=n):
                self.check_square(n)


class BalancedOrdersTest(unittest.TestCase):
    CONFIGS = ["skiff", "qemu", "qemu-rtc", "native", "skiff-vhost"]

    def test_position_and_followers_balanced_per_block(self):
        k = design.block_size(len(self.CONFIGS))
        orders = design.balanced_orders(self.CONFIGS, 2 * k, seed=7)
        self.assertEqual(len(orders), 2 * k)
        for block in (orders[:k], orders[k:]):
            counts = design.position_counts(block)
            for config in self.CONFIGS:
                self.assertEqual(counts[config], [2] * 5, config)
            pairs = design.follower_counts(block)
            self.assertEqual(set(pairs.values()), {2})
            self.assertEqual(len(pairs), 5 * 4)

    def test_odd_positions_balance_after_n_rounds(self):
        orders = design.balanced_orders(self.CONFIGS, 5, seed=1)
        for config, counts in design.position_counts(orders).items():
            self.assertEqual(counts, [1] * 5, config)

    def test_seeded_fresh_and_reproducible(self):
        one = design.balanced_orders(self.CONFIGS, 20, seed=3)
        self.assertEqual(one, design.balanced_orders(self.CONFIGS, 20, 3))
        self.assertNotEqual(one, design.balanced_orders(self.CONFIGS, 20, 4))
        # A new square per block, not the first one repeated.
        self.assertNotEqual(one[:10], one[10:])
        # Not the same order every round, nor a plain rotation.
        self.assertGreater(len({tuple(o) for o in one[:10]}), 5)

    def test_bad_input(self):
        with self.assertRaises(ValueError):
            design.balanced_orders(["a", "a"], 2, 1)
        with self.assertRaises(ValueError):
            design.balanced_orders(["a"], 0, 1)
        with self.assertRaises(ValueError):
            design.williams(0)


if __name__ == "__main__":
    unittest.main()
