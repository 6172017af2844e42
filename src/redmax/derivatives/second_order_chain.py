"""Chain rule from the core tree to the model's coordinates for second-order derivatives.

With core rates ``nu = A(q) qd`` and accelerations ``nud = A qdd + Adot qd`` (``Adot = dA qd``), the model's
torques are ``tau = A^T tau_c(g(q), nu, nud)`` where ``tau_c`` is core inverse dynamics and g(q) the core
configuration, whose left-trivialised derivative along ``q_k`` is ``A[:, k]``.  So, with the core derivatives
``T_q = L tau_c`` (Lie), ``T_v``, ``M_c``, ``T_qq[c, l, m] = L_m L_l tau_c``, ``T_qv[c, l, m] = d/dnu_m L_l tau_c``,
``T_vv``, ``dM_c[c, l, m] = L_m M_c[c, l]`` and ``dtau_c/dnud = M_c`` (so ``d/dnud_m L_l tau_c = dM_c[c, m, l]``):

    P = d(A qd)/dq,  R = d(nud)/dq,  G = d(nud)/dqd = Adot + P,
    Y  = T_q A + T_v P + M_c R        (total d tau_c/dq),   Yd = T_v A + M_c G   (total d tau_c/dqd),
    dtau/dq  = A^T Y + dA^T tau_c,    dtau/dqd = A^T Yd,
    d2tau/dq_j dq_k  = A^T D_k Y_j + dA_ij^T Y_k + dA_ik^T Y_j + d2A_ijk^T tau_c,
    d2tau/dq_j dqd_k = A^T V_k Y_j + dA_ij^T Yd_k,   d2tau/dqd_j dqd_k = A^T V_k Yd_j,
    dM_ij/dq_k = A_i^T (D_k M_c) A_j + A_i^T M_c dA_jk + dA_ik^T M_c A_j,

where ``D_k`` and ``V_k`` are the total derivatives along ``q_k`` and ``qd_k`` (``D_k F = sum_m A_mk L_m F + P_mk
dF/dnu_m + R_mk dF/dnud_m``, ``V_k F = sum_m A_mk dF/dnu_m + G_mk dF/dnud_m``), applied to ``T_q``, ``T_v``, ``M_c``
and to the jets P, R, G.  ``A`` is block diagonal (one block per body); trivial blocks are identities, so the
work outside the few non-trivial joints is a copy.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax._kernels.tables import chunk_function, put, table_of, take1, take1_ro, take2, take3
from redmax.derivatives.core_tree import body_map, core_offsets, fast_offset
from redmax.derivatives.second_order_walk import related_dofs
from redmax.joints.core_expansion import so3_jr_jets
from redmax.model.layout import offsets

__all__ = ["CHAIN_CHUNK", "SUB_TABLE", "TABLE", "block_dofs", "block_size", "blocks", "chain_second_order", "put_chain",
           "related_dofs", "take_chain"]

TABLE = 96  # entries of the table of the chain rules (:func:`put_chain`: 71)
SUB_TABLE = 128  # entries of the table of the in-place chain rule's slab and row chunks (101)


@njit(cache=True, fastmath=FAST)
def _maps(Ii, Ff, CI, q, qd, qdd, jstate, tangent):
    """Dense block-diagonal map data over (core, model) indices: A (ncd, n); the jets dA, P_q, P_v, G_v, R_v,
    R_q (ncd, n, n); P, R, G (ncd, n); core range of every model DOF (lo, hi) (n,)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    dt = q.dtype
    A = np.zeros((ncd, n), dtype=dt)
    dA = np.zeros((ncd, n, n), dtype=dt)
    Pq = np.zeros((ncd, n, n), dtype=dt)
    Pv = np.zeros((ncd, n, n), dtype=dt)
    Gv = np.zeros((ncd, n, n), dtype=dt)
    Rv = np.zeros((ncd, n, n), dtype=dt)
    Rq = np.zeros((ncd, n, n), dtype=dt)
    P = np.zeros((ncd, n), dtype=dt)
    R = np.zeros((ncd, n), dtype=dt)
    G = np.zeros((ncd, n), dtype=dt)
    lo = np.zeros(n, dtype=np.int64)
    hi = np.zeros(n, dtype=np.int64)
    zero = np.zeros(1, dtype=dt)[0]
    for i in range(nb):
        a0 = Ii[o_idx + i]
        nj = Ii[o_idx + i + 1] - a0
        c0 = CI[o_cd + i]
        m = CI[o_cd + i + 1] - c0
        if CI[o_tr + i] == 1:
            for k in range(nj):
                A[c0 + k, a0 + k] = 1.0
                lo[a0 + k] = c0 + k
                hi[a0 + k] = c0 + k + 1
            continue
        Am, dAm, d2A, d3A = body_map(Ii, Ff, CI, i, q, jstate, tangent, 3)
        for a in range(nj):
            lo[a0 + a] = c0
            hi[a0 + a] = c0 + m
        x = qd[a0:a0 + nj]
        xx = qdd[a0:a0 + nj]
        for l in range(m):
            c = c0 + l
            for a in range(nj):
                A[c, a0 + a] = Am[l, a]
                pa = zero
                ra = zero
                ga = zero
                for e in range(nj):
                    pa += dAm[l, e, a] * x[e]
                    ga += dAm[l, a, e] * x[e]
                    ra += dAm[l, e, a] * xx[e]
                    for f in range(nj):
                        ra += d2A[l, e, f, a] * x[f] * x[e]
                P[c, a0 + a] = pa
                R[c, a0 + a] = ra
                G[c, a0 + a] = ga + pa
                for k in range(nj):
                    dA[c, a0 + a, a0 + k] = dAm[l, a, k]
                    Pv[c, a0 + a, a0 + k] = dAm[l, k, a]
                    Gv[c, a0 + a, a0 + k] = dAm[l, a, k] + dAm[l, k, a]
                    pq = zero
                    rv = zero
                    rq = zero
                    for e in range(nj):
                        pq += d2A[l, e, a, k] * x[e]
                        rv += d2A[l, k, e, a] * x[e] + d2A[l, e, k, a] * x[e]
                        rq += d2A[l, e, a, k] * xx[e]
                        for f in range(nj):
                            rq += d3A[l, e, f, a, k] * x[f] * x[e]
                    Pq[c, a0 + a, a0 + k] = pq
                    Rv[c, a0 + a, a0 + k] = rv
                    Rq[c, a0 + a, a0 + k] = rq
    return A, dA, Pq, Pv, Gv, Rv, Rq, P, R, G, lo, hi


