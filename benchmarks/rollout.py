"""Many trajectories at once: ``rm.rollout`` against ``mujoco.rollout`` on the benchmark chain, in one process.

    python benchmarks/rollout.py            # B = 256 trajectories of 1000 steps, N = 10 and 50
    python benchmarks/rollout.py --quick    # B = 64, 300 steps

Prints, for the benchmark chain (redmax.testing.benchmark_models) at N = 10 and 50, with and without springs,
h = 1e-3, random initial states and piecewise-constant random torques (the same for both libraries):

1. wall time and steps per second of ``rm.rollout`` and of MuJoCo ``implicitfast`` through ``mujoco.rollout.Rollout``
   (its persistent thread pool), at 1 thread and at every core, the ratio of the throughputs (issue 54's target:
   redmax >= 1.5x MuJoCo at the same thread count) and redmax's speed-up from 1 thread to every core (>= 1.7x);
2. short horizons: ``rm.simulate`` of 200 steps of the N = 10 chain against 200 times the per-step cost of a
   2000-step run (target <= 1.05x).

Times are wall-clock minima over rounds, the libraries interleaved.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import redmax as rm
from redmax.testing.benchmark_models import benchmark_chain, benchmark_chain_mjcf, benchmark_q0


def wall_min(fn, rounds: int) -> float:
    best = np.inf
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def rollouts(sizes, B: int, steps: int, rounds: int) -> None:
    import mujoco
    from mujoco import rollout as mjr

    cores = os.cpu_count() or 1
    print(f"\n1. rollouts: B = {B} trajectories x {steps} steps, h = 1e-3: million steps per second "
          "(ratio redmax / MuJoCo implicitfast)")
    print(f"   {'N':>4} {'springs':>7} {'threads':>7} {'mujoco':>9} {'redmax':>9} {'ratio':>7}   redmax speed-up")
    rng = np.random.default_rng(0)
    for N in sizes:
        for springs in (False, True):
            m, _ = benchmark_chain(N, springs)
            q0 = benchmark_q0(N) + 0.1 * rng.standard_normal((B, N))
            qd0 = 0.1 * rng.standard_normal((B, N))
            ctrl = rng.standard_normal((B, steps, N))
            motors = "<actuator>" + "".join(f'<motor joint="j{i}" gear="1"/>' for i in range(N)) + "</actuator>"
            xml = benchmark_chain_mjcf(N, springs, "implicitfast").replace("</mujoco>", motors + "</mujoco>")
            mjm = mujoco.MjModel.from_xml_string(xml)
            if mjm.nu != N:
                raise SystemExit(f"the MuJoCo chain has {mjm.nu} actuators, expected {N}")
            full = mujoco.mjtState.mjSTATE_FULLPHYSICS
            d0 = mujoco.MjData(mjm)
            x0 = np.zeros((B, mujoco.mj_stateSize(mjm, full)))
            for b in range(B):
                d0.qpos[:] = q0[b]
                d0.qvel[:] = qd0[b]
                mujoco.mj_forward(mjm, d0)
                mujoco.mj_getState(mjm, d0, x0[b], full)
            state = np.zeros((B, steps, x0.shape[1]))
            speed = {}
            for threads in sorted({1, cores}):
                datas = [mujoco.MjData(mjm) for _ in range(threads)]
                with mjr.Rollout(nthread=threads) as pool:
                    def run_mj(pool=pool, datas=datas, mjm=mjm, x0=x0, ctrl=ctrl, state=state):
                        pool.rollout(mjm, datas, x0, ctrl, nstep=steps, state=state)

                    def run_rm(threads=threads, m=m, q0=q0, qd0=qd0, ctrl=ctrl):
                        rm.rollout(m, q0, qd0, dt=1e-3, steps=steps, controls=ctrl, threads=threads)

                    run_mj()
                    run_rm()
                    tm = tr = np.inf
                    for _ in range(rounds):  # interleaved
                        tm = min(tm, wall_min(run_mj, 1))
                        tr = min(tr, wall_min(run_rm, 1))
                total = B * steps
                speed[threads] = total / tr
                up = "" if threads == 1 else f"{speed[threads] / speed[1]:.2f}x (target >= 1.7x)"
                print(f"   {N:4d} {springs!s:>7} {threads:7d} {total / tm / 1e6:9.3f} {total / tr / 1e6:9.3f} "
                      f"{tm / tr:6.2f}x   {up}", flush=True)


def short_horizon(rounds: int) -> None:
    m, st = benchmark_chain(10, True)

    def short():
        rm.simulate(m, st, integrator="euler", dt=1e-3, duration=0.2)

    def long():
        rm.simulate(m, st, integrator="euler", dt=1e-3, duration=2.0)

    short()
    long()
    ts, tl = wall_min(short, 5 * rounds), wall_min(long, rounds)
    print(f"\n2. short horizons (N = 10 with springs): rm.simulate of 200 steps {ts * 1e6:.0f} us; 200 x the per-step "
          f"cost of a 2000-step run {tl / 10 * 1e6:.0f} us: {ts / (tl / 10):.2f}x (target <= 1.05x)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    B, steps, rounds = (64, 300, 2) if a.quick else (256, 1000, 3)
    print(f"redmax {rm.__version__}, {os.cpu_count()} cores")
    rollouts((10, 50), B, steps, rounds)
    short_horizon(rounds)


if __name__ == "__main__":
    main()
