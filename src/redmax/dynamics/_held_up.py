"""One thread for a while when the threads of a call were held up (the lean second-order call,
:func:`redmax.dynamics.rnea_second_order._lean_call`).

A parallel region needs a core for each of Numba's threads.  On a machine with no more cores than threads (the
2-vCPU VMs this project targets) another thread that spins on a core holds a worker up until the scheduler's next
tick, milliseconds later.  NumPy's OpenBLAS workers spin like that after every product they share, and Numba's
OpenMP workers spin after a region, which holds OpenBLAS's next product up the same way.  Measured on talos
(tangent rates, two threads, 2026-11-29): the second order took 50 us a call alone and about 4 ms with a NumPy
product ``(38, 38) @ (38, 1444)`` on two OpenBLAS threads between the calls, and that product took 58 us alone
and 4 ms after our call. The same plan run on the calling thread alone took 95-97 us, and the product after it
57 us.

The rule: a threaded call that takes more than twice the fastest threaded call so far plus ``SLACK_NS`` was held
up. The next ``FIRST`` calls run the same plan on the calling thread (``numba.set_num_threads(1)`` around the call:
the same compiled code runs each thread's part in turn, so the tensors are bitwise the same). Each threaded retry
that is held up again doubles that run, up to ``LAST`` calls, and a retry that is not held up brings it back to
``FIRST``.  Under steady contention the retries then cost about 4 ms per ``LAST`` calls.
"""

from __future__ import annotations

__all__ = ["FIRST", "LAST", "SLACK_NS", "held_up", "new_guard", "one_thread"]

FIRST = 8  # calls on one thread after the first held-up call
LAST = 1024  # the longest run on one thread between threaded retries
SLACK_NS = 1_000_000  # a scheduler tick is 1-4 ms: slower than 2 x the fastest call by this much is held up


def new_guard() -> list:
    """The state of one lean record: ``[fastest threaded call (ns), calls left on one thread, the next run's
    length]``."""
    return [1 << 62, 0, FIRST]


def one_thread(g: list) -> bool:
    """Whether this call runs on the calling thread alone (counts the call down)."""
    if g[1]:
        g[1] -= 1
        return True
    return False


def held_up(g: list, ns: int) -> bool:
    """Record a threaded call of ``ns`` nanoseconds; True (and the next ``g[2]`` calls on one thread) if it was
    held up."""
    if ns < g[0]:
        g[0] = ns
    if ns > 2 * g[0] + SLACK_NS:
        g[1] = g[2]
        g[2] = min(2 * g[2], LAST)
        return True
    g[2] = FIRST
    return False
