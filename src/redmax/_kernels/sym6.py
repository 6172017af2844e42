"""Symmetric 6x6 matrices (articulated inertias) stored packed: the 21 entries of the upper triangle,
row by row (``(0,0), (0,1), ..., (0,5), (1,1), ..., (5,5)``)."""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax._kernels.registers import get6

# SYM[k, l]: position of entry (k, l) (either triangle) in the packed storage
SYM = np.zeros((6, 6), dtype=np.int64)
_t = 0
for _k in range(6):
    for _l in range(_k, 6):
        SYM[_k, _l] = _t
        SYM[_l, _k] = _t
        _t += 1
# row and column of each packed entry
PK = np.array([k for k in range(6) for _ in range(k, 6)], dtype=np.int64)
PL = np.array([l for k in range(6) for l in range(k, 6)], dtype=np.int64)


@njit(cache=True, fastmath=FAST)
def sym_from_compact(W, I, dst):
    """Packed 6x6 of the compact inertia W[I:I+10] (see ``_world``) into W[dst:dst+21].

    The helpers of this module index views with literal offsets: Numba wraps negative indices, and
    only a literal (or unsigned) index lets LLVM drop that check, which makes these helpers measurably faster."""
    c = W[I:I + 10]
    o = W[dst:dst + 21]
    m, h0, h1, h2 = c[0], c[1], c[2], c[3]
    # row 0: I00 I01 I02 | [h] row 0 = (0, -h2, h1)
    o[0] = c[4]
    o[1] = c[5]
    o[2] = c[6]
    o[3] = 0.0
    o[4] = -h2
    o[5] = h1
    # row 1: I11 I12 | (h2, 0, -h0)
    o[6] = c[7]
    o[7] = c[8]
    o[8] = h2
    o[9] = 0.0
    o[10] = -h0
    # row 2: I22 | (-h1, h0, 0)
    o[11] = c[9]
    o[12] = -h1
    o[13] = h0
    o[14] = 0.0
    # rows 3-5: m 1
    o[15] = m
    o[16] = 0.0
    o[17] = 0.0
    o[18] = m
    o[19] = 0.0
    o[20] = m


@njit(cache=True, fastmath=FAST)
def sym_matvec(W, P, src, dst):
    """W[dst:dst+6] = P W[src:src+6] for the packed symmetric W[P:P+21]."""
    p = W[P:P + 21]
    x0, x1, x2, x3, x4, x5 = get6(W, src)
    y = W[dst:dst + 6]
    y[0] = p[0] * x0 + p[1] * x1 + p[2] * x2 + p[3] * x3 + p[4] * x4 + p[5] * x5
    y[1] = p[1] * x0 + p[6] * x1 + p[7] * x2 + p[8] * x3 + p[9] * x4 + p[10] * x5
    y[2] = p[2] * x0 + p[7] * x1 + p[11] * x2 + p[12] * x3 + p[13] * x4 + p[14] * x5
    y[3] = p[3] * x0 + p[8] * x1 + p[12] * x2 + p[15] * x3 + p[16] * x4 + p[17] * x5
    y[4] = p[4] * x0 + p[9] * x1 + p[13] * x2 + p[16] * x3 + p[18] * x4 + p[19] * x5
    y[5] = p[5] * x0 + p[10] * x1 + p[14] * x2 + p[17] * x3 + p[19] * x4 + p[20] * x5


@njit(cache=True, fastmath=FAST)
def sym_add_articulated(W, dst, P, U, Dinv, nj):
    """W[dst] += P - U Dinv U^T (all packed 21; U = nj columns of 6 at W[U + 6 r], Dinv nj x nj)."""
    o = W[dst:dst + 21]
    p = W[P:P + 21]
    if nj == 1:
        d = W[Dinv]
        u0, u1, u2, u3, u4, u5 = get6(W, U)
        o[0] += p[0] - d * u0 * u0
        o[1] += p[1] - d * u0 * u1
        o[2] += p[2] - d * u0 * u2
        o[3] += p[3] - d * u0 * u3
        o[4] += p[4] - d * u0 * u4
        o[5] += p[5] - d * u0 * u5
        o[6] += p[6] - d * u1 * u1
        o[7] += p[7] - d * u1 * u2
        o[8] += p[8] - d * u1 * u3
        o[9] += p[9] - d * u1 * u4
        o[10] += p[10] - d * u1 * u5
        o[11] += p[11] - d * u2 * u2
        o[12] += p[12] - d * u2 * u3
        o[13] += p[13] - d * u2 * u4
        o[14] += p[14] - d * u2 * u5
        o[15] += p[15] - d * u3 * u3
        o[16] += p[16] - d * u3 * u4
        o[17] += p[17] - d * u3 * u5
        o[18] += p[18] - d * u4 * u4
        o[19] += p[19] - d * u4 * u5
        o[20] += p[20] - d * u5 * u5
        return
    for t in range(21):
        o[t] += p[t]
    for r1 in range(nj):
        for c1 in range(nj):
            d = W[Dinv + nj * r1 + c1]
            for t in range(21):
                o[t] -= d * W[U + 6 * r1 + PK[t]] * W[U + 6 * c1 + PL[t]]


@njit(cache=True, fastmath=FAST)
def sym_add(W, dst, P):
    """W[dst:dst+21] += W[P:P+21]."""
    o = W[dst:dst + 21]
    p = W[P:P + 21]
    for t in range(21):
        o[t] += p[t]
