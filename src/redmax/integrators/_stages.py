"""Compiled stages of the linearly implicit Euler step (RedMax paper Eq. 2), in world coordinates.

One step from ``(q0, qd0)`` solves

    A qd1 = b,   A = M + J^T (h Dm - h^2 Km) J + h Dr - h^2 Kr,
                 b = M qd0 + h (J^T (fm + Dm phi) - c(q0, qd0) + fr + Dr qd0 + tau),   q1 = q0 + h qd1,

where ``c`` is the bias of the equations of motion (gravity and the quadratic velocity terms, which belong to
the dynamics, never to the force list), ``fm, Km, Dm`` and ``fr, Kr, Dr`` the applied maximal and reduced
forces with their stiffness (derivative, negative for springs) and damping (coefficient) matrices, and
``tau`` the input torques at the end of the step (RedMax paper Eq. 2, Sueda notes Eq. 2.86; J^T(fm - Mm Jdot qd)
plus the Coriolis wrench ``ad(phi)^T M phi`` equals ``-c``, supplemental Eq. 12).

Everything is written with spatial vectors at the world origin (the world-frame form of Featherstone 2008,
§2.8), where a body's Jacobian block is ``[S_w of its ancestors' DOFs]`` and the propagation operators are
identities:

* :func:`kinematics_stage` -- joint frames, world motion subspaces ``S_w``, compact inertias about the origin
  (``redmax.dynamics._world.world_pass``) and world twists ``V_i = V_p + S_w qd``;
* :func:`rhs_stage` -- the world-frame RNEA with ``qdd = 0`` (bias ``c`` with gravity as the base
  acceleration ``[0; -g]``) fused with the momentum ``M qd`` and the applied wrenches: ``b`` in one backward pass;
* :func:`assemble_stage` -- ``A`` from 6x6 body-pair blocks ``B_ab`` (``h D - h^2 K`` in world coordinates)
  in O(n d + sum over pairs of path lengths) without ever forming J: for joints i, j with j an ancestor of i,
  ``A_ij = S_i^T Y_ij S_j`` with ``Y_ij = sum_{a in sub(i), b in sub(j)} B_ab``; the pairs with both bodies
  in sub(i) form a composite ``Q_i`` (body inertias, diagonal blocks, and every pair block at its bodies'
  lowest common ancestor), the others enter as increments picked up while walking from i to the root (a pair
  ``(a, b)`` with lowest common ancestor c adds ``B_ab^T S_i`` to the walk of each joint i on the path from a
  to c, from c upward), and joints on the two sides of a pair couple through ``S_i^T B_ab S_j`` directly;
* the solve: :mod:`redmax.solvers._dense` (Cholesky for symmetric A, LU with partial pivoting otherwise).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from redmax.dynamics._packed import FAST, offsets
from redmax.dynamics._regs import get6
from redmax.dynamics._world import inertia_times, world_pass

__all__ = ["JT_world", "J_world", "Work", "assemble_stage", "inertia_world", "kinematics_stage", "rhs_stage",
           "work_offsets"]


class WorkLayout(NamedTuple):
    """Offsets of the step workspace W (one float array), the one place that defines its layout."""

    wR: int  # world joint rotations (nb, 9) row-major
    wp: int  # world joint positions (nb, 3)
    wS: int  # world motion subspace columns (n, 6)
    wI: int  # compact inertias about the world origin (nb, 10)
    wSd: int  # world Sdot qd of each joint (nb, 6)
    wV: int  # world twists (nb, 6)
    wQ: int  # 6x6 composites of the assembly (nb, 36)
    scr: int  # scratch (60)
    size: int  # total size


@njit(cache=True)
def work_offsets(nb, n):
    """The :class:`WorkLayout` of a model with nb bodies and n DOFs."""
    wS = 12 * nb
    wI = wS + 6 * n
    wSd = wI + 10 * nb
    wV = wSd + 6 * nb
    wQ = wV + 6 * nb
    scr = wQ + 36 * nb
    return WorkLayout(0, 9 * nb, wS, wI, wSd, wV, wQ, scr, scr + 60)


class Work:
    """Named views of a step workspace (Python side, for tests and the stage-by-stage path)."""

    def __init__(self, nb: int, n: int, dtype=np.float64):
        self.nb, self.n = nb, n
        self.off = work_offsets(nb, n)
        self.W = np.zeros(self.off.size, dtype=dtype)

    def view(self, name: str) -> np.ndarray:
        o = self.off
        nb, n = self.nb, self.n
        spec = {"R": (o.wR, (nb, 9)), "p": (o.wp, (nb, 3)), "S": (o.wS, (n, 6)), "I": (o.wI, (nb, 10)),
                "Sdot": (o.wSd, (nb, 6)), "V": (o.wV, (nb, 6)), "Q": (o.wQ, (nb, 6, 6))}[name]
        o, shape = spec
        return self.W[o:o + int(np.prod(shape))].reshape(shape)


@njit(cache=True, fastmath=FAST)
def kinematics_stage(Ii, Ff, q, qd, jstate, W):
    """World pass plus world twists ``V_i = V_p + sum_d S_w[d] qd[d]`` (W[o.wV + 6i])."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    world_pass(Ii, Ff, q, qd, jstate, W, o.wR, o.wp, o.wS, o.wI, o.wSd, o.scr)
    for i in range(nb):
        a = Ii[L.o_idx + i]
        b = Ii[L.o_idx + i + 1]
        par = Ii[L.o_par + i]
        v = W[o.wV + 6 * i:o.wV + 6 * i + 6]
        if par >= 0:
            for k in range(6):
                v[k] = W[o.wV + 6 * par + k]
        else:
            for k in range(6):
                v[k] = 0.0
        for d in range(a, b):
            x = qd[d]
            for k in range(6):
                v[k] += W[o.wS + 6 * d + k] * x


