"""Spline joints of Lee & Terzopoulos (2008): a cyclic spline curve (1 DOF) and a spline surface (2 DOF).

Curve (RedMax supplemental §5.2, Sueda notes §2.4.12): control frames C_1..C_n in SE(3), differences
``dC_i = log(C_{i-1}^-1 C_i)`` (cyclic, ``dC_1 = log(C_n^-1 C_1)``), parameter wrapped into [0, n),
``k = floor(q)``, ``u = q - k`` and

    Q = C_{k+1} exp(dC_{k+2} Bt_2(u)) exp(dC_{k+3} Bt_3(u)) exp(dC_{k+4} Bt_4(u))

with the cumulative cubic B-spline basis ``Bt_i = sum_{j>=i} B_j`` (notes Eqs. 2.68-2.73).  S and dS/dq
follow notes Algorithm 3 with its line-10 typo fixed (the last factor is Bt'_i, confirmed by finite
differences): for each factor ``Q_i = exp(dC_i Bt_i)`` with ``A_i = Ad(Q_i^-1)``,

    S <- dC_i Bt'_i + A_i S,    dS <- dC_i Bt''_i + A_i (dS + ad(S_old) dC_i Bt'_i),

and ``Sdot = dS/dq qd``.  The stored q is never wrapped; wrapping happens only here.

Surface (supplemental §5.3, Algorithm 5): six scalar fields ``f_k(q) = sum_{i1,i2} c_k[i1,i2]
b_{i1}(q2) b_{i2}(q1)`` (the first grid index pairs with q2), one per basis twist in the order translate
x, y, z, rotate x, y, z, and ``Q = prod_k exp(e_k f_k(q))``.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax._validate import check_transform
from redmax.errors import ModelError
from redmax.joints.base import Joint, JointKernels
from redmax.spatial import Ad, ad, compose, exp_se3, inv_se3, log_se3

SPLINE_CURVE = 8
SPLINE_SURFACE = 9

# Uniform cubic B-spline basis matrix (notes Eq. 2.68): B_i(u) = B[i] . (1, u, u^2, u^3)
B_SPLINE = np.array(
    [[1.0, -3.0, 3.0, -1.0], [4.0, 0.0, -6.0, 3.0], [1.0, 3.0, 3.0, -3.0], [0.0, 0.0, 0.0, 1.0]]
) / 6.0


@njit(cache=True)
def bspline_basis(u, b, bd, bdd):
    """Fill b, b', b'' (4,) of the uniform cubic B-spline basis at u."""
    for i in range(4):
        b[i] = B_SPLINE[i, 0] + u * (B_SPLINE[i, 1] + u * (B_SPLINE[i, 2] + u * B_SPLINE[i, 3]))
        bd[i] = B_SPLINE[i, 1] + u * (2.0 * B_SPLINE[i, 2] + 3.0 * u * B_SPLINE[i, 3])
        bdd[i] = 2.0 * B_SPLINE[i, 2] + 6.0 * u * B_SPLINE[i, 3]


@njit(cache=True)
def curve_segment(p, q):
    """The curve's control-frame count n, the segment k of q wrapped into [0, n) (``s = q - n floor(q/n)``,
    ``k = floor(s)``) and the local parameter ``u = s - k`` (of q's dtype)."""
    n = int(p[0])
    m = np.floor(q[0].real / n)
    s = q[0] - m * n
    k = int(np.floor(s.real))
    if k >= n:
        k = n - 1
    if k < 0:
        k = 0
    return n, k, s - k


