"""The chain rule of :mod:`redmax.dynamics._chain2` in place, for models whose core and model indices coincide.

The tensors change only on the slices whose index lies in a non-trivial block (a free joint in exponential
coordinates: its rotation block), axis by axis: k, then j (both slab by slab, first index c), then i (row by row,
second index j), each pass reading copies of the slices it overwrites.  O(n^2 m^2) per block of m DOFs, and on
trees only over the related index pairs (:func:`redmax.dynamics._chain2.related_dofs`): the other entries are
zero before and after.  Slabs and rows are independent, so :func:`chain_second_order_aligned_par` splits them
over Numba's threads, each entry computed by the same operations as in :func:`chain_second_order_aligned`.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from redmax._jit import njit
from redmax.dynamics._chain2 import _blocks, related_dofs
from redmax.dynamics._packed import FAST

__all__ = ["chain_second_order_aligned", "chain_second_order_aligned_par"]


@njit(cache=True, fastmath=FAST)
def _slab_kj(c, o, ms, blk, A, dA, P, R, G, Pq, Pv, Gv, Rv, Rq, rel, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, W, X, S, zero):
    """Slab c (``T[c]``) through the k pass (axis 2) and the j pass (axis 1) of every block: with, read from the
    untouched slab, ``DTv[b, l, k] = sum_m Tqv[c, m, l] A[m, k] + Tvv[c, l, m] P[m, k]``, ``VTv[b, l, k] = sum_m
    Tvv[c, l, m] A[m, k]`` and ``dM1[b, l, k] = dMc[c, l, k]`` for l in block b (module _chain2, ``D_k``, ``V_k``),
    in the scratch ``W`` (3, nblk, M, n); ``X`` (4, M, n) and ``S`` (4, M) are scratch too (the caller's, so that a
    slab allocates nothing); ``zero`` of the tensors' type."""
    n = Tqq.shape[0]
    nblk = o.shape[0]
    DTv = W[0]
    VTv = W[1]
    dM1 = W[2]
    for b in range(nblk):
        ob, mb = o[b], ms[b]
        for l in range(mb):
            for k in range(n):
                if rel[c, k] == 0:
                    continue
                dM1[b, l, k] = dMc[c, ob + l, k]
                kb = blk[k]
                if kb < 0:
                    DTv[b, l, k] = Tqv[c, k, ob + l]
                    VTv[b, l, k] = Tvv[c, ob + l, k]
                else:
                    ok = o[kb]
                    kk = k - ok
                    x = zero
                    y = zero
                    for m in range(ms[kb]):
                        x += Tqv[c, ok + m, ob + l] * A[kb, m, kk] + Tvv[c, ob + l, ok + m] * P[kb, m, kk]
                        y += Tvv[c, ob + l, ok + m] * A[kb, m, kk]
                    DTv[b, l, k] = x
                    VTv[b, l, k] = y
    s1 = S[0]
    s2 = S[1]
    s3 = S[2]
    s4 = S[3]
    for b in range(nblk):  # k pass
        ob, mb = o[b], ms[b]
        for l in range(n):
            if rel[c, l] == 0:
                continue
            for k in range(mb):
                x1 = zero
                x2 = zero
                x3 = zero
                x4 = zero
                for m in range(mb):
                    a_ = A[b, m, k]
                    x1 += Tqq[c, l, ob + m] * a_ + Tqv[c, l, ob + m] * P[b, m, k] + dM1[b, m, l] * R[b, m, k]
                    x2 += Tqv[c, l, ob + m] * a_ + dM1[b, m, l] * G[b, m, k]
                    x3 += Tvv[c, l, ob + m] * a_
                    x4 += dMc[c, l, ob + m] * a_
                s1[k] = x1
                s2[k] = x2
                s3[k] = x3
                s4[k] = x4
            for k in range(mb):
                Tqq[c, l, ob + k] = s1[k]
                Tqv[c, l, ob + k] = s2[k]
                Tvv[c, l, ob + k] = s3[k]
                dMc[c, l, ob + k] = s4[k]
    X1 = X[0]
    X2 = X[1]
    X3 = X[2]
    X4 = X[3]
    for b in range(nblk):  # j pass
        ob, mb = o[b], ms[b]
        for l in range(mb):
            for k in range(n):
                if rel[c, k] == 0:
                    continue
                X1[l, k] = Tqq[c, ob + l, k]
                X2[l, k] = Tqv[c, ob + l, k]
                X3[l, k] = Tvv[c, ob + l, k]
                X4[l, k] = dMc[c, ob + l, k]
        for j in range(mb):
            for k in range(n):
                if rel[c, k] == 0:
                    continue
                inb = blk[k] == b
                kk = k - ob
                y1 = zero
                y2 = zero
                y3 = zero
                y4 = zero
                for l in range(mb):
                    a_ = A[b, l, j]
                    p_ = P[b, l, j]
                    y1 += X1[l, k] * a_ + DTv[b, l, k] * p_ + X4[l, k] * R[b, l, j]
                    y2 += X2[l, k] * a_ + VTv[b, l, k] * p_
                    y3 += X3[l, k] * a_
                    y4 += X4[l, k] * a_
                    if inb:
                        t_q = Tq[c, ob + l]
                        t_v = Tv[c, ob + l]
                        m_c = Mc[c, ob + l]
                        y1 += t_q * dA[b, l, j, kk] + t_v * Pq[b, l, j, kk] + m_c * Rq[b, l, j, kk]
                        y2 += t_v * Pv[b, l, j, kk] + m_c * Rv[b, l, j, kk]
                        y3 += m_c * Gv[b, l, j, kk]
                        y4 += m_c * dA[b, l, j, kk]
                Tqq[c, ob + j, k] = y1
                Tqv[c, ob + j, k] = y2
                Tvv[c, ob + j, k] = y3
                dMc[c, ob + j, k] = y4


