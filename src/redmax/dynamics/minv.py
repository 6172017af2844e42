"""Inverse joint-space inertia via recursive forward dynamics (Sueda notes §2.13, Algorithm 10).

``minv_kernel`` forms the whole M^-1 in world coordinates (see ``_world``), where articulated inertias
are plain sums: backward pass ``U = Mhat S``, ``D = S^T U``, ``Pi = Mhat - U D^-1 U^T``,
``Mhat_p += Pi``.  The right-hand-side loops of Algorithm 10 then run for all unit vectors: in the
backward loop, unit column k only lives on the path from its joint to the root (``G_j = D^-1 (e - S^T B)``,
``B += U G_j``): when every subtree's DOFs are contiguous (depth-first order, e.g. any URDF robot) one
(6, n) buffer carries all columns and each body updates its subtree's column block; otherwise each
column is carried up its path with one 6-vector.  The forward pass ``y_i = G_i - D^-1 U^T A_p``,
``A_i = A_p + S y_i`` fills the upper triangle by row segments, and symmetry the rest.  Cost
O(n d + n^2), with contiguous inner loops.

``minv_product_kernel`` solves ``(M + P) Y = X`` for a few right-hand sides in O(n) each, optionally
with the preconditioner terms ``P_r = h D_r - h^2 K_r`` (diagonal) and ``P_m`` (body blocks) of the
RedMax paper's Algorithm 1.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, U64, njit
from redmax._kernels.registers import col6, dot6, get6
from redmax._kernels.sym6 import sym_add, sym_add_articulated, sym_from_compact, sym_matvec
from redmax.dynamics._joint_transforms import joint_pass
from redmax.dynamics._world_pass import small_inverse, world_pass
from redmax.dynamics.rnea import check_positions, check_result
from redmax.model.layout import armature_offset, initial_jstate, offsets


@njit(cache=True, fastmath=FAST)
def minv_kernel(Ii, Ff, q, jstate):
    """M(q)^-1 (n, n) (armature: D = S^T Ia S + diag(armature))."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    check_positions(Ii, q, jstate)
    fa = armature_offset(Ii)
    wR = 0
    wp = 9 * nb
    wI = 12 * nb  # articulated inertias, packed symmetric (21 per body)
    wD = 48 * nb  # D^-1, 36 per body
    wS = 84 * nb  # S world, 6 per dof
    wU = wS + 6 * n  # U, 6 per dof
    wIc = wU + 6 * n  # compact inertias (10 per body)
    scr = wIc + 10 * nb
    W = np.empty(scr + 100, dtype=q.dtype)
    world_pass(Ii, Ff, q, q, jstate, W, wR, wp, wS, wIc, -1, scr)
    for i in range(nb):
        sym_from_compact(W, wIc + 10 * i, wI + 21 * i)
    size, contiguous, Minv, F = _columns_start(Ii, W)
    # 1. backward: articulated inertias U = Ia S, D^-1, Ia_p += Ia - U D^-1 U^T (packed symmetric, world
    #    frame), and, for contiguous subtrees, the unit columns of the subtree carried up in F
    for i in range(nb - 1, -1, -1):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        nj = b - a
        ia = wI + 21 * i
        di = wD + 36 * i
        for d in range(a, b):
            sym_matvec(W, ia, wS + 6 * d, wU + 6 * d)
        if nj == 1:
            W[di] = 1.0 / (dot6(W, wS + 6 * a, wU + 6 * a) + Ff[fa + a])
        elif nj > 1:
            Dm = scr
            for r1 in range(nj):
                for c1 in range(nj):
                    W[Dm + nj * r1 + c1] = dot6(W, wS + 6 * (a + r1), wU + 6 * (a + c1))
                W[Dm + nj * r1 + r1] += Ff[fa + a + r1]
            small_inverse(W, Dm, di, nj)
        if contiguous and nj == 1:
            _column_up1(W, wS, wU, di, a, Ii[o_idx + i + size[i]], n, F, Minv)
        elif contiguous and nj > 1:
            _column_block_up(W, wS, wU, di, a, b, Ii[o_idx + i + size[i]], n, F, Minv)
        par = Ii[o_par + i]
        if par >= 0:
            if nj > 0:
                sym_add_articulated(W, wI + 21 * par, ia, wU + 6 * a, di, nj)
            else:
                sym_add(W, wI + 21 * par, ia)
    return _columns_finish(Ii, W, wS, wU, wD, scr, contiguous, Minv)


