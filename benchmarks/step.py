"""Speed and behaviour of the linearly implicit Euler step, beside MuJoCo, in one process.

    python benchmarks/step.py            # everything (a few minutes)
    python benchmarks/step.py --quick    # fewer sizes and repetitions

Prints:
1. built-in scenes: steps per second of ``scene.simulate(integrator="euler")`` (energies recorded, Result built);
2. the benchmark chain (redmax.testing.benchmark_models) at N = 10, 20, 50, 100, 200, 400, with and without springs:
   ``rm.simulate`` beside MuJoCo ``implicitfast`` and ``implicit`` driven by ``mj_step`` from Python, alternating,
   per-step times, ratios and the fitted orders in N; ``Simulator.step`` from Python at N = 10;
3. chained kernel calls (the output of one kernel as the input of the next) against fresh arrays;
4. energy drift of the reference scheme (quadratic velocity terms explicit) and of ``coriolis="implicit"`` on an
   undamped 50-link chain, and reference/03 started inverted;
5. the benchmark chain with its grandparent springs at N = 10, 50, 100, 200, 400 under ``solver="pcg"`` and
   ``"auto"`` (h = 1e-3, 200-step runs, median of 5) against MuJoCo ``implicitfast`` run by
   ``mujoco.rollout.rollout`` (its compiled loop, one thread), ratios (issue 51's targets: PCG <= 0.5x at N = 100,
   <= 0.2x at N = 400).

Times are per-thread CPU time (``time.thread_time``), the minimum over rounds, so that other processes on the
machine disturb them less; ratios compare runs interleaved in the same process.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import redmax as rm
from redmax.testing.benchmark_models import benchmark_chain, benchmark_chain_mjcf, benchmark_q0


def tmin(fn, rounds: int) -> float:
    """Minimum over rounds of the per-item thread time of ``fn()`` (which returns its item count)."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.thread_time()
        k = fn()
        best = min(best, (time.thread_time() - t0) / k)
    return best


def scenes(rounds: int) -> None:
    print("\n1. built-in scenes, simulate(integrator='euler'), energies recorded (the parametric scaling scenes: "
          "benchmarks/scaling.py)")
    rates = []
    for name in rm.scenes.available():
        if rm.scenes.parameters(name):
            continue
        sc = rm.scenes.load(name)
        r = sc.simulate()
        steps = r.meta["steps"]
        t = tmin(lambda sc=sc, steps=steps: (sc.simulate(), steps)[1], rounds)
        rates.append(1.0 / t)
        print(f"   {name:14s} {steps:6d} steps  {1.0 / t:10,.0f} steps/s  compiled={r.meta.get('compiled', False)}")
    print(f"   median {statistics.median(rates):,.0f} steps/s over {len(rates)} scenes (target >= 100,000)")


def chain(sizes, rounds: int) -> None:
    import mujoco

    print("\n2. benchmark chain: us per step (ratio to MuJoCo implicitfast)")
    head = f"{'N':>4} {'springs':>7} {'implicitfast':>12} {'implicit':>10} {'redmax':>16} {'redmax coriolis=impl':>22}"
    print("   " + head)
    rows = {}
    for springs in (False, True):
        for N in sizes:
            m, st = benchmark_chain(N, springs)
            steps = max(20, int(20000 / N))
            mjs = {}
            for integ in ("implicitfast", "implicit"):
                mjm = mujoco.MjModel.from_xml_string(benchmark_chain_mjcf(N, springs, integ))
                mjs[integ] = (mjm, mujoco.MjData(mjm))

            def run_mj(integ, N=N, steps=steps, mjs=mjs):
                mjm, d = mjs[integ]
                d.qpos[:] = benchmark_q0(N)
                d.qvel[:] = 0.0
                for _ in range(steps):
                    mujoco.mj_step(mjm, d)
                return steps

            def run_rm(cor, m=m, st=st, steps=steps):
                rm.simulate(m, st, integrator="euler", dt=1e-3, duration=steps * 1e-3, coriolis=cor)
                return steps

            run_rm("explicit")
            run_rm("implicit")
            t = {"implicitfast": [], "implicit": [], "explicit": [], "rm-implicit": []}
            for _ in range(rounds):  # interleaved
                t["implicitfast"].append(tmin(lambda: run_mj("implicitfast"), 1))
                t["implicit"].append(tmin(lambda: run_mj("implicit"), 1))
                t["explicit"].append(tmin(lambda: run_rm("explicit"), 1))
                t["rm-implicit"].append(tmin(lambda: run_rm("implicit"), 1))
            t = {k: min(v) for k, v in t.items()}
            rows[(N, springs)] = t
            base = t["implicitfast"]
            print(f"   {N:4d} {springs!s:>7} {base * 1e6:12.2f} {t['implicit'] * 1e6:10.2f} "
                  f"{t['explicit'] * 1e6:9.2f} ({t['explicit'] / base:4.2f}x) {t['rm-implicit'] * 1e6:13.2f} "
                  f"({t['rm-implicit'] / base:4.2f}x)", flush=True)
    for springs in (False, True):
        Ns = np.array([N for N in sizes if N >= 20], dtype=float)
        if Ns.size >= 2:
            for key in ("explicit", "implicitfast"):
                y = np.array([rows[(int(N), springs)][key] for N in Ns])
                order = np.polyfit(np.log(Ns), np.log(y), 1)[0]
                print(f"   fitted order in N (N >= 20, springs={springs}): {key:12s} {order:.2f}")
    # Simulator.step from Python, per step, at N = 10
    for springs in (False, True):
        m, st = benchmark_chain(10, springs)
        sim = rm.Simulator(m, st, dt=1e-3)
        mjm = mujoco.MjModel.from_xml_string(benchmark_chain_mjcf(10, springs))
        d = mujoco.MjData(mjm)

        def run_sim(sim=sim, st=st):
            sim.reset(st)
            for _ in range(1000):
                sim.step()
            return 1000

        def run_mj1(mjm=mjm, d=d):
            d.qpos[:] = benchmark_q0(10)
            d.qvel[:] = 0.0
            for _ in range(1000):
                mujoco.mj_step(mjm, d)
            return 1000

        run_sim()
        ts, tm = min(tmin(run_sim, 1) for _ in range(rounds)), min(tmin(run_mj1, 1) for _ in range(rounds))
        print(f"   Simulator.step from Python, N=10, springs={springs}: {ts * 1e6:.2f} us vs mj_step {tm * 1e6:.2f} us "
              f"({ts / tm:.2f}x, target <= 1.5x)")