@njit(cache=True, fastmath=FAST)
def chain_second_order(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, D2q, D2v, D2qv,
                       DM):
    """(d2tau_dq2, d2tau_dqd2, d2tau_dqdqd, dM_dq) (n, n, n) in the model's coordinates (module docstring) into
    ``D2q, D2v, D2qv, DM`` (every entry written) from the core quantities: ``tau, Tq, Tv, Mc`` (first order) and
    the (ncd, ncd, ncd) tensors ``Tqq, Tvv, Tqv, dMc``.  Scalar-generic."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    dt = q.dtype
    A, dA, Pq, Pv, Gv, Rv, Rq, P, R, G, lo, hi = _maps(Ii, Ff, CI, q, qd, qdd, jstate, tangent)
    zero = np.zeros(1, dtype=dt)[0]
    # first-order totals
    Y = np.zeros((ncd, n), dtype=dt)
    Yd = np.zeros((ncd, n), dtype=dt)
    MA = np.zeros((ncd, n), dtype=dt)
    for c in range(ncd):
        for a in range(n):
            y = zero
            yd = zero
            ma = zero
            for l in range(lo[a], hi[a]):
                y += Tq[c, l] * A[l, a] + Tv[c, l] * P[l, a] + Mc[c, l] * R[l, a]
                yd += Tv[c, l] * A[l, a] + Mc[c, l] * G[l, a]
                ma += Mc[c, l] * A[l, a]
            Y[c, a] = y
            Yd[c, a] = yd
            MA[c, a] = ma
    # k axis
    DTq = np.zeros((ncd, ncd, n), dtype=dt)
    DTv = np.zeros((ncd, ncd, n), dtype=dt)
    DMc = np.zeros((ncd, ncd, n), dtype=dt)
    VTq = np.zeros((ncd, ncd, n), dtype=dt)
    VTv = np.zeros((ncd, ncd, n), dtype=dt)
    for c in range(ncd):
        for l in range(ncd):
            for k in range(n):
                x1 = zero
                x2 = zero
                x3 = zero
                x4 = zero
                x5 = zero
                for m in range(lo[k], hi[k]):
                    a_ = A[m, k]
                    p_ = P[m, k]
                    x1 += Tqq[c, l, m] * a_ + Tqv[c, l, m] * p_ + dMc[c, m, l] * R[m, k]
                    x2 += Tqv[c, m, l] * a_ + Tvv[c, l, m] * p_
                    x3 += dMc[c, l, m] * a_
                    x4 += Tqv[c, l, m] * a_ + dMc[c, m, l] * G[m, k]
                    x5 += Tvv[c, l, m] * a_
                DTq[c, l, k] = x1
                DTv[c, l, k] = x2
                DMc[c, l, k] = x3
                VTq[c, l, k] = x4
                VTv[c, l, k] = x5
    # j axis
    DY = np.zeros((ncd, n, n), dtype=dt)
    VY = np.zeros((ncd, n, n), dtype=dt)
    VYd = np.zeros((ncd, n, n), dtype=dt)
    MM = np.zeros((ncd, n, n), dtype=dt)
    for c in range(ncd):
        for j in range(n):
            for k in range(n):
                y1 = zero
                y2 = zero
                y3 = zero
                y4 = zero
                for l in range(lo[j], hi[j]):
                    a_ = A[l, j]
                    p_ = P[l, j]
                    r_ = R[l, j]
                    y1 += (DTq[c, l, k] * a_ + Tq[c, l] * dA[l, j, k] + DTv[c, l, k] * p_ + Tv[c, l] * Pq[l, j, k]
                           + DMc[c, l, k] * r_ + Mc[c, l] * Rq[l, j, k])
                    y2 += VTq[c, l, k] * a_ + VTv[c, l, k] * p_ + Tv[c, l] * Pv[l, j, k] + Mc[c, l] * Rv[l, j, k]
                    y3 += VTv[c, l, k] * a_ + Mc[c, l] * Gv[l, j, k]
                    y4 += DMc[c, l, k] * a_ + Mc[c, l] * dA[l, j, k]
                DY[c, j, k] = y1
                VY[c, j, k] = y2
                VYd[c, j, k] = y3
                MM[c, j, k] = y4
    # i axis
    for i in range(n):
        for j in range(n):
            for k in range(n):
                z1 = zero
                z2 = zero
                z3 = zero
                z4 = zero
                for c in range(lo[i], hi[i]):
                    a_ = A[c, i]
                    z1 += a_ * DY[c, j, k] + dA[c, i, j] * Y[c, k] + dA[c, i, k] * Y[c, j]
                    z2 += a_ * VY[c, j, k] + dA[c, i, j] * Yd[c, k]
                    z3 += a_ * VYd[c, j, k]
                    z4 += a_ * MM[c, j, k] + dA[c, i, k] * MA[c, j]
                D2q[i, j, k] = z1
                D2qv[i, j, k] = z2
                D2v[i, j, k] = z3
                DM[i, j, k] = z4
    # d2A^T tau_c (within each non-trivial joint)
    for b in range(nb):
        if CI[o_tr + b] == 1:
            continue
        a0 = Ii[o_idx + b]
        nj = Ii[o_idx + b + 1] - a0
        c0 = CI[o_cd + b]
        m = CI[o_cd + b + 1] - c0
        Am, dAm, d2A, d3A = body_map(Ii, Ff, CI, b, q, jstate, tangent, 2)
        for i in range(nj):
            for j in range(nj):
                for k in range(nj):
                    s1 = zero
                    for l in range(m):
                        s1 += d2A[l, i, j, k] * tau[c0 + l]
                    D2q[a0 + i, a0 + j, a0 + k] += s1


@njit(cache=True, inline="always")
def _block_span(Ii, CI, o_idx, o_fk, i, tangent):
    """(a0, m): the model DOFs ``a0:a0 + m`` of the block of body i (non-trivial, aligned model): the rotation of
    a free joint in exponential coordinates (after its translation for fast kind 1), else all the joint's DOFs."""
    fk = CI[o_fk + i]
    if fk != 0 and not tangent:
        return Ii[o_idx + i] + (3 if fk == 1 else 0), 3
    return Ii[o_idx + i], Ii[o_idx + i + 1] - Ii[o_idx + i]


