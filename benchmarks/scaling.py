"""Near-linear time (RedMax paper §3, Table 2, Fig. 4): wall time per Euler step of the dense solve, the sparse direct
solve and PCG on the paper's scaling scenes, the mean PCG iterations per solve, the fitted orders, and the paper's
numbers beside ours.

    python benchmarks/scaling.py                 # every size of Table 2 (a few minutes)
    python benchmarks/scaling.py --quick         # the smaller sizes only
    python benchmarks/scaling.py --plot fig4.png # also the log-log plot of time per step against DOFs

Scenes (``redmax.scenes.scaling``): ``paper/simple_bridge`` (rigid towers, n_deck = 80 ... 1280), ``paper/bridge``
(flexible towers, n_deck = n_tower = 20 ... 320, load 2.4e6) and ``paper/umbrella`` (n = 10 ... 46).  Each run:
two untimed steps (compiling, caches), then ``--steps`` (10) timed steps of ``scene.simulate``, wall time per step,
best of ``--rounds``.  The paper's times are seconds for 5 s of scene time at h = 1e-2 (500 steps, i7-7700, Eigen
and PARDISO, Table 2), shown per step.  Orders: least-squares slopes of log time per step against log DOF over the
sizes the issue names (simple_bridge 160-1280, bridge 40-320, umbrella 16-46).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import redmax as rm

# the paper's Table 2: scene -> [(DOF, direct s, PCG s, iterations)], times for 500 steps
PAPER = {
    "paper/simple_bridge": [(80, 2.8, 2.0, 4.0), (160, 11.8, 3.4, 4.0), (320, 70.5, 6.5, 4.0), (640, 420.3, 12.7, 4.0),
                            (1280, 2884.7, 27.8, 4.0)],
    "paper/bridge": [(60, 1.0, 2.7, 104.7), (120, 2.4, 5.6, 136.6), (240, 8.6, 11.4, 153.5), (480, 44.9, 28.3, 196.3),
                     (960, 248.7, 70.6, 241.9)],
    "paper/umbrella": [(241, 2.1, 1.8, 37.0), (385, 4.8, 2.6, 36.0), (529, 8.4, 3.4, 36.7), (769, 19.1, 5.1, 38.5),
                       (1105, 50.1, 8.4, 39.5)],
}
SIZES = {  # scene -> [params of each size] (Table 2's sizes, spec §3.8)
    "paper/simple_bridge": [{"n_deck": n} for n in (80, 160, 320, 640, 1280)],
    "paper/bridge": [{"n_deck": n, "n_tower": n, "load": 2.4e6} for n in (20, 40, 80, 160, 320)],
    "paper/umbrella": [{"n": n} for n in (10, 16, 22, 32, 46)],
}
FIT_FROM = {"paper/simple_bridge": 160, "paper/bridge": 120, "paper/umbrella": 385}  # smallest DOF in the fit
BOUND = {"paper/simple_bridge": 1.05, "paper/bridge": 1.3, "paper/umbrella": 1.05}  # issue 51's targets (PCG)


def per_step(scene, solver, steps: int, rounds: int):
    """(seconds per step, result of the last round) of ``steps`` Euler steps after two untimed ones."""
    scene.simulate(duration=2 * scene.dt, solver=solver)
    best, res = np.inf, None
    for _ in range(rounds):
        t0 = time.perf_counter()
        res = scene.simulate(duration=steps * scene.dt, solver=solver)
        best = min(best, (time.perf_counter() - t0) / steps)
    return best, res


def slope(n, t) -> float:
    return float(np.polyfit(np.log(n), np.log(t), 1)[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the three smallest sizes of each scene")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--plot", metavar="FILE.png", help="write the log-log plot (Fig. 4)")
    a = ap.parse_args()
    rows = {}
    print(f"{'scene':22s} {'DOF':>5s} {'dense ms':>10s} {'sparse ms':>10s} {'pcg ms':>9s} {'dense/pcg':>9s} "
          f"{'iters':>6s}   paper: {'direct ms':>9s} {'pcg ms':>7s} {'iters':>6s}")
    for name, sizes in SIZES.items():
        out = []
        for k, params in enumerate(sizes[:3] if a.quick else sizes):
            scene = rm.scenes.load(name, **params)
            n = scene.model.ndof
            td, _ = per_step(scene, "dense", a.steps, a.rounds)
            ts, _ = per_step(scene, "sparse", a.steps, a.rounds)
            tp, res = per_step(scene, "pcg", a.steps, a.rounds)
            it = float(np.mean(res.meta["pcg_iterations"]))
            pd, pdir, ppcg, pit = PAPER[name][k]
            out.append((n, td, tp, it, ts))
            print(f"{name:22s} {n:5d} {1e3 * td:10.2f} {1e3 * ts:10.2f} {1e3 * tp:9.3f} {td / tp:9.1f} {it:6.1f}   "
                  f"paper: {1e3 * pdir / 500:9.2f} {1e3 * ppcg / 500:7.2f} {pit:6.1f}" + ("" if pd == n else
                                                                                        f" (paper DOF {pd})"))
        rows[name] = out
    print("\nempirical orders (slope of log time per step against log DOF):")
    for name, out in rows.items():
        fit = [r for r in out if r[0] >= FIT_FROM[name]] if not a.quick else out
        if len(fit) < 2:
            continue
        n = np.array([r[0] for r in fit], float)
        sd, sp, ss = (slope(n, [r[j] for r in fit]) for j in (1, 2, 4))
        verdict = "met" if sp <= BOUND[name] else "NOT MET"
        print(f"  {name:22s} DOF {int(n[0])}-{int(n[-1])}: pcg {sp:.2f} (target <= {BOUND[name]}: {verdict}), "
              f"sparse {ss:.2f}, dense {sd:.2f}")
    sb = [r for r in rows.get("paper/simple_bridge", []) if r[0] == 1280]
    if sb:
        ratio = sb[0][1] / sb[0][2]
        print(f"\nsimple_bridge(1280): PCG {ratio:.0f}x faster per step than dense (target >= 50: "
              f"{'met' if ratio >= 50 else 'NOT MET'})")
    if a.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.4, 4.8))
        for (name, out), color in zip(rows.items(), ("C0", "C1", "C2"), strict=False):
            n = [r[0] for r in out]
            ax.loglog(n, [r[1] for r in out], "s--", color=color, label=f"{name} dense")
            ax.loglog(n, [r[4] for r in out], "^:", color=color, label=f"{name} sparse")
            ax.loglog(n, [r[2] for r in out], "o-", color=color, label=f"{name} PCG")
        ax.set_xlabel("DOF")
        ax.set_ylabel("wall time per step (s)")
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(a.plot, dpi=120)
        print(f"wrote {a.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