def chained(rounds: int) -> None:
    print("\n3. chained kernel calls (outputs as inputs) vs fresh arrays, us per call")
    from redmax.testing.models import random_model

    for n in (6, 36):
        m = random_model(np.random.default_rng(0), n=n)
        q, qd, qdd = np.random.default_rng(1).normal(size=(3, m.ndof))
        tau = rm.rnea(m, q, qd, qdd)  # a kernel output (its dtype object may come from the cache)
        fresh = np.array(tau.tolist())
        reps = 2000

        def call(x, m=m, q=q, qd=qd, reps=reps):
            for _ in range(reps):
                rm.aba(m, q, qd, x)
            return reps

        tf = min(tmin(lambda fresh=fresh: call(fresh), 1) for _ in range(rounds))
        tc = min(tmin(lambda tau=tau: call(tau), 1) for _ in range(rounds))
        print(f"   aba n={n:3d}: fresh {tf * 1e6:.2f}  chained {tc * 1e6:.2f}  ratio {tc / tf:.2f} (target <= 1.10)")


def _mujoco_drift(n: int, h: float, integrator: str, duration: float) -> str:
    """Energy change of MuJoCo's own scheme on the undamped chain, or the time its instability warning fires."""
    import mujoco

    xml = benchmark_chain_mjcf(n, springs=False, integrator=integrator, dt=h)
    xml = xml.replace('damping="0.1"', 'damping="0"').replace('stiffness="1"', 'stiffness="0"')
    xml = xml.replace('<flag contact="disable"/>', '<flag contact="disable" energy="enable"/>')
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[:] = benchmark_q0(n)
    mujoco.mj_forward(m, d)
    E0, Kmax, out = d.energy.sum(), d.energy[1], []
    marks = {round(t / h): t for t in (1.0, 5.0, 10.0, 20.0)}
    for k in range(1, round(duration / h) + 1):
        mujoco.mj_step(m, d)
        if d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number:  # MuJoCo resets the state when this fires
            out.append(f"unstable (huge qacc) at t={k * h:g}s")
            break
        Kmax = max(Kmax, d.energy[1])
        if k in marks:
            out.append(f"t={marks[k]:g}s {100 * (d.energy.sum() - E0) / Kmax:+.1f}%")
    return ", ".join(out)


