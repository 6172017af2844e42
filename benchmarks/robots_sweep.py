"""Every URDF of example-robot-data and pybullet_data that Pinocchio loads: does redmax load it and agree?

Usage: ``python benchmarks/robots_sweep.py [--states 3] [--random-urdfs] [--only SUBSTRING] [-v]``
(needs Pinocchio, example-robot-data and, for its data files, pybullet: ``pip install ".[test]" pybullet``).

For each file and each base (fixed: the root link is the world; floating: a free joint named ``root_joint``,
Pinocchio's ``JointModelFreeFlyer``) the file is loaded by Pinocchio and by ``rm.load_urdf``, and rnea, aba and
crba are compared at random states (relative to the largest entry of Pinocchio's result; free joints converted
with ``redmax.testing.pinocchio_bridge.free_joint_maps``).  Outcomes:

* ``agree``: every difference < 1e-9 relative;
* ``singular``: redmax declines with a ModelError naming a joint because the joint-space inertia is singular,
  and Pinocchio's own M is singular there too (its ``aba`` returns NaN/inf or garbage) -- the one accepted exception;
* ``DIFFER``, ``REFUSED`` (a RedmaxError on a file Pinocchio loads), ``LEAK`` (any other exception): failures.

Files Pinocchio cannot load (empty xacro stubs, URDF extensions such as pybullet's ``spherical`` joints) are
counted apart.  The exit status is 1 when any failure remains.
"""

from __future__ import annotations

import argparse
import sys
import time

from redmax.testing.robot_sweep import FAILURES, TOL, check_file
from redmax.testing.robots import all_urdfs


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
    illcond = []
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
            if out in FAILURES:
                failures.append((base, label, out, detail))
            if out == "agree-cond":
                illcond.append((base, label, detail))
            if a.verbose:
                extra = f" [{len(warns)} warning(s): {warns[0][:90]}...]" if warns else ""
                print(f"{base:8s} {out:17s} {label}: {detail[:140]}{extra}", flush=True)
        totals[base] = counts
    loaded = {b: sum(v for k, v in c.items() if k != "pinocchio-refuses") for b, c in totals.items()}
    print(f"\n{len(files)} URDF files, {a.states} random states each, tolerance {TOL:g} relative "
          f"({time.perf_counter() - t0:.0f} s)")
    for base, counts in totals.items():
        print(f"  {base:8s}: Pinocchio loads {loaded[base]:3d}; redmax agrees on {counts.get('agree', 0):3d} "
              f"(+{counts.get('agree-cond', 0)} within the conditioning of M), "
              f"declines {counts.get('singular', 0)} with singular M (Pinocchio's M singular too); "
              f"failures {sum(counts.get(k, 0) for k in FAILURES)}; "
              f"Pinocchio refuses {counts.get('pinocchio-refuses', 0)}")
    print(f"  worst relative difference among agreeing files: {worst_all:.1e}; RedmaxWarnings issued: {nwarn}")
    for base, label, detail in illcond:
        print(f"  agree-cond ({base}) {label}: {detail[:200]}")
    for base, label, out, detail in failures:
        print(f"  {out} ({base}) {label}: {detail[:200]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