@njit(cache=True, fastmath=FAST)
def _block_rows(o, ms, blk, A, P, R, G, Tq, Tv, Mc):
    """(Y, Yd, MA), each (nblk, M, n): per block b the rows ``ob + c`` of ``Y = T_q A + T_v P + M_c R``,
    ``Yd = T_v A + M_c G`` and ``M_c A`` (module _chain2), which the i pass reads."""
    n = Tq.shape[0]
    nblk = o.shape[0]
    M = A.shape[1]
    dt = Tq.dtype
    Y = np.zeros((nblk, M, n), dtype=dt)
    Yd = np.zeros((nblk, M, n), dtype=dt)
    MA = np.zeros((nblk, M, n), dtype=dt)
    for b in range(nblk):
        ob, mb = o[b], ms[b]
        for c in range(mb):
            for a in range(n):
                ab = blk[a]
                if ab < 0:
                    Y[b, c, a] = Tq[ob + c, a]
                    Yd[b, c, a] = Tv[ob + c, a]
                    MA[b, c, a] = Mc[ob + c, a]
                else:
                    oa = o[ab]
                    aa = a - oa
                    for l in range(ms[ab]):
                        Y[b, c, a] += (Tq[ob + c, oa + l] * A[ab, l, aa] + Tv[ob + c, oa + l] * P[ab, l, aa]
                                       + Mc[ob + c, oa + l] * R[ab, l, aa])
                        Yd[b, c, a] += Tv[ob + c, oa + l] * A[ab, l, aa] + Mc[ob + c, oa + l] * G[ab, l, aa]
                        MA[b, c, a] += Mc[ob + c, oa + l] * A[ab, l, aa]
    return Y, Yd, MA