@njit(cache=True, fastmath=FAST)
def rhs_stage(Ii, Ff, qd, W, h, fw_rhs, fr_rhs, tau, gscale, Y, Acc, b):
    """``b = M qd + h (J^T fw_rhs - c(q, qd) + fr_rhs + tau)`` (n,) by one world-frame RNEA pass.

    Per body (world, at the origin): ``a_i = a_p + V_p x (S_i qd_i) + Sdot_i qd_i`` from ``a_0 = [0; -g]``,
    bias wrench ``f_i = I_i a_i + V_i x* I_i V_i``; ``Y_i = I_i V_i - h (f_i - fw_rhs_i)`` summed over the
    subtree, ``b_d = S_d . Y_i + h (fr_rhs_d + tau_d)``.  ``Y`` (nb, 6) ends holding the subtree sums and
    ``Acc`` (nb, 6) the bias accelerations ``a_i``.  The kinematics stage must have run on W.
    """
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    A = Acc
    for i in range(nb):
        a = Ii[L.o_idx + i]
        e = Ii[L.o_idx + i + 1]
        par = Ii[L.o_par + i]
        # S qd of this joint
        s0 = s1 = s2 = s3 = s4 = s5 = 0.0 * W[0]
        for d in range(a, e):
            x = qd[d]
            s0 += W[o.wS + 6 * d] * x
            s1 += W[o.wS + 6 * d + 1] * x
            s2 += W[o.wS + 6 * d + 2] * x
            s3 += W[o.wS + 6 * d + 3] * x
            s4 += W[o.wS + 6 * d + 4] * x
            s5 += W[o.wS + 6 * d + 5] * x
        c0, c1, c2, c3, c4, c5 = get6(W, o.wSd + 6 * i)
        if par >= 0:
            p0, p1, p2, p3, p4, p5 = get6(W, o.wV + 6 * par)
            # V_p x (S qd) = [w x sw; w x sv + v x sw]
            c0 += p1 * s2 - p2 * s1
            c1 += p2 * s0 - p0 * s2
            c2 += p0 * s1 - p1 * s0
            c3 += p1 * s5 - p2 * s4 + p4 * s2 - p5 * s1
            c4 += p2 * s3 - p0 * s5 + p5 * s0 - p3 * s2
            c5 += p0 * s4 - p1 * s3 + p3 * s1 - p4 * s0
            for k in range(6):
                A[i, k] = A[par, k]
        else:
            A[i, 0] = 0.0
            A[i, 1] = 0.0
            A[i, 2] = 0.0
            A[i, 3] = -gscale * Ff[L.f_g]
            A[i, 4] = -gscale * Ff[L.f_g + 1]
            A[i, 5] = -gscale * Ff[L.f_g + 2]
        A[i, 0] += c0
        A[i, 1] += c1
        A[i, 2] += c2
        A[i, 3] += c3
        A[i, 4] += c4
        A[i, 5] += c5
        I = o.wI + 10 * i
        w0, w1, w2, v0, v1, v2 = get6(W, o.wV + 6 * i)
        m0, m1, m2, m3, m4, m5 = inertia_times(W, I, w0, w1, w2, v0, v1, v2)  # momentum I V
        f0, f1, f2, f3, f4, f5 = inertia_times(W, I, A[i, 0], A[i, 1], A[i, 2], A[i, 3], A[i, 4], A[i, 5])
        # V x* (I V) = [w x n + v x f; w x f]
        f0 += w1 * m2 - w2 * m1 + v1 * m5 - v2 * m4
        f1 += w2 * m0 - w0 * m2 + v2 * m3 - v0 * m5
        f2 += w0 * m1 - w1 * m0 + v0 * m4 - v1 * m3
        f3 += w1 * m5 - w2 * m4
        f4 += w2 * m3 - w0 * m5
        f5 += w0 * m4 - w1 * m3
        Y[i, 0] = m0 - h * (f0 - fw_rhs[i, 0])
        Y[i, 1] = m1 - h * (f1 - fw_rhs[i, 1])
        Y[i, 2] = m2 - h * (f2 - fw_rhs[i, 2])
        Y[i, 3] = m3 - h * (f3 - fw_rhs[i, 3])
        Y[i, 4] = m4 - h * (f4 - fw_rhs[i, 4])
        Y[i, 5] = m5 - h * (f5 - fw_rhs[i, 5])
    for i in range(nb - 1, -1, -1):
        a = Ii[L.o_idx + i]
        e = Ii[L.o_idx + i + 1]
        y0, y1, y2, y3, y4, y5 = Y[i, 0], Y[i, 1], Y[i, 2], Y[i, 3], Y[i, 4], Y[i, 5]
        for d in range(a, e):
            s0, s1, s2, s3, s4, s5 = get6(W, o.wS + 6 * d)
            b[d] = s0 * y0 + s1 * y1 + s2 * y2 + s3 * y3 + s4 * y4 + s5 * y5 + h * (fr_rhs[d] + tau[d])
        par = Ii[L.o_par + i]
        if par >= 0:
            for k in range(6):
                Y[par, k] += Y[i, k]


