"""Second-order derivatives of inverse dynamics: IDSVA-SO (Singh, Russell & Wensing, Alg. 1).

Tensors (n, n, n), the convention of the issue and of Pinocchio's ``d2tau_dqdv``:
``d2tau_dq2[i, j, k] = d/dq_k (dtau_i/dq_j)``, ``d2tau_dqd2[i, j, k] = d/dqd_k (dtau_i/dqd_j)``,
``d2tau_dqdqd[i, j, k] = d/dqd_k (dtau_i/dq_j)`` (q on axis 1, qd on axis 2) and ``dM_dq[i, j, k] = dM_ij/dq_k``.

The kernel runs Alg. 1 on the core tree (``_core``: joints with constant local motion subspaces; derivatives
with respect to configuration are the Lie derivatives ``L_k L_j tau`` of the paper, Eq. 16-17), in the world
frame, with the body Coriolis matrices ``B'`` without the factor 1/2 (the paper's convention in Alg. 1), the
composite net wrenches including gravity and external wrenches, and the index order ``k <= j <= i`` of §IV-F:
three nested walks up the tree (core joints i, j from i to the root, k from j to the root), each of the 12
vectors ``u`` formed once per (i, p, j, t) and dotted with the four vectors ``s, psi_dot, psi_ddot,
psi_dot + s_dot`` of every DOF r of k.  Branch-induced sparsity is exploited: only ancestor triples are
visited, the other entries stay zero.  The model's own coordinates follow by the chain rule
(``_chain2``).  Scalar-generic.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.dynamics._chain2 import chain_second_order, chain_second_order_aligned, related_dofs
from redmax.dynamics._core import (
    FWD_BODY,
    FWD_DOF,
    body_coriolis,
    core_offsets,
    core_structure,
    forward_core,
)
from redmax.dynamics._packed import FAST, NO_FEXT, U64, initial_jstate, offsets
from redmax.dynamics.rnea import check_inputs

__all__ = ["core_tensors", "idsva_so", "rnea_second_order_derivatives", "rnea_second_order_kernel"]

_F64 = np.dtype(np.float64)
LANES = 4  # SIMD block of the product loops (4 doubles: the 256-bit vectors LLVM prefers also on AVX-512 CPUs)


@njit(cache=True, fastmath=FAST)
def _mat_crm(v, M):
    """M = v x (6x6 motion cross product matrix ad(v))."""
    for r in range(6):
        for c in range(6):
            M[r, c] = 0.0
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    for o in (0, 3):
        M[o + 0, o + 1] = -w2
        M[o + 0, o + 2] = w1
        M[o + 1, o + 0] = w2
        M[o + 1, o + 2] = -w0
        M[o + 2, o + 0] = -w1
        M[o + 2, o + 1] = w0
    M[3, 1] = -u2
    M[3, 2] = u1
    M[4, 0] = u2
    M[4, 2] = -u0
    M[5, 0] = -u1
    M[5, 1] = u0


@njit(cache=True, fastmath=FAST)
def _mat_bar(f, M):
    """M = f xbar* : M x = x x* f = [-[n] -[g]; -[g] 0] x for f = [n; g]."""
    n0, n1, n2, g0, g1, g2 = f[0], f[1], f[2], f[3], f[4], f[5]
    for r in range(6):
        for c in range(6):
            M[r, c] = 0.0
    # -[n]
    M[0, 1] = n2
    M[0, 2] = -n1
    M[1, 0] = -n2
    M[1, 2] = n0
    M[2, 0] = n1
    M[2, 1] = -n0
    for o, p in ((0, 3), (3, 0)):
        M[o + 0, p + 1] = g2
        M[o + 0, p + 2] = -g1
        M[o + 1, p + 0] = -g2
        M[o + 1, p + 2] = g0
        M[o + 2, p + 0] = g1
        M[o + 2, p + 1] = -g0


@njit(cache=True, fastmath=FAST)
def _inertia_matrix(c, M):
    """6x6 matrix of the compact inertia c: [[J, [h]], [[h]^T, m 1]]."""
    m, h0, h1, h2 = c[0], c[1], c[2], c[3]
    M[0, 0] = c[4]
    M[0, 1] = c[5]
    M[0, 2] = c[6]
    M[1, 0] = c[5]
    M[1, 1] = c[7]
    M[1, 2] = c[8]
    M[2, 0] = c[6]
    M[2, 1] = c[8]
    M[2, 2] = c[9]
    for r in range(3):
        for k in range(3):
            M[3 + r, 3 + k] = m if r == k else 0.0
    M[0, 3] = 0.0
    M[0, 4] = -h2
    M[0, 5] = h1
    M[1, 3] = h2
    M[1, 4] = 0.0
    M[1, 5] = -h0
    M[2, 3] = -h1
    M[2, 4] = h0
    M[2, 5] = 0.0
    for r in range(3):
        for k in range(3):
            M[3 + r, k] = M[k, 3 + r]


@njit(cache=True, fastmath=FAST)
def _coriolis_matrix(Ic, v, out, tmp):
    """out = B'(I, v) (6x6, no 1/2) from the compact inertia Ic; tmp: scratch (12,)."""
    body_coriolis(Ic, v[0], v[1], v[2], v[3], v[4], v[5], tmp, 0)
    for r in range(6):
        for c in range(6):
            out[r, c] = 0.0
    for r in range(3):
        for c in range(3):
            out[r, c] = tmp[3 * r + c]
    l0, l1, l2 = tmp[9], tmp[10], tmp[11]
    # lower-left -2 [l]
    out[3, 1] = 2.0 * l2
    out[3, 2] = -2.0 * l1
    out[4, 0] = -2.0 * l2
    out[4, 2] = 2.0 * l0
    out[5, 0] = 2.0 * l1
    out[5, 1] = -2.0 * l0


