"""The model packed into one int64 and one float64 array, and allocation-free per-joint helpers.

The recursive algorithms are called once per state from Python, so their cost is dominated by the
call (Numba type dispatch costs ~70 ns per argument) and by small allocations.  ``pack(model)`` builds
two flat arrays the kernels index directly; :class:`Layout` (read by :func:`offsets`) names every offset
(``E_pj0 = (R0, p0)`` row-major, ``c`` the centre of mass and ``Ic`` the rotational inertia about it, both in
the joint frame).

:func:`simple_motion` (fixed, revolute, prismatic: closed forms) and :func:`generic_motion` (every
other family, through :func:`redmax.joints.dispatch.joint_calc`) write a joint's ``E_pj = E_pj0 Q(q)``
as (R, p), its columns of S and ``Sdot qd`` into a workspace.  They are separate functions, and the
kernels branch on the type code themselves, because a single function containing the generic call
path costs ~75 ns more per joint even when it takes the closed-form branch (measured with Numba 0.68).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from redmax._jit import njit
from redmax.dynamics._regs import get6
from redmax.joints.dispatch import joint_calc
from redmax.joints.simple import PRISMATIC, REVOLUTE

# Floating-point freedoms for the recursive kernels: fused multiply-add, reassociation (lets loops
# vectorise), no signed zeros, reciprocal approximations.  Never "nnan"/"ninf": the kernels check inputs
# for NaN and inf.  Results move by rounding only (~1e-15 relative).
FAST = {"contract", "reassoc", "nsz", "arcp"}

# Loop index type for loops that should vectorise: Numba wraps negative indices around, so an index it
# cannot prove non-negative (``for c in range(a, n)`` with a read from an array) costs a select per
# access and keeps LLVM from vectorising the loop; an unsigned index has no such branch.  Write
# ``for c in range(U64(a), U64(n))`` and index with c only (uint64 mixed with int64 arithmetic
# promotes to float64 in Numba).  Measured: 2.3x on the M^-1 column sweeps at n = 100.
U64 = np.uint64

__all__ = ["FAST", "NO_FEXT", "SIMPLE_MAX", "U64", "Layout", "armature_offset", "generic_motion", "initial_jstate",
           "offsets", "pack",
           "revolute_frame", "simple_motion"]

SIMPLE_MAX = PRISMATIC  # type codes <= this take simple_motion (FIXED=0, REVOLUTE=1, PRISMATIC=2)


class Layout(NamedTuple):
    """Offsets into the packed arrays, the one place that defines their layout.

    ints ``Ii``: ``[nb, n, parent (nb), jtype (nb), idx (nb+1), jp_off (nb+1), jstate0 (nb)]``;
    floats ``Ff``: ``[R0 (9nb), p0 (3nb), M_joint (36nb), Ad_bj (36nb), mass (nb), c (3nb), Ic (9nb),
    gravity (3), jparam, armature (n)]``.  Kernels read it with ``nb, n, o_par, ... = offsets(Ii)`` (or by
    field name); the per-DOF armature (added to the diagonal of M, zeros for most models) follows the joint
    parameters at :func:`armature_offset`.
    """

    nb: int
    n: int
    o_par: int  # parent (nb,)
    o_typ: int  # joint type codes (nb,)
    o_idx: int  # DOF offsets (nb+1,)
    o_jp: int  # joint parameter offsets (nb+1,)
    f_R: int  # E_pj0 rotations (nb, 9) row-major
    f_p: int  # E_pj0 translations (nb, 3)
    f_M: int  # joint-frame spatial inertias (nb, 36)
    f_A: int  # Ad_bj (nb, 36)
    f_m: int  # masses (nb,)
    f_c: int  # centres of mass in the joint frames (nb, 3)
    f_I: int  # rotational inertias about the centres of mass, joint frames (nb, 9)
    f_g: int  # gravity (3,)
    f_jp: int  # joint parameters


@njit(cache=True)
def offsets(Ii):
    """The :class:`Layout` of a packed model."""
    nb = Ii[0]
    return Layout(nb, Ii[1], 2, 2 + nb, 2 + 2 * nb, 3 + 3 * nb, 0, 9 * nb, 12 * nb, 48 * nb, 84 * nb, 85 * nb,
                  88 * nb, 97 * nb, 97 * nb + 3)


@njit(cache=True, inline="always")
def armature_offset(Ii):
    """Offset of the per-DOF armature (n,) in Ff: right after the joint parameters."""
    nb = Ii[0]
    return 97 * nb + 3 + Ii[3 + 4 * nb]  # f_jp + jp_off[nb]


@njit(cache=True)
def initial_jstate(Ii):
    """The model's initial chart words, a view into Ii (nb,)."""
    o = offsets(Ii)
    return Ii[o.o_jp + o.nb + 1 : o.o_jp + 2 * o.nb + 1]