@njit(cache=True)
def depths(Ii):
    """Depth of every body (roots 0)."""
    L = offsets(Ii)
    dep = np.zeros(L.nb, dtype=np.int64)
    for i in range(L.nb):
        p = Ii[L.o_par + i]
        dep[i] = 0 if p < 0 else dep[p] + 1
    return dep


@njit(cache=True, fastmath=FAST)
def assemble_stage(Ii, W, bpair, bB, nblk, rdiag, symmetric, dep, inc_d, inc_c, inc_u, head, nxt, A):
    """Assemble ``A = M + sum_blocks J^T B J + diag(rdiag)`` (n, n) (see the module docstring).

    Args:
        W: the workspace after :func:`kinematics_stage` (its Q region is overwritten).
        bpair (cap, 2), bB (cap, 6, 6): the first ``nblk`` body-pair blocks ``B_ab`` (world).
        rdiag: (n,) reduced diagonal.  symmetric: the blocks come in transposed pairs (``B_ba = B_ab^T``)
            and A is symmetric: only the lower triangle is computed, then mirrored.
        dep: body depths.  inc_d, inc_c (cap2,), inc_u (cap2, 6), head (2n,), nxt (cap2,): increment scratch,
            ``cap2`` at least twice the number of (pair, path joint DOF) incidences.
    """
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    o_par = L.o_par
    o_idx = L.o_idx
    # Q_i = body inertia (6x6 from the compact form)
    for i in range(nb):
        Q = W[o.wQ + 36 * i:o.wQ + 36 * i + 36]
        c = W[o.wI + 10 * i:o.wI + 10 * i + 10]
        m, h0, h1, h2 = c[0], c[1], c[2], c[3]
        Q[0] = c[4]
        Q[1] = c[5]
        Q[2] = c[6]
        Q[6] = c[5]
        Q[7] = c[7]
        Q[8] = c[8]
        Q[12] = c[6]
        Q[13] = c[8]
        Q[14] = c[9]
        # [[I, [h]], [[h]^T, m 1]]
        Q[3] = 0.0
        Q[4] = -h2
        Q[5] = h1
        Q[9] = h2
        Q[10] = 0.0
        Q[11] = -h0
        Q[15] = -h1
        Q[16] = h0
        Q[17] = 0.0
        Q[18] = 0.0
        Q[19] = h2
        Q[20] = -h1
        Q[24] = -h2
        Q[25] = 0.0
        Q[26] = h0
        Q[30] = h1
        Q[31] = -h0
        Q[32] = 0.0
        Q[21] = m
        Q[22] = 0.0
        Q[23] = 0.0
        Q[27] = 0.0
        Q[28] = m
        Q[29] = 0.0
        Q[33] = 0.0
        Q[34] = 0.0
        Q[35] = m
    for d in range(2 * n):
        head[d] = -1
    ninc = 0
    for k in range(n):
        for l in range(n):
            A[k, l] = 0.0
    for t in range(nblk):
        a = bpair[t, 0]
        b = bpair[t, 1]
        B = bB[t]
        # lowest common ancestor c (-1: the world)
        x = a
        y = b
        while dep[x] > dep[y]:
            x = Ii[o_par + x]
        while dep[y] > dep[x]:
            y = Ii[o_par + y]
        while x != y and x >= 0 and y >= 0:
            x = Ii[o_par + x]
            y = Ii[o_par + y]
        c = x if x == y else -1
        if c >= 0:
            Q = W[o.wQ + 36 * c:o.wQ + 36 * c + 36]
            for r in range(6):
                for s in range(6):
                    Q[6 * r + s] += B[r, s]
        if a == b:
            continue
        # rows: the path a -> c (exclusive): increments B^T S_d for the walk of d, picked up at c
        i = a
        while i != c:
            for d in range(Ii[o_idx + i], Ii[o_idx + i + 1]):
                s0, s1, s2, s3, s4, s5 = get6(W, o.wS + 6 * d)
                for r in range(6):
                    inc_u[ninc, r] = B[0, r] * s0 + B[1, r] * s1 + B[2, r] * s2 + B[3, r] * s3 + B[4, r] * s4 + \
                        B[5, r] * s5
                inc_d[ninc] = d
                inc_c[ninc] = c
                nxt[ninc] = head[d]
                head[d] = ninc
                ninc += 1
                # cross terms with the path b -> c (exclusive): S_d^T B S_e
                j = b
                while j != c:
                    for e in range(Ii[o_idx + j], Ii[o_idx + j + 1]):
                        g0, g1, g2, g3, g4, g5 = get6(W, o.wS + 6 * e)
                        u = inc_u[ninc - 1]
                        A[d, e] += u[0] * g0 + u[1] * g1 + u[2] * g2 + u[3] * g3 + u[4] * g4 + u[5] * g5
                    j = Ii[o_par + j]
            i = Ii[o_par + i]
        if not symmetric:
            # columns: the path b -> c (exclusive): increments B S_e for the column walk of e
            j = b
            while j != c:
                for e in range(Ii[o_idx + j], Ii[o_idx + j + 1]):
                    s0, s1, s2, s3, s4, s5 = get6(W, o.wS + 6 * e)
                    for r in range(6):
                        inc_u[ninc, r] = B[r, 0] * s0 + B[r, 1] * s1 + B[r, 2] * s2 + B[r, 3] * s3 + \
                            B[r, 4] * s4 + B[r, 5] * s5
                    inc_d[ninc] = e
                    inc_c[ninc] = c
                    nxt[ninc] = head[n + e]
                    head[n + e] = ninc
                    ninc += 1
                j = Ii[o_par + j]
    # composites
    for i in range(nb - 1, 0, -1):
        par = Ii[o_par + i]
        if par >= 0:
            for k in range(36):
                W[o.wQ + 36 * par + k] += W[o.wQ + 36 * i + k]
    # walks: row d of joint i against each ancestor joint j (and, unsymmetric, column d)
    for i in range(nb):
        Q = W[o.wQ + 36 * i:o.wQ + 36 * i + 36]
        for d in range(Ii[o_idx + i], Ii[o_idx + i + 1]):
            s0, s1, s2, s3, s4, s5 = get6(W, o.wS + 6 * d)
            # F = Q^T S_d
            F0 = Q[0] * s0 + Q[6] * s1 + Q[12] * s2 + Q[18] * s3 + Q[24] * s4 + Q[30] * s5
            F1 = Q[1] * s0 + Q[7] * s1 + Q[13] * s2 + Q[19] * s3 + Q[25] * s4 + Q[31] * s5
            F2 = Q[2] * s0 + Q[8] * s1 + Q[14] * s2 + Q[20] * s3 + Q[26] * s4 + Q[32] * s5
            F3 = Q[3] * s0 + Q[9] * s1 + Q[15] * s2 + Q[21] * s3 + Q[27] * s4 + Q[33] * s5
            F4 = Q[4] * s0 + Q[10] * s1 + Q[16] * s2 + Q[22] * s3 + Q[28] * s4 + Q[34] * s5
            F5 = Q[5] * s0 + Q[11] * s1 + Q[17] * s2 + Q[23] * s3 + Q[29] * s4 + Q[35] * s5
            # within the joint
            for e in range(Ii[o_idx + i], d + 1):
                g0, g1, g2, g3, g4, g5 = get6(W, o.wS + 6 * e)
                A[d, e] += F0 * g0 + F1 * g1 + F2 * g2 + F3 * g3 + F4 * g4 + F5 * g5
            if not symmetric:
                G0 = Q[0] * s0 + Q[1] * s1 + Q[2] * s2 + Q[3] * s3 + Q[4] * s4 + Q[5] * s5
                G1 = Q[6] * s0 + Q[7] * s1 + Q[8] * s2 + Q[9] * s3 + Q[10] * s4 + Q[11] * s5
                G2 = Q[12] * s0 + Q[13] * s1 + Q[14] * s2 + Q[15] * s3 + Q[16] * s4 + Q[17] * s5
                G3 = Q[18] * s0 + Q[19] * s1 + Q[20] * s2 + Q[21] * s3 + Q[22] * s4 + Q[23] * s5
                G4 = Q[24] * s0 + Q[25] * s1 + Q[26] * s2 + Q[27] * s3 + Q[28] * s4 + Q[29] * s5
                G5 = Q[30] * s0 + Q[31] * s1 + Q[32] * s2 + Q[33] * s3 + Q[34] * s4 + Q[35] * s5
                for e in range(Ii[o_idx + i], d):
                    g0, g1, g2, g3, g4, g5 = get6(W, o.wS + 6 * e)
                    A[e, d] += G0 * g0 + G1 * g1 + G2 * g2 + G3 * g3 + G4 * g4 + G5 * g5
            j = Ii[o_par + i]
            while j >= 0:
                t = head[d]
                while t >= 0:
                    if inc_c[t] == j:
                        F0 += inc_u[t, 0]
                        F1 += inc_u[t, 1]
                        F2 += inc_u[t, 2]
                        F3 += inc_u[t, 3]
                        F4 += inc_u[t, 4]
                        F5 += inc_u[t, 5]
                    t = nxt[t]
                if not symmetric:
                    t = head[n + d]
                    while t >= 0:
                        if inc_c[t] == j:
                            G0 += inc_u[t, 0]
                            G1 += inc_u[t, 1]
                            G2 += inc_u[t, 2]
                            G3 += inc_u[t, 3]
                            G4 += inc_u[t, 4]
                            G5 += inc_u[t, 5]
                        t = nxt[t]
                for e in range(Ii[o_idx + j], Ii[o_idx + j + 1]):
                    g0, g1, g2, g3, g4, g5 = get6(W, o.wS + 6 * e)
                    A[d, e] += F0 * g0 + F1 * g1 + F2 * g2 + F3 * g3 + F4 * g4 + F5 * g5
                    if not symmetric:
                        A[e, d] += G0 * g0 + G1 * g1 + G2 * g2 + G3 * g3 + G4 * g4 + G5 * g5
                j = Ii[o_par + j]
    for d in range(n):
        A[d, d] += rdiag[d]
    if symmetric:
        for d in range(n):
            for e in range(d):
                A[e, d] = A[d, e]


