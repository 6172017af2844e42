"""The chain rule of :mod:`redmax.dynamics._chain2` in place, for models whose core and model indices coincide.

The tensors change only on the slices whose index lies in a non-trivial block (a free joint in exponential
coordinates: its rotation block), axis by axis: k, then j (both slab by slab, first index c), then i (row by row,
second index j), each pass reading copies of the slices it overwrites.  O(n^2 m^2) per block of m DOFs.  The
loops over the long index run over every DOF, related or not (:func:`redmax.dynamics._chain2.related_dofs`): the
entries of unrelated pairs are zero before and, as every product that forms them has a zero factor, after; loops
without tests compile to SIMD code.  Slabs and rows are independent, so :func:`chain_second_order_aligned_par`
splits them over Numba's threads, each entry computed by the same operations as in
:func:`chain_second_order_aligned`.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from redmax._jit import njit
from redmax.dynamics._chain2 import _blocks
from redmax.dynamics._packed import FAST

__all__ = ["chain_second_order_aligned", "chain_second_order_aligned_par"]


@njit(cache=True, fastmath=FAST)
def _zero_rows(y1, y2, y3, y4, zero):
    """Set four rows of equal length to ``zero`` (the accumulators of the passes below)."""
    for k in range(y1.shape[0]):
        y1[k] = zero
        y2[k] = zero
        y3[k] = zero
        y4[k] = zero


@njit(cache=True, fastmath=FAST)
def _slab_kj(c, o, ms, A, dA, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, W, X, S, zero):
    """Slab c (``T[c]``) through the k pass (axis 2) and the j pass (axis 1) of every block: with, read from the
    untouched slab, ``DTv[b, l, k] = sum_m Tqv[c, m, l] A[m, k] + Tvv[c, l, m] P[m, k]``, ``VTv[b, l, k] = sum_m
    Tvv[c, l, m] A[m, k]`` and ``dM1[b, l, k] = dMc[c, l, k]`` for l in block b (module _chain2, ``D_k``, ``V_k``),
    in the scratch ``W`` (3, nblk, M, n); ``X`` (4, M, n) and ``S`` (4, M, n) are scratch too (the caller's, so
    that a slab allocates nothing); ``zero`` of the tensors' type.

    Every loop over the long index (all n DOFs) is contiguous and free of tests, so that it compiles to SIMD code:
    the columns ``T[c, :, ob + m]`` of the k pass are gathered into ``X`` first and their new values scattered back
    from ``S``.  Entries of unrelated DOF pairs are not skipped: they are zero in the core tensors and in the
    first-order quantities, and every product that forms them has a zero factor, so they stay zero.  Against the
    loops that skipped them (talos in exponential coordinates, one thread, one process): the slabs 113 -> 89 us,
    the rows (:func:`_row_i`) 45 -> 31 us."""
    n = Tqq.shape[0]
    nblk = o.shape[0]
    DTv, VTv, dM1 = W[0], W[1], W[2]
    for b in range(nblk):
        ob, mb = o[b], ms[b]
        for l in range(mb):
            for k in range(n):
                dM1[b, l, k] = dMc[c, ob + l, k]
            for k in range(n):
                VTv[b, l, k] = Tvv[c, ob + l, k]
            for k in range(n):
                DTv[b, l, k] = Tqv[c, k, ob + l]
            for kb in range(nblk):  # k in a block: its own map
                ok = o[kb]
                for kk in range(ms[kb]):
                    x = zero
                    y = zero
                    for m in range(ms[kb]):
                        x += Tqv[c, ok + m, ob + l] * A[kb, m, kk] + Tvv[c, ob + l, ok + m] * P[kb, m, kk]
                        y += Tvv[c, ob + l, ok + m] * A[kb, m, kk]
                    DTv[b, l, ok + kk] = x
                    VTv[b, l, ok + kk] = y
    C1, C2, C3, C4 = X[0], X[1], X[2], X[3]
    S1, S2, S3, S4 = S[0], S[1], S[2], S[3]
    for b in range(nblk):  # k pass: T[c, :, ob + k] = sum_m T[c, :, ob + m] A[m, k] + ...
        ob, mb = o[b], ms[b]
        for m in range(mb):
            for l in range(n):
                C1[m, l] = Tqq[c, l, ob + m]
                C2[m, l] = Tqv[c, l, ob + m]
                C3[m, l] = Tvv[c, l, ob + m]
                C4[m, l] = dMc[c, l, ob + m]
        for k in range(mb):
            _zero_rows(S1[k], S2[k], S3[k], S4[k], zero)
            for m in range(mb):
                a_ = A[b, m, k]
                p_ = P[b, m, k]
                r_ = R[b, m, k]
                g_ = G[b, m, k]
                for l in range(n):  # one store stream per loop: SIMD code
                    S1[k, l] += C1[m, l] * a_ + C2[m, l] * p_ + dM1[b, m, l] * r_
                for l in range(n):
                    S2[k, l] += C2[m, l] * a_ + dM1[b, m, l] * g_
                for l in range(n):
                    S3[k, l] += C3[m, l] * a_
                for l in range(n):
                    S4[k, l] += C4[m, l] * a_
        for k in range(mb):
            for l in range(n):
                Tqq[c, l, ob + k] = S1[k, l]
                Tqv[c, l, ob + k] = S2[k, l]
                Tvv[c, l, ob + k] = S3[k, l]
                dMc[c, l, ob + k] = S4[k, l]
    X1, X2, X3, X4 = X[0], X[1], X[2], X[3]
    for b in range(nblk):  # j pass: T[c, ob + j, :] = sum_l A[l, j] T[c, ob + l, :] + ...
        ob, mb = o[b], ms[b]
        for l in range(mb):
            for k in range(n):
                X1[l, k] = Tqq[c, ob + l, k]
                X2[l, k] = Tqv[c, ob + l, k]
                X3[l, k] = Tvv[c, ob + l, k]
                X4[l, k] = dMc[c, ob + l, k]
        for j in range(mb):
            y1 = Tqq[c, ob + j]
            y2 = Tqv[c, ob + j]
            y3 = Tvv[c, ob + j]
            y4 = dMc[c, ob + j]
            _zero_rows(y1, y2, y3, y4, zero)
            for l in range(mb):
                a_ = A[b, l, j]
                p_ = P[b, l, j]
                r_ = R[b, l, j]
                for k in range(n):
                    y1[k] += X1[l, k] * a_ + DTv[b, l, k] * p_ + X4[l, k] * r_
                for k in range(n):
                    y2[k] += X2[l, k] * a_ + VTv[b, l, k] * p_
                for k in range(n):
                    y3[k] += X3[l, k] * a_
                for k in range(n):
                    y4[k] += X4[l, k] * a_
            for kk in range(mb):  # k = ob + kk in the block: the terms of the map's derivatives
                z1 = zero
                z2 = zero
                z3 = zero
                z4 = zero
                for l in range(mb):
                    t_q = Tq[c, ob + l]
                    t_v = Tv[c, ob + l]
                    m_c = Mc[c, ob + l]
                    z1 += t_q * dA[b, l, j, kk] + t_v * Pq[b, l, j, kk] + m_c * Rq[b, l, j, kk]
                    z2 += t_v * Pv[b, l, j, kk] + m_c * Rv[b, l, j, kk]
                    z3 += m_c * Gv[b, l, j, kk]
                    z4 += m_c * dA[b, l, j, kk]
                y1[ob + kk] += z1
                y2[ob + kk] += z2
                y3[ob + kk] += z3
                y4[ob + kk] += z4


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
def _row_i(j, o, ms, blk, A, dA, d2A, Y, Yd, MA, tau, Tqq, Tvv, Tqv, dMc, Z, zero):
    """Row j (second index) through the i pass (axis 0) of every block: ``T[ob + i, j, :]`` from copies of
    ``T[ob + c, j, :]`` (in the scratch ``Z`` (4, M, n)) and the rows of :func:`_block_rows`; contiguous loops
    over all k, as in :func:`_slab_kj` (entries of unrelated pairs stay zero)."""
    n = Tqq.shape[0]
    nblk = o.shape[0]
    Z1, Z2, Z3, Z4 = Z[0], Z[1], Z[2], Z[3]
    for b in range(nblk):
        ob, mb = o[b], ms[b]
        for c in range(mb):
            for k in range(n):
                Z1[c, k] = Tqq[ob + c, j, k]
                Z2[c, k] = Tqv[ob + c, j, k]
                Z3[c, k] = Tvv[ob + c, j, k]
                Z4[c, k] = dMc[ob + c, j, k]
        jin = blk[j] == b
        jj = j - ob
        for i in range(mb):
            z1 = Tqq[ob + i, j]
            z2 = Tqv[ob + i, j]
            z3 = Tvv[ob + i, j]
            z4 = dMc[ob + i, j]
            _zero_rows(z1, z2, z3, z4, zero)
            for c in range(mb):
                a_ = A[b, c, i]
                for k in range(n):
                    z1[k] += a_ * Z1[c, k]
                for k in range(n):
                    z2[k] += a_ * Z2[c, k]
                for k in range(n):
                    z3[k] += a_ * Z3[c, k]
                for k in range(n):
                    z4[k] += a_ * Z4[c, k]
                if jin:
                    d_ = dA[b, c, i, jj]
                    for k in range(n):
                        z1[k] += d_ * Y[b, c, k]
                    for k in range(n):
                        z2[k] += d_ * Yd[b, c, k]
            for kk in range(mb):  # k = ob + kk in the block
                w1 = zero
                w4 = zero
                for c in range(mb):
                    w1 += dA[b, c, i, kk] * Y[b, c, j]
                    w4 += dA[b, c, i, kk] * MA[b, c, j]
                    if jin:
                        w1 += d2A[b, c, i, jj, kk] * tau[ob + c]
                z1[ob + kk] += w1
                z4[ob + kk] += w4


@njit(cache=True, fastmath=FAST)
def chain_second_order_aligned(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc):
    """:func:`redmax.dynamics._chain2.chain_second_order` in place when core and model indices coincide
    (``CI[3] == 1``); one thread, scalar-generic.  Tensors (n, n, n) in the order d2q, d2v, d2qv, dM."""
    nblk, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq = _blocks(Ii, Ff, CI, q, qd, qdd, jstate, tangent)
    n = Tqq.shape[0]
    dt = Tqq.dtype
    M = A.shape[1]
    W = np.empty((3, nblk, M, n), dtype=dt)
    X = np.empty((4, M, n), dtype=dt)
    S = np.empty((4, M, n), dtype=dt)
    zero = np.zeros(1, dtype=dt)[0]
    for c in range(n):
        _slab_kj(c, o, ms, A, dA, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, W, X, S,
                 zero)
    Y, Yd, MA = _block_rows(o, ms, blk, A, P, R, G, Tq, Tv, Mc)
    for j in range(n):
        _row_i(j, o, ms, blk, A, dA, d2A, Y, Yd, MA, tau, Tqq, Tvv, Tqv, dMc, X, zero)
    return Tqq, Tvv, Tqv, dMc


@njit(cache=True, parallel="prange", fastmath=FAST)
def chain_second_order_aligned_par(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc):
    """:func:`chain_second_order_aligned` on Numba's threads: the slabs, then the rows, split between them (float64;
    talos in exponential coordinates, two threads: 155 -> 80 us, measured in one process)."""
    nblk, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq = _blocks(Ii, Ff, CI, q, qd, qdd, jstate, tangent)
    n = Tqq.shape[0]
    M = A.shape[1]
    W = np.empty((n, 3, nblk, M, n))  # scratch per slab and per row: nothing allocated inside the loops
    X = np.empty((n, 4, M, n))
    S = np.empty((n, 4, M, n))
    for c in prange(n):
        _slab_kj(c, o, ms, A, dA, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, W[c], X[c],
                 S[c], 0.0)
    Y, Yd, MA = _block_rows(o, ms, blk, A, P, R, G, Tq, Tv, Mc)
    for j in prange(n):
        _row_i(j, o, ms, blk, A, dA, d2A, Y, Yd, MA, tau, Tqq, Tvv, Tqv, dMc, X[j], 0.0)
    return Tqq, Tvv, Tqv, dMc