def pack(tree, gravity, jstate0, armature=None) -> tuple[np.ndarray, np.ndarray]:
    """(Ii, Ff) of a :class:`redmax.model.Tree` with gravity (3,), initial charts (nb,) and the per-DOF armature
    (n,) (default zeros) (see :class:`Layout`)."""
    nb = tree.nb
    Ii = np.concatenate([[nb, tree.idx[-1]], tree.parent, tree.jtype, tree.idx, tree.jp_off,
                         jstate0]).astype(np.int64)
    M = tree.M_joint
    m = tree.mass
    # centre of mass in the joint frame: the lower-left block of M_joint is -m [c], so m c = (M42, M50, M31)
    mc = np.stack([M[:, 4, 2], M[:, 5, 0], M[:, 3, 1]], axis=1)
    c = np.divide(mc, m[:, None], out=np.zeros_like(mc), where=m[:, None] > 0)
    Ic = np.empty((nb, 3, 3))
    for i in range(nb):
        C = np.array([[0, -c[i, 2], c[i, 1]], [c[i, 2], 0, -c[i, 0]], [-c[i, 1], c[i, 0], 0]])
        Ic[i] = M[i, :3, :3] - m[i] * (C.T @ C)
    Ff = np.concatenate([tree.E_pj0[:, :3, :3].reshape(-1), tree.E_pj0[:, :3, 3].reshape(-1), M.reshape(-1),
                         tree.Ad_bj.reshape(-1), m, c.reshape(-1), Ic.reshape(-1), gravity, tree.jparam,
                         np.zeros(tree.idx[-1]) if armature is None else np.asarray(armature, dtype=float)])
    Ii.setflags(write=False)
    Ff.setflags(write=False)
    return Ii, Ff


NO_FEXT = np.zeros((0, 6))  # "no external wrenches" (a constant inside the kernels)


@njit(cache=True, fastmath=FAST)
def simple_motion(Ii, Ff, i, typ, q, W, r, pp, sb, sdq):
    """Closed-form joint motion for fixed, revolute and prismatic joints (``typ <= PRISMATIC``).

    Writes ``R`` -> W[r:r+9] (row-major), ``p`` -> W[pp:pp+3], the S column -> W[sb:sb+6] and
    ``Sdot qd = 0`` -> W[sdq:sdq+6]; ``E_pj = (R, p)`` is the joint in its parent joint's frame.
    Kept separate from :func:`generic_motion` so that this hot path stays small (see module docstring).
    """
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    R0 = f_R + 9 * i
    p0 = f_p + 3 * i
    for k in range(6):
        W[sdq + k] = 0.0
    if typ == REVOLUTE:
        (W[r], W[r + 1], W[r + 2], W[r + 3], W[r + 4], W[r + 5], W[r + 6], W[r + 7], W[r + 8],
         W[pp], W[pp + 1], W[pp + 2], W[sb], W[sb + 1], W[sb + 2]) = revolute_frame(Ii, Ff, i, q)
        W[sb + 3] = 0.0
        W[sb + 4] = 0.0
        W[sb + 5] = 0.0
        return
    for k in range(9):
        W[r + k] = Ff[R0 + k]
    for k in range(3):
        W[pp + k] = Ff[p0 + k]
    if typ == PRISMATIC:
        jo = f_jp + Ii[o_jp + i]
        a = Ii[o_idx + i]
        ax = Ff[jo]
        ay = Ff[jo + 1]
        az = Ff[jo + 2]
        d = q[a]
        for k in range(3):
            W[pp + k] += (Ff[R0 + 3 * k] * ax + Ff[R0 + 3 * k + 1] * ay + Ff[R0 + 3 * k + 2] * az) * d
        W[sb] = 0.0
        W[sb + 1] = 0.0
        W[sb + 2] = 0.0
        W[sb + 3] = ax
        W[sb + 4] = ay
        W[sb + 5] = az