@njit(cache=True, fastmath=FAST)
def minv_from_articulated(Ii, W, wS, wU, wD, scr):
    """M^-1 (n, n) from the quantities of an articulated-body backward pass in the world frame (the
    right-hand-side loops of notes Alg. 10 for all unit vectors): ``W[wS + 6 d]`` S and ``W[wU + 6 d]``
    U = Ia S of DOF d (6 each), ``W[wD + 36 i]`` D^-1 of body i (nj x nj, row-major), ``W[scr:scr + 12]``
    scratch.  The M^-1 half of the fused ABA + M^-1 (:func:`redmax.dynamics.aba.aba_minv_kernel`);
    :func:`minv_kernel` runs the same column steps inside its own backward pass."""
    nb = Ii[0]
    n = Ii[1]
    o_idx = offsets(Ii).o_idx
    size, contiguous, Minv, F = _columns_start(Ii, W)
    if contiguous:
        for i in range(nb - 1, -1, -1):
            a = Ii[o_idx + i]
            b = Ii[o_idx + i + 1]
            if b - a == 1:
                _column_up1(W, wS, wU, wD + 36 * i, a, Ii[o_idx + i + size[i]], n, F, Minv)
            elif b - a > 1:
                _column_block_up(W, wS, wU, wD + 36 * i, a, b, Ii[o_idx + i + size[i]], n, F, Minv)
    return _columns_finish(Ii, W, wS, wU, wD, scr, contiguous, Minv)


@njit(cache=True)
def _columns_start(Ii, W):
    """Subtree sizes (nb,), whether subtrees are contiguous DOF ranges (:func:`_depth_first`), M^-1 (n, n)
    (uninitialised when contiguous: every upper-triangle entry is written, else zeroed) and the (6, n) buffer
    that carries the unit columns of each subtree up (empty when not contiguous)."""
    L = offsets(Ii)
    nb, n, o_par = L.nb, L.n, L.o_par
    size = np.ones(nb, dtype=np.int64)
    for i in range(nb - 1, 0, -1):
        par = Ii[o_par + i]
        if par >= 0:
            size[par] += size[i]
    contiguous = _depth_first(Ii, o_par, nb, size)
    if contiguous:
        return size, True, np.empty((n, n), dtype=W.dtype), np.zeros((6, n), dtype=W.dtype)
    return size, False, np.zeros((n, n), dtype=W.dtype), np.zeros((6, 0), dtype=W.dtype)


@njit(cache=True, fastmath=FAST)
def _columns_finish(Ii, W, wS, wU, wD, scr, contiguous, Minv):
    """The rest of M^-1 after the backward column steps: the columns carried up path by path when subtrees are
    not contiguous, the forward row sweep, the lower triangle, the finiteness check."""
    if not contiguous:
        _columns_up_by_path(Ii, W, wS, wU, wD, scr, Minv)
    _rows_down(Ii, W, wS, wU, wD, Minv)
    _fill_lower(Minv)
    check_result(Minv)
    return Minv


@njit(cache=True)
def _depth_first(Ii, o_par, nb, size):
    """True when the bodies are numbered in depth-first pre-order, i.e. every subtree i is the index range
    ``[i, i + size[i])`` (and so its DOFs are contiguous).  Pre-order visits children in increasing index
    order, so it is unique: place each body where pre-order would put it (a root after the earlier roots'
    subtrees, a child after its parent and its earlier siblings' subtrees) and compare with its index."""
    cursor = np.empty(nb, dtype=np.int64)  # next free position inside body i's range
    next_root = 0
    for j in range(nb):
        par = Ii[o_par + j]
        if par < 0:
            start = next_root
            next_root += size[j]
        else:
            start = cursor[par]
            cursor[par] += size[j]
        if start != j:
            return False
        cursor[j] = j + 1
    return True