@njit(cache=True)
def calc_spline_curve(p, q, qd, js, Q, S, Sdot):
    """Spline curve joint; p = [n, C_1..C_n (16 each, row-major), dC_1..dC_n (6 each)]."""
    n, k, u = curve_segment(p, q)
    dt = q.dtype
    b = np.empty(4, dtype=dt)
    bd = np.empty(4, dtype=dt)
    bdd = np.empty(4, dtype=dt)
    bspline_basis(u, b, bd, bdd)
    # cumulative basis Bt_i = sum_{j >= i} b_j
    bt = np.empty(4, dtype=dt)
    btd = np.empty(4, dtype=dt)
    btdd = np.empty(4, dtype=dt)
    acc = 0.0 * u
    accd = 0.0 * u
    accdd = 0.0 * u
    for i in range(3, -1, -1):
        acc += b[i]
        accd += bd[i]
        accdd += bdd[i]
        bt[i] = acc
        btd[i] = accd
        btdd[i] = accdd
    c0 = 1 + k % n * 16
    E = np.empty((4, 4), dtype=dt)
    for r in range(4):
        for c in range(4):
            E[r, c] = p[c0 + 4 * r + c]
    Sv = np.zeros(6, dtype=dt)
    dS = np.zeros(6, dtype=dt)
    d0 = 1 + 16 * n
    for i in range(1, 4):
        j = (k + i) % n  # 0-based index of dC_{k+1+i}
        dC = np.empty(6, dtype=dt)
        for r in range(6):
            dC[r] = p[d0 + 6 * j + r]
        Qi = exp_se3(dC * bt[i])
        E = compose(E, Qi)
        if i == 1:
            for r in range(6):
                Sv[r] = dC[r] * btd[i]
                dS[r] = dC[r] * btdd[i]
        else:
            Ai = Ad(inv_se3(Qi))
            ai = ad(Sv)
            dS = dC * btdd[i] + Ai @ (dS + ai @ (dC * btd[i]))
            Sv = dC * btd[i] + Ai @ Sv
    for r in range(4):
        for c in range(4):
            Q[r, c] = E[r, c]
    for r in range(6):
        S[r, 0] = Sv[r]
        Sdot[r, 0] = dS[r] * qd[0]


@njit(cache=True)
def _surface_fields(p, q, f, f1, f2, f11, f12, f22):
    """Values and first/second partials of the six tensor-product fields at q = (q1, q2)."""
    dt = q.dtype
    b1 = np.empty(4, dtype=dt)
    b1d = np.empty(4, dtype=dt)
    b1dd = np.empty(4, dtype=dt)
    b2 = np.empty(4, dtype=dt)
    b2d = np.empty(4, dtype=dt)
    b2dd = np.empty(4, dtype=dt)
    bspline_basis(q[0], b1, b1d, b1dd)
    bspline_basis(q[1], b2, b2d, b2dd)
    for k in range(6):
        v = 0.0 * q[0]
        v1 = 0.0 * q[0]
        v2 = 0.0 * q[0]
        v11 = 0.0 * q[0]
        v12 = 0.0 * q[0]
        v22 = 0.0 * q[0]
        for i1 in range(4):  # pairs with q2
            for i2 in range(4):  # pairs with q1
                c = p[16 * k + 4 * i1 + i2]
                v += c * b2[i1] * b1[i2]
                v1 += c * b2[i1] * b1d[i2]
                v2 += c * b2d[i1] * b1[i2]
                v11 += c * b2[i1] * b1dd[i2]
                v12 += c * b2d[i1] * b1d[i2]
                v22 += c * b2dd[i1] * b1[i2]
        f[k] = v
        f1[k] = v1
        f2[k] = v2
        f11[k] = v11
        f12[k] = v12
        f22[k] = v22


@njit(cache=True)
def _basis_twist(k, dt):
    """Basis twist e_k: k = 0, 1, 2 translate x, y, z; k = 3, 4, 5 rotate x, y, z."""
    e = np.zeros(6, dtype=dt)
    if k < 3:
        e[3 + k] = 1.0
    else:
        e[k - 3] = 1.0
    return e


@njit(cache=True)
def calc_spline_surface(p, q, qd, js, Q, S, Sdot):
    """Spline surface joint (supplemental Algorithm 5); p = 6 fields x 4 x 4 control values (row-major)."""
    dt = q.dtype
    f = np.empty(6, dtype=dt)
    fd = np.empty((2, 6), dtype=dt)  # fd[i, k] = d f_k / d q_i
    fdd = np.empty((2, 2, 6), dtype=dt)  # fdd[i, j, k]
    f1 = np.empty(6, dtype=dt)
    f2 = np.empty(6, dtype=dt)
    f11 = np.empty(6, dtype=dt)
    f12 = np.empty(6, dtype=dt)
    f22 = np.empty(6, dtype=dt)
    _surface_fields(p, q, f, f1, f2, f11, f12, f22)
    for k in range(6):
        fd[0, k] = f1[k]
        fd[1, k] = f2[k]
        fdd[0, 0, k] = f11[k]
        fdd[0, 1, k] = f12[k]
        fdd[1, 0, k] = f12[k]
        fdd[1, 1, k] = f22[k]
    Sc = np.zeros((2, 6), dtype=dt)
    dS = np.zeros((2, 2, 6), dtype=dt)  # dS[i, j] = d S_i / d q_j
    e = _basis_twist(0, dt)
    E = exp_se3(e * f[0])
    for i in range(2):
        Sc[i] = e * fd[i, 0]
        for j in range(2):
            dS[i, j] = e * fdd[i, j, 0]
    for k in range(1, 6):
        e = _basis_twist(k, dt)
        Qk = exp_se3(e * f[k])
        E = compose(E, Qk)
        Ak = Ad(inv_se3(Qk))
        for i in range(2):
            ai = ad(np.ascontiguousarray(Sc[i]))
            for j in range(2):
                dS[i, j] = e * fdd[i, j, k] + Ak @ (dS[i, j] + ai @ (e * fd[j, k]))
            Sc[i] = e * fd[i, k] + Ak @ Sc[i]
    for r in range(4):
        for c in range(4):
            Q[r, c] = E[r, c]
    for i in range(2):
        for r in range(6):
            S[r, i] = Sc[i, r]
            Sdot[r, i] = dS[i, 0, r] * qd[0] + dS[i, 1, r] * qd[1]