@njit(cache=True, fastmath=FAST)
def revolute_frame(Ii, Ff, i, q):
    """Revolute joint i in closed form, as scalars: ``R = R0 Q(q)`` (9, row-major), ``p = p0`` (3) and
    the unit axis (3) = the angular part of S (the joint frame).  ``Q`` is Rodrigues' rotation
    ``c 1 + (1 - c) a a^T + s [a]`` (Sueda notes §2.4.1).  Returned as a tuple so that callers keep
    the values in registers (measured 28 ns per joint faster than a round trip through a workspace)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    jo = f_jp + Ii[o_jp + i]
    av = Ff[jo:jo + 3]
    ax = av[0]
    ay = av[1]
    az = av[2]
    qa = q[Ii[o_idx + i]]
    c = np.cos(qa)
    s = np.sin(qa)
    t = 1.0 - c
    Q00 = c + ax * ax * t
    Q01 = ax * ay * t - az * s
    Q02 = ax * az * t + ay * s
    Q10 = ay * ax * t + az * s
    Q11 = c + ay * ay * t
    Q12 = ay * az * t - ax * s
    Q20 = az * ax * t - ay * s
    Q21 = az * ay * t + ax * s
    Q22 = c + az * az * t
    B = Ff[f_R + 9 * i:f_R + 9 * i + 9]
    L00 = B[0] * Q00 + B[1] * Q10 + B[2] * Q20
    L01 = B[0] * Q01 + B[1] * Q11 + B[2] * Q21
    L02 = B[0] * Q02 + B[1] * Q12 + B[2] * Q22
    L10 = B[3] * Q00 + B[4] * Q10 + B[5] * Q20
    L11 = B[3] * Q01 + B[4] * Q11 + B[5] * Q21
    L12 = B[3] * Q02 + B[4] * Q12 + B[5] * Q22
    L20 = B[6] * Q00 + B[7] * Q10 + B[8] * Q20
    L21 = B[6] * Q01 + B[7] * Q11 + B[8] * Q21
    L22 = B[6] * Q02 + B[7] * Q12 + B[8] * Q22
    p0 = Ff[f_p + 3 * i:f_p + 3 * i + 3]
    return L00, L01, L02, L10, L11, L12, L20, L21, L22, p0[0], p0[1], p0[2], ax, ay, az


@njit(cache=True, fastmath=FAST)
def generic_motion(Ii, Ff, i, typ, q, qd, jstate, W, r, pp, sb, sdq):
    """Joint motion of any other family through :func:`joint_calc`; same outputs as
    :func:`simple_motion` plus ``Sdot qd`` (S columns at W[sb + 6k] for the joint's k-th DOF)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    a = Ii[o_idx + i]
    b = Ii[o_idx + i + 1]
    R0 = f_R + 9 * i
    p0 = f_p + 3 * i
    nj = b - a
    Q = np.zeros((4, 4), dtype=W.dtype)
    S = np.zeros((6, nj), dtype=W.dtype)
    Sd = np.zeros((6, nj), dtype=W.dtype)
    joint_calc(typ, Ff[f_jp + Ii[o_jp + i] : f_jp + Ii[o_jp + i + 1]], q[a:b], qd[a:b], jstate[i], Q, S, Sd)
    for k in range(3):
        for l in range(3):
            W[r + 3 * k + l] = Ff[R0 + 3 * k] * Q[0, l] + Ff[R0 + 3 * k + 1] * Q[1, l] + Ff[R0 + 3 * k + 2] * Q[2, l]
        W[pp + k] = Ff[R0 + 3 * k] * Q[0, 3] + Ff[R0 + 3 * k + 1] * Q[1, 3] + Ff[R0 + 3 * k + 2] * Q[2, 3] + Ff[p0 + k]
    for k in range(6):
        W[sdq + k] = 0.0
    for d in range(nj):
        for k in range(6):
            W[sb + 6 * d + k] = S[k, d]
            W[sdq + k] += Sd[k, d] * qd[a + d]


@njit(cache=True, fastmath=FAST)
def motion_to_child(W, r, pp, src, dst):
    """Twist in the parent frame (W[src:src+6]) -> child frame: ``[R^T w; R^T (v - p x w)]`` into W[dst]."""
    w0 = W[src]
    w1 = W[src + 1]
    w2 = W[src + 2]
    x0 = W[src + 3] - (W[pp + 1] * w2 - W[pp + 2] * w1)
    x1 = W[src + 4] - (W[pp + 2] * w0 - W[pp] * w2)
    x2 = W[src + 5] - (W[pp] * w1 - W[pp + 1] * w0)
    for k in range(3):
        W[dst + k] = W[r + k] * w0 + W[r + 3 + k] * w1 + W[r + 6 + k] * w2
        W[dst + 3 + k] = W[r + k] * x0 + W[r + 3 + k] * x1 + W[r + 6 + k] * x2


@njit(cache=True, fastmath=FAST)
def force_to_parent_add(W, r, pp, src, dst):
    """Wrench in the child frame (W[src]) -> parent frame, added to W[dst]: ``[R n + p x R f; R f]``."""
    n0 = W[src]
    n1 = W[src + 1]
    n2 = W[src + 2]
    f0 = W[src + 3]
    f1 = W[src + 4]
    f2 = W[src + 5]
    Rf0 = W[r] * f0 + W[r + 1] * f1 + W[r + 2] * f2
    Rf1 = W[r + 3] * f0 + W[r + 4] * f1 + W[r + 5] * f2
    Rf2 = W[r + 6] * f0 + W[r + 7] * f1 + W[r + 8] * f2
    W[dst] += W[r] * n0 + W[r + 1] * n1 + W[r + 2] * n2 + W[pp + 1] * Rf2 - W[pp + 2] * Rf1
    W[dst + 1] += W[r + 3] * n0 + W[r + 4] * n1 + W[r + 5] * n2 + W[pp + 2] * Rf0 - W[pp] * Rf2
    W[dst + 2] += W[r + 6] * n0 + W[r + 7] * n1 + W[r + 8] * n2 + W[pp] * Rf1 - W[pp + 1] * Rf0
    W[dst + 3] += Rf0
    W[dst + 4] += Rf1
    W[dst + 5] += Rf2


@njit(cache=True, fastmath=FAST)
def add_cross_motion(W, v, u, dst):
    """W[dst] += ad(W[v]) W[u] (spatial cross product of twists)."""
    V0, V1, V2, V3, V4, V5 = get6(W, v)
    s0, s1, s2, s3, s4, s5 = get6(W, u)
    W[dst] += V1 * s2 - V2 * s1
    W[dst + 1] += V2 * s0 - V0 * s2
    W[dst + 2] += V0 * s1 - V1 * s0
    W[dst + 3] += V4 * s2 - V5 * s1 + V1 * s5 - V2 * s4
    W[dst + 4] += V5 * s0 - V3 * s2 + V2 * s3 - V0 * s5
    W[dst + 5] += V3 * s1 - V4 * s0 + V0 * s4 - V1 * s3


@njit(cache=True, fastmath=FAST)
def sub_cross_force(W, v, f, dst):
    """W[dst] -= ad(W[v])^T W[f] (the velocity-product wrench ``-ad(V)^T h``)."""
    V0, V1, V2, V3, V4, V5 = get6(W, v)
    n0, n1, n2, g0, g1, g2 = get6(W, f)
    W[dst] += V1 * n2 - V2 * n1 + V4 * g2 - V5 * g1
    W[dst + 1] += V2 * n0 - V0 * n2 + V5 * g0 - V3 * g2
    W[dst + 2] += V0 * n1 - V1 * n0 + V3 * g1 - V4 * g0
    W[dst + 3] += V1 * g2 - V2 * g1
    W[dst + 4] += V2 * g0 - V0 * g2
    W[dst + 5] += V0 * g1 - V1 * g0


@njit(cache=True)
def small_inverse(W, src, dst, n):
    """Inverse of the symmetric positive definite n x n matrix W[src] (row-major) into W[dst] (Gauss-Jordan).
    Raises ValueError("singular joint inertia") for a pivot below 1e-12 of the largest diagonal entry (the
    joint's DOFs are dependent: the inverse would be meaningless)."""
    if n == 1:
        if not abs(W[src].real) > 0.0:
            raise ValueError("singular joint inertia")
        W[dst] = 1.0 / W[src]
        return
    A = np.empty((n, 2 * n), dtype=W.dtype)
    scale = 0.0
    for r in range(n):
        scale = max(scale, abs(W[src + n * r + r].real))
        for c in range(n):
            A[r, c] = W[src + n * r + c]
            A[r, n + c] = 1.0 if r == c else 0.0
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(A[r, c].real) > abs(A[piv, c].real):
                piv = r
        if piv != c:
            for k in range(2 * n):
                tmp = A[c, k]
                A[c, k] = A[piv, k]
                A[piv, k] = tmp
        d = A[c, c]
        if not abs(d.real) > 1e-12 * scale:
            raise ValueError("singular joint inertia")
        for k in range(2 * n):
            A[c, k] = A[c, k] / d
        for r in range(n):
            if r != c:
                f = A[r, c]
                for k in range(2 * n):
                    A[r, k] -= f * A[c, k]
    for r in range(n):
        for c in range(n):
            W[dst + n * r + c] = A[r, n + c]

