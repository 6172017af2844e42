"""First-order derivatives of inverse dynamics: IDSVA (Singh, Russell & Wensing 2022, Eqs. 12-13), O(n d).

On the core tree (:mod:`.core_tree`), all in the world frame, with ``B' = 2 B`` the body Coriolis matrix of Eq. 14
without its 1/2 and composites ``I^C``, ``B'^C``, ``f^C`` of the subtree of body i (f includes gravity through
the base acceleration and the external wrenches), for core DOFs p of body i and t of an ancestor-or-same
core joint j:

    dtau_p/dq_t  = s_p^T (I^C_i psi_ddot_t + B'^C_i psi_dot_t)                         (12a, j <= i)
    dtau_t/dq_p  = s_t^T (I^C_i psi_ddot_p + B'^C_i psi_dot_p + s_p x* f^C_i)          (12b, j < i)
    dtau_p/dqd_t = s_p^T (B'^C_i s_t + I^C_i theta_t),  dtau_t/dqd_p = s_t^T (B'^C_i s_p + I^C_i theta_p)
                                                                                       (13a, 13b)

with ``theta = psi_dot + s_dot`` (:func:`.core_tree.forward_core`).  The derivatives with respect to configuration are
Lie derivatives along the core joints' constant local twists; the model's own coordinates follow by the
chain rule through ``nu = A(q) qd``, ``nud = A qdd + Adot qd`` (:func:`chain_first_order`):

    dtau/dq  = A^T (T_q A + T_v P + M R) + (dA^T) tau_c,   dtau/dqd = A^T (T_v A + M G),

``P = d(A qd)/dq``, ``R = d(nud)/dq``, ``G = d(nud)/dqd``.  With ``tangent=True`` spherical and free joints keep
their core rates (the body angular velocity / body twist, angular first) and derivatives with respect to
configuration are the Lie derivatives along body-twist perturbations ``E <- E exp([dx])``.

Scalar-generic: complex q, qd, qdd work (complex step).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax._kernels.registers import get6
from redmax.derivatives.core_tree import (
    FWD_BODY,
    add_composite,
    body_map,
    core_offsets,
    crossf6,
    fast_offset,
    forward_pass,
    inertia6,
)
from redmax.dynamics.rnea import check_inputs
from redmax.joints.core_expansion import so3_jr_jets
from redmax.model.layout import NO_FEXT, offsets

__all__ = ["ALIGNED", "CORE", "GENERAL", "RNEA_KERNELS", "chain_first_order", "chain_kind", "dtau_dfext_kernel",
           "idsva", "rnea_derivatives_aligned", "rnea_derivatives_core", "rnea_derivatives_general", "run_checked"]



@njit(cache=True, fastmath=FAST)
def idsva(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, want_M):
    """Core first-order derivatives: (tau_c (ncd,), T_q, T_v (ncd, ncd), M_c (ncd, ncd) or (0, 0)).  The chain rule
    reads only the columns of M_c at the core DOFs of bodies whose map is not the identity (``triv[i] = 0``), so
    only those entries are formed (the others stay zero)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    dt = q.dtype
    W, CD = forward_pass(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent)
    tau = np.empty(ncd, dtype=dt)
    Tq = np.zeros((ncd, ncd), dtype=dt)
    Tv = np.zeros((ncd, ncd), dtype=dt)
    Mc = np.zeros((ncd if want_M else 0, ncd if want_M else 0), dtype=dt)
    for i in range(nb - 1, -1, -1):
        wb = FWD_BODY * i
        Ic = W[wb + 12:wb + 22]
        F0, F1, F2, F3, F4, F5 = get6(W, wb + 34)
        Bx = W[wb + 40:wb + 52]
        X00, X01, X02, X10, X11, X12, X20, X21, X22 = Bx[0], Bx[1], Bx[2], Bx[3], Bx[4], Bx[5], Bx[6], Bx[7], Bx[8]
        L0, L1, L2 = 2.0 * Bx[9], 2.0 * Bx[10], 2.0 * Bx[11]
        mp = want_M and CI[o_tr + i] == 0  # M_c[t, p] read by the chain rule
        for cj in range(CI[o_cj + i], CI[o_cj + i + 1]):
            for p in range(CI[o_co + cj], CI[o_co + cj + 1]):
                row = CD[p]
                s0, s1, s2, s3, s4, s5 = get6(row, 0)
                d0, d1, d2, d3, d4, d5 = get6(row, 6)
                e0, e1, e2, e3, e4, e5 = get6(row, 12)
                h0, h1, h2, h3, h4, h5 = get6(row, 18)
                tau[p] = s0 * F0 + s1 * F1 + s2 * F2 + s3 * F3 + s4 * F4 + s5 * F5
                y0, y1, y2, y3, y4, y5 = inertia6(Ic, s0, s1, s2, s3, s4, s5)
                # y2 = B'^T s = [X^T s_w + 2 l x s_v; 0]
                z0 = X00 * s0 + X10 * s1 + X20 * s2 + L1 * s5 - L2 * s4
                z1 = X01 * s0 + X11 * s1 + X21 * s2 + L2 * s3 - L0 * s5
                z2 = X02 * s0 + X12 * s1 + X22 * s2 + L0 * s4 - L1 * s3
                # w1 = I psi_ddot + B' psi_dot + s x* f ;  B' x = [X x_w; 2 x_w x l]
                a0, a1, a2, a3, a4, a5 = inertia6(Ic, e0, e1, e2, e3, e4, e5)
                b0, b1, b2, b3, b4, b5 = crossf6(s0, s1, s2, s3, s4, s5, F0, F1, F2, F3, F4, F5)
                u0 = a0 + b0 + X00 * d0 + X01 * d1 + X02 * d2
                u1 = a1 + b1 + X10 * d0 + X11 * d1 + X12 * d2
                u2 = a2 + b2 + X20 * d0 + X21 * d1 + X22 * d2
                u3 = a3 + b3 + d1 * L2 - d2 * L1
                u4 = a4 + b4 + d2 * L0 - d0 * L2
                u5 = a5 + b5 + d0 * L1 - d1 * L0
                # w2 = B' s + I theta
                c0, c1, c2, c3, c4, c5 = inertia6(Ic, h0, h1, h2, h3, h4, h5)
                v0 = c0 + X00 * s0 + X01 * s1 + X02 * s2
                v1 = c1 + X10 * s0 + X11 * s1 + X12 * s2
                v2 = c2 + X20 * s0 + X21 * s1 + X22 * s2
                v3 = c3 + s1 * L2 - s2 * L1
                v4 = c4 + s2 * L0 - s0 * L2
                v5 = c5 + s0 * L1 - s1 * L0
                jj = cj
                while jj >= 0:
                    mj = want_M and CI[o_tr + CI[o_cb + jj]] == 0  # M_c[p, t] read by the chain rule
                    for t in range(CI[o_co + jj], CI[o_co + jj + 1]):
                        rt = CD[t]
                        t0, t1, t2, t3, t4, t5 = get6(rt, 0)
                        k0, k1, k2, k3, k4, k5 = get6(rt, 6)
                        m0, m1, m2, m3, m4, m5 = get6(rt, 12)
                        g0, g1, g2, g3, g4, g5 = get6(rt, 18)
                        Tq[p, t] = (y0 * m0 + y1 * m1 + y2 * m2 + y3 * m3 + y4 * m4 + y5 * m5
                                    + z0 * k0 + z1 * k1 + z2 * k2)
                        Tv[p, t] = (z0 * t0 + z1 * t1 + z2 * t2
                                    + y0 * g0 + y1 * g1 + y2 * g2 + y3 * g3 + y4 * g4 + y5 * g5)
                        if jj != cj:
                            Tq[t, p] = t0 * u0 + t1 * u1 + t2 * u2 + t3 * u3 + t4 * u4 + t5 * u5
                            Tv[t, p] = t0 * v0 + t1 * v1 + t2 * v2 + t3 * v3 + t4 * v4 + t5 * v5
                        if mj or mp:
                            mm = t0 * y0 + t1 * y1 + t2 * y2 + t3 * y3 + t4 * y4 + t5 * y5
                            Mc[p, t] = mm
                            Mc[t, p] = mm
                    jj = CI[o_cp + jj]
        par = Ii[o_par + i]
        if par >= 0:  # composites: I^C, f^C, B'^C of the parent
            add_composite(W, FWD_BODY * par, wb)
    return tau, Tq, Tv, Mc