@njit(cache=True, fastmath=FAST)
def _fill_lower(M):
    """Copy the upper triangle of the square M into its lower triangle, in 8 x 8 tiles."""
    n = M.shape[0]
    for r0 in range(0, n, 8):
        r1 = min(r0 + 8, n)
        for c0 in range(0, r0 + 1, 8):
            c1 = min(c0 + 8, n)
            for r in range(r0, r1):
                for c in range(c0, min(c1, r)):
                    M[r, c] = M[c, r]


@njit(inline="always")
def _column_up1(W, wS, wU, di, a, e, n, F, Minv):
    """:func:`_column_block_up` for a single-DOF joint (inlined into the kernel: the common case, where
    a call per body would cost as much as a short row)."""
    s0, s1, s2, s3, s4, s5 = get6(W, wS + 6 * a)
    u0, u1, u2, u3, u4, u5 = get6(W, wU + 6 * a)
    dv = W[di]
    # column a: no descendant carries it yet (their DOFs come after a)
    Minv[a, a] = dv
    F[0, a] = u0 * dv
    F[1, a] = u1 * dv
    F[2, a] = u2 * dv
    F[3, a] = u3 * dv
    F[4, a] = u4 * dv
    F[5, a] = u5 * dv
    row = Minv[a]
    for c in range(U64(a + 1), U64(e)):  # G = -S^T F, Minv = D^-1 G, F += U Minv
        _column_step(F, row, c, 0.0, dv, s0, s1, s2, s3, s4, s5, u0, u1, u2, u3, u4, u5)
    for c in range(U64(e), U64(n)):
        row[c] = 0.0


@njit(cache=True, fastmath=FAST)
def _column_block_up(W, wS, wU, di, a, b, e, n, F, Minv):
    """Backward right-hand-side step of body i (DOFs a..b, subtree columns a..e) when subtrees are
    contiguous: ``Minv[a:b, a:e] = D^-1 (E - S^T F[:, a:e])``, ``F[:, a:e] += U Minv[a:b, a:e]``; the
    rest of those rows (columns e..n, other branches) starts at zero.  Column loops run on unsigned
    indices (see :data:`redmax.model.layout.U64`) so that they vectorise."""
    nj = b - a
    if nj == 1:
        _column_up1(W, wS, wU, di, a, e, n, F, Minv)
        return
    G = np.empty((nj, n), dtype=W.dtype)  # columns a..e used
    for r1 in range(nj):  # G = E - S^T F
        sd = wS + 6 * (a + r1)
        s0, s1, s2, s3, s4, s5 = W[sd], W[sd + 1], W[sd + 2], W[sd + 3], W[sd + 4], W[sd + 5]
        for c in range(U64(a), U64(e)):
            G[r1, c] = -(s0 * F[0, c] + s1 * F[1, c] + s2 * F[2, c] + s3 * F[3, c] + s4 * F[4, c]
                         + s5 * F[5, c])
        G[r1, a + r1] += 1.0
    for r1 in range(nj):  # Minv rows = D^-1 G
        for c in range(U64(a), U64(e)):
            Minv[a + r1, c] = 0.0
        for c1 in range(nj):
            dv = W[di + nj * r1 + c1]
            for c in range(U64(a), U64(e)):
                Minv[a + r1, c] += dv * G[c1, c]
        for c in range(U64(e), U64(n)):
            Minv[a + r1, c] = 0.0
    for r1 in range(nj):  # F += U Minv rows
        ud = wU + 6 * (a + r1)
        for k in range(6):
            uk = W[ud + k]
            for c in range(U64(a), U64(e)):
                F[k, c] += uk * Minv[a + r1, c]


