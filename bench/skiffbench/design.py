# SPDX-License-Identifier: Apache-2.0
"""Run orders for the rounds: randomised Williams squares.

A round runs every configuration once; within a round the machine drifts
(page cache, L1's memory, the host's other users), measured at 2-4% per
position. A Williams square over n configurations is n orders (2n when n
is odd) in which every configuration takes every position equally often
and follows every other configuration equally often (first-order
carry-over balance: no A always right after B). Each block of rounds gets
a fresh square, its configurations relabelled by a seeded RNG, so the
order is random, reproducible and balanced after every complete block.
"""

import random


def williams(n):
    """Rows of a Williams square over 0..n-1: n rows for even n, 2n for
    odd n (the square and its mirror)."""
    if n < 1:
        raise ValueError("need at least one configuration")
    # First row 0, 1, n-1, 2, n-2, ...; row i adds i mod n.
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:
        rows += [list(reversed(r)) for r in rows]
    return rows


def block_size(n):
    return n if n % 2 == 0 else 2 * n


def balanced_orders(configs, rounds, seed):
    """`rounds` orders of configs, one per round, from consecutive
    randomised Williams squares (relabelled per block by
    random.Random(seed)). Position balance holds after each complete
    block of block_size(len(configs)) rounds (for odd n also after n)."""
    configs = list(configs)
    if len(set(configs)) != len(configs):
        raise ValueError("duplicate config names")
    if rounds < 1:
        raise ValueError("rounds must be >= 1")
    rng = random.Random(seed)
    n = len(configs)
    orders = []
    while len(orders) < rounds:
        labels = configs[:]
        rng.shuffle(labels)
        # Rows in the square's order: for odd n its first n rows are
        # already Latin, so positions balance after n rounds, carry-over
        # after 2n.
        orders += [[labels[i] for i in row] for row in williams(n)]
    return orders[:rounds]


def position_counts(orders):
    """{config: [times at position 1, 2, ...]}."""
    n = len(orders[0]) if orders else 0
    counts = {}
    for order in orders:
        for pos, config in enumerate(order):
            counts.setdefault(config, [0] * n)[pos] += 1
    return counts


def follower_counts(orders):
    """{(a, b): times b ran right after a within a round}."""
    pairs = {}
    for order in orders:
        for a, b in zip(order, order[1:]):
            pairs[(a, b)] = pairs.get((a, b), 0) + 1
    return pairs