@njit(cache=True, fastmath=FAST)
def chain_first_order(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc):
    """Core derivatives -> the model's coordinates (module docstring): (dtau_dq, dtau_dqd) (n, n)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    dt = q.dtype
    Y = np.zeros((ncd, n), dtype=dt)
    Yd = np.zeros((ncd, n), dtype=dt)
    dq = np.zeros((n, n), dtype=dt)
    dqd = np.zeros((n, n), dtype=dt)
    zero = np.zeros(1, dtype=dt)[0]
    for i in range(nb):
        a0 = Ii[o_idx + i]
        nj = Ii[o_idx + i + 1] - a0
        c0 = CI[o_cd + i]
        m = CI[o_cd + i + 1] - c0
        if CI[o_tr + i] == 1:
            for k in range(nj):
                for r in range(ncd):
                    Y[r, a0 + k] = Tq[r, c0 + k]
                    Yd[r, a0 + k] = Tv[r, c0 + k]
            continue
        Am, dA, d2A, d3A = body_map(Ii, Ff, CI, i, q, jstate, tangent, 2)
        for a in range(nj):
            for l in range(m):
                P = zero
                R = zero
                G = zero
                for e in range(nj):
                    P += dA[l, e, a] * qd[a0 + e]
                    G += dA[l, a, e] * qd[a0 + e]
                    R += dA[l, e, a] * qdd[a0 + e]
                    for f in range(nj):
                        R += d2A[l, e, f, a] * qd[a0 + f] * qd[a0 + e]
                G += P
                Al = Am[l, a]
                for r in range(ncd):
                    Y[r, a0 + a] += Tq[r, c0 + l] * Al + Tv[r, c0 + l] * P + Mc[r, c0 + l] * R
                    Yd[r, a0 + a] += Tv[r, c0 + l] * Al + Mc[r, c0 + l] * G
    for i in range(nb):
        a0 = Ii[o_idx + i]
        nj = Ii[o_idx + i + 1] - a0
        c0 = CI[o_cd + i]
        m = CI[o_cd + i + 1] - c0
        if CI[o_tr + i] == 1:
            for k in range(nj):
                for col in range(n):
                    dq[a0 + k, col] = Y[c0 + k, col]
                    dqd[a0 + k, col] = Yd[c0 + k, col]
            continue
        Am, dA, d2A, d3A = body_map(Ii, Ff, CI, i, q, jstate, tangent, 1)
        _map_rows(Y, Yd, c0, dq, dqd, a0, tau, Am, dA, np.empty(nj, dtype=dt), np.empty(nj, dtype=dt))
    return dq, dqd


@njit(cache=True, fastmath=FAST)
def _aligned_block(Ii, Ff, CI, i, q, jstate, tangent):
    """The non-identity block of body i's map for the in-place chain rule: (offset of its first DOF, A, dA,
    d2A) with A (m, m); a free joint in exponential coordinates has only its rotation block J_r (m = 3)."""
    nb = Ii[0]
    a0 = Ii[2 + 2 * nb + i]
    fk = CI[fast_offset(CI, nb) + i]
    if fk != 0 and not tangent:
        o = a0 + 3 if fk == 1 else a0
        dt = q.dtype
        Am = np.zeros((3, 3), dtype=dt)
        dA = np.zeros((3, 3, 3), dtype=dt)
        d2A = np.zeros((3, 3, 3, 3), dtype=dt)
        so3_jr_jets(q[o:o + 3], Am, dA, d2A, np.zeros((0, 0, 0, 0, 0), dtype=dt), 2)
        return o, Am, dA, d2A
    Am, dA, d2A, d3A = body_map(Ii, Ff, CI, i, q, jstate, tangent, 2)
    return a0, Am, dA, d2A


@njit(cache=True, fastmath=FAST)
def chain_first_order_aligned(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc):
    """:func:`chain_first_order` in place when core and model indices coincide (every body has as many core
    DOFs as DOFs, e.g. a free joint in exponential coordinates): only the columns, then the rows, of the
    non-trivial blocks change, O(n m^2) per block of m DOFs.  Returns (Tq, Tv) transformed."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    dt = q.dtype
    zero = np.zeros(1, dtype=dt)[0]
    nblk = 0
    for i in range(nb):
        if CI[o_tr + i] != 1:
            nblk += 1
    for i in range(nb):
        if CI[o_tr + i] == 1:
            continue
        a0, Am, dA, d2A = _aligned_block(Ii, Ff, CI, i, q, jstate, tangent)
        m = Am.shape[0]
        P = np.zeros((m, m), dtype=dt)
        R = np.zeros((m, m), dtype=dt)
        G = np.zeros((m, m), dtype=dt)
        for l in range(m):
            for a in range(m):
                pa = zero
                ra = zero
                ga = zero
                for e in range(m):
                    pa += dA[l, e, a] * qd[a0 + e]
                    ga += dA[l, a, e] * qd[a0 + e]
                    ra += dA[l, e, a] * qdd[a0 + e]
                    for f in range(m):
                        ra += d2A[l, e, f, a] * qd[a0 + f] * qd[a0 + e]
                P[l, a] = pa
                R[l, a] = ra
                G[l, a] = ga + pa
        cq = np.empty(m, dtype=dt)
        cv = np.empty(m, dtype=dt)
        for r in range(n):  # columns: Y = T_q A + T_v P + M R,  Yd = T_v A + M G
            for a in range(m):
                y = zero
                yd = zero
                for l in range(m):
                    y += Tq[r, a0 + l] * Am[l, a] + Tv[r, a0 + l] * P[l, a] + Mc[r, a0 + l] * R[l, a]
                    yd += Tv[r, a0 + l] * Am[l, a] + Mc[r, a0 + l] * G[l, a]
                cq[a] = y
                cv[a] = yd
            for a in range(m):
                Tq[r, a0 + a] = cq[a]
                Tv[r, a0 + a] = cv[a]
        if nblk == 1:  # the only block (a floating base): its rows now, with its map at hand
            _map_rows(Tq, Tv, a0, Tq, Tv, a0, tau, Am, dA, cq, cv)
            return Tq, Tv
    for i in range(nb):  # rows, once every column is done: A^T Y + dA^T tau_c
        if CI[o_tr + i] == 1:
            continue
        a0, Am, dA, d2A = _aligned_block(Ii, Ff, CI, i, q, jstate, tangent)
        m = Am.shape[0]
        _map_rows(Tq, Tv, a0, Tq, Tv, a0, tau, Am, dA, np.empty(m, dtype=dt), np.empty(m, dtype=dt))
    return Tq, Tv


