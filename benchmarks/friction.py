"""The RedMax paper's friction claims (§6, Fig. 5a-b) on the CHAIN, and BiSP against Staggered Projections.

    python benchmarks/friction.py                          # everything
    python benchmarks/friction.py --quick                  # shorter runs
    python benchmarks/friction.py --plot docs/gallery/friction_chain.png

Prints:
1. CHAIN (paper/chain, 10 links, mu 0.6, h 1e-2): the time each joint comes to rest (|qd| < 0.02 rad/s from then
   on) for joint radii 0.5 and 2, root first (paper claim 1), and the energy lost to friction by then (claim 2: a
   larger radius gives a friction force more torque);
2. BiSP against SP on CHAIN n = 5, 10, 20 (h 1e-2, 1 s): wall time per step, per friction pass, passes per step,
   and the ratio (the paper: about an order of magnitude);
3. KLANN (paper/klann, h 5e-3): the motor's required torque about the crank axis for joint mu in {0, 0.2, 0.4,
   0.6, 0.8} (paper Fig. 5c: more friction needs more torque), the motor's work, how far the walker went and
   whether it stayed upright.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import redmax as rm


def stop_times(res, n: int) -> np.ndarray:
    return np.array([res.t[np.flatnonzero(np.abs(res.qdot[:, j]) > 2e-2)[-1] + 1] for j in range(n)])


def chain_claims(duration: float, plot: str | None) -> None:
    n = 10
    print(f"1. CHAIN, {n} links, mu 0.6, h 1e-2, {duration:g} s: time each joint comes to rest (s), root first")
    runs = {}
    for radius in (0.5, 2.0):
        sc = rm.scenes.load("paper/chain", n=n, radius=radius)
        res = sc.simulate(duration=duration)
        runs[radius] = res
        st = stop_times(res, n)
        order = "root first" if st[0] <= st[1:].min() else "root not first"
        E = res.energy["total"]
        print(f"   radius {radius:3.1f}: " + " ".join(f"{x:.2f}" for x in st) + f"   ({order}; all at rest at "
              f"{st.max():.2f} s; energy {E[0]:.4g} -> {E[-1]:.4g})")
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
        for ax, (radius, res) in zip(axes, runs.items(), strict=True):
            for j in range(n):
                ax.plot(res.t, np.abs(res.qdot[:, j]), color=plt.cm.viridis(j / (n - 1)), lw=1.2,
                        label=f"joint {j + 1}" if j in (0, n - 1) else None)
            ax.set_title(f"CHAIN, joint radius {radius}")
            ax.set_xlabel("t (s)")
            ax.legend()
        axes[0].set_ylabel("|qd| (rad/s)")
        fig.tight_layout()
        fig.savefig(plot, dpi=110)
        print(f"   plot: {plot}")


def bisp_vs_sp(sizes, duration: float) -> None:
    print(f"\n2. BiSP against Staggered Projections on CHAIN (mu 0.6, radius 0.5, h 1e-2, {duration:g} s)")
    print(f"   {'n':>3} {'bisp ms/step':>13} {'ms/pass':>8} {'passes':>7} {'sp ms/step':>11} {'ms/pass':>8} "
          f"{'passes':>7} {'sp/bisp':>8}")
    for n in sizes:
        sc = rm.scenes.load("paper/chain", n=n)
        out = {}
        for fs in ("bisp", "sp"):
            sc.simulate(duration=0.02, friction_solver=fs)  # (compiled kernels warm)
            t0 = time.perf_counter()
            res = sc.simulate(duration=duration, friction_solver=fs)
            dt = time.perf_counter() - t0
            steps = res.meta["steps"]
            passes = float(np.mean(res.meta["friction_iterations"]))
            out[fs] = (1e3 * dt / steps, 1e3 * dt / (steps * passes), passes)
        b, s = out["bisp"], out["sp"]
        print(f"   {n:3d} {b[0]:13.2f} {b[1]:8.2f} {b[2]:7.2f} {s[0]:11.2f} {s[1]:8.2f} {s[2]:7.2f} "
              f"{s[0] / b[0]:7.1f}x")


def klann(mus, duration: float) -> None:
    print(f"\n3. KLANN, h 5e-3, {duration:g} s: torque about the crank axis (g cm^2/s^2; -reactions['motor'] about -y)")
    print(f"   {'mu':>4} {'mean':>10} {'mean |t|':>10} {'max |t|':>10} {'work':>10} {'x (cm)':>7} {'pitch':>6} "
          f"{'s':>5}")
    for mu in mus:
        sc = rm.scenes.load("paper/klann", mu=mu)
        t0 = time.perf_counter()
        res = sc.simulate(duration=duration)
        wall = time.perf_counter() - t0
        tq = -res.reactions["motor"][1:, 1]
        work = float(np.sum(tq)) * 2 * np.pi * sc.dt
        print(f"   {mu:4.1f} {tq.mean():10.3g} {np.abs(tq).mean():10.3g} {np.abs(tq).max():10.3g} {work:10.3g} "
              f"{res.q[-1, 0]:7.1f} {res.q[-1, 4]:6.2f} {wall:5.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs, sizes 5 and 10")
    ap.add_argument("--plot", metavar="FILE", help="draw the CHAIN's joint rates for both radii")
    a = ap.parse_args()
    print(f"redmax {rm.__version__}; wall time (time.perf_counter), one run each after a warm-up")
    chain_claims(2.0, a.plot)
    bisp_vs_sp((5, 10) if a.quick else (5, 10, 20), 0.5 if a.quick else 1.0)
    klann((0.0, 0.8) if a.quick else (0.0, 0.2, 0.4, 0.6, 0.8), 0.5 if a.quick else 1.0)


if __name__ == "__main__":
    main()
