"""The RedMax paper's friction claims (§6, Fig. 5a-b) on the CHAIN, and BiSP against Staggered Projections.

    python benchmarks/friction.py                          # everything
    python benchmarks/friction.py --quick                  # shorter runs
    python benchmarks/friction.py --plot docs/gallery/friction_chain.png --plot-klann docs/gallery/friction_klann.png

Prints:
1. CHAIN (paper/chain, 10 links, mu 0.6, h 2e-3): for joint radii 0.25, 0.5, 1 and 2, the time each joint comes
   to rest (it has made 99% of its travel: the root twitches briefly when the outer links swing), root first
   (paper claim 1), the time the chain is at rest (kinetic energy below 1e-3 of its peak from then on) and how far
   the root fell (claim 2: a larger radius stops it earlier).  h 2e-3 because the claims are about the motion, not
   the step: at the scenes' h 1e-2 the root's final angle is 17 degrees from its value at h 1e-3;
2. BiSP against SP on CHAIN n = 5, 10, 20 (h 1e-2, 1 s): wall time per step, per friction pass, passes per step,
   and the ratio (the paper: about an order of magnitude); then at h 2e-3 SP's final angles against BiSP's and the
   order the joints come to rest (n = 2, 3, 5, 10);
3. KLANN (paper/klann, h 5e-3): the motor's required torque about the crank axis for joint mu in {0, 0.2, 0.4,
   0.6, 0.8} (paper Fig. 5c: more friction needs more torque), the motor's work, how far the walker went and
   whether it stayed upright.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

import redmax as rm


def stop_times(res, n: int, share: float = 0.99) -> np.ndarray:
    """The time each joint has made ``share`` of its travel (the integral of |qd| over the run)."""
    travel = np.cumsum(np.abs(res.qdot[1:]) * np.diff(res.t)[:, None], axis=0)
    return np.array([res.t[1 + np.searchsorted(travel[:, j], share * travel[-1, j])] for j in range(n)])


def rest_time(res, share: float = 1e-3) -> float:
    """The time from which the kinetic energy stays below ``share`` of its peak."""
    T = res.energy["kinetic"]
    return float(res.t[min(np.flatnonzero(T > share * T.max())[-1] + 1, T.size - 1)])


def chain_claims(duration: float, plot: str | None, radii=(0.25, 0.5, 1.0, 2.0), h: float = 2e-3) -> None:
    n = 10
    print(f"1. CHAIN, {n} links, mu 0.6, cylinders of height 1, h {h:g}, {duration:g} s: time each joint comes to "
          "rest (s), the chain at rest, the root's fall")
    runs = {}
    for radius in radii:
        sc = rm.scenes.load("paper/chain", n=n, radius=radius)
        res = sc.simulate(duration=duration, dt=h)
        runs[radius] = res
        st = stop_times(res, n)
        order = "root first" if st[0] <= st[1:].min() else "root not first"
        print(f"   radius {radius:4.2f}: " + " ".join(f"{x:.2f}" for x in st) + f"   ({order}; chain at rest at "
              f"{rest_time(res):.2f} s; root fell {np.degrees(-res.q[-1, 0]):5.1f} deg)")
    rest = [rest_time(runs[r]) for r in radii]
    fall = [-runs[r].q[-1, 0] for r in radii]
    grows = [f"{a:g} -> {b:g}" for a, b, ta, tb in zip(radii, radii[1:], rest, rest[1:], strict=False) if tb < ta]
    print(f"   a larger radius stops it earlier: {', '.join(grows) or 'nowhere'}; the root falls less at every step "
          f"up: {all(b < a for a, b in itertools.pairwise(fall))}")
    print("   (the bending moment, which dominates, is carried by the end faces and the sides of a cylinder: its "
          "friction torque is\n    mu M r (r + h/2) / (r^2 + h^2/4): mu M at r = h/2, a fifth more at r = h, no more "
          "beyond)")
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        shown = (radii[0], radii[-2])
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
        for ax, (radius, res) in zip(axes, ((r, runs[r]) for r in shown), strict=True):
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


def sp_agreement(sizes, h: float = 2e-3, duration: float = 2.5) -> None:
    """SP's final joint angles against BiSP's at a resolved step (the issue's check: within 5 degrees)."""
    print(f"   at h {h:g}, {duration:g} s, the final angles of SP against BiSP's and the order the joints come to "
          "rest:")
    for n in sizes:
        sc = rm.scenes.load("paper/chain", n=n)
        a = sc.simulate(dt=h, duration=duration)
        b = sc.simulate(dt=h, duration=duration, friction_solver="sp")
        d = float(np.abs(np.degrees(a.q[-1] - b.q[-1])).max())
        sa, sb = stop_times(a, n), stop_times(b, n)
        same = np.array_equal(np.argsort(sa, kind="stable"), np.argsort(sb, kind="stable"))
        print(f"   {n:3d}  max |q_sp - q_bisp| {d:5.2f} deg   {'same order' if same else 'order differs'} "
              f"(bisp {' '.join(f'{x:.2f}' for x in sa)}; sp {' '.join(f'{x:.2f}' for x in sb)})")


def klann(mus, duration: float, plot: str | None = None) -> None:
    print(f"\n3. KLANN, h 5e-3, {duration:g} s: torque about the crank axis (g cm^2/s^2; -reactions['motor'] about -y)")
    print(f"   {'mu':>4} {'mean':>10} {'mean |t|':>10} {'max |t|':>10} {'work':>10} {'x (cm)':>7} {'pitch':>6} "
          f"{'s':>5}")
    curves = {}
    for mu in mus:
        sc = rm.scenes.load("paper/klann", mu=mu)
        t0 = time.perf_counter()
        res = sc.simulate(duration=duration)
        wall = time.perf_counter() - t0
        tq = -res.reactions["motor"][1:, 1]
        work = float(np.sum(tq)) * 2 * np.pi * sc.dt
        print(f"   {mu:4.1f} {tq.mean():10.3g} {np.abs(tq).mean():10.3g} {np.abs(tq).max():10.3g} {work:10.3g} "
              f"{res.q[-1, 0]:7.1f} {res.q[-1, 4]:6.2f} {wall:5.1f}", flush=True)
        curves[mu] = (res.t[1:], tq)
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 3.6))
        k = max(1, round(0.05 / sc.dt))  # a moving mean over 0.05 s: the stick-slip spikes are single steps
        for j, (mu, (t, tq)) in enumerate(curves.items()):
            ax.plot(t[k - 1:], np.convolve(tq, np.ones(k) / k, mode="valid") * 1e-7,
                    color=plt.cm.plasma(j / max(len(curves) - 1, 1)), lw=1.3, label=f"joint mu {mu:g}")
        ax.set_xlabel("t (s)")
        ax.set_ylabel("required torque (N m, mean over 0.05 s)")
        ax.set_title("KLANN: the crank drive's torque (paper Fig. 5c)")
        ax.legend(ncol=len(curves), fontsize=8)
        fig.tight_layout()
        fig.savefig(plot, dpi=110)
        print(f"   plot: {plot}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs, sizes 5 and 10")
    ap.add_argument("--plot", metavar="FILE", help="draw the CHAIN's joint rates for radii 0.25 and 1")
    ap.add_argument("--plot-klann", metavar="FILE", help="draw KLANN's required torque over time for each mu")
    a = ap.parse_args()
    print(f"redmax {rm.__version__}; wall time (time.perf_counter), one run each after a warm-up")
    chain_claims(1.5 if a.quick else 3.0, a.plot)
    bisp_vs_sp((5, 10) if a.quick else (5, 10, 20), 0.5 if a.quick else 1.0)
    sp_agreement((2, 3) if a.quick else (2, 3, 5, 10))
    klann((0.0, 0.8) if a.quick else (0.0, 0.2, 0.4, 0.6, 0.8), 0.5 if a.quick else 1.0, a.plot_klann)


if __name__ == "__main__":
    main()