@njit(cache=True)
def _basis_jets(u, D):
    """Uniform cubic B-spline basis and its derivatives: D[d, i] = d^d b_i/du^d, d = 0..3."""
    for i in range(4):
        D[0, i] = B_SPLINE[i, 0] + u * (B_SPLINE[i, 1] + u * (B_SPLINE[i, 2] + u * B_SPLINE[i, 3]))
        D[1, i] = B_SPLINE[i, 1] + u * (2.0 * B_SPLINE[i, 2] + 3.0 * u * B_SPLINE[i, 3])
        D[2, i] = 2.0 * B_SPLINE[i, 2] + 6.0 * u * B_SPLINE[i, 3]
        D[3, i] = 6.0 * B_SPLINE[i, 3] + 0.0 * u


@njit(cache=True)
def _screw_chain(xi, th, Sv):
    """Twists in the final frame of the screws exp(xi_0 th_0) ... exp(xi_{m-1} th_{m-1}): Sv[:, k] =
    Ad(P_k^-1) xi_k with P_k the product of the later factors.  Returns the product (4, 4)."""
    m = th.shape[0]
    dt = Sv.dtype
    Acc = np.eye(6, dtype=dt)
    P = np.eye(4, dtype=dt)
    for k in range(m - 1, -1, -1):
        x = np.ascontiguousarray(xi[:, k])
        Sv[:, k] = Acc @ x
        Qk = exp_se3(x * th[k])
        Acc = Acc @ Ad(inv_se3(Qk))
        P = compose(Qk, P)
    return P


