"""Bilateral Staggered Projections (RedMax paper §5, Alg. 3; Sueda's notes Alg. 8): friction in joints, loop
closures and against floors for one linearly implicit Euler step.

Per step, with the maximal system ``Mt v = ft`` (:class:`redmax.friction.maximal.MaximalSystem`) and the reduced
step ``A qd = b`` with its constraint rows, starting from ``f_alpha0 = 0`` and the previous step's friction
``f_beta``:

a. ``v_unc``: the bodies without joints, ``Mt v = ft + h f_beta`` with the maximal external rows (loops, prescribed
   twists, active floors: equalities by the Schur complement, inequalities by the dual QP);
b. ``v_con = J qd_con``: the reduced step with ``b + h J^T f_beta`` and all rows; loops keep their impulse
   ``f_con = -G_m^T lam / h``, floors their normal impulse ``lam``;
c. the joint reactions ``f_alpha = Mt (v_con - v_unc) / h``, distributed from the leaves to the root (each
   joint's block added to its parent's);
d. per joint and loop, the normal impulses of its contacts, ``a = h (N M^-1 N^T + eps I)^-1 N M^-1 f_c`` (plain
   inertias, eps = 1e-6: a regularised least-squares, bilateral);
e. stop when ``|f_alpha - f_alpha0|^2 / |f_alpha|^2 < 1e-3`` in the ``Mt^-1`` norm (a zero ``f_alpha`` counts
   as converged; at least two passes so that every step projects once);
f. the friction projection: the box QP ``min 1/2 beta^T T Mt^-1 T^T beta - beta^T T Mt^-1 (ft + h f_alpha)``,
   ``|beta_k| <= mu sum |a|`` over the contact's normals (rows whose bound is <= 1e-10 stay out), and
   ``f_beta = -T^T beta / h``.

The step's velocity is the last reduced solve, ``A qd = b + h J^T f_beta`` with the rows (the correct final step of
the spec's §2.6: the original's and the paper's Alg. 3 add ``h J^T f_alpha`` too, which counts the quadratic
velocity and reduced forces twice; ``compat="original"`` reproduces that and the original's distribution of the
reactions to the array predecessor instead of the parent, for comparison with its numbers only).
"""

from __future__ import annotations

from ctypes import c_int
from dataclasses import dataclass, field

import numpy as np

from redmax.errors import SimulationError
from redmax.friction._kernels import contact_sums
from redmax.friction.maximal import MaximalSystem, frames, point_rows, to_local, to_world

__all__ = ["EPS", "MAX_ITER", "ROW_MIN", "TOL", "FrictionState", "StepReport", "bisp_step", "box_qp"]

MAX_ITER = 100
TOL = 1e-3  # relative squared change of f_alpha in the Mt^-1 norm
EPS = 1e-6  # regularisation of the contact solves
ROW_MIN = 1e-10  # a tangent row enters the projection when its normal-impulse sum exceeds this


@dataclass
class FrictionState:
    """What a run carries from step to step: the friction wrenches (nb, 6) in the bodies' joint frames."""

    fb_local: np.ndarray | None = None


@dataclass
class StepReport:
    iterations: int = 0
    converged: bool = True
    work: float = 0.0  # h f_beta . v of the projection that produced the step's f_beta
    extra: dict = field(default_factory=dict)


def box_qp(S, c, bound):
    """``argmin 1/2 x^T S x - c^T x`` subject to ``-bound <= x <= bound`` (DAQP; S symmetric positive
    semidefinite: a singular S takes DAQP's proximal-point iterations)."""
    import daqp

    from redmax.solvers.qp import DUAL_TOL, PRIMAL_TOL

    m = S.shape[0]
    S = np.ascontiguousarray(0.5 * (S + S.T))
    A = np.zeros((0, m))
    sense = np.zeros(m, dtype=c_int)
    x, _, flag, _ = daqp.solve(S, -np.asarray(c, float), A, bound, -bound, sense, primal_tol=PRIMAL_TOL,
                               dual_tol=DUAL_TOL, eps_prox=0.0)
    if flag < 1:
        scale = max(float(np.abs(np.diag(S)).max()), 1e-300)
        x, _, flag, _ = daqp.solve(S, -np.asarray(c, float), A, bound, -bound, sense, primal_tol=PRIMAL_TOL,
                                   dual_tol=DUAL_TOL, eps_prox=1e-10 * scale)
    if flag < 1:
        raise SimulationError(f"friction projection failed (DAQP exit flag {flag}, {m} rows)")
    return np.asarray(x, float)


