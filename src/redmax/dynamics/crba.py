"""Composite rigid-body algorithm: the joint-space inertia matrix M(q) = J^T Mm J in O(n d).

World frame (see ``_world``): composite inertias are sums of the compact 10-number inertias,
``Ic_p += Ic_i``; for each joint the force ``F = Ic_i S_i`` gives ``M[j, i] = S_j^T F`` for i and each
of its ancestors j (Featherstone's CRBA).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax._kernels.registers import dot6, get6
from redmax.dynamics._world_pass import inertia_apply, inertia_times, world_pass
from redmax.dynamics.rnea import check_positions
from redmax.model.layout import armature_offset, initial_jstate, offsets


def crba_work_size(nb: int, n: int) -> int:
    """Length of the workspace :func:`crba_into` needs."""
    return 22 * nb + 6 * n + 96


@njit(cache=True, fastmath=FAST, inline="always")  # a thin wrapper: no compile level of its own
def crba_kernel(Ii, Ff, q, jstate):
    """Joint-space inertia matrix (n, n), exactly symmetric (armature on the diagonal)."""
    check_positions(Ii, q, jstate)
    W = np.empty(22 * Ii[0] + 6 * Ii[1] + 96, dtype=q.dtype)
    M = np.zeros((Ii[1], Ii[1]), dtype=q.dtype)
    crba_into(Ii, Ff, q, jstate, W, M)
    return M


@njit(cache=True, fastmath=FAST, inline="always")  # each entry compiles it once: no level of its own
def crba_into(Ii, Ff, q, jstate, W, M):
    """:func:`crba_kernel` on a caller's workspace ``W`` (>= :func:`crba_work_size`) into ``M`` (n, n), which
    must be zero on entry (entries of joints on different branches are not written)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    wR = 0
    wp = 9 * nb
    wI = 12 * nb
    wS = 22 * nb
    wF = wS + 6 * n
    scr = wF + 36
    world_pass(Ii, Ff, q, q, jstate, W, wR, wp, wS, wI, -1, scr)
    for i in range(nb - 1, 0, -1):
        par = Ii[o_par + i]
        if par >= 0:
            dst = W[wI + 10 * par:wI + 10 * par + 10]
            src = W[wI + 10 * i:wI + 10 * i + 10]
            for k in range(10):
                dst[k] += src[k]
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        if b - a == 1:  # the common case, in registers: F = Ic S, then M[j, a] = S_j^T F up the path
            w0, w1, w2, v0, v1, v2 = get6(W, wS + 6 * a)
            f0, f1, f2, f3, f4, f5 = inertia_times(W, wI + 10 * i, w0, w1, w2, v0, v1, v2)
            j = i
            while j >= 0:
                for e in range(Ii[o_idx + j], Ii[o_idx + j + 1]):
                    s0, s1, s2, s3, s4, s5 = get6(W, wS + 6 * e)
                    v = s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5
                    M[e, a] = v
                    M[a, e] = v
                j = Ii[o_par + j]
            continue
        for d in range(a, b):  # F = Ic S
            inertia_apply(W, wI + 10 * i, wS + 6 * d, wF + 6 * (d - a))
        for d in range(a, b):
            for e in range(a, d + 1):
                s = dot6(W, wS + 6 * e, wF + 6 * (d - a))
                M[d, e] = s
                M[e, d] = s
        j = Ii[o_par + i]
        while j >= 0:
            for e in range(Ii[o_idx + j], Ii[o_idx + j + 1]):
                for d in range(a, b):
                    s = dot6(W, wS + 6 * e, wF + 6 * (d - a))
                    M[e, d] = s
                    M[d, e] = s
            j = Ii[o_par + j]
    fa = armature_offset(Ii)
    for d in range(n):
        M[d, d] += Ff[fa + d]


@njit(cache=True, fastmath=FAST, inline="always")  # a thin wrapper: no compile level of its own
def crba_out(Ii, Ff, q, M):
    """:func:`crba_plain` into a caller's ``M`` (n, n) (``out=``: no result allocation, nothing returned)."""
    js = initial_jstate(Ii)
    check_positions(Ii, q, js)
    n = Ii[1]
    if M.shape[0] != n or M.shape[1] != n:
        raise ValueError("size")
    for r in range(n):
        for c in range(n):
            M[r, c] = 0.0
    W = np.empty(22 * Ii[0] + 6 * n + 96)
    crba_into(Ii, Ff, q, js, W, M)


@njit(cache=True, fastmath=FAST)
def crba_plain(Ii, Ff, q):
    """:func:`crba_kernel` at the initial charts (the fast path)."""
    return crba_kernel(Ii, Ff, q, initial_jstate(Ii))
