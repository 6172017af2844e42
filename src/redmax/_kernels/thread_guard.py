"""One thread for a while when the threads of a call were held up (the lean second-order call,
:func:`redmax.derivatives.rnea_second_order._lean_call`, and the batched calls, :func:`redmax.dynamics._batch`).

A parallel region needs a core for each of Numba's threads.  On a machine with no more cores than threads (the
2-vCPU VMs this project targets) another thread that spins on a core holds a worker up until the scheduler's next
tick, milliseconds later.  NumPy's OpenBLAS workers spin like that after every product they share, and Numba's
OpenMP workers spin after a region, which holds OpenBLAS's next product up the same way.  Measured on talos
(tangent rates, two threads, 2026-11-29): the second order took 50 us a call alone and about 4 ms with a NumPy
product ``(38, 38) @ (38, 1444)`` on two OpenBLAS threads between the calls, and that product took 58 us alone
and 4 ms after our call. The same plan run on the calling thread alone took 95-97 us, and the product after it
57 us.  Batched ``rnea``/``aba``/``crba`` of 16 and 256 talos states: 28-513 us alone, 4.0-6.4 ms after the
product.

The rule: a threaded call of ``units`` units of work (1 for the second order, the number of states for a batch)
that takes more than ``units`` times twice the fastest time per unit so far, plus ``SLACK_NS``, was held up.  The
calls of the next ``FIRST_NS`` run on the calling thread (``numba.set_num_threads(1)`` around the call: the same
compiled code runs each thread's part in turn, so the results are bitwise the same).  Each threaded retry that is
held up again doubles that period, up to ``LAST_NS``, and a retry that is not held up brings it back to
``FIRST_NS``.  The periods are times, not call counts, so that a retry (one tick, about 4 ms, when held up) costs
at most about 3 % under steady contention, and calls of any size are on one thread for at most ``LAST_NS`` after
the contention ends.
"""

from __future__ import annotations

from time import perf_counter_ns

from numba import set_num_threads

__all__ = ["FIRST_NS", "LAST_NS", "SLACK_NS", "guarded", "held_up", "new_guard"]

FIRST_NS = 5_000_000  # the first period on one thread after a held-up call (ns)
LAST_NS = 160_000_000  # the longest period on one thread between threaded retries (ns)
SLACK_NS = 1_000_000  # a scheduler tick is 1-4 ms: slower than 2 x the fastest call by this much is held up


def new_guard() -> list:
    """The state of one guarded call site: ``[fastest threaded time per unit of work (ns), end of the period on
    one thread (perf_counter_ns), the next period (ns)]``."""
    return [float(1 << 62), 0, FIRST_NS]


def held_up(g: list, ns: int, units: int, now: int) -> bool:
    """Record a threaded call of ``ns`` nanoseconds for ``units`` units of work, ended at ``now``; True (and the
    calls until ``now + g[2]`` on one thread) if it was held up."""
    per = ns / units
    if per < g[0]:
        g[0] = per
    if ns > 2.0 * g[0] * units + SLACK_NS:
        g[1] = now + g[2]
        g[2] = min(2 * g[2], LAST_NS)
        return True
    g[2] = FIRST_NS
    return False


def guarded(g: list, nthreads: int, units: int, f, *args):
    """``f(*args)``, a call that runs parallel regions on ``nthreads`` of Numba's threads (Numba's count now):
    timed and recorded (:func:`held_up`), or on the calling thread alone during a period :func:`held_up` set.
    Unguarded below two threads or without work (``units < 1``, an empty batch).  A call that returns
    ``NotImplemented`` or -2 (the lean call's "declined" and "rejected": it did not run the kernel through) or
    raises is not recorded, so that it cannot pass for the fastest call."""
    if nthreads < 2 or units < 1:
        return f(*args)
    t0 = perf_counter_ns()
    if t0 < g[1]:
        set_num_threads(1)
        try:
            return f(*args)
        finally:
            set_num_threads(nthreads)
    r = f(*args)
    t1 = perf_counter_ns()
    if not (r is NotImplemented or (type(r) is int and r == -2)):
        held_up(g, t1 - t0, units, t1)
    return r