@njit(cache=True, fastmath=FAST)
def _columns_up_by_path(Ii, W, wS, wU, wD, scr, Minv):
    """Backward right-hand-side sweep for any body order: unit column kk is carried up the path from
    its joint to the root with one 6-vector B (``G_j = D_j^-1 (e - S_j^T B)``, ``B += U_j G_j``)."""
    L = offsets(Ii)
    n, o_par, o_idx = L.n, L.o_par, L.o_idx
    Bv = scr
    g = scr + 6
    for kk in range(n):
        for k in range(6):
            W[Bv + k] = 0.0
        j = _joint_of(Ii, kk)
        while j >= 0:
            a = Ii[o_idx + j]
            b = Ii[o_idx + j + 1]
            nj = b - a
            di = wD + 36 * j
            for r1 in range(nj):
                s = 1.0 if kk == a + r1 else 0.0
                for k in range(6):
                    s -= W[wS + 6 * (a + r1) + k] * W[Bv + k]
                W[g + r1] = s
            for r1 in range(nj):
                t = 0.0
                for c1 in range(nj):
                    t += W[di + nj * r1 + c1] * W[g + c1]
                Minv[a + r1, kk] = t
            for r1 in range(nj):
                t = Minv[a + r1, kk]
                for k in range(6):
                    W[Bv + k] += W[wU + 6 * (a + r1) + k] * t
            j = Ii[o_par + j]


@njit(cache=True)
def _down_slots(Ii):
    """Buffer slots for the forward sweep: slot[i] holds body i's (6, n) block ``A_i``.

    A body that is its parent's last child updates the parent's block in place (a chain needs one
    block); any other body needs a block of its own, taken from the slots whose last reader has
    already been processed (a balanced tree of nb bodies needs O(log nb) blocks).  Returns
    (slot (nb,), number of slots)."""
    L = offsets(Ii)
    nb, o_par = L.nb, L.o_par
    wk = np.empty(6 * nb, dtype=np.int64)  # one allocation for all the integer work arrays
    slot = wk[0:nb]
    last_child = wk[nb:2 * nb]
    vslot = wk[2 * nb:3 * nb]  # virtual blocks: one per body that is not a last child
    last_use = wk[3 * nb:4 * nb]  # last body reading each virtual block
    phys = wk[4 * nb:5 * nb]  # physical block of each virtual block
    owner = wk[5 * nb:6 * nb]  # virtual block held by each physical block
    for i in range(nb):
        last_child[i] = -1
        last_use[i] = 0
        phys[i] = -1
        owner[i] = -1
    for i in range(nb):
        par = Ii[o_par + i]
        if par >= 0:
            last_child[par] = i
    nv = 0
    for i in range(nb):
        par = Ii[o_par + i]
        if par >= 0 and last_child[par] == i:
            vslot[i] = vslot[par]
        else:
            vslot[i] = nv
            nv += 1
    for i in range(nb):
        par = Ii[o_par + i]
        last_use[vslot[i]] = max(last_use[vslot[i]], i)
        if par >= 0:
            last_use[vslot[par]] = max(last_use[vslot[par]], i)
    # physical blocks: greedy interval colouring in body order
    nphys = 0
    for i in range(nb):
        v = vslot[i]
        if phys[v] < 0:
            got = -1
            for pb in range(nphys):
                if owner[pb] < 0 or last_use[owner[pb]] < i:
                    got = pb
                    break
            if got < 0:
                got = nphys
                nphys += 1
            phys[v] = got
            owner[got] = v
        slot[i] = phys[v]
    return slot, nphys