@njit(cache=True)
def expand_spline_curve(p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """Spline curve (see ``joints.spline``): screws dC_{k+2..k+4} with coordinates Bt_2..4(u)."""
    n, k, u = curve_segment(p, q)
    dt = q.dtype
    D = np.empty((4, 4), dtype=dt)
    _basis_jets(u, D)
    Bt = np.zeros((4, 4), dtype=dt)  # Bt[d, i] = sum_{j >= i} D[d, j]
    for d in range(4):
        acc = 0.0 * u
        for i in range(3, -1, -1):
            acc += D[d, i]
            Bt[d, i] = acc
    d0 = 1 + 16 * n
    xi = np.empty((6, 3), dtype=dt)
    th = np.empty(3, dtype=dt)
    for i in range(1, 4):
        j = (k + i) % n
        for r in range(6):
            xi[r, i - 1] = p[d0 + 6 * j + r]
        th[i - 1] = Bt[0, i]
        A[i - 1, 0] = Bt[1, i]
        if jets >= 1:
            dA[i - 1, 0, 0] = Bt[2, i]
        if jets >= 2:
            d2A[i - 1, 0, 0, 0] = Bt[3, i]
    _screw_chain(xi, th, Sv)


@njit(cache=True)
def expand_spline_surface(p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """Spline surface (supplemental Alg. 5): six screws e_k with coordinates f_k(q1, q2)."""
    dt = q.dtype
    D1 = np.empty((4, 4), dtype=dt)  # basis jets in q1 (pairs with the second grid index)
    D2 = np.empty((4, 4), dtype=dt)  # in q2
    _basis_jets(q[0], D1)
    _basis_jets(q[1], D2)
    F = np.zeros((6, 4, 4), dtype=dt)  # F[k, a1, a2] = d^(a1+a2) f_k / dq1^a1 dq2^a2
    for k in range(6):
        for a1 in range(4):
            for a2 in range(4):
                v = 0.0 * q[0]
                for i1 in range(4):
                    for i2 in range(4):
                        v += p[16 * k + 4 * i1 + i2] * D2[a2, i1] * D1[a1, i2]
                F[k, a1, a2] = v
    xi = np.zeros((6, 6), dtype=dt)
    th = np.empty(6, dtype=dt)
    for k in range(6):
        if k < 3:
            xi[3 + k, k] = 1.0
        else:
            xi[k - 3, k] = 1.0
        th[k] = F[k, 0, 0]
        for a in range(2):
            A[k, a] = F[k, 1 - a, a]
            for b in range(2 if jets >= 1 else 0):
                n2 = a + b
                dA[k, a, b] = F[k, 2 - n2, n2]
                for e in range(2 if jets >= 2 else 0):
                    n3 = n2 + e
                    d2A[k, a, b, e] = F[k, 3 - n3, n3]
                    for f in range(2 if jets >= 3 else 0):
                        n4 = n3 + f
                        if n4 <= 3 and 4 - n4 <= 3:
                            d3A[k, a, b, e, f] = F[k, 4 - n4, n4]
    _screw_chain(xi, th, Sv)


@njit(cache=True)
def layout_spline_curve(js, tangent, sizes, o):
    """Three screws, A = dBt/du (not trivial)."""
    for k in range(3):
        sizes[o + k] = 1
    return o + 3, False


@njit(cache=True)
def layout_spline_surface(js, tangent, sizes, o):
    """Six screws, A = df/dq (not trivial)."""
    for k in range(6):
        sizes[o + k] = 1
    return o + 6, False


class SplineCurve(Joint):
    """Cyclic cubic B-spline curve joint through ``frames`` (a sequence of n >= 4 rigid 4x4 transforms).

    q is the curve parameter: one unit of q per control frame, wrapping with period n.
    """

    kind = "spline_curve"
    kernels = JointKernels(calc_spline_curve, layout_spline_curve, expand_spline_curve)
    scene_keys = ("frames",)
    code = SPLINE_CURVE
    nq = 1
    dof_labels = ("",)

    def __init__(self, frames):
        self.frames = frames

    def params(self, owner):
        try:
            C = [np.asarray(F, dtype=float) for F in self.frames]
        except (TypeError, ValueError):
            raise ModelError(f"{owner}: spline control frames must be 4x4 numeric arrays") from None
        n = len(C)
        if n < 4:
            raise ModelError(f"{owner}: a spline curve needs at least 4 control frames, got {n}")
        for i, F in enumerate(C):
            check_transform(F, f"{owner}: control frame {i}")
        dC = [log_se3(np.ascontiguousarray(inv_se3(C[i - 1]) @ C[i])) for i in range(n)]
        return np.concatenate([[float(n)], *[F.reshape(-1) for F in C], *dC])

    def describe(self):
        return {"type": self.kind, "frames": [np.asarray(F, dtype=float).tolist() for F in self.frames]}

    @classmethod
    def from_scene(cls, read):
        return cls(read.placements("frames"))

    def to_scene(self, write) -> dict:
        return {"type": self.kind, "frames": [write.placement(F) or {} for F in self.frames]}


class SplineSurface(Joint):
    """Spline surface joint: ``grid`` (6, 4, 4) control values of the fields (tx, ty, tz, rx, ry, rz).

    ``grid[k][i1][i2]`` multiplies ``b_{i1}(q2) b_{i2}(q1)``; q = (q1, q2), usually in [0, 1].
    """

    kind = "spline_surface"
    kernels = JointKernels(calc_spline_surface, layout_spline_surface, expand_spline_surface)
    scene_keys = ("grid",)
    code = SPLINE_SURFACE
    nq = 2
    dof_labels = ("u", "v")

    def __init__(self, grid):
        self.grid = grid

    def params(self, owner):
        try:
            g = np.asarray(self.grid, dtype=float)
        except (TypeError, ValueError):
            raise ModelError(f"{owner}: spline surface grid must be numeric with shape (6, 4, 4)") from None
        if g.shape != (6, 4, 4):
            raise ModelError(f"{owner}: spline surface grid must have shape (6, 4, 4), got {g.shape}")
        if not np.all(np.isfinite(g)):
            raise ModelError(f"{owner}: spline surface grid contains NaN or inf")
        return g.reshape(-1).copy()

    def describe(self):
        return {"type": self.kind, "grid": np.asarray(self.grid, dtype=float).tolist()}

    @classmethod
    def from_scene(cls, read):
        return cls(read.array("grid", (6, 4, 4)))