@njit(inline="always")
def _mv(M, x, out):
    for r in range(6):
        out[r] = (M[r, 0] * x[0] + M[r, 1] * x[1] + M[r, 2] * x[2] + M[r, 3] * x[3] + M[r, 4] * x[4]
                  + M[r, 5] * x[5])


@njit(inline="always")
def _mtv(M, x, out):
    for r in range(6):
        out[r] = (M[0, r] * x[0] + M[1, r] * x[1] + M[2, r] * x[2] + M[3, r] * x[3] + M[4, r] * x[4]
                  + M[5, r] * x[5])


@njit(inline="always")
def _dot(U, a, V, b):
    """U[a, :6] . V[b, off:off+6] style dot of two length-6 rows."""
    return (U[a, 0] * V[b, 0] + U[a, 1] * V[b, 1] + U[a, 2] * V[b, 2] + U[a, 3] * V[b, 3] + U[a, 4] * V[b, 4]
            + U[a, 5] * V[b, 5])


@njit(cache=True, fastmath=FAST)
def idsva_so(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, want_fo, d2q, d2v, d2qv, dM):
    """Core second-order derivatives (Alg. 1) into the (ncd, ncd, ncd) tensors d2q, d2v, d2qv, dM (C order;
    only the entries of ancestor triples are written, the others keep their values: pass zeros or the outputs
    of a previous call on the same model), and, if ``want_fo``, the core first-order quantities
    (tau_c, T_q, T_v, M_c) for the chain rule.  Of each pair of equal entries (symmetry of d2v and dM, and of
    d2q across joints) the triple loop stores one and :func:`_mirror` copies it at the end.

    Per core joint i the DOFs on its path to the root are gathered component-major (``PV`` (24, P): s,
    psi_dot, psi_ddot, theta of every DOF), so that the 14 dot products of the innermost loop (lines 42-66)
    run over contiguous rows for all DOFs r of all k at once."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    dt = q.dtype
    W = np.empty(FWD_BODY * nb, dtype=dt)
    CD = np.empty((ncd, FWD_DOF), dtype=dt)
    nu = np.empty(ncd, dtype=dt)
    nud = np.empty(ncd, dtype=dt)
    forward_core(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, W, CD, nu, nud)
    Q2 = d2q.reshape(-1)
    V2 = d2v.reshape(-1)
    QV = d2qv.reshape(-1)
    DM = dM.reshape(-1)
    n1 = ncd
    n2 = ncd * ncd
    nf = ncd if want_fo else 0
    tau = np.zeros(nf, dtype=dt)
    Tq = np.zeros((nf, nf), dtype=dt)
    Tv = np.zeros((nf, nf), dtype=dt)
    Mc = np.zeros((nf, nf), dtype=dt)
    IC = np.empty((6, 6), dtype=dt)
    BC = np.empty((6, 6), dtype=dt)
    BIs = np.empty((6, 6), dtype=dt)
    BIp = np.empty((6, 6), dtype=dt)
    A0 = np.empty((6, 6), dtype=dt)
    A1 = np.empty((6, 6), dtype=dt)
    A3 = np.empty((6, 6), dtype=dt)
    A6 = np.empty((6, 6), dtype=dt)
    Xs = np.empty((6, 6), dtype=dt)
    T1 = np.empty((6, 6), dtype=dt)
    tmp = np.empty(12, dtype=dt)
    XLs = np.empty(12, dtype=dt)  # X (9) and l (3) of B(I^C, s_p)
    Fb = np.empty((4, 6), dtype=dt)  # the wrenches f of the xbar* matrices A0, A4, A5, A7
    x6 = np.empty(6, dtype=dt)
    y6 = np.empty(6, dtype=dt)
    U = np.empty((13, 6), dtype=dt)  # u1..u12 in rows 1..12
    V = np.empty((4, 6), dtype=dt)  # DOF p: s, psi_dot, psi_ddot, theta
    Vt = np.empty((4, 6), dtype=dt)  # DOF t
    PV = np.zeros((24, ncd + LANES), dtype=dt)  # path data, component-major (spare columns: _products)
    E = np.empty((14, ncd + LANES), dtype=dt)  # the 14 products per DOF r of the path
    path = np.empty(max(ncd, 1), dtype=np.int64)
    pjoint = np.empty(max(ncd, 1), dtype=np.int64)
    jstart = np.empty(max(ncd, 1), dtype=np.int64)
    jend = np.empty(max(ncd, 1), dtype=np.int64)
    for i in range(nb - 1, -1, -1):
        wb = FWD_BODY * i
        Ic = W[wb + 12:wb + 22]
        fC = W[wb + 34:wb + 40]
        _inertia_matrix(Ic, IC)
        for r in range(6):
            for c in range(6):
                BC[r, c] = 0.0
        for r in range(3):
            for c in range(3):
                BC[r, c] = W[wb + 40 + 3 * r + c]
        l0, l1, l2 = W[wb + 49], W[wb + 50], W[wb + 51]
        BC[3, 1] = 2.0 * l2
        BC[3, 2] = -2.0 * l1
        BC[4, 0] = -2.0 * l2
        BC[4, 2] = 2.0 * l0
        BC[5, 0] = 2.0 * l1
        BC[5, 1] = -2.0 * l0
        for ci in range(CI[o_cj + i], CI[o_cj + i + 1]):
            # the path of core joint ci to the root
            P = 0
            cj = ci
            while cj >= 0:
                b0 = P
                for d in range(CI[o_co + cj], CI[o_co + cj + 1]):
                    path[P] = d
                    pjoint[P] = cj
                    for c in range(24):
                        PV[c, P] = CD[d, c]
                    P += 1
                for k in range(b0, P):
                    jstart[k] = b0
                    jend[k] = P
                cj = CI[o_cp + cj]
            for pp in range(CI[o_co + ci + 1] - CI[o_co + ci]):
                p = path[pp]
                for k in range(6):
                    V[0, k] = PV[k, pp]
                    V[1, k] = PV[6 + k, pp]
                    V[2, k] = PV[12 + k, pp]
                    V[3, k] = PV[18 + k, pp]
                sp = V[0]
                pd = V[1]
                pdd = V[2]
                th = V[3]
                w0, w1, w2, u0, u1, u2 = sp[0], sp[1], sp[2], sp[3], sp[4], sp[5]
                if want_fo:
                    tau[p] = (sp[0] * fC[0] + sp[1] * fC[1] + sp[2] * fC[2] + sp[3] * fC[3] + sp[4] * fC[4]
                              + sp[5] * fC[5])
                _coriolis_matrix(Ic, sp, BIs, XLs)  # B(I^C, s_p)  (line 15); XLs keeps its X and l
                _coriolis_matrix(Ic, pd, BIp, tmp)  # B(I^C, psi_dot_p)  (line 16)
                _mv(IC, sp, x6)
                for r in range(6):
                    Fb[0, r] = x6[r]  # A0 = (I s) xbar*  (line 17)
                _mat_bar(x6, A0)
                _mat_crm(sp, Xs)  # s x ;  s x* = -(s x)^T
                for r in range(6):  # A1 = s x* I - I (s x)  (line 18)
                    for c in range(6):
                        a1 = 0.0 * sp[0]
                        for k in range(6):
                            a1 += -Xs[k, r] * IC[k, c] - IC[r, k] * Xs[k, c]
                        A1[r, c] = a1
                for r in range(6):  # A3 = B(I, psi) + s x* B - B (s x)  (line 20)
                    for c in range(6):
                        a3 = BIp[r, c]
                        for k in range(6):
                            a3 += -Xs[k, r] * BC[k, c] - BC[r, k] * Xs[k, c]
                        A3[r, c] = a3
                _mtv(BC, sp, x6)
                for r in range(6):
                    Fb[1, r] = x6[r]  # A4 = (B^T s) xbar*  (line 21)
                _mv(BC, pd, x6)  # line 22: A5 = (B psi_dot + I psi_ddot + s x* f) xbar*
                _mv(IC, pdd, y6)
                for r in range(6):
                    x6[r] += y6[r]
                x6[0] += w1 * fC[2] - w2 * fC[1] + u1 * fC[5] - u2 * fC[4]
                x6[1] += w2 * fC[0] - w0 * fC[2] + u2 * fC[3] - u0 * fC[5]
                x6[2] += w0 * fC[1] - w1 * fC[0] + u0 * fC[4] - u1 * fC[3]
                x6[3] += w1 * fC[5] - w2 * fC[4]
                x6[4] += w2 * fC[3] - w0 * fC[5]
                x6[5] += w0 * fC[4] - w1 * fC[3]
                for r in range(6):
                    Fb[2, r] = x6[r]
                for r in range(6):  # A6 = s x* I + A0  (line 23)
                    for c in range(6):
                        a6 = A0[r, c]
                        for k in range(6):
                            a6 += -Xs[k, r] * IC[k, c]
                        A6[r, c] = a6
                _mv(BC, sp, x6)  # line 24: A7 = (B s + I (psi_dot + s_dot)) xbar*
                _mv(IC, th, y6)
                for r in range(6):
                    Fb[3, r] = x6[r] + y6[r]
                if want_fo:  # y1 = I s, y2 = B^T s, w1 = I psi_ddot + B psi_dot + s x* f, w2 = B s + I theta
                    _mv(IC, sp, T1[0])
                    _mtv(BC, sp, T1[1])
                    _mv(BC, pd, T1[2])
                    _mv(IC, pdd, T1[3])
                    for r in range(6):
                        T1[2, r] += T1[3, r]
                    T1[2, 0] += w1 * fC[2] - w2 * fC[1] + u1 * fC[5] - u2 * fC[4]
                    T1[2, 1] += w2 * fC[0] - w0 * fC[2] + u2 * fC[3] - u0 * fC[5]
                    T1[2, 2] += w0 * fC[1] - w1 * fC[0] + u0 * fC[4] - u1 * fC[3]
                    T1[2, 3] += w1 * fC[5] - w2 * fC[4]
                    T1[2, 4] += w2 * fC[3] - w0 * fC[5]
                    T1[2, 5] += w0 * fC[4] - w1 * fC[3]
                    _mv(BC, sp, T1[3])
                    _mv(IC, th, T1[4])
                    for r in range(6):
                        T1[3, r] += T1[4, r]
                for pt in range(P):
                    t = path[pt]
                    jnei = pjoint[pt] != ci
                    if want_fo:
                        for k in range(6):
                            Vt[0, k] = PV[k, pt]
                            Vt[1, k] = PV[6 + k, pt]
                            Vt[2, k] = PV[12 + k, pt]
                            Vt[3, k] = PV[18 + k, pt]
                        Tq[p, t] = _dot(T1, 0, Vt, 2) + _dot(T1, 1, Vt, 1)
                        Tv[p, t] = _dot(T1, 1, Vt, 0) + _dot(T1, 0, Vt, 3)
                        mm = _dot(T1, 0, Vt, 0)
                        Mc[p, t] = mm
                        Mc[t, p] = mm
                        if jnei:
                            Tq[t, p] = _dot(T1, 2, Vt, 0)
                            Tv[t, p] = _dot(T1, 3, Vt, 0)
                    _u_vectors(A1, A3, A6, XLs, Fb, PV, pt, U)
                    js = jstart[pt]
                    je = jend[pt]
                    _products(U, PV, E, js, P)
                    b_pt = p * n2 + t * n1  # [p, t, :]
                    b_tp = t * n2 + p * n1  # [t, p, :]
                    for pr in range(js, P):
                        rr = path[pr]
                        p1 = E[0, pr]
                        Q2[b_pt + rr] = E[1, pr]  # d2q[p, t, r]
                        QV[p * n2 + rr * n1 + t] = -p1  # d2qv[p, r, t]
                        if jnei:
                            Q2[b_tp + rr] = E[2, pr]  # d2q[t, p, r] (= d2q[t, r, p]: _mirror)
                            QV[b_tp + rr] = E[3, pr]  # d2qv[t, p, r]
                            QV[t * n2 + rr * n1 + p] = p1  # d2qv[t, r, p]
                            V2[b_tp + rr] = E[4, pr]  # d2v[t, p, r] (= d2v[t, r, p])
                            DM[t * n2 + rr * n1 + p] = E[5, pr]  # dM[t, r, p] (= dM[r, t, p])
                        if pr >= je:  # k != j
                            Q2[rr * n2 + p * n1 + t] = E[6, pr]  # d2q[r, p, t] (= d2q[r, t, p])
                            V2[b_pt + rr] = -E[4, pr]  # d2v[p, t, r] (= d2v[p, r, t])
                            QV[b_pt + rr] = E[7, pr]  # d2qv[p, t, r]
                            QV[rr * n2 + t * n1 + p] = E[8, pr]  # d2qv[r, t, p]
                            DM[p * n2 + rr * n1 + t] = E[9, pr]  # dM[p, r, t] (= dM[r, p, t])
                            if jnei:
                                QV[rr * n2 + p * n1 + t] = E[10, pr]  # d2qv[r, p, t]
                                V2[rr * n2 + p * n1 + t] = E[11, pr]  # d2v[r, p, t] (= d2v[r, t, p])
                            else:
                                V2[rr * n2 + t * n1 + p] = E[12, pr]  # d2v[r, t, p]
                        else:
                            V2[b_pt + rr] = -E[13, pr]  # d2v[p, t, r]
        par = Ii[o_par + i]
        if par >= 0:
            wp = FWD_BODY * par
            for k in range(10):
                W[wp + 12 + k] += W[wb + 12 + k]
            for k in range(6):
                W[wp + 34 + k] += W[wb + 34 + k]
            for k in range(12):
                W[wp + 40 + k] += W[wb + 40 + k]
    _mirror(CI, nb, d2q, d2v, dM)
    return tau, Tq, Tv, Mc


@njit(cache=True, fastmath=FAST)
def _mirror(CI, nb, d2q, d2v, dM):
    """The symmetric halves :func:`idsva_so` leaves out: ``d2v[a, c, b] = d2v[a, b, c]`` and ``d2q[a, c, b] =
    d2q[a, b, c]`` for c < b (for d2q only across core joints: within a spherical or free joint the Lie
    derivatives do not commute), ``dM[b, a, :] = dM[a, b, :]`` for b < a; related pairs only.  Core DOFs are
    numbered parents first, so the kernel's writes of a symmetric pair with distinct joints are the ones whose
    later index is the deeper DOF; writing only those keeps the stores of the triple loop off the stride-n^2
    and stride-n paths that leave the cache for n of ~100."""
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    rel = related_dofs(CI, nb)
    cj = np.empty(ncd, dtype=np.int64)
    for j in range(ncj):
        for d in range(CI[o_co + j], CI[o_co + j + 1]):
            cj[d] = j
    for a in range(U64(ncd)):
        for b in range(U64(ncd)):
            if rel[a, b] == 0:
                continue
            for c in range(U64(b)):
                if rel[b, c] == 0 or rel[a, c] == 0:
                    continue
                d2v[a, c, b] = d2v[a, b, c]
                if cj[b] != cj[c]:
                    d2q[a, c, b] = d2q[a, b, c]
    for a in range(U64(ncd)):
        for b in range(U64(a)):
            if rel[a, b] == 0:
                continue
            for c in range(U64(ncd)):
                dM[b, a, c] = dM[a, b, c]


@njit(cache=True)
def _single_path(CI):
    """True when every core joint's parent is the previous core joint (a chain: all DOF triples related)."""
    ncj = CI[0]
    nb = (CI.shape[0] - 7 - 3 * ncj) // 4  # the layout of _core.core_structure: 7 + 4 nb + 3 ncj entries
    o_cp = core_offsets(CI, nb)[6]
    for j in range(ncj):
        if CI[o_cp + j] != j - 1:
            return False
    return True


