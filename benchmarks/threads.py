"""Threaded calls alone and beside a busy process: one thread against two, for the second-order derivatives of
talos_reduced (tangent rates; needs the test extras) and a batched ``aba`` of 1000 panda states, with Pinocchio's
single-threaded first order on talos as the reference of what a busy neighbour costs a single thread.

Usage: ``python benchmarks/threads.py [--rounds R] [--busy-only | --alone-only]``.  Each case is timed in batches,
round robin, ``R`` rounds; the table gives the median per-call time and the range of the per-round medians, first
alone, then with one ``python -c "while True: pass"`` started beside (and stopped at the end).  On a 2-core
machine the busy process takes one core: a threaded call then runs at about its one-thread time (the calling
thread does the chunks of a worker that is not scheduled), a single thread at what the shared core leaves it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np

import redmax as rm


def cases():
    from redmax.testing.robots import robot_urdf

    rng = np.random.default_rng(0)
    talos = rm.load_urdf(robot_urdf("talos"), floating_base=True)
    q = 0.3 * rng.normal(size=talos.ndof)
    qd, qdd = rng.normal(size=(2, talos.ndof))
    panda = rm.load_urdf(robot_urdf("panda"))
    B = 1000
    Q, V, T = (rng.normal(size=(B, panda.ndof)) for _ in range(3))
    out = {}
    for nt in (1, 2):
        out[f"talos second order, {nt} thread(s)"] = (
            lambda nt=nt: rm.rnea_second_order_derivatives(talos, q, qd, qdd, tangent=True, threads=nt), 20)
        out[f"batched aba B={B}, {nt} thread(s)"] = (lambda nt=nt: rm.aba(panda, Q, V, T, threads=nt), 5)
    try:
        import pinocchio as pin

        from redmax.testing.robots import robot_urdf as _u

        pm = pin.buildModelFromUrdf(_u("talos"), pin.JointModelFreeFlyer())
        pd = pm.createData()
        qp = pin.neutral(pm)
        v = np.ones(pm.nv)
        out["Pinocchio first order (talos, one thread)"] = (
            lambda: pin.computeRNEADerivatives(pm, pd, qp, v, v), 100)
    except ImportError:
        pass
    return out


def _batch(f, k):
    t = time.perf_counter()
    for _ in range(k):
        f()
    return (time.perf_counter() - t) / k


def measure(cs, rounds):
    for f, k in cs.values():
        _batch(f, max(1, k // 4))  # warm up (and compile)
    times = {name: [] for name in cs}
    for _ in range(rounds):
        for name, (f, k) in cs.items():
            times[name].append(_batch(f, k))
    return {name: np.array(v) for name, v in times.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--busy-only", action="store_true")
    ap.add_argument("--alone-only", action="store_true")
    a = ap.parse_args(argv)
    cs = cases()
    res = {}
    if not a.busy_only:
        res["alone"] = measure(cs, a.rounds)
    if not a.alone_only:
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            time.sleep(0.5)
            res["busy"] = measure(cs, a.rounds)
        finally:
            busy.kill()
            busy.wait()
    print(f"redmax {rm.__version__}, {a.rounds} rounds: median per call (range of the round medians)")
    for cond, t in res.items():
        print(f"\n{cond}:")
        for name, v in t.items():
            print(f"  {name:45s} {np.median(v) * 1e6:9.1f} us  ({v.min() * 1e6:.1f}-{v.max() * 1e6:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
