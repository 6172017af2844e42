"""Staggered Projections (Kaufman et al. 2008; RedMax paper §5, Alg. 2; Sueda's notes Alg. 7): the maximal-coordinate
baseline that the paper times BiSP against (``simulate(..., friction_solver="sp")``).

The bodies are free rigid bodies (world twists ``V``, poses ``E``, updated ``E <- exp(h [V]) E`` as
:func:`redmax.simulate_maximal` does); every joint is its contact cage (:mod:`redmax.friction.geometry`) held by
unilateral contacts, floors are unilateral contacts too.  Per step, with ``Mt = M + h D - h^2 K`` and
``w = Mt^-1 (M V0 + h f)``:

1. the contact QP over ``alpha >= 0``: ``min 1/2 alpha^T (N Mt^-1 N^T + eps I) alpha + alpha^T (N (w + h Mt^-1
   f_beta) + beta_s d)`` (the dual of ``N v >= -beta_s d``, d the gaps: n . (x_child - x_parent copy)),
   ``f_alpha = N^T alpha / h``;
2. the convergence test of BiSP on ``f_alpha``; then the friction projection of BiSP with ``M V0 + h f`` in place
   of the reduced system's right-hand side and bounds ``mu sum alpha`` per contact point;
3. ``v = w + h Mt^-1 (f_alpha + f_beta)``.

The joint coordinates of each sample are read back from the poses (:func:`joint_coordinates`), the rates by
least squares on the twists, so that ``Result.q`` and the energies are those of the reduced model.  Loop closures
are bilateral rows of the contact QP.  Joints without a cage (fixed, free, universal, ...), other constraints and
forces on joint coordinates are refused with a
SimulationError naming them.  Parameters: eps = 1e-6, beta_s = 0.5 / h (a gap closes by half in a step), at
most 100 passes.

The stabilisation is per step, not the spec's 5 1/s: with a fixed 5 1/s a cage drifts by ~1e-5 of its size over a
swing, and the drifted cage's unilateral contacts carry more normal load than the joint's reaction needs (on the
2-link CHAIN at h = 2e-3 the outer joint's normal-impulse sum grows from 146 to 201 over 0.35 s, where a fresh step
from the same joint coordinates gives 147), so the outer joints stick too long: final angles 8-15 degrees from
BiSP's.  With beta_s h = 0.5 the CHAIN of 2 to 10 links ends within 3 degrees of BiSP at h = 2e-3.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from redmax.errors import SimulationError
from redmax.friction.bisp import EPS, MAX_ITER, ROW_MIN, TOL, box_qp
from redmax.friction.maximal import point_rows
from redmax.spatial import exp_se3, log_so3

__all__ = ["BETA_S_H", "joint_coordinates", "run_sp", "simulate_sp"]

BETA_S_H = 0.5  # position stabilisation of the contacts per step: beta_s = BETA_S_H / h (1/s)


def _rel(model, E, i):
    """Joint i's frame relative to its rest placement on the parent: ``(E_parent E_pj0)^-1 E_i`` (4, 4)."""
    p = model.parent[i]
    base = model.E_pj0[i] if p < 0 else E[p] @ model.E_pj0[i]
    return np.linalg.solve(base, E[i]), base


def _q_of(kind, joint, rel):
    """The coordinates (and the ideal relative transform) of a joint from its actual relative transform."""
    R, t = rel[:3, :3], rel[:3, 3]
    ideal = np.eye(4)
    if kind == "revolute":
        a = np.asarray(joint.axis, float)
        a = a / np.linalg.norm(a)
        s = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
        th = np.arctan2(a @ s, 0.5 * (np.trace(R) - 1.0))
        ideal[:3, :3] = exp_se3(np.concatenate([th * a, np.zeros(3)]))[:3, :3]
        return np.array([th]), ideal
    if kind == "prismatic":
        a = np.asarray(joint.axis, float)
        a = a / np.linalg.norm(a)
        x = float(a @ t)
        ideal[:3, 3] = x * a
        return np.array([x]), ideal
    if kind == "spherical_exp":
        r = np.asarray(log_so3(np.ascontiguousarray(R)), float)
        ideal[:3, :3] = R
        return r, ideal
    raise SimulationError(f"joint kind {kind!r} has no contact cage")