@njit(inline="always")
def _bar(x0, x1, x2, x3, x4, x5, F, k):
    """x x* f for f = F[k] (the product with the matrix f xbar*): [x_w x n + x_v x g; x_w x g]."""
    n0, n1, n2, g0, g1, g2 = F[k, 0], F[k, 1], F[k, 2], F[k, 3], F[k, 4], F[k, 5]
    return (x1 * n2 - x2 * n1 + x4 * g2 - x5 * g1, x2 * n0 - x0 * n2 + x5 * g0 - x3 * g2,
            x0 * n1 - x1 * n0 + x3 * g1 - x4 * g0, x1 * g2 - x2 * g1, x2 * g0 - x0 * g2, x0 * g1 - x1 * g0)


@njit(inline="always", fastmath=FAST)
def _u_vectors(A1, A3, A6, XL, F, PV, pt, U):
    """u1..u12 of Alg. 1 (lines 29-36) for the DOF at path position pt into U[1..12], using the structure of
    the matrices: A0, A4, A5, A7 are ``f xbar*`` (``x -> x x* f``, f = F[0], F[1], F[2], F[3]), B(I^C, s_p) =
    [[X, 0], [-2 [l], 0]] (X, l in XL) and A2 = 2 A0 - B(I^C, s_p); A1, A3, A6 are dense."""
    s = PV[0:6, pt]
    d = PV[6:12, pt]
    e = PV[12:18, pt]
    h = PV[18:24, pt]
    s0, s1, s2, s3, s4, s5 = s[0], s[1], s[2], s[3], s[4], s[5]
    d0, d1, d2, d3, d4, d5 = d[0], d[1], d[2], d[3], d[4], d[5]
    X00, X01, X02, X10, X11, X12, X20, X21, X22 = XL[0], XL[1], XL[2], XL[3], XL[4], XL[5], XL[6], XL[7], XL[8]
    L0, L1, L2 = 2.0 * XL[9], 2.0 * XL[10], 2.0 * XL[11]
    # B s, B^T s, B d, B^T d with B = B(I^C, s_p)
    bs0 = X00 * s0 + X01 * s1 + X02 * s2
    bs1 = X10 * s0 + X11 * s1 + X12 * s2
    bs2 = X20 * s0 + X21 * s1 + X22 * s2
    bs3, bs4, bs5 = s1 * L2 - s2 * L1, s2 * L0 - s0 * L2, s0 * L1 - s1 * L0
    ts0 = X00 * s0 + X10 * s1 + X20 * s2 + L1 * s5 - L2 * s4
    ts1 = X01 * s0 + X11 * s1 + X21 * s2 + L2 * s3 - L0 * s5
    ts2 = X02 * s0 + X12 * s1 + X22 * s2 + L0 * s4 - L1 * s3
    bd0 = X00 * d0 + X01 * d1 + X02 * d2
    bd1 = X10 * d0 + X11 * d1 + X12 * d2
    bd2 = X20 * d0 + X21 * d1 + X22 * d2
    bd3, bd4, bd5 = d1 * L2 - d2 * L1, d2 * L0 - d0 * L2, d0 * L1 - d1 * L0
    td0 = X00 * d0 + X10 * d1 + X20 * d2 + L1 * d5 - L2 * d4
    td1 = X01 * d0 + X11 * d1 + X21 * d2 + L2 * d3 - L0 * d5
    td2 = X02 * d0 + X12 * d1 + X22 * d2 + L0 * d4 - L1 * d3
    a0, a1, a2, a3, a4, a5 = _bar(s0, s1, s2, s3, s4, s5, F, 0)  # A0 s
    c0, c1, c2, c3, c4, c5 = _bar(s0, s1, s2, s3, s4, s5, F, 1)  # A4 s
    f0, f1, f2, f3, f4, f5 = _bar(s0, s1, s2, s3, s4, s5, F, 2)  # A5 s
    g0, g1, g2, g3, g4, g5 = _bar(s0, s1, s2, s3, s4, s5, F, 3)  # A7 s
    k0, k1, k2, k3, k4, k5 = _bar(d0, d1, d2, d3, d4, d5, F, 0)  # A0 d
    for r in range(6):
        U[1, r] = (A3[0, r] * s0 + A3[1, r] * s1 + A3[2, r] * s2 + A3[3, r] * s3 + A3[4, r] * s4
                   + A3[5, r] * s5)  # u1 = A3^T s
        U[2, r] = (A1[0, r] * s0 + A1[1, r] * s1 + A1[2, r] * s2 + A1[3, r] * s3 + A1[4, r] * s4
                   + A1[5, r] * s5)  # u2 = A1^T s
        U[3, r] = (A3[r, 0] * d0 + A3[r, 1] * d1 + A3[r, 2] * d2 + A3[r, 3] * d3 + A3[r, 4] * d4 + A3[r, 5] * d5
                   + A1[r, 0] * e[0] + A1[r, 1] * e[1] + A1[r, 2] * e[2] + A1[r, 3] * e[3] + A1[r, 4] * e[4]
                   + A1[r, 5] * e[5])  # u3 = A3 psi_dot + A1 psi_ddot + A5 s (below)
        U[4, r] = (A6[r, 0] * s0 + A6[r, 1] * s1 + A6[r, 2] * s2 + A6[r, 3] * s3 + A6[r, 4] * s4
                   + A6[r, 5] * s5)  # u4 = A6 s
        U[7, r] = (A3[r, 0] * s0 + A3[r, 1] * s1 + A3[r, 2] * s2 + A3[r, 3] * s3 + A3[r, 4] * s4 + A3[r, 5] * s5
                   + A1[r, 0] * h[0] + A1[r, 1] * h[1] + A1[r, 2] * h[2] + A1[r, 3] * h[3] + A1[r, 4] * h[4]
                   + A1[r, 5] * h[5])  # u7 = A3 s + A1 theta
        U[12, r] = (A1[r, 0] * s0 + A1[r, 1] * s1 + A1[r, 2] * s2 + A1[r, 3] * s3 + A1[r, 4] * s4
                    + A1[r, 5] * s5)  # u12 = A1 s
    U[3, 0] += f0
    U[3, 1] += f1
    U[3, 2] += f2
    U[3, 3] += f3
    U[3, 4] += f4
    U[3, 5] += f5
    # u5 = A2 psi_dot + A4 s = 2 A0 d - B d + A4 s
    U[5, 0], U[5, 1], U[5, 2] = 2.0 * k0 - bd0 + c0, 2.0 * k1 - bd1 + c1, 2.0 * k2 - bd2 + c2
    U[5, 3], U[5, 4], U[5, 5] = 2.0 * k3 - bd3 + c3, 2.0 * k4 - bd4 + c4, 2.0 * k5 - bd5 + c5
    # u6 = B d + A7 s
    U[6, 0], U[6, 1], U[6, 2] = bd0 + g0, bd1 + g1, bd2 + g2
    U[6, 3], U[6, 4], U[6, 5] = bd3 + g3, bd4 + g4, bd5 + g5
    # u8 = A4 s - B^T d
    U[8, 0], U[8, 1], U[8, 2] = c0 - td0, c1 - td1, c2 - td2
    U[8, 3], U[8, 4], U[8, 5] = c3, c4, c5
    # u9 = A0 s, u10 = B s, u11 = B^T s
    U[9, 0], U[9, 1], U[9, 2], U[9, 3], U[9, 4], U[9, 5] = a0, a1, a2, a3, a4, a5
    U[10, 0], U[10, 1], U[10, 2], U[10, 3], U[10, 4], U[10, 5] = bs0, bs1, bs2, bs3, bs4, bs5
    U[11, 0], U[11, 1], U[11, 2] = ts0, ts1, ts2
    U[11, 3] = U[11, 4] = U[11, 5] = 0.0 * s0


