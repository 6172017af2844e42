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
  (``redmax.dynamics._world_pass.world_pass``) and world twists ``V_i = V_p + S_w qd``;
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

from redmax._jit import FAST, njit
from redmax._kernels.borrow import read_only
from redmax._kernels.registers import get6
from redmax._kernels.workspace import Work, work_offsets
from redmax.dynamics._world_pass import inertia_times, world_pass
from redmax.model.layout import offsets

__all__ = ["JT_world", "J_world", "Work", "inertia_world", "kinematics_stage", "rhs_stage", "work_offsets"]


@njit(cache=True, fastmath=FAST, inline="always")  # a thin layer over world_pass
def kinematics_stage(Ii, Ff, q, qd, jstate, W):
    """World pass plus world twists ``V_i = V_p + sum_d S_w[d] qd[d]`` (W[o.wV + 6i])."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    world_pass(Ii, Ff, q, qd, read_only(jstate), W, o.wR, o.wp, o.wS, o.wI, o.wSd, o.scr)
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