class _Rows:
    """Maximal rows ``G_m`` (m, 6 nb) with their right-hand sides, split into equalities and inequalities, and
    the solves of ``Mt v = rhs`` subject to them."""

    def __init__(self, sysm: MaximalSystem, Gm, r, eq):
        self.sysm = sysm
        keep = np.flatnonzero(np.abs(Gm).sum(axis=1) > 0.0)
        self.A = Gm[keep]
        self.r = r[keep]
        self.meq = int(np.count_nonzero(eq[keep]))
        order = np.concatenate([np.flatnonzero(eq[keep]), np.flatnonzero(~eq[keep])])
        self.A, self.r = self.A[order], self.r[order]
        if self.A.shape[0]:
            self.Y = sysm.solve(self.A.T)  # Mt^-1 A^T
            self.S = self.A @ self.Y
            self.S = 0.5 * (self.S + self.S.T)

    def solve(self, rhs):
        v = self.sysm.solve(rhs)
        if self.A.shape[0] == 0:
            return v
        c = self.A @ v - self.r
        if self.meq == self.A.shape[0]:
            lam = np.linalg.lstsq(self.S, c, rcond=1e-11)[0]
        else:
            from redmax.solvers.qp import solve_dual_qp

            lam = solve_dual_qp(self.S, c, self.meq)
        return v - self.Y @ lam


def _reframed(Rb, pb, a, b, f):
    """The world wrench whose coordinates in body b's frame are those of the world wrench f in body a's frame (the
    original code adds a reaction expressed in the parent's frame to the array predecessor's block)."""
    return to_world(Rb[b:b + 1], pb[b:b + 1], to_local(Rb[a:a + 1], pb[a:a + 1], f[None, :]))[0]


def _normals_flat(cs, R, p):
    """World points and normals of a contact set (its normals flattened) and each normal's point index."""
    xw = cs.points @ R.T + p
    idx = np.repeat(np.arange(cs.size), cs.nn)
    nl = np.concatenate([cs.normals[k, :cs.nn[k]] for k in range(cs.size)])
    return xw, xw[idx], nl @ R.T, idx


