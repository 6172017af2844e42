"""Symmetric 6x6 matrices (articulated inertias) stored packed: the 21 entries of the upper triangle,
row by row (``(0,0), (0,1), ..., (0,5), (1,1), ..., (5,5)``)."""

from __future__ import annotations

import numpy as np
from numba import njit

from redmax.dynamics._packed import FAST

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
    """Packed 6x6 of the compact inertia W[I:I+10] (see ``_world``) into W[dst:dst+21]."""
    m = W[I]
    h0 = W[I + 1]
    h1 = W[I + 2]
    h2 = W[I + 3]
    # row 0: I00 I01 I02 | [h] row 0 = (0, -h2, h1)
    W[dst] = W[I + 4]
    W[dst + 1] = W[I + 5]
    W[dst + 2] = W[I + 6]
    W[dst + 3] = 0.0
    W[dst + 4] = -h2
    W[dst + 5] = h1
    # row 1: I11 I12 | (h2, 0, -h0)
    W[dst + 6] = W[I + 7]
    W[dst + 7] = W[I + 8]
    W[dst + 8] = h2
    W[dst + 9] = 0.0
    W[dst + 10] = -h0
    # row 2: I22 | (-h1, h0, 0)
    W[dst + 11] = W[I + 9]
    W[dst + 12] = -h1
    W[dst + 13] = h0
    W[dst + 14] = 0.0
    # rows 3-5: m 1
    W[dst + 15] = m
    W[dst + 16] = 0.0
    W[dst + 17] = 0.0
    W[dst + 18] = m
    W[dst + 19] = 0.0
    W[dst + 20] = m


@njit(cache=True, fastmath=FAST)
def sym_matvec(W, P, src, dst):
    """W[dst:dst+6] = P W[src:src+6] for the packed symmetric W[P:P+21]."""
    x0 = W[src]
    x1 = W[src + 1]
    x2 = W[src + 2]
    x3 = W[src + 3]
    x4 = W[src + 4]
    x5 = W[src + 5]
    W[dst] = W[P] * x0 + W[P + 1] * x1 + W[P + 2] * x2 + W[P + 3] * x3 + W[P + 4] * x4 + W[P + 5] * x5
    W[dst + 1] = W[P + 1] * x0 + W[P + 6] * x1 + W[P + 7] * x2 + W[P + 8] * x3 + W[P + 9] * x4 + W[P + 10] * x5
    W[dst + 2] = W[P + 2] * x0 + W[P + 7] * x1 + W[P + 11] * x2 + W[P + 12] * x3 + W[P + 13] * x4 + W[P + 14] * x5
    W[dst + 3] = W[P + 3] * x0 + W[P + 8] * x1 + W[P + 12] * x2 + W[P + 15] * x3 + W[P + 16] * x4 + W[P + 17] * x5
    W[dst + 4] = W[P + 4] * x0 + W[P + 9] * x1 + W[P + 13] * x2 + W[P + 16] * x3 + W[P + 18] * x4 + W[P + 19] * x5
    W[dst + 5] = W[P + 5] * x0 + W[P + 10] * x1 + W[P + 14] * x2 + W[P + 17] * x3 + W[P + 19] * x4 + W[P + 20] * x5


@njit(cache=True, fastmath=FAST)
def sym_add_articulated(W, dst, P, U, Dinv, nj):
    """W[dst] += P - U Dinv U^T (all packed 21; U = nj columns of 6 at W[U + 6 r], Dinv nj x nj)."""
    if nj == 1:
        d = W[Dinv]
        u0 = W[U]
        u1 = W[U + 1]
        u2 = W[U + 2]
        u3 = W[U + 3]
        u4 = W[U + 4]
        u5 = W[U + 5]
        W[dst] += W[P] - d * u0 * u0
        W[dst + 1] += W[P + 1] - d * u0 * u1
        W[dst + 2] += W[P + 2] - d * u0 * u2
        W[dst + 3] += W[P + 3] - d * u0 * u3
        W[dst + 4] += W[P + 4] - d * u0 * u4
        W[dst + 5] += W[P + 5] - d * u0 * u5
        W[dst + 6] += W[P + 6] - d * u1 * u1
        W[dst + 7] += W[P + 7] - d * u1 * u2
        W[dst + 8] += W[P + 8] - d * u1 * u3
        W[dst + 9] += W[P + 9] - d * u1 * u4
        W[dst + 10] += W[P + 10] - d * u1 * u5
        W[dst + 11] += W[P + 11] - d * u2 * u2
        W[dst + 12] += W[P + 12] - d * u2 * u3
        W[dst + 13] += W[P + 13] - d * u2 * u4
        W[dst + 14] += W[P + 14] - d * u2 * u5
        W[dst + 15] += W[P + 15] - d * u3 * u3
        W[dst + 16] += W[P + 16] - d * u3 * u4
        W[dst + 17] += W[P + 17] - d * u3 * u5
        W[dst + 18] += W[P + 18] - d * u4 * u4
        W[dst + 19] += W[P + 19] - d * u4 * u5
        W[dst + 20] += W[P + 20] - d * u5 * u5
        return
    for t in range(21):
        W[dst + t] += W[P + t]
    for r1 in range(nj):
        for c1 in range(nj):
            d = W[Dinv + nj * r1 + c1]
            for t in range(21):
                W[dst + t] -= d * W[U + 6 * r1 + PK[t]] * W[U + 6 * c1 + PL[t]]


@njit(cache=True, fastmath=FAST)
def sym_add(W, dst, P):
    """W[dst:dst+21] += W[P:P+21]."""
    for t in range(21):
        W[dst + t] += W[P + t]