def drift() -> None:
    print("\n4. energy behaviour of linearly implicit Euler on an undamped 50-link chain, 20 s, beside the same")
    print("   schemes in MuJoCo (reference scheme = implicitfast, coriolis=implicit = implicit)")
    for h in (1e-3, 2e-3):
        for cor, mj in (("explicit", "implicitfast"), ("implicit", "implicit")):
            m, st = benchmark_chain(50, springs=False, damping=0.0, stiffness=0.0)
            try:
                r = rm.simulate(m, st, integrator="euler", dt=h, duration=20.0, coriolis=cor)
                E, K = r.energy["total"], r.energy["kinetic"]
                at = [round(t / h) for t in (1.0, 5.0, 10.0, 20.0)]
                change = ", ".join(f"t={k * h:g}s {100 * (E[k] - E[0]) / K[:k + 1].max():+.1f}%" for k in at)
                vmax = np.abs(r.qdot).max(axis=1)
                big = np.flatnonzero(vmax > 1e3)
                if big.size:
                    change += f" (|qdot| > 1e3 rad/s from t={big[0] * h:g}s on)"
                print(f"   h={h:g} redmax coriolis={cor:8s}: energy change / peak kinetic energy so far: {change}")
            except rm.SimulationError as e:
                print(f"   h={h:g} redmax coriolis={cor:8s}: {e}")
            print(f"   h={h:g} MuJoCo {mj:17s}: {_mujoco_drift(50, h, mj, 20.0)}")
    sc = rm.scenes.load("reference/03")
    st = sc.model.initial_state()
    st.q = st.q.copy()
    st.q[0] = np.pi  # the first link started upside down
    for h in (1e-3, 1e-2):
        for cor in ("explicit", "implicit"):
            try:
                r = sc.simulate(dt=h, duration=3.0, state=st, coriolis=cor)
                print(f"   reference/03 inverted, h={h:g}, coriolis={cor}: H = {r.H:.6g}, "
                      f"energy change {r.energy['total'][-1] - r.energy['total'][0]:.6g}")
            except rm.SimulationError as e:
                print(f"   reference/03 inverted, h={h:g}, coriolis={cor}: {e}")


def large(sizes, repeats: int = 5, steps: int = 200) -> None:
    import mujoco
    from mujoco import rollout

    print(f"\n5. benchmark chain with springs, h = 1e-3, {steps}-step runs, median of {repeats}: us per step "
          "(ratio to MuJoCo implicitfast through mujoco.rollout, one thread)")
    print(f"   {'N':>4} {'mujoco':>10} {'pcg':>18} {'auto':>18} {'dense':>18}  pcg iters/step")
    target = {100: 0.5, 400: 0.2}
    for N in sizes:
        m, st = benchmark_chain(N, True)
        mjm = mujoco.MjModel.from_xml_string(benchmark_chain_mjcf(N, True, "implicitfast"))
        d = mujoco.MjData(mjm)
        d.qpos[:] = benchmark_q0(N)
        d.qvel[:] = 0.0
        mujoco.mj_forward(mjm, d)
        full = mujoco.mjtState.mjSTATE_FULLPHYSICS
        x0 = np.zeros(mujoco.mj_stateSize(mjm, full))
        mujoco.mj_getState(mjm, d, x0, full)
        out = np.zeros((1, steps, x0.size))

        def run_mj(mjm=mjm, d=d, x0=x0, out=out):
            rollout.rollout(mjm, d, x0[None, :], nstep=steps, state=out)
            return steps

        def run_rm(solver, m=m, st=st):
            rm.simulate(m, st, integrator="euler", dt=1e-3, duration=steps * 1e-3, solver=solver)
            return steps

        res = {"pcg": rm.simulate(m, st, dt=1e-3, duration=steps * 1e-3, solver="pcg")}
        run_rm("auto")
        run_rm("dense")
        run_mj()
        t = {"mujoco": [], "pcg": [], "auto": [], "dense": []}
        for _ in range(repeats):  # interleaved
            t["mujoco"].append(tmin(run_mj, 1))
            for k in ("pcg", "auto", "dense"):
                t[k].append(tmin(lambda k=k: run_rm(k), 1))
        t = {k: statistics.median(v) for k, v in t.items()}
        base = t["mujoco"]
        cells = " ".join(f"{t[k] * 1e6:9.1f} ({t[k] / base:5.2f}x)" for k in ("pcg", "auto", "dense"))
        it = float(np.mean(res["pcg"].meta["pcg_iterations"]))
        goal = f"   target pcg <= {target[N]}x: {'met' if t['pcg'] / base <= target[N] else 'missed'}" if N in target \
            else ""
        print(f"   {N:4d} {base * 1e6:10.1f} {cells}  {it:5.1f}{goal}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes and rounds")
    ap.add_argument("--only", choices=("scenes", "chain", "chained", "drift", "large"), help="one section")
    args = ap.parse_args()
    rounds = 3 if args.quick else 7
    sizes = (10, 50, 100) if args.quick else (10, 20, 50, 100, 200, 400)
    print(f"redmax {rm.__version__}; thread-time minima over {rounds} rounds")
    sections = {"scenes": lambda: scenes(rounds), "chain": lambda: chain(sizes, rounds),
                "chained": lambda: chained(rounds), "drift": drift,
                "large": lambda: large((10, 100) if args.quick else (10, 50, 100, 200, 400))}
    for name, fn in sections.items():
        if args.only in (None, name):
            fn()


if __name__ == "__main__":
    main()
