"""Time redmax's analytic derivatives against Pinocchio's from Python, in one process, against targets.

Usage: ``python benchmarks/derivatives.py [--quick] [--no-slope] [--threads N]`` (needs the test extras).

Models: random revolute chains of N = 36 and 100 (random axes, placements, inertias) built in both libraries,
and talos_reduced with a free-flyer base (ours with ``tangent=True``, the same coordinates as Pinocchio's free
flyer, and also in our default exponential coordinates).  Every pair is timed in batches, round robin, and the
ratio of the median per-call times is printed, after checking that the first-order derivatives agree.

* first order: ``rnea_derivatives`` / ``pin.computeRNEADerivatives`` and ``aba_derivatives`` /
  ``pin.computeABADerivatives`` (targets <= 1.0 at chains 36, 100 and talos);
* second order of inverse dynamics (``rnea_second_order_derivatives``) / ``pin.computeRNEADerivatives``:
  Pinocchio's C++ IDSVA-SO is not callable from Python; the targets are the ratios it was once measured at
  against its Python first order, 15.4x on a chain of 36 and 5.0x on talos_reduced, on talos in
  Pinocchio's own coordinates (``tangent=True``; the exponential-coordinate row, which has no Pinocchio
  counterpart, is reported without a bound) (``benchmarks/pinocchio_cpp.py`` times that C++ itself, in one
  process with ours); and / central differences
  of our first order (2n calls of ``rnea_derivatives``): target <= 1/3.  Timed twice: allocating the four n^3
  tensors per call (the default) and filling the same caller-owned ones (``out=``, as Pinocchio fills the tensors of its
  ``Data``: its timings are with reused tensors).  The second order runs on redmax's threads (``--threads N``;
  Pinocchio's first order and its C++ second order run on one);
* reported without a bound: ``aba_second_order_derivatives`` per call (FDSVA-SO; Pinocchio has none);
* the slope A of ``log t = A log N + B`` of the second order on chains and binary trees (Singh et al. Table III:
  IDSVA-SO 3.08 on chains, 1.45 on binary trees in Fortran).

The script pins OpenBLAS (the matrix products of the forward-dynamics derivatives) to one thread, as Pinocchio's
Eigen code runs on one: on a shared machine, spinning BLAS threads otherwise dominate the timings.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: single-threaded like Pinocchio (see docstring)

import argparse
import time

import numpy as np

import redmax as rm
from redmax.testing.models import random_model
from redmax.testing.pinocchio_bridge import DofMap, to_pinocchio


def _pin():
    import pinocchio as pin

    return pin


def _batch(f, n: int) -> float:
    t = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t) / n


def compare(fs: dict, rounds: int, batch: dict) -> dict:
    """Round robin over the functions ``fs`` (name -> callable); ``batch[name]`` calls per batch.  Medians (s)."""
    times = {k: [] for k in fs}
    for f in fs.values():
        _batch(f, 3)  # warm up
    for _ in range(rounds):
        for k, f in fs.items():
            times[k].append(_batch(f, batch[k]))
    return {k: float(np.median(v)) for k, v in times.items()}


def central_differences(model, q, qd, qdd, tangent, eps=1e-6):
    """The second-order tensors of inverse dynamics in q by central differences of our first order: 2n calls."""
    n = model.ndof
    out = np.empty((n, n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = eps
        a = rm.rnea_derivatives(model, q + e, qd, qdd, tangent=tangent)[0]
        b = rm.rnea_derivatives(model, q - e, qd, qdd, tangent=tangent)[0]
        out[:, :, k] = (a - b) / (2 * eps)
    return out


def cases(rng):
    pin = _pin()
    out = []
    for n in (36, 100):
        m = random_model(rng, n=n, topology="chain", joints="revolute", gravity=(0, 0, -9.81))
        pm = to_pinocchio(m)
        q, qd, qdd = rng.normal(size=(3, n))
        out.append((f"chain N={n}", m, pm, q, qd, qdd, q, False))
    from redmax.testing.robots import robot_urdf

    path = robot_urdf("talos")
    m = rm.load_urdf(path, floating_base=True)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    q = 0.3 * rng.normal(size=m.ndof)
    qd, qdd = rng.normal(size=(2, m.ndof))
    mp = DofMap(m, pm, tangent=True)
    out.append(("talos (tangent)", m, pm, q, qd, qdd, mp, True))
    out.append(("talos (exp. coords)", m, pm, q, qd, qdd, mp, False))
    return out


def run(rounds: int, quick: bool) -> dict:
    pin = _pin()
    rng = np.random.default_rng(2024)
    rows = {}
    for label, m, pm, q, qd, qdd, mp, tangent in cases(rng):
        pd = pm.createData()
        if isinstance(mp, DofMap):
            qp, vp, ap, tp = mp.q_pin(q), mp.vec(qd), mp.vec(qdd), mp.vec(qdd)
            mat = mp.mat
        else:
            qp, vp, ap, tp = q, qd, qdd, qdd
            mat = (lambda M: M)  # noqa: E731
        if tangent or not isinstance(mp, DofMap):  # the same coordinates: check the numbers
            d = rm.rnea_derivatives(m, q, qd, qdd, tangent=tangent)
            pin.computeRNEADerivatives(pm, pd, qp, vp, ap)
            err = max(np.abs(d[0] - mat(pd.dtau_dq)).max() / np.abs(pd.dtau_dq).max(),
                      np.abs(d[1] - mat(pd.dtau_dv)).max() / np.abs(pd.dtau_dv).max())
            if not err < 1e-9:
                raise AssertionError(f"{label}: first-order derivatives differ from Pinocchio's by {err:.1e}")
        kw = {"tangent": True} if tangent else {}
        fs = {
            "pin_rnea_d": lambda: pin.computeRNEADerivatives(pm, pd, qp, vp, ap),  # noqa: B023
            "rnea_d": lambda: rm.rnea_derivatives(m, q, qd, qdd, **kw),  # noqa: B023
            "pin_aba_d": lambda: pin.computeABADerivatives(pm, pd, qp, vp, tp),  # noqa: B023
            "aba_d": lambda: rm.aba_derivatives(m, q, qd, qdd, **kw),  # noqa: B023
            "rnea_so": lambda: rm.rnea_second_order_derivatives(m, q, qd, qdd, **kw),  # noqa: B023
            "rnea_so_out": lambda: rm.rnea_second_order_derivatives(m, q, qd, qdd, out=out, **kw),  # noqa: B023
            "cd": lambda: central_differences(m, q, qd, qdd, tangent),  # noqa: B023
            "aba_so": lambda: rm.aba_second_order_derivatives(m, q, qd, qdd, **kw),  # noqa: B023
        }
        n = m.ndof
        out = tuple(np.zeros((n, n, n)) for _ in range(4))
        batch = {"pin_rnea_d": 200, "rnea_d": 200, "pin_aba_d": 100, "aba_d": 100, "rnea_so": 20 if n < 50 else 3,
                 "rnea_so_out": 20 if n < 50 else 3, "cd": 2 if n < 50 else 1, "aba_so": 4 if n < 50 else 1}
        if quick:
            batch = {k: max(1, v // 4) for k, v in batch.items()}
        t = compare(fs, rounds, batch)
        rows[label] = t
    return rows


def slope(rounds: int) -> dict:
    rng = np.random.default_rng(7)
    res = {}
    for topo, sizes in (("chain", (10, 20, 36, 60, 100)), ("binary-dfs", (15, 31, 63, 127))):
        ts = []
        for n in sizes:
            m = random_model(rng, n=n, topology=topo, joints="revolute")
            q, qd, qdd = rng.normal(size=(3, m.ndof))
            k = max(1, int(2000 / n**2))
            ts.append(compare({"so": lambda: rm.rnea_second_order_derivatives(m, q, qd, qdd)}, rounds,  # noqa: B023
                              {"so": k})["so"])
        A, B = np.polyfit(np.log(sizes), np.log(np.array(ts) * 1e6), 1)
        res[topo] = (A, B, sizes, ts)
    return res


def parse_args(argv, doc: str, slope: bool) -> argparse.Namespace:
    """The command line of the derivative benchmarks (this one and ``pinocchio_cpp.py``): ``--quick``,
    ``--threads N`` (applied here) and, with ``slope``, ``--no-slope``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds (a rough check)")
    if slope:
        ap.add_argument("--no-slope", action="store_true", help="skip the slope in N")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads of our second order (redmax.set_num_threads; default: redmax.get_num_threads())")
    a = ap.parse_args(argv)
    if a.threads:
        rm.set_num_threads(a.threads)
    return a


