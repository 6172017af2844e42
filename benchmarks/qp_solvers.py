"""Which QP solver for the constrained step: the measurement behind redmax.solvers.qp.

Collects the QPs that simulations actually solve (``min 1/2 x^T H x - b^T x, G x = r_G, C x <= r_C``; H the step
matrix in the model's DOFs), from reference/06 (joint limit, 2 DOFs), paper/hagfish (150 DOFs, limits,
self-contact and the guided tail) and a 50-link chain with limits on every joint and a held tip (50 DOFs), then solves
each with every installed candidate (DAQP, proxsuite, quadprog, OSQP, Clarabel, PIQP; tolerances tightened as far as
each allows) and prints the median time per solve and the largest relative KKT residual (stationarity, primal and
dual feasibility, complementarity).  Run: ``PYTHONPATH=src python benchmarks/qp_solvers.py``.
"""

from __future__ import annotations

import time

import numpy as np

import redmax as rm
import redmax.solvers.qp as qpmod


def collect() -> dict:
    """{name: [QP tuples]} from short runs (the QPs are recorded as the default solver sees them)."""
    out, cur = {}, []
    orig = qpmod.solve_qp

    def spy(H, b, G, rG, C, rC, symmetric=True, warm=None):
        cur.append((np.array(H), np.array(b), np.array(G), np.array(rG), np.array(C), np.array(rC)))
        return orig(H, b, G, rG, C, rC, symmetric, warm)

    qpmod.solve_qp = spy
    try:
        rm.scenes.load("reference/06").simulate()
        out["reference/06 (2 DOFs)"], cur = cur[:], []
        rm.scenes.load("paper/hagfish").simulate()  # the knot: self-contact from t = 2 s on
        out["paper/hagfish (150 DOFs)"], cur = cur[::10], []
        from redmax.testing.benchmark_models import benchmark_chain

        model, st = benchmark_chain(50, springs=False, hold=True)
        b = rm.ModelBuilder("chain50-limits", model.gravity)
        b._bodies = list(model.source["bodies"])
        b._constraints = list(model.source["constraints"])
        for i in range(50):
            b.add_constraint(rm.constraints.Limit(f"j{i}", -0.05, 0.05, name=f"lim{i}"))
        rm.simulate(b.build(), st, dt=1e-3, duration=0.2)
        out["chain of 50, limits + held tip"], cur = cur[::4], []
    finally:
        qpmod.solve_qp = orig
    return {k: v for k, v in out.items() if v}


def residual(H, b, G, rG, C, rC, x, lg, lc) -> float:
    s = max(1.0, np.abs(b).max(), np.abs(H).max() * max(1.0, np.abs(x).max()))
    r = max(1.0, np.abs(rG).max(initial=0), np.abs(rC).max(initial=0))
    lam = max(1.0, np.abs(lg).max(initial=0), np.abs(lc).max(initial=0))
    st = np.abs(H @ x - b + G.T @ lg + C.T @ lc).max() / s
    pe = np.abs(G @ x - rG).max(initial=0) / r
    pi = max(0.0, (C @ x - rC).max(initial=0)) / r
    dn = max(0.0, -lc.min(initial=0)) / lam
    cp = np.abs(lc * (rC - C @ x)).max(initial=0) / (lam * r)
    return max(st, pe, pi, dn, cp)


def s_daqp(H, b, G, rG, C, rC):
    x, lg, lc = qpmod.solve_qp(H, b, G, rG, C, rC)
    return x, lg, lc


def s_proxsuite(H, b, G, rG, C, rC):
    import proxsuite

    n = H.shape[0]
    qp = proxsuite.proxqp.dense.QP(n, G.shape[0], C.shape[0])
    qp.settings.eps_abs, qp.settings.eps_rel, qp.settings.verbose = 1e-12, 0.0, False
    qp.init(H, -b, G if G.shape[0] else None, rG if G.shape[0] else None, C, np.full(C.shape[0], -1e30), rC)
    qp.solve()
    return qp.results.x, qp.results.y, qp.results.z


def s_quadprog(H, b, G, rG, C, rC):
    import quadprog

    x, _, _, _, lag, _ = quadprog.solve_qp(H, b, np.vstack([G, -C]).T, np.concatenate([rG, -rC]), G.shape[0])
    return x, -lag[:G.shape[0]], lag[G.shape[0]:]


def s_osqp(H, b, G, rG, C, rC):
    import osqp
    import scipy.sparse as sp

    A = sp.csc_matrix(np.vstack([G, C]))
    m = osqp.OSQP()
    m.setup(sp.csc_matrix(np.triu(H)), -b, A, np.concatenate([rG, np.full(C.shape[0], -np.inf)]),
            np.concatenate([rG, rC]), eps_abs=1e-10, eps_rel=1e-10, verbose=False, polishing=True, max_iter=200000)
    r = m.solve()
    return r.x, r.y[:G.shape[0]], r.y[G.shape[0]:]


def s_clarabel(H, b, G, rG, C, rC):
    import clarabel
    import scipy.sparse as sp

    cones = ([clarabel.ZeroConeT(G.shape[0])] if G.shape[0] else []) + [clarabel.NonnegativeConeT(C.shape[0])]
    st = clarabel.DefaultSettings()
    st.verbose = False
    st.tol_gap_abs = st.tol_gap_rel = st.tol_feas = 1e-12
    sol = clarabel.DefaultSolver(sp.csc_matrix(np.triu(H)), -b, sp.csc_matrix(np.vstack([G, C])),
                                 np.concatenate([rG, rC]), cones, st).solve()
    z = np.array(sol.z)
    return np.array(sol.x), z[:G.shape[0]], z[G.shape[0]:]


def s_piqp(H, b, G, rG, C, rC):
    import piqp

    s = piqp.DenseSolver()
    s.settings.eps_abs, s.settings.eps_rel, s.settings.verbose = 1e-12, 1e-14, False
    s.setup(H, -b, G if G.shape[0] else None, rG if G.shape[0] else None, C, np.full(C.shape[0], -np.inf), rC,
            None, None)
    s.solve()
    return s.result.x, s.result.y, s.result.z_u


SOLVERS = {"daqp": s_daqp, "proxsuite": s_proxsuite, "quadprog": s_quadprog, "osqp": s_osqp,
           "clarabel": s_clarabel, "piqp": s_piqp}


def main() -> None:
    sets = collect()
    for label, qps in sets.items():
        sizes = sorted({(q[0].shape[0], q[2].shape[0] + q[4].shape[0]) for q in qps})
        print(f"{label}: {len(qps)} QPs, (n, rows) from {sizes[0]} to {sizes[-1]}")
        for name, fn in SOLVERS.items():
            times, res = [], []
            try:
                for q in qps:
                    t0 = time.perf_counter()
                    x, lg, lc = fn(*q)
                    times.append(time.perf_counter() - t0)
                    res.append(residual(*q, np.asarray(x), np.asarray(lg), np.asarray(lc)))
            except Exception as e:  # a solver that is not installed or fails on the set
                print(f"  {name:10s} failed: {type(e).__name__}: {str(e)[:80]}")
                continue
            print(f"  {name:10s} median {1e6 * np.median(times):9.1f} us   max relative KKT residual {max(res):.1e}")


if __name__ == "__main__":
    main()