@njit(cache=True, fastmath=FAST)
def _rows_down(Ii, W, wS, wU, wD, Minv):
    """Forward sweep over the upper triangle: ``Minv[i, c] -= D^-1 U^T A_p[:, c]`` and
    ``A_i[:, c] = A_p[:, c] + S Minv[i, c]`` for the columns c >= a_i (row segments, contiguous,
    unsigned column indices so that the loops vectorise).  ``A_i`` lives in the block
    :func:`_down_slots` gives it: the parent's block, updated in place, or a fresh block that starts
    as a copy of the parent's (zero below the root)."""
    L = offsets(Ii)
    nb, n, o_par, o_idx = L.nb, L.n, L.o_par, L.o_idx
    slot, nslots = _down_slots(Ii)
    A = np.empty((nslots, 6, n), dtype=W.dtype)
    T = np.empty((6, n), dtype=W.dtype)
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        nj = b - a
        par = Ii[o_par + i]
        si = slot[i]
        if par < 0:
            for k in range(6):
                for c in range(U64(a), U64(n)):
                    A[si, k, c] = 0.0
        elif slot[par] != si:
            sp = slot[par]
            for k in range(6):
                for c in range(U64(a), U64(n)):
                    A[si, k, c] = A[sp, k, c]
        Ab = A[si]
        di = wD + 36 * i
        if nj == 1:
            u0, u1, u2, u3, u4, u5 = get6(W, wU + 6 * a)
            s0, s1, s2, s3, s4, s5 = get6(W, wS + 6 * a)
            _down1(Ab, Minv[a], a, n, W[di], u0, u1, u2, u3, u4, u5, s0, s1, s2, s3, s4, s5)
        elif nj > 1:
            for r1 in range(nj):  # T = U^T A_p
                u0, u1, u2, u3, u4, u5 = get6(W, wU + 6 * (a + r1))
                for c in range(U64(a), U64(n)):
                    T[r1, c] = (u0 * Ab[0, c] + u1 * Ab[1, c] + u2 * Ab[2, c] + u3 * Ab[3, c] + u4 * Ab[4, c]
                                + u5 * Ab[5, c])
            for r1 in range(nj):
                for c1 in range(nj):
                    dv = W[di + nj * r1 + c1]
                    for c in range(U64(a), U64(n)):
                        Minv[a + r1, c] -= dv * T[c1, c]
            for k in range(6):  # A_i = A_p + S Minv rows
                for r1 in range(nj):
                    sk = W[wS + 6 * (a + r1) + k]
                    for c in range(U64(a), U64(n)):
                        Ab[k, c] += sk * Minv[a + r1, c]


@njit(inline="always")
def _down1(Ab, row, a, n, dv, u0, u1, u2, u3, u4, u5, s0, s1, s2, s3, s4, s5):
    """Single-DOF forward step on the block Ab (6, n), which holds A_p on entry and A_i on exit:
    ``m = row[c] - dv U^T Ab[:, c]``, ``row[c] = m``, ``Ab[:, c] += S m`` for c in a..n.  (Reading
    and writing through one array lets LLVM vectorise the loop.)"""
    for c in range(U64(a), U64(n)):
        _column_step(Ab, row, c, row[c], dv, u0, u1, u2, u3, u4, u5, s0, s1, s2, s3, s4, s5)


@njit(inline="always")
def _column_step(X, row, c, base, dv, p0, p1, p2, p3, p4, p5, k0, k1, k2, k3, k4, k5):
    """The column update both sweeps share, for one column c of the (6, n) block X:
    ``m = base - dv p^T X[:, c]``, ``row[c] = m``, ``X[:, c] += k m``.  Backward sweep: p = S, k = U,
    base = 0 (X = F); forward sweep: p = U, k = S, base = row[c] (X = A)."""
    x0, x1, x2, x3, x4, x5 = col6(X, c)
    m = base - dv * (p0 * x0 + p1 * x1 + p2 * x2 + p3 * x3 + p4 * x4 + p5 * x5)
    row[c] = m
    X[0, c] = x0 + k0 * m
    X[1, c] = x1 + k1 * m
    X[2, c] = x2 + k2 * m
    X[3, c] = x3 + k3 * m
    X[4, c] = x4 + k4 * m
    X[5, c] = x5 + k5 * m


