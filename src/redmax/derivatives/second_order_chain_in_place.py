"""The chain rule of :mod:`.second_order_chain` in place, for models whose core and model indices coincide
(``aligned``: every body has as many core DOFs as DOFs, e.g. a free base or a spherical joint in exponential
coordinates).

The tensors change only on the slices whose index lies in a non-trivial block (a free joint in exponential
coordinates: its rotation block), axis by axis: k, then j (both slab by slab, first index c), then i (row by row,
second index j), each pass reading copies of the slices it overwrites.  O(n^2 m^2) per block of m DOFs.  Only the
entries of related index triples (every pair on one root path: :func:`.second_order_walk.related_dofs`) are read
or written: the others are zero in the core tensors and in the first-order quantities, so that every product that
would form them has a zero factor (branch-induced sparsity, Singh, Russell & Wensing §IV-F).  The long loops run
over the runs of consecutive related DOFs.  Each pass is one loop over those DOFs (rows of the k pass, columns of
the j and i passes) with the block's small sums inside; for blocks padded to three DOFs (free joints in
exponential coordinates, spherical, planar, universal joints) the sums are written out (:func:`_slab_kj3`,
:func:`_row_i3`), so that the twelve outputs of a row or column are independent chains the processor overlaps.

Slabs and rows are independent: they run in chunks on redmax's threads (:data:`SLAB_CHUNK` and
:data:`ROW_CHUNK`, or :data:`SLAB3_CHUNK` and :data:`ROW3_CHUNK` for blocks of three), driven by
:data:`IN_PLACE_CHUNK`, each entry computed by the same operations whatever the chunk or thread.  Every helper
is inlined into the chunk functions (``inline="always"``, Numba IR): a call from compiled code would update the
reference count of each array argument, an atomic operation whose cache line bounces between the cores when two
threads share the arrays.

The walk does not write ``dM[i, j, k]`` where joint k is an ancestor of (or the same as) the joints of both i
and j (``M_ij`` does not change when the whole subtree above them moves).  The chain rule adds the terms of the
map's derivative to some of those entries (``dM[c, ob + j, ob + k]`` and ``dM[ob + i, j, ob + k]`` for a block at
offset ``ob``), so :func:`zero_block_terms` zeroes them first: a result block of an earlier call (or ``out=``)
then gives the same result as a new one.

Size: one algorithm, its three passes each next to the written-out variant for blocks of three DOFs.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax._kernels.pool import pool_run
from redmax._kernels.tables import alive, chunk_function, put, table_of, take1, take2, take3, take4, take5
from redmax.derivatives.core_tree import core_offsets
from redmax.derivatives.second_order_chain import SUB_TABLE, blocks, take_chain
from redmax.derivatives.second_order_walk import related_dofs

__all__ = ["IN_PLACE_CHUNK", "ROW3_CHUNK", "ROW_CHUNK", "SLAB3_CHUNK", "SLAB_CHUNK", "chain_in_place",
           "zero_block_terms"]

# FAST without reassociation: the written-out sums keep their order of terms (they need no reassociation, having
# no reductions to vectorise); inlined (Numba IR), the helpers take the flags of the chunk function
_ORDERED = FAST - {"reassoc"}


@njit(cache=True, inline="always")
def _related(rel, a, b, ix):
    """Fill ``ix[:count]`` with the DOFs related to both DOFs a and b (``rel``: (n, n) uint8 mask of related
    pairs), ascending; return the count."""
    nr = 0
    for l in range(rel.shape[0]):
        if rel[a, l] and rel[b, l]:
            ix[nr] = l
            nr += 1
    return nr


@njit(cache=True, fastmath=_ORDERED, inline="always")
def _prelude(c, rel, o, ms, A, P, Tvv, Tqv, dMc, W, IX, NR, zero):
    """For slab c and every block b (offset ob, size mb) related to DOF c: ``NR[b]`` and ``IX[b, :NR[b]]``, the
    DOFs related to both c and ob (``NR[b] = 0`` for an unrelated block), and, read from the untouched slab,
    ``DTv[b, l, k] = sum_m Tqv[c, m, l] A[m, k] + Tvv[c, l, m] P[m, k]``, ``VTv[b, l, k] = sum_m Tvv[c, l, m]
    A[m, k]`` (k in ix; ``D_k``, ``V_k`` of :mod:`.second_order_chain`) and ``dM1[b, l, t] = dMc[c, ob + l,
    ix[t]]``, in ``W = (DTv, VTv, dM1)`` (3, nblk, M, n), zero on the rows l >= mb."""
    nblk = o.shape[0]
    DTv, VTv, dM1 = W[0], W[1], W[2]
    for b in range(nblk):
        ob, mb = o[b], ms[b]
        if not rel[c, ob]:  # every entry of the block's columns and rows in slab c is zero
            NR[b] = 0
            continue
        ix = IX[b]
        nr = _related(rel, c, ob, ix)
        NR[b] = nr
        for l in range(mb):
            for t in range(nr):
                k = ix[t]
                dM1[b, l, t] = dMc[c, ob + l, k]
                VTv[b, l, k] = Tvv[c, ob + l, k]
                DTv[b, l, k] = Tqv[c, k, ob + l]
            for kb in range(nblk):  # k in a related block: its own map
                ok = o[kb]
                if not (rel[c, ok] and rel[ob, ok]):
                    continue
                for kk in range(ms[kb]):
                    x = zero
                    y = zero
                    for m in range(ms[kb]):
                        x += Tqv[c, ok + m, ob + l] * A[kb, m, kk] + Tvv[c, ob + l, ok + m] * P[kb, m, kk]
                        y += Tvv[c, ob + l, ok + m] * A[kb, m, kk]
                    DTv[b, l, ok + kk] = x
                    VTv[b, l, ok + kk] = y
        for l in range(mb, dM1.shape[1]):  # rows beyond the block (padding to M): zeros
            for t in range(nr):
                k = ix[t]
                dM1[b, l, t] = zero
                VTv[b, l, k] = zero
                DTv[b, l, k] = zero


@njit(cache=True, fastmath=FAST, inline="always")
def _slab_kj(c, rel, o, ms, A, dA, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, W, XR, IX, NR, zero):
    """Slab c (``T[c]``) through the k pass (axis 2) and the j pass (axis 1) of every block related to DOF c.

    For block b (offset ob, size mb) and the DOFs ``ix = IX[b, :NR[b]]`` related to both c and ob (the only rows
    of the k pass and columns of the j pass with non-zero entries), read from the untouched slab:
    ``DTv[b, l, k] = sum_m Tqv[c, m, l] A[m, k] + Tvv[c, l, m] P[m, k]``, ``VTv[b, l, k] = sum_m Tvv[c, l, m]
    A[m, k]`` (k in ix; ``D_k``, ``V_k`` of :mod:`.second_order_chain`) and ``dM1[b, l, t] = dMc[c, ob + l,
    ix[t]]``, in the scratch ``W`` (3, nblk, M, n).  ``XR`` (4, M), ``IX`` (nblk, n) int64 and ``NR`` (nblk,)
    int64 are scratch too (the caller's, so that a slab allocates nothing); ``zero`` of the tensors' type.

    Both passes run one loop over ix: the k pass row by row (``T[c, l, ob:ob + mb]`` of the four tensors into
    ``XR``, their new values written back in place), the j pass column by column (``T[c, ob:ob + mb, k]``), each
    with the block's small sums inside (blocks of more than three DOFs; :func:`_slab_kj3` for the others)."""
    _prelude(c, rel, o, ms, A, P, Tvv, Tqv, dMc, W, IX, NR, zero)
    nblk = o.shape[0]
    dM1 = W[2]
    DTv, VTv = W[0], W[1]
    for b in range(nblk):  # k pass: T[c, l, ob + k] = sum_m T[c, l, ob + m] A[m, k] + ..., l in ix
        ob, mb = o[b], ms[b]
        ix = IX[b]
        for t in range(NR[b]):
            l = ix[t]
            for m in range(mb):
                XR[0, m] = Tqq[c, l, ob + m]
                XR[1, m] = Tqv[c, l, ob + m]
                XR[2, m] = Tvv[c, l, ob + m]
                XR[3, m] = dMc[c, l, ob + m]
            for k in range(mb):
                s1 = zero
                s2 = zero
                s3 = zero
                s4 = zero
                for m in range(mb):
                    a_ = A[b, m, k]
                    d_ = dM1[b, m, t]
                    s1 += XR[0, m] * a_ + XR[1, m] * P[b, m, k] + d_ * R[b, m, k]
                    s2 += XR[1, m] * a_ + d_ * G[b, m, k]
                    s3 += XR[2, m] * a_
                    s4 += XR[3, m] * a_
                Tqq[c, l, ob + k] = s1
                Tqv[c, l, ob + k] = s2
                Tvv[c, l, ob + k] = s3
                dMc[c, l, ob + k] = s4
    for b in range(nblk):  # j pass: T[c, ob + j, k] = sum_l A[l, j] T[c, ob + l, k] + ..., k in ix
        ob, mb = o[b], ms[b]
        ix = IX[b]
        nr = NR[b]
        for t in range(nr):
            k = ix[t]
            for l in range(mb):
                XR[0, l] = Tqq[c, ob + l, k]
                XR[1, l] = Tqv[c, ob + l, k]
                XR[2, l] = Tvv[c, ob + l, k]
                XR[3, l] = dMc[c, ob + l, k]
            for j in range(mb):
                s1 = zero
                s2 = zero
                s3 = zero
                s4 = zero
                for l in range(mb):
                    a_ = A[b, l, j]
                    p_ = P[b, l, j]
                    s1 += XR[0, l] * a_ + DTv[b, l, k] * p_ + XR[3, l] * R[b, l, j]
                    s2 += XR[1, l] * a_ + VTv[b, l, k] * p_
                    s3 += XR[2, l] * a_
                    s4 += XR[3, l] * a_
                Tqq[c, ob + j, k] = s1
                Tqv[c, ob + j, k] = s2
                Tvv[c, ob + j, k] = s3
                dMc[c, ob + j, k] = s4
        if nr:
            _block_terms(c, b, ob, mb, dA, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, zero)


@njit(cache=True, fastmath=_ORDERED, inline="always")
def _block_terms(c, b, ob, mb, dA, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, zero):
    """The j pass's terms of the map's derivatives, on the entries ``T[c, ob + j, ob + kk]`` of block b."""
    for j in range(mb):
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
            Tqq[c, ob + j, ob + kk] += z1
            Tqv[c, ob + j, ob + kk] += z2
            Tvv[c, ob + j, ob + kk] += z3
            dMc[c, ob + j, ob + kk] += z4


@njit(cache=True, fastmath=_ORDERED, inline="always")
def _slab_kj3(c, rel, o, ms, A, dA, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, W, IX, NR, zero):
    """:func:`_slab_kj` for blocks padded to M = 3 (free joints in exponential coordinates, spherical, planar and
    universal joints): the block's sums written out, so that the twelve outputs of a row (k pass) or a column (j
    pass) are independent chains the processor overlaps, rather than the short dependent loops of the generic
    version.  Entries beyond a block of fewer than three DOFs are neither read nor written (read as ``zero``)."""
    _prelude(c, rel, o, ms, A, P, Tvv, Tqv, dMc, W, IX, NR, zero)
    DTv, VTv, dM1 = W[0], W[1], W[2]
    for b in range(o.shape[0]):
        nr = NR[b]
        if nr == 0:
            continue
        ob, mb = o[b], ms[b]
        ix = IX[b]
        a00, a01, a02, a10, a11, a12, a20, a21, a22 = _m3(A[b])
        p00, p01, p02, p10, p11, p12, p20, p21, p22 = _m3(P[b])
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = _m3(R[b])
        g00, g01, g02, g10, g11, g12, g20, g21, g22 = _m3(G[b])
        for t in range(nr):  # k pass, row l: T[c, l, ob + k] = sum_m T[c, l, ob + m] A[m, k] + ...
            l = ix[t]
            x0, x1, x2 = _get3(Tqq, c, l, ob, mb, zero)
            y0, y1, y2 = _get3(Tqv, c, l, ob, mb, zero)
            v0, v1, v2 = _get3(Tvv, c, l, ob, mb, zero)
            w0, w1, w2 = _get3(dMc, c, l, ob, mb, zero)
            d0 = dM1[b, 0, t]
            d1 = dM1[b, 1, t]
            d2 = dM1[b, 2, t]
            _set3(Tqq, c, l, ob, mb,
                  x0 * a00 + x1 * a10 + x2 * a20 + y0 * p00 + y1 * p10 + y2 * p20 + d0 * r00 + d1 * r10 + d2 * r20,
                  x0 * a01 + x1 * a11 + x2 * a21 + y0 * p01 + y1 * p11 + y2 * p21 + d0 * r01 + d1 * r11 + d2 * r21,
                  x0 * a02 + x1 * a12 + x2 * a22 + y0 * p02 + y1 * p12 + y2 * p22 + d0 * r02 + d1 * r12 + d2 * r22)
            _set3(Tqv, c, l, ob, mb,
                  y0 * a00 + y1 * a10 + y2 * a20 + d0 * g00 + d1 * g10 + d2 * g20,
                  y0 * a01 + y1 * a11 + y2 * a21 + d0 * g01 + d1 * g11 + d2 * g21,
                  y0 * a02 + y1 * a12 + y2 * a22 + d0 * g02 + d1 * g12 + d2 * g22)
            _set3(Tvv, c, l, ob, mb, v0 * a00 + v1 * a10 + v2 * a20, v0 * a01 + v1 * a11 + v2 * a21,
                  v0 * a02 + v1 * a12 + v2 * a22)
            _set3(dMc, c, l, ob, mb, w0 * a00 + w1 * a10 + w2 * a20, w0 * a01 + w1 * a11 + w2 * a21,
                  w0 * a02 + w1 * a12 + w2 * a22)
    for b in range(o.shape[0]):
        nr = NR[b]
        if nr == 0:
            continue
        ob, mb = o[b], ms[b]
        ix = IX[b]
        a00, a01, a02, a10, a11, a12, a20, a21, a22 = _m3(A[b])
        p00, p01, p02, p10, p11, p12, p20, p21, p22 = _m3(P[b])
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = _m3(R[b])
        Sq = Tqq[c, ob:ob + mb]  # the block's rows of slab c
        Sqv = Tqv[c, ob:ob + mb]
        Svv = Tvv[c, ob:ob + mb]
        SM = dMc[c, ob:ob + mb]
        for t in range(nr):  # j pass, column k: T[c, ob + j, k] = sum_l A[l, j] T[c, ob + l, k] + ...
            k = ix[t]
            x0, x1, x2 = _col3(Sq, k, mb, zero)
            y0, y1, y2 = _col3(Sqv, k, mb, zero)
            v0, v1, v2 = _col3(Svv, k, mb, zero)
            w0, w1, w2 = _col3(SM, k, mb, zero)
            D0 = DTv[b, 0, k]
            D1 = DTv[b, 1, k]
            D2 = DTv[b, 2, k]
            V0 = VTv[b, 0, k]
            V1 = VTv[b, 1, k]
            V2 = VTv[b, 2, k]
            _setcol3(Sq, k, mb,
                     x0 * a00 + x1 * a10 + x2 * a20 + D0 * p00 + D1 * p10 + D2 * p20 + w0 * r00 + w1 * r10 + w2 * r20,
                     x0 * a01 + x1 * a11 + x2 * a21 + D0 * p01 + D1 * p11 + D2 * p21 + w0 * r01 + w1 * r11 + w2 * r21,
                     x0 * a02 + x1 * a12 + x2 * a22 + D0 * p02 + D1 * p12 + D2 * p22 + w0 * r02 + w1 * r12 + w2 * r22)
            _setcol3(Sqv, k, mb,
                     y0 * a00 + y1 * a10 + y2 * a20 + V0 * p00 + V1 * p10 + V2 * p20,
                     y0 * a01 + y1 * a11 + y2 * a21 + V0 * p01 + V1 * p11 + V2 * p21,
                     y0 * a02 + y1 * a12 + y2 * a22 + V0 * p02 + V1 * p12 + V2 * p22)
            _setcol3(Svv, k, mb, v0 * a00 + v1 * a10 + v2 * a20, v0 * a01 + v1 * a11 + v2 * a21,
                     v0 * a02 + v1 * a12 + v2 * a22)
            _setcol3(SM, k, mb, w0 * a00 + w1 * a10 + w2 * a20, w0 * a01 + w1 * a11 + w2 * a21,
                     w0 * a02 + w1 * a12 + w2 * a22)
        _block_terms(c, b, ob, mb, dA, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, zero)


@njit(cache=True, fastmath=_ORDERED, inline="always")
def _m3(B):
    """The nine entries of a 3 x 3 block, row by row."""
    return B[0, 0], B[0, 1], B[0, 2], B[1, 0], B[1, 1], B[1, 2], B[2, 0], B[2, 1], B[2, 2]


@njit(cache=True, fastmath=_ORDERED, inline="always")
def _get3(T, c, l, ob, mb, zero):
    """``T[c, l, ob:ob + 3]``, ``zero`` beyond the block's ``mb`` entries (indexed in place: no view)."""
    return T[c, l, ob], T[c, l, ob + 1] if mb > 1 else zero, T[c, l, ob + 2] if mb > 2 else zero


@njit(cache=True, fastmath=_ORDERED, inline="always")
def _set3(T, c, l, ob, mb, e0, e1, e2):
    """``T[c, l, ob:ob + mb] = (e0, e1, e2)[:mb]``."""
    T[c, l, ob] = e0
    if mb > 1:
        T[c, l, ob + 1] = e1
    if mb > 2:
        T[c, l, ob + 2] = e2


@njit(cache=True, fastmath=_ORDERED, inline="always")
def _col3(S, k, mb, zero):
    """``S[:3, k]`` of the (mb, n) rows ``S``, ``zero`` beyond them."""
    return S[0, k], S[1, k] if mb > 1 else zero, S[2, k] if mb > 2 else zero


@njit(cache=True, fastmath=_ORDERED, inline="always")
def _setcol3(S, k, mb, e0, e1, e2):
    """``S[:mb, k] = (e0, e1, e2)[:mb]``."""
    S[0, k] = e0
    if mb > 1:
        S[1, k] = e1
    if mb > 2:
        S[2, k] = e2


@njit(cache=True, fastmath=FAST)
def _block_rows(o, ms, blk, A, P, R, G, Tq, Tv, Mc):
    """(Y, Yd, MA), each (nblk, M, n): per block b the rows ``ob + c`` of ``Y = T_q A + T_v P + M_c R``,
    ``Yd = T_v A + M_c G`` and ``M_c A`` (:mod:`.second_order_chain`), which the i pass reads."""
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


@njit(cache=True, fastmath=FAST, inline="always")
def _row_i(j, rel, o, ms, blk, A, dA, d2A, Y, Yd, MA, tau, Tqq, Tvv, Tqv, dMc, XR, ix, zero):
    """Row j (second index) through the i pass (axis 0) of every block related to DOF j: ``T[ob + i, j, k]`` for
    the k related to both j and ob (``ix`` (n,) int64 scratch), column by column from ``T[ob:ob + mb, j, k]`` (into
    the scratch ``XR`` (4, M)) and the rows of :func:`_block_rows`, as in :func:`_slab_kj`."""
    nblk = o.shape[0]
    for b in range(nblk):
        ob, mb = o[b], ms[b]
        if not rel[j, ob]:  # the block's rows in column j are zero
            continue
        nr = _related(rel, j, ob, ix)
        jin = blk[j] == b
        jj = j - ob if jin else 0
        for t in range(nr):
            k = ix[t]
            for c in range(mb):
                XR[0, c] = Tqq[ob + c, j, k]
                XR[1, c] = Tqv[ob + c, j, k]
                XR[2, c] = Tvv[ob + c, j, k]
                XR[3, c] = dMc[ob + c, j, k]
            for i in range(mb):
                s1 = zero
                s2 = zero
                s3 = zero
                s4 = zero
                for c in range(mb):
                    a_ = A[b, c, i]
                    s1 += a_ * XR[0, c]
                    s2 += a_ * XR[1, c]
                    s3 += a_ * XR[2, c]
                    s4 += a_ * XR[3, c]
                    if jin:
                        d_ = dA[b, c, i, jj]
                        s1 += d_ * Y[b, c, k]
                        s2 += d_ * Yd[b, c, k]
                Tqq[ob + i, j, k] = s1
                Tqv[ob + i, j, k] = s2
                Tvv[ob + i, j, k] = s3
                dMc[ob + i, j, k] = s4
        _row_block_terms(j, b, ob, mb, jin, jj, dA, d2A, Y, MA, tau, Tqq, dMc, zero)


@njit(cache=True, fastmath=_ORDERED, inline="always")
def _row_block_terms(j, b, ob, mb, jin, jj, dA, d2A, Y, MA, tau, Tqq, dMc, zero):
    """The i pass's terms of the map's derivatives, on the entries ``T[ob + i, j, ob + kk]`` of block b."""
    for i in range(mb):
        for kk in range(mb):  # k = ob + kk in the block
            w1 = zero
            w4 = zero
            for c in range(mb):
                w1 += dA[b, c, i, kk] * Y[b, c, j]
                w4 += dA[b, c, i, kk] * MA[b, c, j]
                if jin:
                    w1 += d2A[b, c, i, jj, kk] * tau[ob + c]
            Tqq[ob + i, j, ob + kk] += w1
            dMc[ob + i, j, ob + kk] += w4


@njit(cache=True, fastmath=_ORDERED, inline="always")
def _row_i3(j, rel, o, ms, blk, A, dA, d2A, Y, Yd, MA, tau, Tqq, Tvv, Tqv, dMc, ix, zero):
    """:func:`_row_i` for blocks padded to M = 3, its sums written out as in :func:`_slab_kj3` (the terms of the
    map's derivative ``dA[b, c, i, j - ob]``, when j lies in the block, with coefficients zero otherwise)."""
    for b in range(o.shape[0]):
        ob, mb = o[b], ms[b]
        if not rel[j, ob]:  # the block's rows in column j are zero
            continue
        nr = _related(rel, j, ob, ix)
        jin = blk[j] == b
        jj = j - ob if jin else 0
        a00, a01, a02, a10, a11, a12, a20, a21, a22 = _m3(A[b])
        e00 = e01 = e02 = e10 = e11 = e12 = e20 = e21 = e22 = zero
        if jin:
            e00, e01, e02, e10, e11, e12, e20, e21, e22 = _m3(dA[b, :, :, jj])
        Sq = Tqq[ob:ob + mb, j]  # rows (ob + c, j) of the block
        Sqv = Tqv[ob:ob + mb, j]
        Svv = Tvv[ob:ob + mb, j]
        SM = dMc[ob:ob + mb, j]
        Yb = Y[b]
        Ydb = Yd[b]
        for t in range(nr):  # column k: T[ob + i, j, k] = sum_c A[c, i] T[ob + c, j, k] + dA[c, i, jj] Y[c, k]
            k = ix[t]
            x0, x1, x2 = _col3(Sq, k, mb, zero)
            y0, y1, y2 = _col3(Sqv, k, mb, zero)
            v0, v1, v2 = _col3(Svv, k, mb, zero)
            w0, w1, w2 = _col3(SM, k, mb, zero)
            Y0 = Yb[0, k]
            Y1 = Yb[1, k]
            Y2 = Yb[2, k]
            U0 = Ydb[0, k]
            U1 = Ydb[1, k]
            U2 = Ydb[2, k]
            _setcol3(Sq, k, mb,
                     a00 * x0 + a10 * x1 + a20 * x2 + e00 * Y0 + e10 * Y1 + e20 * Y2,
                     a01 * x0 + a11 * x1 + a21 * x2 + e01 * Y0 + e11 * Y1 + e21 * Y2,
                     a02 * x0 + a12 * x1 + a22 * x2 + e02 * Y0 + e12 * Y1 + e22 * Y2)
            _setcol3(Sqv, k, mb,
                     a00 * y0 + a10 * y1 + a20 * y2 + e00 * U0 + e10 * U1 + e20 * U2,
                     a01 * y0 + a11 * y1 + a21 * y2 + e01 * U0 + e11 * U1 + e21 * U2,
                     a02 * y0 + a12 * y1 + a22 * y2 + e02 * U0 + e12 * U1 + e22 * U2)
            _setcol3(Svv, k, mb, a00 * v0 + a10 * v1 + a20 * v2, a01 * v0 + a11 * v1 + a21 * v2,
                     a02 * v0 + a12 * v1 + a22 * v2)
            _setcol3(SM, k, mb, a00 * w0 + a10 * w1 + a20 * w2, a01 * w0 + a11 * w1 + a21 * w2,
                     a02 * w0 + a12 * w1 + a22 * w2)
        _row_block_terms(j, b, ob, mb, jin, jj, dA, d2A, Y, MA, tau, Tqq, dMc, zero)


@njit(cache=True)
def zero_block_terms(o, ms, cj, rel, dM):
    """Zero the entries of dM that the walk leaves (zero) and the chain rule adds the map's derivative to:
    ``dM[c, ob + j, ob + k]`` and ``dM[ob + j, c, ob + k]`` for the c related to block b (offset ob, size m) where
    the core joint of DOF ``ob + k`` is above (or the same as) those of both c and ``ob + j`` (``cj``: (n,) core
    joint of every DOF; module docstring).  Entry by entry: a block may span several core joints (a composite
    joint), and the walk writes the entries of its later joints' DOFs k below an earlier joint's c or j."""
    n = dM.shape[0]
    for b in range(o.shape[0]):
        ob, mb = o[b], ms[b]
        for c in range(n):
            if not rel[c, ob]:
                continue
            for j in range(mb):
                low = min(cj[c], cj[ob + j])
                for k in range(mb):
                    if cj[ob + k] <= low:
                        dM[c, ob + j, ob + k] = 0.0
                        dM[ob + j, c, ob + k] = 0.0


@njit(cache=True, inline="always")
def _put_blocks(T, rel, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, tau, Y,
                Yd, MA, nchunks):
    """The table of the slab and row chunk functions (:func:`_take_blocks`)."""
    k = put(T, 0, rel)
    for a in (o, ms, blk):
        k = put(T, k, a)
    for a in (A, P, R, G):
        k = put(T, k, a)
    for a in (dA, Pq, Pv, Gv, Rv, Rq):
        k = put(T, k, a)
    k = put(T, k, d2A)
    for a in (Tq, Tv, Mc):
        k = put(T, k, a)
    for a in (Tqq, Tvv, Tqv, dMc, Y, Yd, MA):
        k = put(T, k, a)
    k = put(T, k, tau)
    T[k] = nchunks


@njit(cache=True, inline="always")
def _take_blocks(ctx):
    T = table_of(ctx, SUB_TABLE)
    rel, k = take2(T, 0, np.uint8)
    o, k = take1(T, k, np.int64)
    ms, k = take1(T, k, np.int64)
    blk, k = take1(T, k, np.int64)
    A, k = take3(T, k, np.float64)
    P, k = take3(T, k, np.float64)
    R, k = take3(T, k, np.float64)
    G, k = take3(T, k, np.float64)
    dA, k = take4(T, k, np.float64)
    Pq, k = take4(T, k, np.float64)
    Pv, k = take4(T, k, np.float64)
    Gv, k = take4(T, k, np.float64)
    Rv, k = take4(T, k, np.float64)
    Rq, k = take4(T, k, np.float64)
    d2A, k = take5(T, k, np.float64)
    Tq, k = take2(T, k, np.float64)
    Tv, k = take2(T, k, np.float64)
    Mc, k = take2(T, k, np.float64)
    Tqq, k = take3(T, k, np.float64)
    Tvv, k = take3(T, k, np.float64)
    Tqv, k = take3(T, k, np.float64)
    dMc, k = take3(T, k, np.float64)
    Y, k = take3(T, k, np.float64)
    Yd, k = take3(T, k, np.float64)
    MA, k = take3(T, k, np.float64)
    tau, k = take1(T, k, np.float64)
    return (rel, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, Y, Yd, MA,
            tau, T[k])


@njit(cache=True, inline="always")
def _span(c, n, nchunks):
    return c * n // nchunks, (c + 1) * n // nchunks


@chunk_function(fastmath=_ORDERED)
def SLAB3_CHUNK(ctx, c):
    """Chunk c of the slabs (k and j passes) for blocks padded to three DOFs (:func:`_slab_kj3`)."""
    (rel, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, Y, Yd, MA, tau,
     nchunks) = _take_blocks(ctx)
    n = Tqq.shape[0]
    nblk = o.shape[0]
    M = A.shape[1]
    W = np.empty((3, nblk, M, n))
    IX = np.empty((nblk, n), dtype=np.int64)
    NR = np.empty(nblk, dtype=np.int64)
    lo, hi = _span(c, n, nchunks)
    for s in range(lo, hi):
        _slab_kj3(s, rel, o, ms, A, dA, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, W, IX, NR, 0.0)


@chunk_function(fastmath=_ORDERED)
def SLAB_CHUNK(ctx, c):
    """Chunk c of the slabs (k and j passes) for blocks of any size (:func:`_slab_kj`)."""
    (rel, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, Y, Yd, MA, tau,
     nchunks) = _take_blocks(ctx)
    n = Tqq.shape[0]
    nblk = o.shape[0]
    M = A.shape[1]
    W = np.empty((3, nblk, M, n))
    XR = np.empty((4, M))
    IX = np.empty((nblk, n), dtype=np.int64)
    NR = np.empty(nblk, dtype=np.int64)
    lo, hi = _span(c, n, nchunks)
    for s in range(lo, hi):
        _slab_kj(s, rel, o, ms, A, dA, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, W, XR, IX, NR,
                 0.0)


@chunk_function(fastmath=_ORDERED)
def ROW3_CHUNK(ctx, c):
    """Chunk c of the rows (i pass) for blocks padded to three DOFs (:func:`_row_i3`)."""
    (rel, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, Y, Yd, MA, tau,
     nchunks) = _take_blocks(ctx)
    n = Tqq.shape[0]
    ix = np.empty(n, dtype=np.int64)
    lo, hi = _span(c, n, nchunks)
    for j in range(lo, hi):
        _row_i3(j, rel, o, ms, blk, A, dA, d2A, Y, Yd, MA, tau, Tqq, Tvv, Tqv, dMc, ix, 0.0)


@chunk_function(fastmath=_ORDERED)
def ROW_CHUNK(ctx, c):
    """Chunk c of the rows (i pass) for blocks of any size (:func:`_row_i`)."""
    (rel, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, Y, Yd, MA, tau,
     nchunks) = _take_blocks(ctx)
    n = Tqq.shape[0]
    XR = np.empty((4, A.shape[1]))
    ix = np.empty(n, dtype=np.int64)
    lo, hi = _span(c, n, nchunks)
    for j in range(lo, hi):
        _row_i(j, rel, o, ms, blk, A, dA, d2A, Y, Yd, MA, tau, Tqq, Tvv, Tqv, dMc, XR, ix, 0.0)


@njit(cache=True, fastmath=_ORDERED)
def chain_in_place(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, ctl, helpers,
                   nchunks, slab_fn, row_fn, T):
    """The chain rule in place on the core tensors ``Tqq, Tvv, Tqv, dMc`` (= d2q, d2v, d2qv, dM; float64, entries
    of unrelated triples read as zero and left as they are): the blocks' map data (:func:`.second_order_chain.blocks`),
    :func:`zero_block_terms`, the slabs (``nchunks`` chunks of ``slab_fn``), the rows the i pass reads, the rows
    (chunks of ``row_fn``), on ``helpers`` of the pool's workers besides the calling thread (``T``: a table of
    ``TABLE`` entries)."""
    nblk, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq = blocks(Ii, Ff, CI, q, qd, qdd, jstate, tangent)
    nb = Ii[0]
    rel = related_dofs(CI, nb)
    n = Tqq.shape[0]
    cj = _core_joints(CI, nb, n)
    zero_block_terms(o, ms, cj, rel, dMc)
    Y = np.empty((nblk, A.shape[1], n))
    nchunks = min(n, nchunks)
    _put_blocks(T, rel, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, tau, Y,
                Y, Y, nchunks)
    pool_run(ctl, slab_fn, T.ctypes.data, nchunks, helpers)
    Y, Yd, MA = _block_rows(o, ms, blk, A, P, R, G, Tq, Tv, Mc)
    _put_blocks(T, rel, o, ms, blk, A, dA, d2A, P, R, G, Pq, Pv, Gv, Rv, Rq, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, tau, Y,
                Yd, MA, nchunks)
    pool_run(ctl, row_fn, T.ctypes.data, nchunks, helpers)
    return (alive(o) + alive(ms) + alive(blk) + alive(A) + alive(dA) + alive(d2A) + alive(P) + alive(R) + alive(G)
            + alive(Pq) + alive(Pv) + alive(Gv) + alive(Rv) + alive(Rq) + alive(rel) + alive(Y) + alive(Yd)
            + alive(MA))


@njit(cache=True)
def _core_joints(CI, nb, n):
    """(n,) the core joint of every core DOF."""
    o_co = core_offsets(CI, nb)[7]
    cj = np.empty(n, dtype=np.int64)
    for j in range(CI[0]):
        for d in range(CI[o_co + j], CI[o_co + j + 1]):
            cj[d] = j
    return cj


@chunk_function(fastmath=_ORDERED)
def IN_PLACE_CHUNK(ctx, c):
    """The in-place chain rule (:func:`chain_in_place`) as a chunk function of one chunk, run on the calling
    thread: its own slabs and rows go to the pool (``fns[0]``, ``fns[1]``: the slab and row chunk functions)."""
    (Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, D2q, D2v, D2qv, DM, ctl, helpers,
     nchunks, fns, sub, status) = take_chain(ctx)
    try:
        chain_in_place(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, Tqq, Tvv, Tqv, dMc, ctl, helpers,
                       nchunks, fns[0], fns[1], sub)
    except Exception:  # (a singular joint map: the caller raises)
        status[0] = 1