def main(argv=None) -> int:
    a = parse_args(argv, __doc__, slope=True)
    rounds = 5 if a.quick else 15
    pin = _pin()
    print(f"redmax {rm.__version__} vs Pinocchio {pin.__version__}: median per-call times and ratios (ours / theirs),"
          f" {rounds} rounds; second order on {rm.get_num_threads()} thread(s), Pinocchio on one\n")
    rows = run(rounds, a.quick)
    hdr = (f"{'model':22s} {'pin RNEA-d':>10s} {'rnea_d':>8s} {'ratio':>6s} {'pin ABA-d':>10s} {'aba_d':>8s} "
           f"{'ratio':>6s} {'rnea_SO':>9s} {'SO/pinFO':>8s} {'CD 2n':>9s} {'SO/CD':>6s} {'SO out=':>9s} "
           f"{'/pinFO':>6s} {'/CD':>5s}")
    print(hdr)
    ratios = {}
    for label, t in rows.items():
        r = {"rnea": t["rnea_d"] / t["pin_rnea_d"], "aba": t["aba_d"] / t["pin_aba_d"],
             "so_pin": t["rnea_so"] / t["pin_rnea_d"], "so_cd": t["rnea_so"] / t["cd"],
             "so_out_pin": t["rnea_so_out"] / t["pin_rnea_d"], "so_out_cd": t["rnea_so_out"] / t["cd"]}
        ratios[label] = r
        us = {k: v * 1e6 for k, v in t.items()}
        print(f"{label:22s} {us['pin_rnea_d']:8.1f}us {us['rnea_d']:6.1f}us {r['rnea']:6.2f} "
              f"{us['pin_aba_d']:8.1f}us {us['aba_d']:6.1f}us {r['aba']:6.2f} {us['rnea_so']:7.0f}us "
              f"{r['so_pin']:8.1f} {us['cd']:7.0f}us {r['so_cd']:6.2f} {us['rnea_so_out']:7.0f}us "
              f"{r['so_out_pin']:6.1f} {r['so_out_cd']:5.2f}", flush=True)
    print("\ntargets:")
    targets = [("rnea_derivatives <= 1.0 x pin.computeRNEADerivatives", "rnea",
                ("chain N=36", "chain N=100", "talos (tangent)", "talos (exp. coords)"), 1.0),
               ("aba_derivatives <= 1.0 x pin.computeABADerivatives", "aba",
                ("chain N=36", "chain N=100", "talos (tangent)", "talos (exp. coords)"), 1.0),
               ("second order <= 15.4 x pin first order (chain 36)", "so_pin", ("chain N=36",), 15.4),
               ("second order <= 5.0 x pin first order (talos)", "so_pin", ("talos (tangent)",), 5.0),
               ("second order <= 1/3 of central differences (2n first-order calls)", "so_cd", tuple(rows), 1 / 3),
               ("second order, out= <= 15.4 x pin first order (chain 36)", "so_out_pin", ("chain N=36",), 15.4),
               ("second order, out= <= 5.0 x pin first order (talos)", "so_out_pin", ("talos (tangent)",), 5.0),
               ("second order, out= <= 1/3 of central differences", "so_out_cd", tuple(rows), 1 / 3)]
    for text, key, labels, bound in targets:
        for lb in labels:
            v = ratios[lb][key]
            print(f"  {text:70s} {lb:22s} {v:6.2f}  {'met' if v <= bound else 'NOT MET'}")
    ex = ratios["talos (exp. coords)"]
    print("\nreported, no bound (Pinocchio has no second order in exponential coordinates; ours is the tangent "
          "one plus the chain rule):")
    print(f"  second order / pin first order, talos (exp. coords): {ex['so_pin']:.2f} (out= {ex['so_out_pin']:.2f})")
    print("  aba_second_order_derivatives (FDSVA-SO; Pinocchio has none) per call, and / pin.computeABADerivatives:")
    for label, t in rows.items():
        print(f"    {label:22s} {t['aba_so'] * 1e6:9.0f}us  {t['aba_so'] / t['pin_aba_d']:7.1f}x")
    if not a.no_slope:
        print("\nslope of the second order in N (log t = A log N + B, t in us; paper Table III IDSVA-SO: "
              "chains A = 3.08, binary trees A = 1.45):")
        for topo, (A, B, sizes, ts) in slope(3 if a.quick else 7).items():
            pts = ", ".join(f"N={n}: {t * 1e6:.0f}us" for n, t in zip(sizes, ts, strict=True))
            print(f"  {topo:11s} A = {A:4.2f}, B = {B:5.2f}   ({pts})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