@njit(cache=True, fastmath=FAST)
def _map_rows(Y, Yd, c0, dq, dqd, a0, tau, Am, dA, cq, cv):
    """The rows of one body of the chain rule: ``dq[a0 + a] = (A^T Y)[a] + (dA^T tau_c)[a]`` and ``dqd[a0 + a] =
    (A^T Yd)[a]`` from the core rows ``c0:c0 + m`` of Y, Yd, with A (m, nj), dA (m, nj, nj) (cq, cv: nj scratch
    entries each; one column at a time, so Y may be dq itself, as in the in-place chain rule)."""
    n = dq.shape[1]
    m = Am.shape[0]
    nj = Am.shape[1]
    zero = 0.0 * tau[0]
    for col in range(n):
        for a in range(nj):
            s1 = zero
            s2 = zero
            for c in range(m):
                s1 += Am[c, a] * Y[c0 + c, col]
                s2 += Am[c, a] * Yd[c0 + c, col]
            cq[a] = s1
            cv[a] = s2
        for a in range(nj):
            dq[a0 + a, col] = cq[a]
            dqd[a0 + a, col] = cv[a]
    for a in range(nj):
        for b in range(nj):
            s1 = zero
            for c in range(m):
                s1 += dA[c, a, b] * tau[c0 + c]
            dq[a0 + a, a0 + b] += s1


