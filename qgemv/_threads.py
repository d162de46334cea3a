"""Thread counts: resolved once per call, in Python, before any kernel runs.

The default follows the OpenMP runtime (``OMP_NUM_THREADS``, ``threadpoolctl``'s limits),
capped by the CPUs this process may use (affinity mask and cgroup quota), unless
``qgemv.set_num_threads`` fixed one.

Fork: GNU libgomp keeps its thread team across ``fork()`` without the threads, so a child
forked after the parent ran a parallel region hangs in its first parallel region of more than
one thread.  Such a child therefore runs every kernel on one thread (a 1-thread region never
touches the team); use the "spawn" or "forkserver" start method for parallel children.
"""
from __future__ import annotations

import functools
import math
import os

from . import _kernels

_fixed: int | None = None
_team_started = False        # this process ran a parallel region of more than one thread
_forked_after_team = False   # this process was forked from one that had


def _after_fork_in_child() -> None:
    global _forked_after_team
    _forked_after_team = _forked_after_team or _team_started


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

# below this much weight data a parallel region costs more than it saves
SERIAL_BELOW_BYTES = 64 * 1024
SERIAL_BELOW_ROWS = 64
# ... and below this much for a product (weight bytes times the batch's columns), whose rows a
# thread streams at memory speed where a dequantize also writes 4 bytes a value: Zen 4, weights
# rotated past the L3, 2 threads against 1: q4_1 x 576 values 68 KiB 0.66x, 135 KiB 0.81x, 202
# KiB 0.88x, 270 KiB 0.97x, 405 KiB 1.11x; q8_0 x 4096 68 KiB 0.62x, 136 KiB 0.77x, 272 KiB
# 0.92x, 544 KiB 1.04x; q4_K x 2048 288 KiB 1.01x, 576 KiB 1.10x (dequantize 1.3-1.7x from
# 34 KiB on).  In SmolLM2-135M's loop, builds alternating: its 192 x 576 product 10.0-10.6 ->
# 9.2-9.6 us, the others even
PRODUCT_SERIAL_BELOW_BYTES = 256 * 1024


def _check(n, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{what} must be a positive int, not {type(n).__name__}")
    if n < 1:
        raise ValueError(f"{what} must be >= 1, got {n}")
    return n


def set_num_threads(n: int | None) -> None:
    """Set the default thread count of every qgemv kernel (None: back to automatic)."""
    global _fixed
    _fixed = None if n is None else _check(n, "n_threads")


@functools.lru_cache(maxsize=None)
def available_cpus() -> int:
    """CPUs this process may run on: affinity mask, then the cgroup v2 CPU quota (read once)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            n = min(n, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, n)


def get_num_threads() -> int:
    """The thread count a kernel call uses when ``n_threads`` is None."""
    if _forked_after_team:
        return 1
    if _fixed is not None:
        return _fixed
    _, omp_max = _kernels.openmp()
    return max(1, min(omp_max, available_cpus()))


def resolve(n_threads: int | None, work_bytes: int | None, rows: int | None, product: bool = False) -> int:
    """The thread count for one call: explicit or default, as an upper bound; small
    problems run serially, since waking a thread team costs more than they take (below
    SERIAL_BELOW_BYTES of work, PRODUCT_SERIAL_BELOW_BYTES for a product, or SERIAL_BELOW_ROWS
    rows; work_bytes and rows None: a kernel that pays for a team at any size, the model's
    attention);
    so does a child forked after its parent ran threads (see the module docstring)."""
    global _team_started
    if n_threads is not None:
        _check(n_threads, "n_threads")
    if _forked_after_team:
        return 1
    if work_bytes is not None:
        serial_below = PRODUCT_SERIAL_BELOW_BYTES if product else SERIAL_BELOW_BYTES
        if work_bytes < serial_below or rows < SERIAL_BELOW_ROWS:
            return 1
    n = get_num_threads() if n_threads is None else n_threads
    if n > 1:
        _team_started = True
    return n