@njit(cache=True)
def J_world(Ii, W, x, out):
    """``out = J x`` (nb, 6): world twists of the bodies for rates x (n,), O(n)."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    for i in range(nb):
        par = Ii[L.o_par + i]
        for k in range(6):
            out[i, k] = out[par, k] if par >= 0 else 0.0
        for d in range(Ii[L.o_idx + i], Ii[L.o_idx + i + 1]):
            for k in range(6):
                out[i, k] += W[o.wS + 6 * d + k] * x[d]


@njit(cache=True)
def JT_world(Ii, W, y, Y, out):
    """``out = J^T y`` (n,) for world wrenches y (nb, 6), O(n); Y (nb, 6) is scratch (subtree sums)."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    for i in range(nb):
        for k in range(6):
            Y[i, k] = y[i, k]
    for i in range(nb - 1, -1, -1):
        for d in range(Ii[L.o_idx + i], Ii[L.o_idx + i + 1]):
            s = 0.0 * W[0]
            for k in range(6):
                s += W[o.wS + 6 * d + k] * Y[i, k]
            out[d] = s
        par = Ii[L.o_par + i]
        if par >= 0:
            for k in range(6):
                Y[par, k] += Y[i, k]


@njit(cache=True)
def inertia_world(Ii, W, V, out):
    """``out_i = I_i V_i`` (nb, 6) with the bodies' world inertias (compact form in W)."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    for i in range(nb):
        f0, f1, f2, f3, f4, f5 = inertia_times(W, o.wI + 10 * i, V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5])
        out[i, 0] = f0
        out[i, 1] = f1
        out[i, 2] = f2
        out[i, 3] = f3
        out[i, 4] = f4
        out[i, 5] = f5
