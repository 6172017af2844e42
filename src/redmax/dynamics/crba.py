"""Composite rigid-body algorithm: the joint-space inertia matrix M(q) = J^T Mm J in O(n d).

World frame (see ``_world``): composite inertias are sums, ``Ic_p += Ic_i``; for each joint the force
``F = Ic_i S_i`` gives ``M[j, i] = S_j^T F`` for i and each of its ancestors j (Featherstone's CRBA).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from redmax.dynamics._packed import offsets
from redmax.dynamics._world import world_pass


@njit(cache=True)
def crba_kernel(Ii, Ff, q, jstate):
    """Joint-space inertia matrix (n, n), exactly symmetric."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    if q.shape[0] != n or jstate.shape[0] != nb:
        raise ValueError("size")
    for k in range(n):
        if not np.isfinite(q[k]):
            raise ValueError("nonfinite")
    wR = 0
    wp = 9 * nb
    wI = 12 * nb
    wS = 48 * nb
    wF = wS + 6 * n
    scr = wF + 36
    W = np.empty(scr + 60, dtype=q.dtype)
    world_pass(Ii, Ff, q, jstate, W, wR, wp, wS, wI, scr)
    for i in range(nb - 1, 0, -1):
        par = Ii[o_par + i]
        if par >= 0:
            for k in range(36):
                W[wI + 36 * par + k] += W[wI + 36 * i + k]
    M = np.zeros((n, n), dtype=q.dtype)  # uncoupled pairs (different branches) stay zero
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        I0 = wI + 36 * i
        for d in range(a, b):  # F = Ic S (6 per dof)
            for k in range(6):
                s = 0.0
                for l in range(6):
                    s += W[I0 + 6 * k + l] * W[wS + 6 * d + l]
                W[wF + 6 * (d - a) + k] = s
        for d in range(a, b):
            for e in range(a, d + 1):
                s = 0.0
                for k in range(6):
                    s += W[wS + 6 * e + k] * W[wF + 6 * (d - a) + k]
                M[d, e] = s
                M[e, d] = s
        j = Ii[o_par + i]
        while j >= 0:
            c = Ii[o_idx + j]
            e2 = Ii[o_idx + j + 1]
            for e in range(c, e2):
                for d in range(a, b):
                    s = 0.0
                    for k in range(6):
                        s += W[wS + 6 * e + k] * W[wF + 6 * (d - a) + k]
                    M[e, d] = s
                    M[d, e] = s
            j = Ii[o_par + j]
    return M
