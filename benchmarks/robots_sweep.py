"""Every URDF of example-robot-data and pybullet_data that Pinocchio loads: does redmax load it and agree?

Usage: ``python benchmarks/robots_sweep.py [--states 3] [--random-urdfs] [--only SUBSTRING] [-v]``
(needs Pinocchio, example-robot-data and, for its data files, pybullet: ``pip install ".[test]" pybullet``).

For each file and each base (fixed: the root link is the world; floating: a free joint named ``root_joint``,
Pinocchio's ``JointModelFreeFlyer``) the file is loaded by Pinocchio and by ``rm.load_urdf``, and rnea, aba and
crba are compared at random states (relative to the largest entry of Pinocchio's result; free joints converted
with ``redmax.testing.pinocchio_bridge.free_joint_maps``).  Outcomes:

* ``agree``: every difference < 1e-9 relative;
* ``singular``: redmax declines with a ModelError naming a joint because the joint-space inertia is singular,
  and Pinocchio's own M is singular there too (its ``aba`` returns NaN/inf or garbage) -- the issue's exception;
* ``DIFFER``, ``REFUSED`` (a RedmaxError on a file Pinocchio loads), ``LEAK`` (any other exception): failures.

Files Pinocchio cannot load (empty xacro stubs, URDF extensions such as pybullet's ``spherical`` joints) are
counted apart.  The exit status is 1 when any failure remains.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import warnings

import numpy as np

import redmax as rm
from redmax.testing.pinocchio_bridge import compare_with_pinocchio
from redmax.testing.robots import all_urdfs

TOL = 1e-9


@contextlib.contextmanager
def _quiet_stderr():
    """Silence C++ prints on file descriptor 2 (Pinocchio's URDF parser warns there)."""
    fd = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(fd, 2)
            os.close(fd)


def pinocchio_model(path: str, floating: bool):
    import pinocchio as pin

    with _quiet_stderr():
        try:
            return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
        except Exception as e:
            return str(e).splitlines()[0] if str(e) else type(e).__name__


def pinocchio_singular(pm, rng) -> bool:
    """True when Pinocchio's joint-space inertia is singular at a random configuration (cond > 1e12)."""
    import pinocchio as pin

    pd = pm.createData()
    q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq)) if pm.nq else np.zeros(0)
    M = pin.crba(pm, pd, q)
    M = np.triu(M) + np.triu(M, 1).T
    ev = np.linalg.eigvalsh(M)
    return bool(ev.size and (ev[0] <= 1e-12 * max(1.0, ev[-1])))


def check_file(path: str, floating: bool, states: int, seed: int = 0):
    """(outcome, detail, warnings) for one file and base."""
    pm = pinocchio_model(path, floating)
    if isinstance(pm, str):
        return "pinocchio-refuses", pm, []
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", rm.RedmaxWarning)
        try:
            model = rm.load_urdf(path, floating_base=floating)
        except rm.ModelError as e:
            msg = str(e)
            if ("moves no mass" in msg or "dependent" in msg) and pinocchio_singular(pm, rng):
                return "singular", msg, []
            return "REFUSED", msg, []
        except Exception as e:
            return "LEAK", f"{type(e).__name__}: {e}", []
    warns = [str(w.message) for w in caught if issubclass(w.category, rm.RedmaxWarning)]
    if model.ndof != pm.nv:
        return "DIFFER", f"{model.ndof} DOFs here, {pm.nv} in Pinocchio", warns
    try:
        worst = compare_with_pinocchio(model, pm, rng, states)
    except rm.ModelError as e:
        if pinocchio_singular(pm, rng):
            return "singular", str(e), warns
        return "REFUSED", f"at a random state: {e}", warns
    bad = {k: v for k, v in worst.items() if not v < TOL}
    if bad:
        return "DIFFER", ", ".join(f"{k} {v:.1e}" for k, v in bad.items()), warns
    return "agree", f"{model.ndof} dof, worst {max(worst.values(), default=0.0):.1e}", warns


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=3, help="random states per file and base (default 3)")
    ap.add_argument("--random-urdfs", action="store_true", help="include pybullet's 1000 random single-link objects")
    ap.add_argument("--only", default="", help="only files whose label contains this string")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per file and base")
    a = ap.parse_args(argv)
    files = [(lb, p) for lb, p in all_urdfs(a.random_urdfs) if a.only in lb]
    t0 = time.perf_counter()
    totals = {}
    failures = []
    nwarn = 0
    worst_all = 0.0
    for base in ("fixed", "floating"):
        counts = {}
        for label, path in files:
            out, detail, warns = check_file(path, base == "floating", a.states)
            counts[out] = counts.get(out, 0) + 1
            nwarn += len(warns)
            if out == "agree":
                worst_all = max(worst_all, float(detail.rsplit(" ", 1)[1]))
            if out in ("DIFFER", "REFUSED", "LEAK"):
                failures.append((base, label, out, detail))
            if a.verbose:
                extra = f" [{len(warns)} warning(s): {warns[0][:90]}...]" if warns else ""
                print(f"{base:8s} {out:17s} {label}: {detail[:140]}{extra}", flush=True)
        totals[base] = counts
    loaded = {b: sum(v for k, v in c.items() if k != "pinocchio-refuses") for b, c in totals.items()}
    print(f"\n{len(files)} URDF files, {a.states} random states each, tolerance {TOL:g} relative "
          f"({time.perf_counter() - t0:.0f} s)")
    for base, counts in totals.items():
        print(f"  {base:8s}: Pinocchio loads {loaded[base]:3d}; redmax agrees on {counts.get('agree', 0):3d}, "
              f"declines {counts.get('singular', 0)} with singular M (Pinocchio's M singular too); "
              f"failures {sum(counts.get(k, 0) for k in ('DIFFER', 'REFUSED', 'LEAK'))}; "
              f"Pinocchio refuses {counts.get('pinocchio-refuses', 0)}")
    print(f"  worst relative difference among agreeing files: {worst_all:.1e}; RedmaxWarnings issued: {nwarn}")
    for base, label, out, detail in failures:
        print(f"  {out} ({base}) {label}: {detail[:200]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