def bisp_step(model, setup, step, prog, beta: float, reduced, fstate: FrictionState, compat=None):
    """One step with friction (module docstring).

    Args:
        model: the coordinate model.  setup: its :class:`redmax.friction.setup.FrictionSetup`.  step: the
            :class:`LinearizedStep`.  prog: the constraint program.  beta: the Baumgarte gain.
        reduced: ``reduced(extra_b) -> (x, rows, lam, react, act)``, the constrained reduced solve with
            ``b + extra_b``.  fstate: the run's :class:`FrictionState` (updated).
        compat: None, or "original" (module docstring).
    Returns:
        ``((x, rows, lam, react, act), StepReport)``.
    """
    from redmax.constraints.program import maximal_rows

    h = step.h
    nb = model.nb
    sysm = MaximalSystem(model, step)
    R, p = frames(model, step.W)
    parent = np.asarray(model.parent)
    fb = np.zeros((nb, 6)) if fstate.fb_local is None else to_world(R, p, fstate.fb_local)
    # the external rows on the bodies (maximal ones only), at the end of the step as the reduced solve has them
    first = reduced(h * step.JT(fb))
    rows = first[1]
    ext = Gm = None
    if rows.m:
        Gm = maximal_rows(model, prog, step.W, step.q, step.qd, step.t_next)
        live = (rows.kind == 0) | (rows.kind == 1)
        ext = _Rows(sysm, Gm[live], (-rows.gd - beta * rows.g)[live], (rows.kind == 0)[live])
    # the contact sets and every tangent row of the step (the projection takes the rows whose bound is positive)
    jsets = [(jc, *_normals_flat(jc.cs, R[jc.joint], p[jc.joint])) for jc in setup.joints]
    lsets = [(lc, *_normals_flat(lc.cs, R[lc.A], p[lc.A])) for lc in setup.loops]
    tab = _Tangents(nb)
    joff = [tab.add(jc.cs, xw, R[jc.joint], jc.joint, jc.parent, setup.mu_joint) for jc, xw, *_ in jsets]
    loff = [tab.add(lc.cs, xw, R[lc.A], lc.A, lc.B, setup.mu_joint) for lc, xw, *_ in lsets]
    foff = []
    for fl in setup.floors:
        xw = fl.points @ R[fl.body].T + p[fl.body] - fl.radius * fl.n
        foff.append(tab.add_points(xw, fl.t, fl.body, setup.mu_world))
    tab.finish(sysm)
    # the per-joint contact solves, compiled: one table of sets and their normals
    ns = len(jsets) + len(lsets)
    sets = np.zeros((ns, 5), np.int64)
    allsets = [(jc.joint, jc.parent, xn, nw, idx, o) for (jc, _x, xn, nw, idx), o in zip(jsets, joff, strict=True)]
    allsets += [(lc.A, lc.B, xn, nw, idx, o) for (lc, _x, xn, nw, idx), o in zip(lsets, loff, strict=True)]
    n0 = 0
    for k, (c, par, xn, _nw, _idx, o) in enumerate(allsets):
        sets[k] = (c, par, n0, xn.shape[0], o)
        n0 += xn.shape[0]
    XN = np.concatenate([a[2] for a in allsets]) if ns else np.zeros((0, 3))
    NW = np.concatenate([a[3] for a in allsets]) if ns else np.zeros((0, 3))
    NIDX = np.concatenate([a[4] for a in allsets]).astype(np.int64) if ns else np.zeros(0, np.int64)
    Iinv = np.ascontiguousarray(np.linalg.inv(sysm.I))
    Fc = np.zeros((ns, 12))
    fa0 = np.zeros(6 * nb)
    fb_work = 0.0
    have_projection = False
    sol = first
    rep = StepReport()
    original = compat == "original"
    if original:  # the bodies' own frames (centre of mass), in which the original stores maximal wrenches
        Ejb = np.asarray(model.E_jb, float)
        Rb = R @ Ejb[:, :3, :3]
        pb = np.einsum("kij,kj->ki", R, Ejb[:, :3, 3]) + p
    for it in range(1, MAX_ITER + 1):
        rep.iterations = it
        if it > 1:
            sol = reduced(h * step.JT(fb))
        x, rows, lam = sol[0], sol[1], sol[2]
        rhs = sysm.ft + h * fb.reshape(-1)
        v_unc = ext.solve(rhs) if ext is not None else sysm.solve(rhs)
        v_con = step.J(x).reshape(-1)
        fa = sysm.Mt @ (v_con - v_unc) / h
        # convergence (before the projection: the step keeps the f_beta that produced this f_alpha)
        d = fa - fa0
        den = float(fa @ sysm.solve(fa))
        if it > 1 and (den <= 0.0 or float(d @ sysm.solve(d)) < TOL * den):
            break
        if it == MAX_ITER:
            rep.converged = False
            break
        fa0 = fa
        # distribute the reactions from the leaves (each body keeps its own joint's)
        fc = fa.reshape(nb, 6).copy()
        for i in range(nb - 1, -1, -1):
            if parent[i] < 0:
                continue
            if not original or parent[i] == i - 1:
                fc[parent[i]] += fc[i]
            else:  # the original: the parent-frame coordinates of the reaction, added to the predecessor's block
                fc[i - 1] += _reframed(Rb, pb, parent[i], i - 1, fc[i])
        s = np.zeros(tab.npt)  # normal-impulse sum of every contact point
        for k, (jc, *_rest) in enumerate(jsets):
            Fc[k, :6] = fc[jc.joint]
            Fc[k, 6:] = -fc[jc.joint]
        for k, (lc, *_rest) in enumerate(lsets):
            r0, r1 = rows.roff[lc.k], rows.roff[lc.k + 1]
            f_con = (-(Gm[r0:r1].T @ lam[r0:r1]) / h).reshape(nb, 6) if r1 > r0 else np.zeros((nb, 6))
            Fc[len(jsets) + k, :6] = f_con[lc.A]
            Fc[len(jsets) + k, 6:] = f_con[lc.B] if lc.B >= 0 else 0.0
        if ns:
            contact_sums(sets, XN, NW, NIDX, Iinv, Fc, h, EPS, s)
        for fl, o in zip(setup.floors, foff, strict=True):
            r0 = rows.roff[fl.k]
            for j in range(fl.points.shape[0]):
                if rows.kind[r0 + j] == 1:
                    s[o + j] = max(float(lam[r0 + j]), 0.0)
        keep = np.flatnonzero(s[tab.pt] > ROW_MIN)
        if keep.size == 0:
            fb = np.zeros((nb, 6))
            fb_work = 0.0
            have_projection = True
            continue
        base = sysm.ft + h * fa
        Y = tab.Y[:, keep]
        be = box_qp(tab.S[np.ix_(keep, keep)], Y.T @ base, tab.mu[keep] * s[tab.pt[keep]])
        fb = (-(tab.T[keep].T @ be) / h).reshape(nb, 6)
        v_proj = sysm.solve(base) - Y @ be
        fb_work = float(h * fb.reshape(-1) @ v_proj)
        have_projection = True
    if original:
        sol = reduced(h * step.JT(fb + fa.reshape(nb, 6)))
    rep.work = fb_work if have_projection else 0.0
    fstate.fb_local = to_local(R, p, fb)
    return sol, rep


