"""Second by second: is the host in a phase where our two threads share no cache?  (issue 14, stop 43)

Usage: ``python benchmarks/host_phases.py [--seconds S]`` (needs the test extras).

On the 2-vCPU VMs of the benchmarks the same talos second-order call took 50 µs in some seconds and 72-76 µs in
others, while Pinocchio's first order and our one-thread call did not change.  This prints, per second of about
1.2 s of work, the medians of:

* ``2thr``: our ``rnea_second_order_derivatives`` on talos_reduced (free-flyer base, ``tangent=True``, ``out=``)
  on two Numba threads, and ``1thr`` the same on one (``numba.set_num_threads(1)``);
* ``pin``: Pinocchio's ``computeRNEADerivatives`` on the same model (its first order, one thread) and the ratio
  ``2thr / pin`` (the quantity the issue bounds by 5.0);
* ``xread``: each thread writes its 160 kB row, then (a second parallel region) reads the other's row, against
  ``own``: each reads the row it wrote (a line moved between the cores costs much more when they share no
  cache).  Iteration c of both regions runs on the same thread under Numba's OpenMP layer (static schedule), as
  here; not necessarily under TBB.

Pinocchio gets the same state as ours (``DofMap``, as in ``benchmarks/derivatives.py``).

* ``priv2``: each thread updates a row of its own (320 kB, three passes), no line shared; ``priv1``: thread 0
  alone does the same (thread 1 idle in the region).

A slow second shows ``2thr`` and ``xread`` up together while ``1thr``, ``pin`` and ``own`` stay put.  ``priv2``
against ``priv1`` tells whether the two threads slow each other down without sharing any data: on 2026-11-29
(stop 45) 9.5-9.9 against 8.0-8.4 us in slow seconds and 7.4-7.6 against 7.1-7.3 us in fast ones, while a loop
of integer arithmetic on both threads took as long as on one (21.0-21.5 against 20.5-21.1 us, slow phase).
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from numba import prange

import redmax as rm
from redmax._jit import njit, threads_pay
from redmax.testing.pinocchio_bridge import DofMap


@njit(parallel=True)
def _write(B):
    """(2, m) B: thread c adds one to row c."""
    for c in prange(2):
        b = B[c]
        for i in range(b.shape[0]):
            b[i] = b[i] + 1.0


@njit(parallel=True)
def _read(B, swap, out):
    """Thread c sums row ``c ^ swap`` of B into out[c] (swap 1: the row the other thread wrote)."""
    for c in prange(2):
        b = B[c ^ swap]
        s = 0.0
        for i in range(b.shape[0]):
            s += b[i]
        out[c] = s


@njit(parallel=True)
def _private(P, passes, out):
    """(2, m) P: thread c updates its own row ``passes[c]`` times (read, multiply-add, write; 320 kB a row, in the
    core's own L2), ``out[16 c]`` a checksum."""
    for c in prange(2):
        b = P[c]
        s = 0.0
        for _ in range(passes[c]):
            for i in range(b.shape[0]):
                b[i] = b[i] * 0.5 + 1.0
            s += b[3]
        out[16 * c] = s


def _median_us(f, seconds: float) -> float:
    ts = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=30, help="how many seconds to print (default 30)")
    a = ap.parse_args(argv)
    import pinocchio as pin

    from redmax.testing.robots import robot_urdf

    path = robot_urdf("talos")
    m = rm.load_urdf(path, floating_base=True)
    rng = np.random.default_rng(0)
    q = 0.3 * rng.normal(size=m.ndof)
    qd, qdd = rng.normal(size=(2, m.ndof))
    n = m.ndof
    out = tuple(np.zeros((n, n, n)) for _ in range(4))
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    pd = pm.createData()
    mp = DofMap(m, pm, tangent=True)
    pq, pv, pa = mp.q_pin(q), mp.vec(qd), mp.vec(qdd)
    B = np.zeros((2, 20000))
    r = np.zeros(2)

    def ours():
        rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True, out=out)

    def theirs():
        pin.computeRNEADerivatives(pm, pd, pq, pv, pa)

    nt = numba.get_num_threads()
    if nt < 2:
        raise SystemExit("needs two Numba threads (NUMBA_NUM_THREADS >= 2)")
    if not threads_pay():  # (Numba's workqueue layer: the second order would run on one thread anyway)
        raise SystemExit(f"Numba's threading layer is {numba.threading_layer()!r}: the second order runs on one thread")
    numba.set_num_threads(2)
    P = np.zeros((2, 40000))
    both, alone, cs = np.array([3, 3]), np.array([3, 0]), np.zeros(32)
    ours(), theirs(), _write(B), _read(B, 0, r), _private(P, both, cs)
    print("second  2thr(us)  1thr(us)  pin(us)  2thr/pin  own(us)  xread(us)  priv2(us)  priv1(us)")
    for sec in range(a.seconds):
        two = _median_us(ours, 0.3)
        numba.set_num_threads(1)
        one = _median_us(ours, 0.3)
        numba.set_num_threads(2)
        p = _median_us(theirs, 0.2)
        own = _median_us(lambda: (_write(B), _read(B, 0, r)), 0.2)
        x = _median_us(lambda: (_write(B), _read(B, 1, r)), 0.2)
        p2 = _median_us(lambda: _private(P, both, cs), 0.1)
        p1 = _median_us(lambda: _private(P, alone, cs), 0.1)
        print(f"{sec:6d}  {two:8.1f}  {one:8.1f}  {p:7.1f}  {two / p:8.2f}  {own:7.1f}  {x:9.1f}  {p2:9.1f}  {p1:9.1f}",
              flush=True)
    numba.set_num_threads(nt)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