def joint_coordinates(model, E):
    """``(q (n,), ideal poses (nb, 4, 4))``: the coordinates of every joint read from the bodies' joint-frame poses
    E (nb, 4, 4), and the pose each body would have with its joint intact (its parent's actual pose)."""
    q = np.zeros(model.ndof)
    ideal = np.empty_like(E)
    for i in range(model.nb):
        rel, base = _rel(model, E, i)
        qi, rel_ideal = _q_of(model.joints[i].kind, model.joints[i], rel)
        q[model.idx[i]:model.idx[i + 1]] = qi
        ideal[i] = base @ rel_ideal
    return q, ideal


def _world_inertias(model, E):
    R, p = E[:, :3, :3], E[:, :3, 3]
    Ad = np.zeros((model.nb, 6, 6))
    Ad[:, :3, :3] = R
    Ad[:, 3:, 3:] = R
    P = np.zeros((model.nb, 3, 3))
    P[:, 0, 1], P[:, 0, 2], P[:, 1, 0] = -p[:, 2], p[:, 1], p[:, 2]
    P[:, 1, 2], P[:, 2, 0], P[:, 2, 1] = -p[:, 0], -p[:, 1], p[:, 0]
    Ad[:, 3:, :3] = P @ R
    Ai = np.linalg.inv(Ad)
    return np.einsum("kji,kjl,klm->kim", Ai, np.asarray(model.M_joint), Ai)


def _check(model, setup):
    from redmax.constraints.closures import Loop

    contacts = model.contacts or (None,) * model.nb
    for i in range(model.nb):
        if contacts[i] is None:
            raise SimulationError(f"{model.name}: friction_solver 'sp' represents every joint by its contact cage; "
                                  f"joint '{model.joint_names[i]}' ({model.joints[i].kind}) has none")
    for c in model.constraints:
        if isinstance(c, Loop):
            if c.A < 0:
                raise SimulationError(f"{model.name}: friction_solver 'sp' takes loops whose first point is on a body "
                                      f"(loop '{c.name}')")
            continue
        if c.type != "floor":
            raise SimulationError(f"{model.name}: friction_solver 'sp' takes loops and floors only; constraint "
                                  f"'{c.name}' ({c.type}) is not supported; use 'bisp'")
    if model.uncoupled is not None:
        raise SimulationError(f"{model.name}: friction_solver 'sp' does not take coupled joints; use 'bisp'")