def block_size(model, CI, tangent: bool) -> int:
    """M of :func:`blocks` for an aligned model: the size its blocks are padded to (at least 3)."""
    Ii, _ = model.packed
    o_idx = offsets(Ii)[4]
    nb = model.nb
    o_tr = core_offsets(CI, nb)[5]
    o_fk = fast_offset(CI, nb)
    M = 3
    for i in range(nb):
        if CI[o_tr + i] == 0:
            fast = CI[o_fk + i] != 0 and not tangent  # (_block_span)
            M = max(M, 3 if fast else int(Ii[o_idx + i + 1] - Ii[o_idx + i]))
    return M


@njit(cache=True)
def block_dofs(Ii, CI, tangent):
    """(ncd,) uint8: 1 on the core DOFs whose rows and columns of the first-order quantities (tau_c, T_q, T_v,
    M_c) the chain rule reads.  Aligned models (``CI[3] == 1``): the DOFs of the blocks (:func:`blocks`), as
    :mod:`.second_order_chain_in_place` reads only ``T[c, ob + l]`` and the rows ``ob + c``, the map's
    derivatives being zero off the blocks; otherwise every DOF (:func:`chain_second_order` reads them all)."""
    nb = Ii[0]
    ncd = CI[1]
    if CI[3] != 1:
        return np.ones(ncd, dtype=np.uint8)
    o_idx = offsets(Ii)[4]
    o_tr = core_offsets(CI, nb)[5]
    o_fk = fast_offset(CI, nb)
    need = np.zeros(ncd, dtype=np.uint8)
    for i in range(nb):
        if CI[o_tr + i] == 0:
            a0, m = _block_span(Ii, CI, o_idx, o_fk, i, tangent)
            need[a0:a0 + m] = 1
    return need


