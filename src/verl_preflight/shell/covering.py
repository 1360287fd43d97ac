"""Covering arrays: few rows in which every t values of t different switches meet.

A script's switches multiply (three backends, a pipeline size tested in an `if`,
a device): their product soon passes any budget of profiles. A mistake in a
script mostly needs one switch's arm to show (a typo in the `npu)` arm), or two
switches together (the Megatron arm on NPU). Rows in which every pair of values of
every two switches meets (a covering array of strength 2) take every arm and every
such meeting, in a few rows where the product has thousands.

The rows are made greedily and deterministically (the same switches give the same
rows on every run): each new row starts from a value tuple not yet met and takes,
switch by switch, the value that meets the most tuples not yet met. Two orders of
construction are tried and the shorter array is kept. Row 0 is always every
switch's first value (the script's defaults).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter

MAX_TUPLES = 6000  # the t-tuples of a strength tried at most (strength 3 over many switches costs too much)


def tuples_of(sizes: list[int], t: int) -> int:
    """How many value tuples a strength-t array over switches of these sizes must meet."""
    return sum(math.prod(sizes[d] for d in c) for c in itertools.combinations(range(len(sizes)), t))


def met(rows: list[list[int]], sizes: list[int], t: int) -> int:
    """How many of the strength-t value tuples the rows meet."""
    return sum(len({tuple(r[d] for d in c) for r in rows}) for c in itertools.combinations(range(len(sizes)), t))


def covering(sizes: list[int], t: int, limit: int | None = None, seed_rows=()) -> list[list[int]]:
    """Rows of value indices (row[d] < sizes[d]) in which every t-tuple of values of t different
    switches meets; at most `limit` rows when given (the first rows meet the most). `seed_rows`
    are taken first, as they are. Every switch's values also appear (t >= 1)."""
    k = len(sizes)
    if t >= k:
        rows = [list(r) for r in itertools.product(*[range(s) for s in sizes])]
        return rows[:limit] if limit is not None else rows
    best = None
    for dense in (False, True):
        rows = _greedy(sizes, t, limit, dense, [list(r) for r in seed_rows] or [[0] * k])
        if best is None or (len(rows) < len(best) if limit is None else _more(rows, best, sizes, t)):
            best = rows
    return best


def _more(a, b, sizes, t) -> bool:
    """With a row limit, the array that meets more tuples wins (then the shorter)."""
    ma, mb = met(a, sizes, t), met(b, sizes, t)
    return ma > mb or ma == mb and len(a) < len(b)


def _greedy(sizes: list[int], t: int, limit: int | None, dense: bool, rows: list[list[int]]) -> list[list[int]]:
    k = len(sizes)
    combos = list(itertools.combinations(range(k), t))
    by_dim = {d: [c for c in combos if d in c] for d in range(k)}
    uncovered = {(c, vals) for c in combos for vals in itertools.product(*[range(sizes[d]) for d in c])}
    need: Counter = Counter()  # (switch, value) -> tuples not yet met that it is part of
    for c, vals in uncovered:
        for d, v in zip(c, vals, strict=True):
            need[d, v] += 1

    def take(row):
        for c in combos:
            key = (c, tuple(row[d] for d in c))
            if key in uncovered:
                uncovered.discard(key)
                for d, v in zip(*key, strict=True):
                    need[d, v] -= 1

    def gain(row) -> int:
        return sum(1 for c in combos if (c, tuple(row[d] for d in c)) in uncovered)

    def build(c, vals) -> list[int]:
        row: list = [None] * k
        for d, v in zip(c, vals, strict=True):
            row[d] = v
        order = sorted(range(k), key=lambda d: (-max(need[d, v] for v in range(sizes[d])), d)) if dense else range(k)
        for d in order:
            if row[d] is not None:
                continue
            choice = None
            for v in range(sizes[d]):
                row[d] = v
                n = sum(
                    1
                    for cc in by_dim[d]
                    if all(row[x] is not None for x in cc) and (cc, tuple(row[x] for x in cc)) in uncovered
                )
                key = (n, need[d, v] if dense else 0, -v)
                if choice is None or key > choice[0]:
                    choice = (key, v)
            row[d] = choice[1]
        return row

    for row in rows:
        take(row)
    rows = list(rows)
    while uncovered and (limit is None or len(rows) < limit):
        if dense:
            seeds = heapq.nsmallest(8, uncovered, key=lambda cv: (-sum(need[d, v] for d, v in zip(*cv)), cv))
        else:
            seeds = [min(uncovered)]
        candidates = [build(c, vals) for c, vals in seeds]
        row = max(candidates, key=gain)  # the first of the best: deterministic
        take(row)
        rows.append(row)
    return rows[:limit] if limit is not None else rows