def simulate_sp(model, state, h: float, duration: float, program, inputs=None, beta: float = 5.0):
    """Run Staggered Projections (module docstring) from ``state`` (a checked :class:`redmax.State`).

    Loop closures are bilateral rows in the contact QP (free multipliers, Baumgarte gain ``beta`` on their
    violation); the friction of a loop with a contact is bounded by the least-squares impulses of its cage under the
    loop's reaction, as in BiSP.

    Returns ``(t, Q, QD, meta)``: sample times, joint coordinates and rates (N+1, n) read back from the poses, and
    the friction entries of ``Result.meta``."""
    from redmax._kernels.workspace import work_offsets
    from redmax.constraints.closures import Loop
    from redmax.constraints.program import evaluate_rows, maximal_rows, program_for
    from redmax.forces._compiled import NE
    from redmax.forces.evaluate import NO_PAIRS, NO_RECORDS
    from redmax.forces.registry import eval_forces_gated
    from redmax.friction._kernels import contact_sums
    from redmax.friction.setup import friction_setup
    from redmax.integrators._linearize import linearize_forces
    from redmax.integrators._stages import J_world, kinematics_stage
    from redmax.integrators.common import time_grid

    setup = friction_setup(model)
    _check(model, setup)
    prog = program_for(model) if model.constraints else None
    loops = [k for k, c in enumerate(model.constraints) if isinstance(c, Loop)]
    if inputs is not None and not inputs.empty:
        raise SimulationError(f"{model.name}: friction_solver 'sp' takes no joint torques; use 'bisp'")
    n, t = time_grid(state.t, h, duration)
    nb, nd = model.nb, model.ndof
    beta_s = BETA_S_H / h
    Ii, Ff = model.packed
    W = np.zeros(work_offsets(nb, nd).size)
    o = work_offsets(nb, nd)
    kinematics_stage(Ii, Ff, np.array(state.q, float), np.array(state.qd, float),
                     np.array(state.jstate, np.int64), W)
    E = np.zeros((nb, 4, 4))
    E[:, :3, :3] = W[o.wR:o.wR + 9 * nb].reshape(nb, 3, 3)
    E[:, :3, 3] = W[o.wp:o.wp + 3 * nb].reshape(nb, 3)
    E[:, 3, 3] = 1.0
    V = W[o.wV:o.wV + 6 * nb].reshape(nb, 6).copy()
    g = np.asarray(model.gravity, float)
    cap = max(program.nblocks, 1)
    Q, QD = np.zeros((n + 1, nd)), np.zeros((n + 1, nd))
    its, work = np.zeros(n, np.int64), np.zeros(n)
    unconverged = []
    fb = np.zeros(6 * nb)
    Q[0], QD[0] = state.q, state.qd
    base6 = 6 * np.arange(nb)
    ii, jj = np.meshgrid(np.arange(6), np.arange(6), indexing="ij")
    for k in range(n):
        I = _world_inertias(model, E)
        Rw = np.ascontiguousarray(E[:, :3, :3].reshape(nb, 9))
        pw = np.ascontiguousarray(E[:, :3, 3])
        fw, fw_rhs = np.zeros((nb, 6)), np.zeros((nb, 6))
        bpair, bK, bD, bB = np.zeros((cap, 2), np.int64), *np.zeros((3, cap, 6, 6))
        fr, fr_rhs, rK, rD, rdiag = np.zeros((5, nd))
        q_now, ideal = joint_coordinates(model, E)
        Vc = np.ascontiguousarray(V)
        nblk, _ = eval_forces_gated(program.hdr, program.fi, program.ff, Rw, pw, Vc, q_now, np.zeros(nd), True, fw,
                                    bpair, bK, bD, fr, rK, rD, np.zeros(NE), np.zeros(program.nscratch), NO_PAIRS,
                                    NO_RECORDS, False)
        linearize_forces(-h * h, h, nblk, 0, bpair, bK, bD, bB, rK, rD, rdiag, fw, fw_rhs, fr, fr_rhs, Vc,
                         np.zeros(nd), NO_PAIRS, NO_RECORDS)
        if np.any(fr != 0.0) or np.any(rdiag != 0.0):
            raise SimulationError(f"{model.name}: friction_solver 'sp' takes maximal forces only (a force acts on "
                                  "joint coordinates); use 'bisp'")
        P = np.einsum("kij,kj->ki", I, V)
        cor = -np.concatenate([np.cross(V[:, :3], P[:, :3]) + np.cross(V[:, 3:], P[:, 3:]),
                               np.cross(V[:, :3], P[:, 3:])], axis=1)
        f = np.einsum("kij,j->ki", I[:, :, 3:], g) + cor + fw_rhs
        rows = [base6[i] + ii.ravel() for i in range(nb)]
        cols = [base6[i] + jj.ravel() for i in range(nb)]
        vals = [I[i].ravel() for i in range(nb)]
        for (a, c), blk in zip(bpair[:nblk], bB[:nblk], strict=True):
            rows.append(base6[a] + ii.ravel())
            cols.append(base6[c] + jj.ravel())
            vals.append(blk.ravel())
        Mt = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(6 * nb,) * 2)
        lu = splu(Mt)
        rhs0 = P.reshape(-1) + h * f.reshape(-1)
        w = lu.solve(rhs0)
        N, d, owner, tab, lsets = _contact_rows(model, setup, E, ideal, lu.solve)
        nc = N.shape[0]
        if loops:  # the closures' rows at the actual poses: a workspace with the bodies' frames and twists
            W2 = np.zeros_like(W)
            kinematics_stage(Ii, Ff, np.ascontiguousarray(q_now), np.zeros(nd), np.array(state.jstate, np.int64), W2)
            W2[o.wR:o.wR + 9 * nb] = E[:, :3, :3].reshape(-1)
            W2[o.wp:o.wp + 3 * nb] = E[:, :3, 3].reshape(-1)
            W2[o.wV:o.wV + 6 * nb] = V.reshape(-1)
            rows = evaluate_rows(model, prog, W2, q_now, np.zeros(nd), t[k + 1], 0)
            Gm = maximal_rows(model, prog, W2, q_now, np.zeros(nd), t[k + 1])
            sel = np.concatenate([np.arange(rows.roff[c], rows.roff[c + 1]) for c in loops])
            N = np.vstack([N, Gm[sel]])
            d = np.concatenate([d, (beta / beta_s) * rows.g[sel]])
            loff = {c: nc + int(np.searchsorted(sel, rows.roff[c])) for c in loops}
        lower = np.concatenate([np.zeros(nc), np.full(N.shape[0] - nc, -1e30)])
        Y = lu.solve(N.T)
        S = N @ Y
        S = 0.5 * (S + S.T) + EPS * np.eye(S.shape[0])
        fa0 = np.zeros(6 * nb)
        fa = fa0
        converged = False
        for it in range(1, MAX_ITER + 1):
            its[k] = it
            c = N @ (w + h * lu.solve(fb)) + beta_s * d
            alpha = _bounded_qp(S, c, lower)
            fa = N.T @ alpha / h
            dlt = fa - fa0
            den = float(fa @ lu.solve(fa))
            if it > 1 and (den <= 0.0 or float(dlt @ lu.solve(dlt)) < TOL * den):
                converged = True
                break
            if it == MAX_ITER:
                break
            fa0 = fa
            s = np.bincount(owner, np.abs(alpha[:nc]), minlength=tab.npt)
            if lsets:  # the loops' cages under their reactions (least squares, as BiSP)
                sets, XN, NW, NIDX, ks = lsets
                Fc = np.zeros((len(ks), 12))
                for j, (kc, A, B) in enumerate(ks):
                    r0 = loff[kc]
                    m_ = rows.roff[kc + 1] - rows.roff[kc]
                    fl = (N[r0:r0 + m_].T @ alpha[r0:r0 + m_] / h).reshape(nb, 6)
                    Fc[j, :6] = fl[A]
                    Fc[j, 6:] = fl[B] if B >= 0 else 0.0
                contact_sums(sets, XN, NW, NIDX, np.ascontiguousarray(np.linalg.inv(I)), Fc, h, EPS, s)
            keep = np.flatnonzero(s[tab.pt] > ROW_MIN)
            if keep.size == 0:
                fb = np.zeros(6 * nb)
                work[k] = 0.0
                continue
            base = rhs0 + h * fa
            YT = tab.Y[:, keep]
            be = box_qp(tab.S[np.ix_(keep, keep)], YT.T @ base, tab.mu[keep] * s[tab.pt[keep]])
            fb = -(tab.T[keep].T @ be) / h
            work[k] = float(h * fb @ (lu.solve(base) - YT @ be))
        if not converged:
            unconverged.append(k)
        v = w + h * lu.solve(fa + fb)
        V = v.reshape(nb, 6)
        E = np.array([exp_se3(h * V[i]) @ E[i] for i in range(nb)])
        Q[k + 1], _ = joint_coordinates(model, E)
        QD[k + 1] = _rates(model, Ii, Ff, Q[k + 1], state.jstate, V, W, J_world, kinematics_stage)
        if not (np.all(np.isfinite(Q[k + 1])) and np.all(np.isfinite(QD[k + 1]))):
            raise SimulationError(f"{model.name}: step {k} (t = {t[k]:.6g}): friction_solver 'sp' gave a non-finite "
                                  "state; reduce the time step")
    meta = {"friction_solver": "sp", "friction_iterations": its,
            "friction_unconverged": np.array(unconverged, np.int64), "friction_work": work}
    return t, Q, QD, meta


