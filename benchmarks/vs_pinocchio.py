"""Time redmax's rnea, aba, crba and minv against Pinocchio's, per call from Python, in one process.

Usage: ``python benchmarks/vs_pinocchio.py [--quick]`` (needs the test extras: ``pip install ".[test]"``).

The same models are built in both libraries (random revolute chains of N = 10, 36, 100 joints with random
axes, placements and inertias; depth-first binary trees of 15, 31, 63 bodies; two robots from
example-robot-data).  Each algorithm is timed in batches, alternating redmax and Pinocchio batch by batch
(round robin), and the table reports the ratio of the median per-call times (ours / Pinocchio), after
checking that both libraries return the same numbers.  It ends with each target of issue 4 (worst ratio
over the models the target covers) and the time to import redmax in a fresh interpreter.  Targets
(issue 4): rnea and aba <= 1.0 at N >= 36 (chains of 36 and 100, the tree of 63) and <= 1.5 at N = 10;
crba and minv <= 1.2 at N >= 36.
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


# (algorithm, model labels, bound): the targets of issue 4
BIG = ("chain N=36", "chain N=100", "binary tree 63")
TARGETS = [("rnea", BIG, 1.0), ("aba", BIG, 1.0), ("rnea", ("chain N=10",), 1.5), ("aba", ("chain N=10",), 1.5),
           ("crba", BIG, 1.2), ("minv", BIG, 1.2)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds (a rough check)")
    ap.add_argument("--robots", nargs="*", default=["ur5", "panda"], help="example-robot-data robots")
    a = ap.parse_args(argv)
    rounds, batch = (7, 100) if a.quick else (31, 300)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
