"""Cost of an adjoint gradient against one forward simulation, and forward BDF steps per second.

Usage: ``python benchmarks/adjoint.py [--quick] [--repeat R]``

1. Gradient cost.  For diff/100 (BDF1 and SDIRK2), diff/101 (BDF2) and a 50-link chain (BDF1, BDF2; constant
   torques on every joint, a point target on the tip), the median time of one forward simulation
   (``simulate_implicit``, no recording) and of one value-and-gradient evaluation (forward run recording the Newton
   factors at the solutions + one backward sweep + the parameter gradients), timed round robin, and their ratio.
   Target: gradient / forward <= 2 (the method's limit is about 1: one backward solve per step against the Newton
   solves of the step).
2. Forward speed.  Steps per second of "bdf1", "sdirk2" and "bdf2" on diff/00-14 (each scene's own dt and
   duration) and on the 50-link benchmark chain, with the ratio to linearly implicit Euler on the same run.

All timings are wall-clock medians in this process, after one warm-up run (Numba compilation excluded).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import redmax as rm
from redmax.integrators.bdf import simulate_implicit
from redmax.objectives import Objective, PointTarget
from redmax.optimize import Problem
from redmax.params import Torque
from redmax.scenes import Scene
from redmax.testing.benchmark_models import benchmark_chain


def _median_pair(fa, fb, repeat):
    ta, tb = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fa()
        t1 = time.perf_counter()
        fb()
        t2 = time.perf_counter()
        ta.append(t1 - t0)
        tb.append(t2 - t1)
    return float(np.median(ta)), float(np.median(tb))


def _chain_problem(n, method, duration):
    model, state = benchmark_chain(n, springs=False)
    tip = model.body_names[-1]
    obj = Objective(PointTarget(tip, (0.05, 0.0, 0.0), (0.5, 0.0, -0.5), weight=1.0), regularization=1e-3)
    params = [Torque(j, scale=1e-2) for j in model.joint_names]
    return Problem(model, params, obj, integrator=method, dt=1e-2, duration=duration, state=state)


def gradient_cost(repeat, quick):
    rows = []
    probs = [("diff/100", "bdf1", rm.scenes.load("diff/100").problem("bdf1")),
             ("diff/100", "sdirk2", rm.scenes.load("diff/100").problem("sdirk2")),
             ("diff/101", "bdf2", rm.scenes.load("diff/101").problem("bdf2"))]
    for method in ("bdf1", "bdf2"):
        probs.append(("chain50", method, _chain_problem(50, method, 0.1 if quick else 0.3)))
    print("1. one gradient (adjoint) against one forward simulation (median of", repeat, "runs)")
    print(f"{'problem':10s} {'method':7s} {'steps':>5s} {'params':>6s} {'forward s':>10s} {'gradient s':>10s} "
          f"{'ratio':>6s}")
    for name, method, prob in probs:
        x = prob.x0 + 1e-3
        s = prob.setup(x)

        def fwd(prob=prob, s=s):
            simulate_implicit(s.model, s.state, prob.integrator, prob.dt, prob.duration, prob.forces,
                              inputs=s.inputs, newton=prob.newton)

        def grad(prob=prob, x=x):
            prob.evaluate(x)

        fwd()
        grad()
        tf, tg = _median_pair(fwd, grad, repeat)
        rows.append(tg / tf)
        print(f"{name:10s} {method:7s} {prob.nsteps:5d} {prob.x0.size:6d} {tf:10.4f} {tg:10.4f} {tg / tf:6.2f}")
    worst = max(rows)
    print(f"worst gradient/forward ratio {worst:.2f} (target <= 2): {'met' if worst <= 2.0 else 'NOT MET'}\n")
    return worst


def forward_speed(repeat, quick):
    print("2. forward steps per second (ratio: implicit time / linearly implicit Euler time on the same run)")
    print(f"{'scene':10s} {'steps':>6s} {'euler st/s':>11s} " + " ".join(f"{m + ' st/s':>12s} {'ratio':>6s}"
                                                                         for m in ("bdf1", "sdirk2", "bdf2")))
    runs = [(f"diff/{k:02d}", rm.scenes.load(f"diff/{k:02d}")) for k in range(15)]
    model, state = benchmark_chain(50, springs=False)
    runs.append(("chain50", Scene("chain50", model, duration=0.2 if quick else 1.0, dt=1e-2)))
    for name, s in runs:
        duration = min(s.duration, 0.1) if quick else s.duration
        st = state if name == "chain50" else None
        nsteps = round(duration / s.dt)
        times = {}
        for method in ("euler", "bdf1", "sdirk2", "bdf2"):
            def run(method=method, s=s, duration=duration, st=st):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # diff/11 under BDF2: one step at the limit
                    s.simulate(integrator=method, duration=duration, state=st)
            run()
            ts = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                run()
                ts.append(time.perf_counter() - t0)
            times[method] = float(np.median(ts))
        cells = " ".join(f"{nsteps / times[m]:12.0f} {times[m] / times['euler']:6.1f}" for m in ("bdf1", "sdirk2",
                                                                                                 "bdf2"))
        print(f"{name:10s} {nsteps:6d} {nsteps / times['euler']:11.0f} {cells}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="short runs (smoke test)")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    gradient_cost(a.repeat, a.quick)
    forward_speed(max(1, a.repeat // 2), a.quick)


if __name__ == "__main__":
    main()