@njit(cache=True, fastmath=FAST)
def _row_i(j, o, ms, blk, A, dA, d2A, rel, Y, Yd, MA, tau, Tqq, Tvv, Tqv, dMc, Z, zero):
    """Row j (second index) through the i pass (axis 0) of every block: ``T[ob + i, j, :]`` from copies of
    ``T[ob + c, j, :]`` (in the scratch ``Z`` (4, M, n)) and the rows of :func:`_block_rows`."""
    n = Tqq.shape[0]
    nblk = o.shape[0]
    Z1 = Z[0]
    Z2 = Z[1]
    Z3 = Z[2]
    Z4 = Z[3]
    for b in range(nblk):
        ob, mb = o[b], ms[b]
        for c in range(mb):
            for k in range(n):
                if rel[j, k] == 0:
                    continue
                Z1[c, k] = Tqq[ob + c, j, k]
                Z2[c, k] = Tqv[ob + c, j, k]
                Z3[c, k] = Tvv[ob + c, j, k]
                Z4[c, k] = dMc[ob + c, j, k]
        jin = blk[j] == b
        jj = j - ob
        for i in range(mb):
            for k in range(n):
                if rel[j, k] == 0:
                    continue
                kin = blk[k] == b
                kk = k - ob
                z1 = zero
                z2 = zero
                z3 = zero
                z4 = zero
                for c in range(mb):
                    a_ = A[b, c, i]
                    z1 += a_ * Z1[c, k]
                    z2 += a_ * Z2[c, k]
                    z3 += a_ * Z3[c, k]
                    z4 += a_ * Z4[c, k]
                    if jin:
                        z1 += dA[b, c, i, jj] * Y[b, c, k]
                        z2 += dA[b, c, i, jj] * Yd[b, c, k]
                    if kin:
                        z1 += dA[b, c, i, kk] * Y[b, c, j]
                        z4 += dA[b, c, i, kk] * MA[b, c, j]
                        if jin:
                            z1 += d2A[b, c, i, jj, kk] * tau[ob + c]
                Tqq[ob + i, j, k] = z1
                Tqv[ob + i, j, k] = z2
                Tvv[ob + i, j, k] = z3
                dMc[ob + i, j, k] = z4


@njit(cache=True, fastmath=FAST)
def chain_second_order_aligned(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc):
    """:func:`redmax.dynamics._chain2.chain_second_order` in place when core and model indices coincide
    (``CI[3] == 1``); one thread, scalar-generic.  Tensors (n, n, n) in the order d2q, d2v, d2qv, dM."""
    nblk, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq = _blocks(Ii, Ff, CI, q, qd, qdd, jstate, tangent)
    rel = related_dofs(CI, Ii[0])
    n = Tqq.shape[0]
    dt = Tqq.dtype
    M = A.shape[1]
    W = np.empty((3, nblk, M, n), dtype=dt)
    X = np.empty((4, M, n), dtype=dt)
    S = np.empty((4, M), dtype=dt)
    zero = np.zeros(1, dtype=dt)[0]
    for c in range(n):
        _slab_kj(c, o, ms, blk, A, dA, P, R, G, Pq, Pv, Gv, Rv, Rq, rel, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, W, X, S,
                 zero)
    Y, Yd, MA = _block_rows(o, ms, blk, A, P, R, G, Tq, Tv, Mc)
    for j in range(n):
        _row_i(j, o, ms, blk, A, dA, d2A, rel, Y, Yd, MA, tau, Tqq, Tvv, Tqv, dMc, X, zero)
    return Tqq, Tvv, Tqv, dMc


@njit(cache=True, parallel="prange", fastmath=FAST)
def chain_second_order_aligned_par(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc):
    """:func:`chain_second_order_aligned` on Numba's threads: the slabs, then the rows, split between them (float64;
    talos in exponential coordinates, two threads: 155 -> 80 us, measured in one process)."""
    nblk, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq = _blocks(Ii, Ff, CI, q, qd, qdd, jstate, tangent)
    rel = related_dofs(CI, Ii[0])
    n = Tqq.shape[0]
    M = A.shape[1]
    W = np.empty((n, 3, nblk, M, n))  # scratch per slab and per row: nothing allocated inside the loops
    X = np.empty((n, 4, M, n))
    S = np.empty((n, 4, M))
    for c in prange(n):
        _slab_kj(c, o, ms, blk, A, dA, P, R, G, Pq, Pv, Gv, Rv, Rq, rel, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, W[c], X[c],
                 S[c], 0.0)
    Y, Yd, MA = _block_rows(o, ms, blk, A, P, R, G, Tq, Tv, Mc)
    for j in prange(n):
        _row_i(j, o, ms, blk, A, dA, d2A, rel, Y, Yd, MA, tau, Tqq, Tvv, Tqv, dMc, X[j], 0.0)
    return Tqq, Tvv, Tqv, dMc
