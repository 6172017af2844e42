"""Time redmax's rnea, aba, crba and minv against Pinocchio's, per call from Python, in one process.

Usage: ``python benchmarks/vs_pinocchio.py [--quick]`` (needs the test extras: ``pip install ".[test]"``).

The same models are built in both libraries (random revolute chains of N = 10, 36, 100 joints with random
axes, placements and inertias; depth-first binary trees of 15, 31, 63 bodies; two robots from
example-robot-data).  Each algorithm is timed in batches, alternating redmax and Pinocchio batch by batch
(round robin), and the table reports the ratio of the median per-call times (ours / Pinocchio), after
checking that both libraries return the same numbers.  It ends with each target (worst ratio over the
models the target covers) and the time to import redmax in a fresh interpreter.  Targets: rnea and aba <= 1.0
at N >= 36 (chains of 36 and 100, the tree of 63) and <= 1.5 at N = 10; crba and minv <= 1.2 at N >= 36.

Two more sections (``--small``, ``--batch``; both run by default after the table):

* single calls on small robots: every example-robot-data URDF with 1 to 7 DOF (fixed base) that both libraries
  load, rnea and aba per call (ours plain and with ``out=``), ratio of medians, and the median ratio over those
  robots (target: <= 1.0);
* batched calls: ``rm.rnea(model, Q, V, A)`` and ``rm.aba`` over B = 1000 states against a Python loop over
  Pinocchio's calls (target: >= 4x faster) and over our own single calls (target: >= 3x faster), on panda and ur5.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np

import redmax as rm
from redmax.testing.models import random_model
from redmax.testing.pinocchio_bridge import to_pinocchio


def _pin():
    import pinocchio as pin

    return pin


def _robot(name: str):
    """A fixed-base example-robot-data robot loaded by redmax and the Pinocchio model of the same file."""
    from redmax.testing.robots import robot_urdf

    path = robot_urdf(name)
    model = rm.load_urdf(path)
    return model, _pin().buildModelFromUrdf(path)


def _batch(f, n: int) -> float:
    t = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t) / n


def compare(pairs, rounds: int, batch: int) -> dict:
    """Round-robin timing: for every round, one batch of each function in turn.  Returns medians (s)."""
    times = {k: [] for k in pairs}
    for f in (f for pair in pairs.values() for f in pair):
        _batch(f, 50)  # warm up (compilation, caches)
    for _ in range(rounds):
        for key, (ours, theirs) in pairs.items():
            times[key].append((_batch(ours, batch), _batch(theirs, batch)))
    return {k: (float(np.median([a for a, _ in v])), float(np.median([b for _, b in v]))) for k, v in times.items()}


def _sym(M):
    return np.triu(M) + np.triu(M, 1).T


def cases(model, pm, rng):
    """The four algorithm pairs at one random state, after checking they agree."""
    pin = _pin()
    pd = pm.createData()
    q, qd, qdd = rng.normal(size=(3, model.ndof))
    checks = {
        "rnea": (rm.rnea(model, q, qd, qdd), pin.rnea(pm, pd, q, qd, qdd)),
        "aba": (rm.aba(model, q, qd, qdd), pin.aba(pm, pd, q, qd, qdd)),
        "crba": (rm.crba(model, q), _sym(pin.crba(pm, pd, q))),
        "minv": (rm.minv(model, q), _sym(pin.computeMinverse(pm, pd, q))),
    }
    for k, (a, b) in checks.items():
        err = np.abs(a - b).max() / np.abs(b).max()
        if not err < 1e-9:
            raise AssertionError(f"{k}: redmax and Pinocchio differ by {err:.2e} (relative)")
    return {
        "rnea": (lambda: rm.rnea(model, q, qd, qdd), lambda: pin.rnea(pm, pd, q, qd, qdd)),
        "aba": (lambda: rm.aba(model, q, qd, qdd), lambda: pin.aba(pm, pd, q, qd, qdd)),
        "crba": (lambda: rm.crba(model, q), lambda: pin.crba(pm, pd, q)),
        "minv": (lambda: rm.minv(model, q), lambda: pin.computeMinverse(pm, pd, q)),
    }


def import_time() -> float:
    """Seconds to ``import redmax`` in a fresh interpreter (Numba cache warm after this process ran)."""
    code = "import time; t = time.perf_counter(); import redmax; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


# (algorithm, model labels, bound): the targets of the main table
BIG = ("chain N=36", "chain N=100", "binary tree 63")
TARGETS = [("rnea", BIG, 1.0), ("aba", BIG, 1.0), ("rnea", ("chain N=10",), 1.5), ("aba", ("chain N=10",), 1.5),
           ("crba", BIG, 1.2), ("minv", BIG, 1.2)]


def small_robots(max_dof: int = 7):
    """(label, model, Pinocchio model, DofMap) of every example-robot-data URDF with 1..max_dof DOF (fixed base)
    that both libraries load without a warning-free failure (warnings are fine), sorted by label."""
    import os
    import warnings

    from redmax.testing.pinocchio_bridge import DofMap
    from redmax.testing.robots import all_urdfs

    pin = _pin()
    out = []
    for label, path in all_urdfs():
        if not label.startswith("erd:"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = rm.load_urdf(path)
            if not 1 <= m.ndof <= max_dof:
                continue
            pm = pin.buildModelFromUrdf(path)
        except Exception:  # (files either library refuses are not part of this median)
            continue
        out.append((os.path.basename(path)[:-5], m, pm, DofMap(m, pm)))
    return out


def _small_pairs(m, pm, mp, rng) -> dict:
    """(ours, Pinocchio's) callables of rnea and aba, plain and with ``out=``, at one random state."""
    pin = _pin()
    pd = pm.createData()
    q, qd, a = rng.normal(size=(3, m.ndof))
    qp, vp, ap_ = mp.q_pin(q), mp.vec(qd), mp.vec(a)
    out = np.empty(m.ndof)
    return {"rnea": (lambda: rm.rnea(m, q, qd, a), lambda: pin.rnea(pm, pd, qp, vp, ap_)),
            "rnea out": (lambda: rm.rnea(m, q, qd, a, out=out), lambda: pin.rnea(pm, pd, qp, vp, ap_)),
            "aba": (lambda: rm.aba(m, q, qd, a), lambda: pin.aba(pm, pd, qp, vp, ap_)),
            "aba out": (lambda: rm.aba(m, q, qd, a, out=out), lambda: pin.aba(pm, pd, qp, vp, ap_))}


def small_robot_table(rounds: int, batch: int, rng) -> dict:
    """rnea and aba per call on the small robots; prints one line per robot and returns the median ratios."""
    print(f"\nsingle calls on small robots (example-robot-data, 1-7 DOF, fixed base): ours / Pinocchio per call, "
          f"{rounds} rounds x {batch} calls")
    print(f"{'robot':28s} {'dof':>3s} {'rnea':>7s} {'rnea out=':>9s} {'aba':>7s} {'aba out=':>9s} {'pin rnea us':>11s}")
    ratios = {"rnea": [], "rnea out": [], "aba": [], "aba out": []}
    for label, m, pm, mp in small_robots():
        res = compare(_small_pairs(m, pm, mp, rng), rounds, batch)
        r = {k: res[k][0] / res[k][1] for k in res}
        for k in ratios:
            ratios[k].append(r[k])
        print(f"{label:28s} {m.ndof:3d} {r['rnea']:7.2f} {r['rnea out']:9.2f} {r['aba']:7.2f} {r['aba out']:9.2f} "
              f"{res['rnea'][1] * 1e6:11.2f}", flush=True)
    med = {k: float(np.median(v)) for k, v in ratios.items()}
    print(f"{'median over ' + str(len(ratios['rnea'])) + ' robots':32s} {med['rnea']:7.2f} {med['rnea out']:9.2f} "
          f"{med['aba']:7.2f} {med['aba out']:9.2f}")
    return med


def batched_table(names, B: int, rounds: int, rng) -> dict:
    """Batched rnea/aba over B states vs Python loops over Pinocchio's and our single calls (speed-ups)."""
    pin = _pin()

    print(f"\nbatched calls, B = {B} states, {rm.get_num_threads()} threads: speed-up of one batched call over a "
          f"Python loop of single calls (median of {rounds} rounds)")
    print(f"{'robot':18s} {'alg':5s} {'batched us/state':>16s} {'vs loop over Pinocchio':>23s} "
          f"{'vs loop over ours':>18s}")
    out = {}
    for name in names:
        m, pm = _robot(name)
        pd = pm.createData()
        Q, V, A = rng.normal(size=(3, B, m.ndof))
        T = rm.rnea(m, Q, V, A)
        assert np.allclose(T[7], pin.rnea(pm, pd, Q[7], V[7], A[7]), rtol=1e-9, atol=1e-9)
        for alg, ours, theirs in (("rnea", rm.rnea, pin.rnea), ("aba", rm.aba, pin.aba)):
            X = A if alg == "rnea" else T
            res = np.empty((B, m.ndof))

            def batched(ours=ours, m=m, Q=Q, V=V, X=X, res=res):
                ours(m, Q, V, X, out=res)

            def loop_pin(theirs=theirs, pm=pm, pd=pd, Q=Q, V=V, X=X):
                for k in range(B):
                    theirs(pm, pd, Q[k], V[k], X[k])

            def loop_ours(ours=ours, m=m, Q=Q, V=V, X=X):
                for k in range(B):
                    ours(m, Q[k], V[k], X[k])

            for f in (batched, loop_pin, loop_ours):
                f()
            times = {"b": [], "p": [], "o": []}
            for _ in range(rounds):
                for key, f in (("b", batched), ("p", loop_pin), ("o", loop_ours)):
                    t = time.perf_counter()
                    f()
                    times[key].append(time.perf_counter() - t)
            tb, tp, to = (float(np.median(times[k])) for k in "bpo")
            out[(name, alg)] = (tp / tb, to / tb)
            print(f"{name + f' ({m.ndof} dof)':18s} {alg:5s} {tb / B * 1e6:16.3f} {tp / tb:22.2f}x {to / tb:17.2f}x",
                  flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds (a rough check)")
    ap.add_argument("--robots", nargs="*", default=["ur5", "panda"], help="example-robot-data robots")
    ap.add_argument("--only", choices=("table", "small", "batch"), help="run one section only")
    ap.add_argument("--batch-size", type=int, default=1000, help="B for the batched section (default 1000)")
    a = ap.parse_args(argv)
    rounds, batch = (7, 100) if a.quick else (31, 300)
    if a.only in ("small", "batch"):
        rng = np.random.default_rng(2024)
        if a.only == "small":
            _small_summary(small_robot_table(rounds, batch, rng))
        else:
            _batch_summary(batched_table(["panda", "ur5"], a.batch_size, 5 if a.quick else 15, rng))
        return 0
    rng = np.random.default_rng(2024)
    models = []
    for n in (10, 36, 100):
        m = random_model(rng, n=n, topology="chain", joints="revolute", gravity=(0, 0, -9.81))
        models.append((f"chain N={n}", m, to_pinocchio(m)))
    for n in (15, 31, 63):
        m = random_model(rng, n=n, topology="binary-dfs", joints="revolute", gravity=(0, 0, -9.81))
        models.append((f"binary tree {n}", m, to_pinocchio(m)))
    for name in a.robots:
        m, pm = _robot(name)
        models.append((f"{name} ({m.ndof} dof)", m, pm))
    print(f"redmax {rm.__version__} vs Pinocchio {_pin().__version__}: ratio of median per-call times "
          f"(ours / Pinocchio), {rounds} rounds x {batch} calls\n")
    print(f"{'model':24s} {'rnea':>14s} {'aba':>14s} {'crba':>14s} {'minv':>14s}")
    ratios = {}
    for label, m, pm in models:
        res = compare(cases(m, pm, rng), rounds, batch)
        ratios[label] = {k: res[k][0] / res[k][1] for k in res}
        cells = [f"{ratios[label][k]:5.2f} ({res[k][0] * 1e6:5.1f}us)" for k in ("rnea", "aba", "crba", "minv")]
        print(f"{label:24s} " + " ".join(f"{c:>14s}" for c in cells), flush=True)
    print("\n(in parentheses: redmax's time per call)\n\ntargets:")
    for alg, labels, bound in TARGETS:
        worst = max(ratios[lb][alg] for lb in labels)
        print(f"  {alg:5s} <= {bound:.1f} at {', '.join(labels):42s} worst {worst:5.2f}  "
              f"{'met' if worst <= bound else 'NOT MET'}")
    t = import_time()
    print(f"  import redmax: {t:.2f} s (target < 2 s)  {'met' if t < 2.0 else 'NOT MET'}")
    if a.only == "table":
        return 0
    _small_summary(small_robot_table(rounds, batch, rng))
    _batch_summary(batched_table(["panda", "ur5"], a.batch_size, 5 if a.quick else 15, rng))
    return 0


def _small_summary(med: dict) -> None:
    print(f"\n  single calls at 1-7 DOF: median rnea {med['rnea']:.2f}, aba {med['aba']:.2f} (out=: "
          f"{med['rnea out']:.2f}, {med['aba out']:.2f}); target <= 1.0: "
          f"{'met' if max(med['rnea'], med['aba']) <= 1.0 else 'NOT MET'}")


def _batch_summary(res: dict) -> None:
    worst_pin = min(v[0] for v in res.values())
    worst_ours = min(v[1] for v in res.values())
    print(f"\n  batched rnea/aba, worst speed-up vs a loop over Pinocchio {worst_pin:.2f}x (target >= 4): "
          f"{'met' if worst_pin >= 4 else 'NOT MET'}; vs a loop over our single calls {worst_ours:.2f}x (target >= 3): "
          f"{'met' if worst_ours >= 3 else 'NOT MET'}")


if __name__ == "__main__":
    raise SystemExit(main())
