"""Benchmark: the constrained Euler step against MuJoCo and against the unconstrained step.

The benchmark chain of ``redmax.testing.benchmark_models`` without springs (N = 10 and 50), its last link's far end
held by a ball-socket (point) constraint to the world point where it starts:

* redmax: ``rm.simulate(integrator="euler")`` with ``rm.constraints.Point`` (compiled loop, KKT by the Schur
  complement on the step's Cholesky factor), and the same chain without the constraint;
* MuJoCo: the same chain with ``<equality><connect/>`` (anchor at the link's far end, its world anchor set to the
  start position), ``implicitfast``, its default (Newton) solver, contacts off.

Targets: redmax constrained no slower than MuJoCo at both sizes, and at most 1.5x the unconstrained redmax step.
Also steps/s of the constraint scenes.  Run: ``PYTHONPATH=src python benchmarks/constraints.py`` (ratios from
one run, best of 5 repeats).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import redmax as rm
from redmax.testing.benchmark_models import LENGTH, benchmark_chain, benchmark_chain_mjcf, benchmark_q0

STEPS = 2000
DT = 1e-3
REPEATS = 5


def _best(fn) -> float:
    best = np.inf
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def redmax_chain(n: int, constrained: bool):
    return benchmark_chain(n, springs=False, hold=constrained)


def mujoco_chain(n: int, constrained: bool):
    import mujoco

    xml = benchmark_chain_mjcf(n, springs=False, dt=DT)
    if constrained:
        xml = xml.replace("</mujoco>", f'<equality><connect body1="link{n - 1}" anchor="{LENGTH} 0 0"/></equality>'
                                       "</mujoco>")
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[:] = benchmark_q0(n)
    mujoco.mj_forward(m, d)
    if constrained:  # world anchor = the far end's start position (compiled from qpos0 = 0 otherwise)
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"link{n - 1}")
        m.eq_data[0, 3:6] = d.xmat[b].reshape(3, 3) @ np.array([LENGTH, 0, 0]) + d.xpos[b]
    return m, d


def time_redmax(n: int, constrained: bool) -> tuple[float, float]:
    model, st = redmax_chain(n, constrained)
    rm.simulate(model, st, dt=DT, duration=10 * DT)  # compile
    res = {}

    def run():
        res["r"] = rm.simulate(model, st, dt=DT, duration=STEPS * DT)

    t = _best(run) / STEPS
    viol = float(np.abs(res["r"].constraint_violation["hold"]).max()) if constrained else 0.0
    assert res["r"].meta["compiled"]
    return t, viol


def time_mujoco(n: int, constrained: bool) -> tuple[float, float]:
    import mujoco

    m, d = mujoco_chain(n, constrained)
    q0 = d.qpos.copy()

    def run():
        mujoco.mj_resetData(m, d)
        d.qpos[:] = q0
        for _ in range(STEPS):
            mujoco.mj_step(m, d)

    t = _best(run) / STEPS
    viol = 0.0
    if constrained:
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"link{n - 1}")
        tip = d.xmat[b].reshape(3, 3) @ np.array([LENGTH, 0, 0]) + d.xpos[b]
        viol = float(np.abs(tip - m.eq_data[0, 3:6]).max())
    return t, viol


def scenes() -> None:
    for name in ("reference/04", "reference/08", "reference/13", "reference/20", "paper/hand", "paper/hagfish"):
        try:
            s = rm.scenes.load(name)
        except rm.RedmaxError as e:
            print(f"  {name:16s} not available ({e})")
            continue
        dur = min(s.duration, 1.0)
        s.simulate(duration=s.dt * 5)
        t0 = time.perf_counter()
        r = s.simulate(duration=dur)
        wall = time.perf_counter() - t0
        steps = r.t.size - 1
        print(f"  {name:16s} {steps / wall:10.0f} steps/s  ({steps} steps of {s.dt:g} s, compiled: "
              f"{r.meta.get('compiled')})")


def main() -> int:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    print(f"benchmark chain without springs, {STEPS} steps of {DT} s, best of {REPEATS}")
    ok = True
    for n in (10, 50):
        tu, _ = time_redmax(n, False)
        tc, vr = time_redmax(n, True)
        mu, _ = time_mujoco(n, False)
        mc, vm = time_mujoco(n, True)
        r_mj, r_un = tc / mc, tc / tu
        ok &= r_mj <= 1.0 and r_un <= 1.5
        print(f"N = {n:3d}: redmax {tu * 1e6:7.2f} us/step free, {tc * 1e6:7.2f} us/step held (max |g| {vr:.1e} m); "
              f"MuJoCo {mu * 1e6:7.2f} free, {mc * 1e6:7.2f} held (max |g| {vm:.1e} m)")
        print(f"         held/MuJoCo held = {r_mj:.2f} (target <= 1)   held/free = {r_un:.2f} (target <= 1.5)")
    print("constraint scenes (euler, up to 1 s):")
    scenes()
    print("targets met" if ok else "targets NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