@njit(cache=True)
def _joint_of(Ii, dof):
    """Index of the joint owning DOF ``dof`` (binary search in idx)."""
    L = offsets(Ii)
    nb, o_idx = L.nb, L.o_idx
    lo = 0
    hi = nb - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if Ii[o_idx + mid] <= dof:
            lo = mid
        else:
            hi = mid - 1
    while Ii[o_idx + lo + 1] <= dof:
        lo += 1
    return lo


@njit(cache=True)
def minv_product_kernel(parent, jtype, idx, jp_off, jparam, E_pj0, M_joint, q, jstate, Pr, Pm, Xrhs):
    """Solve ``(M + P) Y = X`` for Y (ndof, k) with P from Pr (ndof,) and Pm (nb, 6, 6) (body blocks
    already moved to joint frames); O(n) per right-hand side."""
    nb = parent.shape[0]
    n = q.shape[0]
    k = Xrhs.shape[1]
    dt = q.dtype
    qd = np.zeros(n, dtype=dt)
    X, S, _ = joint_pass(jtype, idx, jp_off, jparam, E_pj0, q, qd, jstate)
    Mhat = np.zeros((nb, 6, 6), dtype=dt)
    for i in range(nb):
        Mhat[i] = M_joint[i].astype(dt) + Pm[i].astype(dt)
    Psi_all = np.zeros((nb, 6, 6), dtype=dt)
    for i in range(nb - 1, -1, -1):
        a = idx[i]
        b = idx[i + 1]
        ni = b - a
        Mh = Mhat[i]
        if ni == 0:
            Pi = Mh
        else:
            Si = np.ascontiguousarray(S[:, a:b])
            MS = Mh @ Si
            D = Si.T @ MS
            for r in range(ni):
                D[r, r] += Pr[a + r]
            Psi = np.linalg.inv(D)
            Psi_all[i, :ni, :ni] = Psi
            Pi = Mh - MS @ Psi @ MS.T
        p = parent[i]
        if p >= 0:
            Mhat[p] += X[i].T @ Pi @ X[i]
    Xr = Xrhs.astype(dt)
    Bhat = np.zeros((nb, 6, k), dtype=dt)
    for i in range(nb - 1, -1, -1):
        a = idx[i]
        b = idx[i + 1]
        ni = b - a
        if ni == 0:
            beta = Bhat[i].copy()
        else:
            Si = np.ascontiguousarray(S[:, a:b])
            Psi = np.ascontiguousarray(Psi_all[i, :ni, :ni])
            u = np.ascontiguousarray(Xr[a:b, :]) - Si.T @ Bhat[i]
            beta = Bhat[i] + Mhat[i] @ (Si @ (Psi @ u))
        p = parent[i]
        if p >= 0:
            Bhat[p] += X[i].T @ beta
    Y = np.zeros((n, k), dtype=dt)
    Vdot = np.zeros((nb, 6, k), dtype=dt)
    for i in range(nb):
        a = idx[i]
        b = idx[i + 1]
        ni = b - a
        p = parent[i]
        Ap = np.zeros((6, k), dtype=dt) if p < 0 else X[i] @ Vdot[p]
        if ni == 0:
            Vdot[i] = Ap
            continue
        Si = np.ascontiguousarray(S[:, a:b])
        Psi = np.ascontiguousarray(Psi_all[i, :ni, :ni])
        y = Psi @ (np.ascontiguousarray(Xr[a:b, :]) - Si.T @ (Mhat[i] @ Ap) - Si.T @ Bhat[i])
        Y[a:b, :] = y
        Vdot[i] = Ap + Si @ y
    return Y


@njit(cache=True, fastmath=FAST)
def minv_plain(Ii, Ff, q):
    """:func:`minv_kernel` at the initial charts (the fast path)."""
    return minv_kernel(Ii, Ff, q, initial_jstate(Ii))