def _rates(model, Ii, Ff, q, js, V, W, J_world, kinematics_stage):
    """Joint rates whose twists are closest to V (least squares on J at q)."""
    nd = model.ndof
    kinematics_stage(Ii, Ff, np.ascontiguousarray(q), np.zeros(nd), np.array(js, np.int64), W)
    J = np.zeros((6 * model.nb, nd))
    out = np.zeros((model.nb, 6))
    e = np.zeros(nd)
    for c in range(nd):
        e[:] = 0.0
        e[c] = 1.0
        J_world(Ii, W, e, out)
        J[:, c] = out.reshape(-1)
    return np.linalg.lstsq(J, V.reshape(-1), rcond=None)[0]


def _bounded_qp(S, c, lower):
    """``argmin 1/2 x^T S x + c^T x`` over ``x >= lower`` (S positive definite; DAQP; -1e30: free)."""
    from ctypes import c_int

    import daqp

    from redmax.solvers.qp import DUAL_TOL, PRIMAL_TOL

    m = S.shape[0]
    x, _, flag, _ = daqp.solve(np.ascontiguousarray(S), np.asarray(c, float), np.zeros((0, m)), np.full(m, 1e30),
                               np.asarray(lower, float), np.zeros(m, dtype=c_int), primal_tol=PRIMAL_TOL,
                               dual_tol=DUAL_TOL)
    if flag < 1:
        raise SimulationError(f"friction_solver 'sp': the contact QP failed (DAQP exit flag {flag}, {m} contacts)")
    return np.asarray(x, float)