CORE, ALIGNED, GENERAL = 0, 1, 2  # how the model's coordinates follow from the core's (chain_kind)


def chain_kind(CI) -> int:
    """CORE: the core's coordinates are the model's (no chain rule); ALIGNED: they coincide in index with the model's
    (the chain rule in place, :func:`chain_first_order_aligned`); GENERAL: :func:`chain_first_order`."""
    return CORE if CI[2] == 1 else ALIGNED if CI[3] == 1 else GENERAL


# One kernel per chain kind, so that a model compiles only the chain rule it needs; inlined into their callers (the
# C entry points of ._first_order_c_entry, the forward-dynamics kernels), each a function of its own when called
# from Python.  Scalar-generic (complex step).


@njit(inline="always", fastmath=FAST)
def rnea_derivatives_core(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent):
    """(dtau_dq, dtau_dqd) (n, n) of a model whose core coordinates are its own (IDSVA, Eqs. 12-13)."""
    check_inputs(Ii, q, qd, qdd, jstate, f_body)
    tau, Tq, Tv, Mc = idsva(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, False)
    return Tq, Tv


@njit(inline="always", fastmath=FAST)
def rnea_derivatives_aligned(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent):
    """:func:`rnea_derivatives_core` then the chain rule in place (aligned core and model indices)."""
    check_inputs(Ii, q, qd, qdd, jstate, f_body)
    tau, Tq, Tv, Mc = idsva(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, True)
    return chain_first_order_aligned(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc)