@njit(inline="always", fastmath=FAST)
def _products(U, PV, E, js, P):
    """The 14 dot products of Alg. 1 lines 42-66 for the DOFs r = js..P-1 of the path (rows of PV: s (0-5),
    psi_dot (6-11), psi_ddot (12-17), theta = psi_dot + s_dot (18-23)); u_k in row k of U.

    One loop per product over whole blocks of ``LANES`` path positions (PV and E have ``LANES`` spare columns;
    the extra entries are finite and never read): each loop has one store stream and a trip count that is a
    multiple of the vector width, so it compiles to SIMD code (one loop over all 14 does not)."""
    a0, a1, a2, a3, a4, a5 = U[11, 0], U[11, 1], U[11, 2], U[11, 3], U[11, 4], U[11, 5]
    b0, b1, b2, b3, b4, b5 = U[8, 0], U[8, 1], U[8, 2], U[8, 3], U[8, 4], U[8, 5]
    c0, c1, c2, c3, c4, c5 = U[9, 0], U[9, 1], U[9, 2], U[9, 3], U[9, 4], U[9, 5]
    d0, d1, d2, d3, d4, d5 = U[1, 0], U[1, 1], U[1, 2], U[1, 3], U[1, 4], U[1, 5]
    e0, e1, e2, e3, e4, e5 = U[2, 0], U[2, 1], U[2, 2], U[2, 3], U[2, 4], U[2, 5]
    f0, f1, f2, f3, f4, f5 = U[12, 0], U[12, 1], U[12, 2], U[12, 3], U[12, 4], U[12, 5]
    g0, g1, g2, g3, g4, g5 = U[3, 0], U[3, 1], U[3, 2], U[3, 3], U[3, 4], U[3, 5]
    h0, h1, h2, h3, h4, h5 = U[5, 0], U[5, 1], U[5, 2], U[5, 3], U[5, 4], U[5, 5]
    k0, k1, k2, k3, k4, k5 = U[6, 0], U[6, 1], U[6, 2], U[6, 3], U[6, 4], U[6, 5]
    l0, l1, l2, l3, l4, l5 = U[7, 0], U[7, 1], U[7, 2], U[7, 3], U[7, 4], U[7, 5]
    m0, m1, m2, m3, m4, m5 = U[10, 0], U[10, 1], U[10, 2], U[10, 3], U[10, 4], U[10, 5]
    o0, o1, o2, o3, o4, o5 = U[4, 0], U[4, 1], U[4, 2], U[4, 3], U[4, 4], U[4, 5]
    lo = U64((js // LANES) * LANES)
    hi = U64(((P + LANES - 1) // LANES) * LANES)
    for r in range(lo, hi):  # p1 = u11 . psi_dot_r
        E[0, r] = (a0 * PV[6, r] + a1 * PV[7, r] + a2 * PV[8, r] + a3 * PV[9, r] + a4 * PV[10, r]
                   + a5 * PV[11, r])
    for r in range(lo, hi):  # p2 = u8 . psi_dot_r + u9 . psi_ddot_r
        E[1, r] = (b0 * PV[6, r] + b1 * PV[7, r] + b2 * PV[8, r] + b3 * PV[9, r] + b4 * PV[10, r]
                   + b5 * PV[11, r] + c0 * PV[12, r] + c1 * PV[13, r] + c2 * PV[14, r] + c3 * PV[15, r] + c4 * PV[16, r]
                   + c5 * PV[17, r])
    for r in range(lo, hi):  # u1 . psi_dot_r + u2 . psi_ddot_r
        E[2, r] = (d0 * PV[6, r] + d1 * PV[7, r] + d2 * PV[8, r] + d3 * PV[9, r] + d4 * PV[10, r]
                   + d5 * PV[11, r] + e0 * PV[12, r] + e1 * PV[13, r] + e2 * PV[14, r] + e3 * PV[15, r] + e4 * PV[16, r]
                   + e5 * PV[17, r])
    for r in range(lo, hi):  # u1 . s_r + u2 . theta_r
        E[3, r] = (d0 * PV[0, r] + d1 * PV[1, r] + d2 * PV[2, r] + d3 * PV[3, r] + d4 * PV[4, r]
                   + d5 * PV[5, r] + e0 * PV[18, r] + e1 * PV[19, r] + e2 * PV[20, r] + e3 * PV[21, r] + e4 * PV[22, r]
                   + e5 * PV[23, r])
    for r in range(lo, hi):  # u11 . s_r
        E[4, r] = (a0 * PV[0, r] + a1 * PV[1, r] + a2 * PV[2, r] + a3 * PV[3, r] + a4 * PV[4, r]
                   + a5 * PV[5, r])
    for r in range(lo, hi):  # u12 . s_r
        E[5, r] = (f0 * PV[0, r] + f1 * PV[1, r] + f2 * PV[2, r] + f3 * PV[3, r] + f4 * PV[4, r]
                   + f5 * PV[5, r])
    for r in range(lo, hi):  # u3 . s_r
        E[6, r] = (g0 * PV[0, r] + g1 * PV[1, r] + g2 * PV[2, r] + g3 * PV[3, r] + g4 * PV[4, r]
                   + g5 * PV[5, r])
    for r in range(lo, hi):  # u5 . s_r + u9 . theta_r
        E[7, r] = (h0 * PV[0, r] + h1 * PV[1, r] + h2 * PV[2, r] + h3 * PV[3, r] + h4 * PV[4, r]
                   + h5 * PV[5, r] + c0 * PV[18, r] + c1 * PV[19, r] + c2 * PV[20, r] + c3 * PV[21, r] + c4 * PV[22, r]
                   + c5 * PV[23, r])
    for r in range(lo, hi):  # u6 . s_r
        E[8, r] = (k0 * PV[0, r] + k1 * PV[1, r] + k2 * PV[2, r] + k3 * PV[3, r] + k4 * PV[4, r]
                   + k5 * PV[5, r])
    for r in range(lo, hi):  # u9 . s_r
        E[9, r] = (c0 * PV[0, r] + c1 * PV[1, r] + c2 * PV[2, r] + c3 * PV[3, r] + c4 * PV[4, r]
                   + c5 * PV[5, r])
    for r in range(lo, hi):  # u7 . s_r
        E[10, r] = (l0 * PV[0, r] + l1 * PV[1, r] + l2 * PV[2, r] + l3 * PV[3, r] + l4 * PV[4, r]
                   + l5 * PV[5, r])
    for r in range(lo, hi):  # u10 . s_r
        E[11, r] = (m0 * PV[0, r] + m1 * PV[1, r] + m2 * PV[2, r] + m3 * PV[3, r] + m4 * PV[4, r]
                   + m5 * PV[5, r])
    for r in range(lo, hi):  # u4 . s_r
        E[12, r] = (o0 * PV[0, r] + o1 * PV[1, r] + o2 * PV[2, r] + o3 * PV[3, r] + o4 * PV[4, r]
                   + o5 * PV[5, r])
    for r in range(lo, hi):  # u2 . s_r
        E[13, r] = (e0 * PV[0, r] + e1 * PV[1, r] + e2 * PV[2, r] + e3 * PV[3, r] + e4 * PV[4, r]
                   + e5 * PV[5, r])


@njit(cache=True, fastmath=FAST)
def rnea_second_order_kernel(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, d2q, d2v, d2qv, dM):
    """(d2tau_dq2, d2tau_dqd2, d2tau_dqdqd, dM_dq) (n, n, n) in the model's coordinates; d2q, d2v, d2qv, dM:
    zeroed (ncd, ncd, ncd) core tensors (:func:`core_tensors`), returned themselves when the model's
    coordinates are the core's or its blocks align with them."""
    check_inputs(Ii, q, qd, qdd, jstate, f_body)
    alltr = CI[2] == 1
    tau, Tq, Tv, Mc = idsva_so(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, not alltr, d2q, d2v,
                               d2qv, dM)
    if alltr:
        return d2q, d2v, d2qv, dM
    if CI[3] == 1:
        return chain_second_order_aligned(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, d2q, d2v,
                                          d2qv, dM)
    return chain_second_order(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, d2q, d2v, d2qv, dM)


@njit(cache=True, fastmath=FAST)
def rnea_second_order_plain(Ii, Ff, CI, q, qd, qdd, d2q, d2v, d2qv, dM):
    """:func:`rnea_second_order_kernel` with gravity, no external wrenches, the initial charts, model
    coordinates (the per-call fast path)."""
    return rnea_second_order_kernel(Ii, Ff, CI, q, qd, qdd, initial_jstate(Ii), NO_FEXT, 1.0, False, d2q, d2v,
                                    d2qv, dM)


def core_tensors(CI, dtype):
    """Four (ncd, ncd, ncd) tensors for :func:`idsva_so` (d2q, d2v, d2qv, dM), allocated by NumPy: zeroed on
    trees (the entries of unrelated triples are never written); on chains, where every triple is related, d2q,
    d2v and d2qv uninitialised (the kernel and :func:`_mirror` write each of their entries: tested with
    NaN-filled tensors) and dM zeroed (``dM_ij/dq_k`` with k at or above the shallower of i, j is zero and not
    written).  A compiled ``np.zeros`` would write every byte first, where NumPy maps fresh pages lazily (n = 100,
    4 x 8 MB: 13 ms of a 21 ms call)."""
    ncd = int(CI[1])
    shape = (ncd, ncd, ncd)
    dM = np.zeros(shape, dtype=dtype)
    if _single_path(CI):
        return [np.empty(shape, dtype=dtype), np.empty(shape, dtype=dtype), np.empty(shape, dtype=dtype), dM]
    return [np.zeros(shape, dtype=dtype), np.zeros(shape, dtype=dtype), np.zeros(shape, dtype=dtype), dM]


def rnea_second_order_derivatives(model, q, qd, qdd, f_ext=None, jstate=None, gravity: bool = True,
                                  tangent: bool = False):
    """Second-order derivatives of inverse dynamics (IDSVA-SO; module docstring for the conventions).

    Args:
        q, qd, qdd: (ndof,) coordinates, rates and accelerations (real or complex).
        f_ext: optional (nb, 6) external wrenches (body frames, angular first, as :func:`redmax.rnea`).
        jstate: (nb,) chart words; default the model's initial charts.
        gravity: include the model's gravity.
        tangent: body-twist coordinates for spherical and free joints (see :func:`redmax.rnea_derivatives`).
    Returns:
        ``(d2tau_dq2, d2tau_dqd2, d2tau_dqdqd, dM_dq)``, each (ndof, ndof, ndof):
        ``d2tau_dq2[i, j, k] = d/dq_k (dtau_i/dq_j)``, ``d2tau_dqd2[i, j, k] = d/dqd_k (dtau_i/dqd_j)``,
        ``d2tau_dqdqd[i, j, k] = d/dqd_k (dtau_i/dq_j)``, ``dM_dq[i, j, k] = dM_ij/dq_k``.  In the model's own
        coordinates ``d2tau_dq2`` is symmetric in (j, k); with ``tangent=True`` the blocks of a spherical or
        free joint are not (rotations do not commute: Singh et al. §II).
    """
    if f_ext is None and jstate is None and gravity is True and tangent is False and not model.chart_joints.size:
        try:
            if (q.dtype == _F64 and qd.dtype == _F64 and qdd.dtype == _F64
                    and q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1):
                Ii, Ff = model.packed
                CI = core_structure(model, False)
                return rnea_second_order_plain(Ii, Ff, CI, q, qd, qdd, *core_tensors(CI, _F64))
        except (AttributeError, ValueError, ZeroDivisionError):
            pass
    from redmax.dynamics import _arrays, _fext, _js
    from redmax.dynamics.rnea_derivatives import run_checked

    Ii, Ff = model.packed
    q, qd, qdd = _arrays(model, q, qd, qdd)
    CI = core_structure(model, tangent)
    return run_checked(model, rnea_second_order_kernel, Ii, Ff, CI, q, qd, qdd, _js(model, jstate),
                       _fext(model, f_ext, q.dtype), 1.0 if gravity else 0.0, bool(tangent), *core_tensors(CI, q.dtype))