def _contact_rows(model, setup, E, ideal, solve):
    """The contacts of the cages and floors: normal rows N (k, 6 nb), gaps d (k,), each normal's contact point
    index, and the tangent rows of every point (:class:`redmax.friction.bisp._Tangents`, formed with ``solve``)."""
    from redmax.friction.bisp import _Tangents

    nb = model.nb
    tab = _Tangents(nb)
    N, d, owner = [], [], []
    for jc in setup.joints:
        c, p = jc.joint, jc.parent
        R, o = E[c, :3, :3], E[c, :3, 3]
        cs = jc.cs
        xc = cs.points @ R.T + o
        xp = cs.points @ ideal[c, :3, :3].T + ideal[c, :3, 3]  # the parent's copies: the points, joint intact
        idx = np.repeat(np.arange(cs.size), cs.nn)
        nw = np.concatenate([cs.normals[k, :cs.nn[k]] for k in range(cs.size)]) @ R.T
        rows = np.zeros((idx.size, 6 * nb))
        rows[:, 6 * c:6 * c + 6] = point_rows(xc[idx], nw)
        if p >= 0:
            rows[:, 6 * p:6 * p + 6] = -point_rows(xp[idx], nw)
        N.append(rows)
        d.append(np.einsum("ki,ki->k", nw, xc[idx] - xp[idx]))
        owner.append(tab.add(cs, xc, R, c, p, setup.mu_joint) + idx)
    for fl in setup.floors:
        con = model.constraints[fl.k]
        b = fl.body
        x = fl.points @ E[b, :3, :3].T + E[b, :3, 3] - fl.radius * fl.n
        rows = np.zeros((x.shape[0], 6 * nb))
        rows[:, 6 * b:6 * b + 6] = point_rows(x, np.tile(fl.n, (x.shape[0], 1)))
        N.append(rows)
        d.append((x - np.asarray(con.origin, float)) @ fl.n)
        owner.append(tab.add_points(x, fl.t, b, setup.mu_world) + np.arange(x.shape[0]))

    lsets = None
    if setup.loops:
        sets, XN, NW, NIDX, ks = [], [], [], [], []
        n0 = 0
        for lc in setup.loops:
            R, o = E[lc.A, :3, :3], E[lc.A, :3, 3]
            cs = lc.cs
            xw = cs.points @ R.T + o
            idx = np.repeat(np.arange(cs.size), cs.nn)
            nw = np.concatenate([cs.normals[k, :cs.nn[k]] for k in range(cs.size)]) @ R.T
            first = tab.add(cs, xw, R, lc.A, lc.B, setup.mu_joint)
            sets.append((lc.A, lc.B, n0, idx.size, first))
            n0 += idx.size
            XN.append(xw[idx])
            NW.append(nw)
            NIDX.append(idx)
            ks.append((lc.k, lc.A, lc.B))
        lsets = (np.array(sets, np.int64), np.concatenate(XN), np.concatenate(NW),
                 np.concatenate(NIDX).astype(np.int64), ks)

    class _Solve:
        pass

    sv = _Solve()
    sv.solve = solve
    tab.finish(sv)
    N = np.concatenate(N) if N else np.zeros((0, 6 * nb))
    d = np.concatenate(d) if d else np.zeros(0)
    owner = np.concatenate(owner) if owner else np.zeros(0, np.int64)
    return N, d, owner, tab, lsets


def run_sp(model, state, h: float, duration: float, forces=None, inputs=None, symmetrize: bool = False,
           baumgarte: float = 5.0):
    """``simulate(..., friction_solver="sp")``: :func:`simulate_sp` with the run's energies and a Result."""
    from redmax.forces.program import ENERGY_KEYS
    from redmax.integrators.common import Result
    from redmax.integrators.euler_parts import _energies, _state, resolve_forces
    from redmax.integrators.step import StepOptions

    program, python, _ = resolve_forces(model, forces, StepOptions(symmetrize=bool(symmetrize)))
    if python:
        raise SimulationError(f"{model.name}: friction_solver 'sp' needs compiled forces; "
                              f"{', '.join(repr(f.name) for f in python)} have Python laws")
    st = _state(model, state)
    inp = model.inputs if inputs is None else inputs
    t, Q, QD, fmeta = simulate_sp(model, st, h, duration, program, inp, baumgarte)
    JS = np.tile(st.jstate, (t.size, 1))
    E = np.array([_energies(model, program, python, Q[k], QD[k], JS[k], t[k]) for k in range(t.size)])
    energy = {k: E[:, i].copy() for i, k in enumerate(ENERGY_KEYS) if i < 4}
    energy["total"] = sum(energy.values())
    meta = {"integrator": "euler", "dt": h, "steps": t.size - 1, "method": "maximal", "solver": "sparse",
            "compiled": False, "baumgarte": baumgarte, "contact_stabilisation": BETA_S_H / h, **fmeta}
    return Result(t, Q, QD, JS, energy, meta)