@njit(inline="always", fastmath=FAST)
def rnea_derivatives_general(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent):
    """:func:`rnea_derivatives_core` then the general chain rule (module docstring)."""
    check_inputs(Ii, q, qd, qdd, jstate, f_body)
    tau, Tq, Tv, Mc = idsva(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, True)
    return chain_first_order(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc)


# The entries called from Python: cached functions of their own around the inlined kernels above (an inlined
# kernel is not cached on disk, so calling it from Python would compile it again in every process).


@njit(cache=True, fastmath=FAST)
def rnea_derivatives_core_entry(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent):
    return rnea_derivatives_core(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent)


@njit(cache=True, fastmath=FAST)
def rnea_derivatives_aligned_entry(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent):
    return rnea_derivatives_aligned(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent)


@njit(cache=True, fastmath=FAST)
def rnea_derivatives_general_entry(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent):
    return rnea_derivatives_general(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent)


RNEA_KERNELS = (rnea_derivatives_core_entry, rnea_derivatives_aligned_entry, rnea_derivatives_general_entry)


@njit(cache=True, fastmath=FAST)
def dtau_dfext_kernel(Ii, Ff, CI, q, qd, qdd, jstate, tangent):
    """``dtau_dfext[i, k, :] = dtau_i / d f_ext[k]`` (n, nb, 6): ``-(Ad(E_wb_k)^-1 S_i)^T`` for body k in the
    subtree of DOF i's body (S_i the world twist of DOF i, ``A``-weighted core twists)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    dt = q.dtype
    W, CD = forward_pass(Ii, Ff, CI, q, qd, qdd, jstate, NO_FEXT.astype(dt), 1.0, tangent)
    Sw = np.zeros((n, 6), dtype=dt)
    for i in range(nb):
        a0 = Ii[o_idx + i]
        nj = Ii[o_idx + i + 1] - a0
        c0 = CI[o_cd + i]
        m = CI[o_cd + i + 1] - c0
        if CI[o_tr + i] == 1:
            for k in range(nj):
                for r in range(6):
                    Sw[a0 + k, r] = CD[c0 + k, r]
        else:
            Am, dA, d2A, d3A = body_map(Ii, Ff, CI, i, q, jstate, tangent, 0)
            for a in range(nj):
                for c in range(m):
                    for r in range(6):
                        Sw[a0 + a, r] += CD[c0 + c, r] * Am[c, a]
    out = np.zeros((n, nb, 6), dtype=dt)
    x = np.empty(6, dtype=dt)
    for k in range(nb):
        wb = FWD_BODY * k
        R = W[wb:wb + 9]
        P0, P1, P2 = W[wb + 9], W[wb + 10], W[wb + 11]
        Ab = f_A + 36 * k
        j = k
        while j >= 0:
            for d in range(Ii[o_idx + j], Ii[o_idx + j + 1]):
                w0, w1, w2, v0, v1, v2 = Sw[d, 0], Sw[d, 1], Sw[d, 2], Sw[d, 3], Sw[d, 4], Sw[d, 5]
                u0 = v0 - (P1 * w2 - P2 * w1)
                u1 = v1 - (P2 * w0 - P0 * w2)
                u2 = v2 - (P0 * w1 - P1 * w0)
                for r in range(3):  # joint frame: [R^T w; R^T (v - p x w)]
                    x[r] = R[r] * w0 + R[3 + r] * w1 + R[6 + r] * w2
                    x[3 + r] = R[r] * u0 + R[3 + r] * u1 + R[6 + r] * u2
                for r in range(6):  # body frame: Ad_bj x
                    s1 = 0.0 * x[0]
                    for l in range(6):
                        s1 += Ff[Ab + 6 * r + l] * x[l]
                    out[d, k, r] = -s1
            j = Ii[o_par + j]
    return out


def run_checked(model, kernel, *args):
    """Run a derivative kernel on checked inputs; errors raised inside it become ModelError."""
    try:
        return kernel(*args)
    except (ValueError, ZeroDivisionError, np.linalg.LinAlgError) as e:
        from redmax.errors import ModelError

        raise ModelError(f"{model.name}: invalid input to {getattr(kernel, '__name__', 'kernel')} ({e})") from None