class _Tangents:
    """Every tangent row of a step (rows on the bodies' twists), its contact point and mu; ``Y = Mt^-1 T^T`` and
    ``S = T Y`` formed once per step."""

    def __init__(self, nb: int):
        self.nb = nb
        self._rows, self._pt, self._mu = [], [], []
        self.npt = 0

    def _put(self, x, t, ks, child, parent, mu):
        r6 = point_rows(x[ks], t)
        rows = np.zeros((ks.size, 6 * self.nb))
        rows[:, 6 * child:6 * child + 6] = r6
        if parent >= 0:
            rows[:, 6 * parent:6 * parent + 6] = -r6
        self._rows.append(rows)
        self._pt.append(self.npt + ks)
        self._mu.append(np.full(ks.size, mu))

    def add(self, cs, xw, R, child, parent, mu) -> int:
        """The tangents of a contact set at its world points xw; returns its first point index."""
        ks, js = np.nonzero(np.arange(cs.tangents.shape[1])[None, :] < cs.nt[:, None])
        self._put(xw, cs.tangents[ks, js] @ R.T, ks, child, parent, mu)
        first = self.npt
        self.npt += cs.size
        return first

    def add_points(self, xw, tangents, body, mu) -> int:
        """Floor contacts: each point (rows of xw) with the same world tangents (2, 3), on one body."""
        k = xw.shape[0]
        ks = np.repeat(np.arange(k), tangents.shape[0])
        self._put(xw, np.tile(tangents, (k, 1)), ks, body, -1, mu)
        first = self.npt
        self.npt += k
        return first

    def finish(self, sysm) -> None:
        self.T = np.concatenate(self._rows) if self._rows else np.zeros((0, 6 * self.nb))
        self.pt = np.concatenate(self._pt) if self._pt else np.zeros(0, np.int64)
        self.mu = np.concatenate(self._mu) if self._mu else np.zeros(0)
        self.Y = sysm.solve(self.T.T) if self.T.shape[0] else np.zeros((6 * self.nb, 0))
        self.S = self.T @ self.Y