@njit(cache=True, fastmath=FAST)
def blocks(Ii, Ff, CI, q, qd, qdd, jstate, tangent):
    """The non-identity blocks of an aligned model (core index = model index): offsets o, sizes m (a free joint
    in exponential coordinates contributes only its rotation block J_r), the jets A, dA, d2A padded to M, and
    the derived P, R, G (per block (M, M)) and Pq, Pv, Gv, Rv, Rq (per block (M, M, M)); blk[a] is the block
    of model DOF a or -1."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    o_fk = fast_offset(CI, nb)
    dt = q.dtype
    nblk = 0
    M = 3  # at least 3: the written-out 3 x 3 sums of the in-place chain rule (zero padding)
    for i in range(nb):
        if CI[o_tr + i] == 0:
            nblk += 1
            M = max(M, _block_span(Ii, CI, o_idx, o_fk, i, tangent)[1])
    o = np.zeros(nblk, dtype=np.int64)
    ms = np.zeros(nblk, dtype=np.int64)
    A = np.zeros((nblk, M, M), dtype=dt)
    dA = np.zeros((nblk, M, M, M), dtype=dt)
    d2A = np.zeros((nblk, M, M, M, M), dtype=dt)
    P = np.zeros((nblk, M, M), dtype=dt)
    R = np.zeros((nblk, M, M), dtype=dt)
    G = np.zeros((nblk, M, M), dtype=dt)
    Pq = np.zeros((nblk, M, M, M), dtype=dt)
    Pv = np.zeros((nblk, M, M, M), dtype=dt)
    Gv = np.zeros((nblk, M, M, M), dtype=dt)
    Rv = np.zeros((nblk, M, M, M), dtype=dt)
    Rq = np.zeros((nblk, M, M, M), dtype=dt)
    blk = np.full(n, -1, dtype=np.int64)
    zero = np.zeros(1, dtype=dt)[0]
    b = 0
    for i in range(nb):
        if CI[o_tr + i] == 1:
            continue
        a0, m = _block_span(Ii, CI, o_idx, o_fk, i, tangent)
        if CI[o_fk + i] != 0 and not tangent:
            Am = np.zeros((3, 3), dtype=dt)
            dAm = np.zeros((3, 3, 3), dtype=dt)
            d2Am = np.zeros((3, 3, 3, 3), dtype=dt)
            d3Am = np.zeros((3, 3, 3, 3, 3), dtype=dt)
            so3_jr_jets(q[a0:a0 + 3], Am, dAm, d2Am, d3Am, 3)
        else:
            Am, dAm, d2Am, d3Am = body_map(Ii, Ff, CI, i, q, jstate, tangent, 3)
        o[b] = a0
        ms[b] = m
        for a in range(m):
            blk[a0 + a] = b
        x = qd[a0:a0 + m]
        xx = qdd[a0:a0 + m]
        for l in range(m):
            for a in range(m):
                A[b, l, a] = Am[l, a]
                pa = zero
                ra = zero
                ga = zero
                for e in range(m):
                    pa += dAm[l, e, a] * x[e]
                    ga += dAm[l, a, e] * x[e]
                    ra += dAm[l, e, a] * xx[e]
                    for f in range(m):
                        ra += d2Am[l, e, f, a] * x[f] * x[e]
                P[b, l, a] = pa
                R[b, l, a] = ra
                G[b, l, a] = ga + pa
                for k in range(m):
                    dA[b, l, a, k] = dAm[l, a, k]
                    Pv[b, l, a, k] = dAm[l, k, a]
                    Gv[b, l, a, k] = dAm[l, a, k] + dAm[l, k, a]
                    pq = zero
                    rv = zero
                    rq = zero
                    for e in range(m):
                        d2A[b, l, a, k, e] = d2Am[l, a, k, e]
                        pq += d2Am[l, e, a, k] * x[e]
                        rv += d2Am[l, k, e, a] * x[e] + d2Am[l, e, k, a] * x[e]
                        rq += d2Am[l, e, a, k] * xx[e]
                        for f in range(m):
                            rq += d3Am[l, e, f, a, k] * x[f] * x[e]
                    Pq[b, l, a, k] = pq
                    Rv[b, l, a, k] = rv
                    Rq[b, l, a, k] = rq
        b += 1
    return nblk, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq


# ------------------------------------------------------------------------------------------------------------
# the chain rule of a second-order call (a chunk function: compiled only for the models that need it)


@njit(cache=True, inline="always")
def put_chain(T, Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, D2q, D2v, D2qv, DM,
              ctl, helpers, nchunks, fns, sub, status):
    """The table of :data:`CHAIN_CHUNK` and of the in-place chain rule (:func:`take_chain`): the model, the state,
    the first-order core quantities, the core tensors, the results (the core tensors themselves for the in-place
    chain rule), the pool (``ctl``, ``helpers``, ``nchunks``), the chunk functions ``fns``, a scratch table ``sub`` and
    ``status`` (1,), set to 1 when the chain rule fails (a singular joint map)."""
    k = put(T, 0, Ii)
    k = put(T, k, Ff)
    k = put(T, k, CI)
    k = put(T, k, q)
    k = put(T, k, qd)
    k = put(T, k, qdd)
    k = put(T, k, jstate)
    k = put(T, k, tau)
    k = put(T, k, Tq)
    k = put(T, k, Tv)
    k = put(T, k, Mc)
    k = put(T, k, Tqq)
    k = put(T, k, Tvv)
    k = put(T, k, Tqv)
    k = put(T, k, dMc)
    k = put(T, k, D2q)
    k = put(T, k, D2v)
    k = put(T, k, D2qv)
    k = put(T, k, DM)
    k = put(T, k, ctl)
    k = put(T, k, fns)
    k = put(T, k, sub)
    k = put(T, k, status)
    T[k] = 1 if tangent else 0
    T[k + 1] = helpers
    T[k + 2] = nchunks


@njit(cache=True, inline="always")
def take_chain(ctx):
    """The arguments :func:`put_chain` stored."""
    T = table_of(ctx, TABLE)
    Ii, k = take1_ro(T, 0, np.int64)
    Ff, k = take1_ro(T, k, np.float64)
    CI, k = take1_ro(T, k, np.int64)
    q, k = take1(T, k, np.float64)
    qd, k = take1(T, k, np.float64)
    qdd, k = take1(T, k, np.float64)
    jstate, k = take1(T, k, np.int64)
    tau, k = take1(T, k, np.float64)
    Tq, k = _take2f(T, k)
    Tv, k = _take2f(T, k)
    Mc, k = _take2f(T, k)
    Tqq, k = take3(T, k, np.float64)
    Tvv, k = take3(T, k, np.float64)
    Tqv, k = take3(T, k, np.float64)
    dMc, k = take3(T, k, np.float64)
    D2q, k = take3(T, k, np.float64)
    D2v, k = take3(T, k, np.float64)
    D2qv, k = take3(T, k, np.float64)
    DM, k = take3(T, k, np.float64)
    ctl, k = take1(T, k, np.int64)
    fns, k = take1(T, k, np.int64)
    sub, k = take1(T, k, np.int64)
    status, k = take1(T, k, np.int64)
    return (Ii, Ff, CI, q, qd, qdd, jstate, T[k] != 0, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, D2q, D2v, D2qv, DM, ctl,
            T[k + 1], T[k + 2], fns, sub, status)


@njit(cache=True, inline="always")
def _take2f(T, k):
    return take2(T, k, np.float64)


@chunk_function(fastmath=FAST)
def CHAIN_CHUNK(ctx, c):
    """The general chain rule (:func:`chain_second_order`) as a chunk function of one chunk (float64)."""
    (Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, D2q, D2v, D2qv, DM, ctl, helpers,
     nchunks, fns, sub, status) = take_chain(ctx)
    try:
        chain_second_order(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, D2q, D2v,
                           D2qv, DM)
    except Exception:  # (a singular joint map: the caller raises)
        status[0] = 1
