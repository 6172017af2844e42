"""Spherical joint in Euler angles, any of the 12 charts, with automatic chart switching.

Chart (a1, a2, a3) gives ``R = R_a1(q1) R_a2(q2) R_a3(q3)`` (Sueda notes §2.4.5, Tables 1-3).  Instead of
twelve tables we use the structure every chart shares: the body angular velocity is

    w = R3^T R2^T e_a1 qd1 + R3^T e_a2 qd2 + e_a3 qd3,

so the columns of S_top are ``s1 = R3^T R2^T e_a1``, ``s2 = R3^T e_a2``, ``s3 = e_a3`` and, with
``(R^T)' = -[e] qd R^T`` for each elementary rotation,

    s1' = -qd3 e_a3 x s1 - qd2 R3^T (e_a2 x R2^T e_a1),   s2' = -qd3 e_a3 x s2,   s3' = 0.

``det S_top`` is ``-sin q2`` (proper Euler, a1 = a3) or ``+-cos q2`` (Tait-Bryan).  Before a step, when
``|det S_top| < SWITCH_DET`` the joint moves to the chart of largest ``|det S_top|`` at the current
rotation (always >= sqrt(2/3), since each row of R has an entry of magnitude <= 1/sqrt(3)), mapping q by
the inverse formulas of notes Table 3 (written with atan2 for accuracy) and qd by
``S_new^-1 S_old qd`` (notes Eq. 2.40), so R and the angular velocity are unchanged.

The chart is part of the state (``jstate``), not of the model.
"""

from __future__ import annotations

import math

import numpy as np

from redmax._jit import njit
from redmax.errors import ModelError
from redmax.joints.base import Joint, JointKernels
from redmax.spatial import solve3

SPHERICAL_EULER = 7

CHARTS = ("XYX", "XZX", "YZY", "YXY", "ZXZ", "ZYZ", "XYZ", "XZY", "YZX", "YXZ", "ZXY", "ZYX")
_AX = {"X": 0, "Y": 1, "Z": 2}
CHART_AXES = np.array([[_AX[c] for c in name] for name in CHARTS], dtype=np.int64)  # (12, 3)

SWITCH_DET = 0.5  # switch charts when |det S_top| falls below this


@njit(cache=True)
def _elem_rot(axis, th, R):
    """Elementary rotation about coordinate axis 0/1/2 by th, written into R (3, 3)."""
    c = np.cos(th)
    s = np.sin(th)
    for r in range(3):
        for k in range(3):
            R[r, k] = 0.0 * c
    i = axis
    j = (axis + 1) % 3
    k = (axis + 2) % 3
    R[i, i] = 1.0 + 0.0 * c
    R[j, j] = c
    R[k, k] = c
    R[j, k] = -s
    R[k, j] = s


@njit(cache=True)
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def euler_R_S(chart, q, qd, R, Stop, Sdot_top):
    """Rotation (3,3), S_top (3,3) and Sdot_top (3,3) of chart index ``chart`` at q, qd (3,)."""
    a1 = CHART_AXES[chart, 0]
    a2 = CHART_AXES[chart, 1]
    a3 = CHART_AXES[chart, 2]
    R1 = np.empty((3, 3), dtype=q.dtype)
    R2 = np.empty((3, 3), dtype=q.dtype)
    R3 = np.empty((3, 3), dtype=q.dtype)
    _elem_rot(a1, q[0], R1)
    _elem_rot(a2, q[1], R2)
    _elem_rot(a3, q[2], R3)
    for r in range(3):  # R = R1 R2 R3 (written out: no matrix-product or shape-checking code to compile)
        for c in range(3):
            R[r, c] = (R1[r, 0] * (R2[0, 0] * R3[0, c] + R2[0, 1] * R3[1, c] + R2[0, 2] * R3[2, c])
                       + R1[r, 1] * (R2[1, 0] * R3[0, c] + R2[1, 1] * R3[1, c] + R2[1, 2] * R3[2, c])
                       + R1[r, 2] * (R2[2, 0] * R3[0, c] + R2[2, 1] * R3[1, c] + R2[2, 2] * R3[2, c]))
    # u = R2^T e_a1 (row a1 of R2), s1 = R3^T u, s2 = R3^T e_a2 (row a2 of R3)
    u = np.empty(3, dtype=q.dtype)
    for r in range(3):
        u[r] = R2[a1, r]
    s1 = np.empty(3, dtype=q.dtype)
    for r in range(3):
        s1[r] = R3[0, r] * u[0] + R3[1, r] * u[1] + R3[2, r] * u[2]
    s2 = np.empty(3, dtype=q.dtype)
    for r in range(3):
        s2[r] = R3[a2, r]
    for r in range(3):
        Stop[r, 0] = s1[r]
        Stop[r, 1] = s2[r]
        Stop[r, 2] = 0.0
    Stop[a3, 2] = 1.0
    e2 = np.zeros(3, dtype=q.dtype)
    e2[a2] = 1.0
    e3 = np.zeros(3, dtype=q.dtype)
    e3[a3] = 1.0
    t1 = np.empty(3, dtype=q.dtype)
    t2 = np.empty(3, dtype=q.dtype)
    t3 = np.empty(3, dtype=q.dtype)
    _cross(e3, s1, t1)
    _cross(e2, u, t2)
    v = np.empty(3, dtype=q.dtype)
    for r in range(3):
        v[r] = R3[0, r] * t2[0] + R3[1, r] * t2[1] + R3[2, r] * t2[2]
    _cross(e3, s2, t3)
    for r in range(3):
        Sdot_top[r, 0] = -qd[2] * t1[r] - qd[1] * v[r]
        Sdot_top[r, 1] = -qd[2] * t3[r]
        Sdot_top[r, 2] = 0.0


@njit(cache=True)
def euler_det(chart, q2):
    """det S_top for the chart: -sin(q2) (proper) or the Tait-Bryan sign times cos(q2) (notes Table 3)."""
    a1 = CHART_AXES[chart, 0]
    a2 = CHART_AXES[chart, 1]
    a3 = CHART_AXES[chart, 2]
    if a1 == a3:
        return -np.sin(q2)
    # even permutation (XYZ, YZX, ZXY) -> +cos, odd -> -cos
    if (a2 - a1) % 3 == 1 and (a3 - a2) % 3 == 1:
        return np.cos(q2)
    return -np.cos(q2)


@njit(cache=True)
def euler_from_R(chart, R, q):
    """Angles q (3,) of chart ``chart`` reproducing the real rotation R (notes Table 3, atan2 form).

    Proper Euler (a, b, a) with c the third axis: q2 in [0, pi]; Tait-Bryan (a, b, c): q2 in [-pi/2, pi/2].
    """
    a1 = CHART_AXES[chart, 0]
    a2 = CHART_AXES[chart, 1]
    a3 = CHART_AXES[chart, 2]
    if a1 == a3:
        i = a1
        j = a2
        k = 3 - i - j  # the remaining axis
        # sign: +1 if (i, j, k) is an even permutation
        sg = 1.0 if (j - i) % 3 == 1 else -1.0
        q[1] = math.atan2(math.sqrt(R[j, i] ** 2 + R[k, i] ** 2), R[i, i])
        q[0] = math.atan2(R[j, i], -sg * R[k, i])
        q[2] = math.atan2(R[i, j], sg * R[i, k])
    else:
        i = a1
        j = a2
        k = a3
        sg = 1.0 if (j - i) % 3 == 1 else -1.0
        q[1] = math.atan2(sg * R[i, k], math.sqrt(R[j, k] ** 2 + R[k, k] ** 2))
        q[0] = math.atan2(-sg * R[j, k], R[k, k])
        q[2] = math.atan2(-sg * R[i, j], R[i, i])


@njit(cache=True)
def calc_spherical_euler(p, q, qd, js, Q, S, Sdot):
    """Euler-angle spherical joint in chart ``js & 15``: Q = [R 0; 0 1], S = [S_top; 0]."""
    chart = js & 15
    if chart >= 12:  # an invalid word would index the chart tables out of range (boundaries validate it too)
        raise ValueError("invalid Euler chart word")
    R = np.empty((3, 3), dtype=q.dtype)
    St = np.empty((3, 3), dtype=q.dtype)
    Sd = np.empty((3, 3), dtype=q.dtype)
    euler_R_S(chart, q, qd, R, St, Sd)
    for r in range(3):
        for k in range(3):
            Q[r, k] = R[r, k]
            S[r, k] = St[r, k]
            Sdot[r, k] = Sd[r, k]
    Q[3, 3] = 1.0


@njit(cache=True)
def reparam_spherical_euler(p, q, qd, js, margin):
    """Switch to the best chart when |det S_top| < SWITCH_DET + margin; maps q and qd in place.

    Real-valued only (chart choice is a discrete decision).  Returns ``(js_new, changed)``.
    """
    chart = js & 15
    if chart >= 12:
        raise ValueError("invalid Euler chart word")
    for k in range(3):  # a state that blew up is left to the caller's finiteness check (no solve on inf/NaN)
        if not (np.isfinite(q[k].real) and np.isfinite(qd[k].real)):
            return js, False
    if abs(euler_det(chart, q[1].real)) >= SWITCH_DET + margin:
        return js, False
    R = np.empty((3, 3))
    St = np.empty((3, 3))
    Sd = np.empty((3, 3))
    qr = np.empty(3)
    qdr = np.empty(3)
    for k in range(3):
        qr[k] = q[k].real
        qdr[k] = qd[k].real
    euler_R_S(chart, qr, qdr, R, St, Sd)
    w = St @ qdr
    best = chart
    best_det = -1.0
    qc = np.empty(3)
    for c in range(12):
        euler_from_R(c, R, qc)
        d = abs(euler_det(c, qc[1]))
        if d > best_det + 1e-12:
            best_det = d
            best = c
    euler_from_R(best, R, qc)
    R2 = np.empty((3, 3))
    euler_R_S(best, qc, qdr, R2, St, Sd)
    for k in range(3):
        if not np.isfinite(w[k]):  # an angular velocity that overflowed: report it as a non-finite rate
            qd[k] = w[k]
            return js, False
    if not best_det > 1e-300:  # a non-finite rotation (blown-up state): leave it to the finiteness check
        for k in range(3):
            qd[k] = np.nan
        return js, False
    qd_new = np.empty(3)
    solve3(St, w, qd_new)  # no exception on a numerically singular St: non-finite rates are reported later
    for k in range(3):
        q[k] = qc[k]
        qd[k] = qd_new[k]
    return (js & ~15) | best, True


@njit(cache=True)
def event_spherical_euler(p, q, js):
    """Positive while the current chart is acceptable: |det S_top| - SWITCH_DET."""
    if (js & 15) >= 12:
        raise ValueError("invalid Euler chart word")
    return abs(euler_det(js & 15, q[1].real)) - SWITCH_DET


@njit(cache=True)
def layout_spherical_euler(js, tangent, sizes, o):
    """Three screws (one per angle); one spherical core joint with ``tangent``."""
    if tangent:
        sizes[o] = 3
        return o + 1, True
    for k in range(3):
        sizes[o + k] = 1
    return o + 3, True


@njit(cache=True)
def expand_spherical_euler(p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """The chart's screws ``Sv = S_top`` (A = 1), or ``Sv = [1; 0]`` with ``tangent``."""
    if tangent:
        for k in range(3):
            Sv[k, k] = 1.0
            A[k, k] = 1.0
        return
    R = np.empty((3, 3), dtype=q.dtype)
    St = np.empty((3, 3), dtype=q.dtype)
    Sd = np.empty((3, 3), dtype=q.dtype)
    euler_R_S(js & 15, q, q, R, St, Sd)
    for r in range(3):
        for k in range(3):
            Sv[r, k] = St[r, k]
        A[r, r] = 1.0


class SphericalEuler(Joint):
    """Ball joint in Euler angles of ``chart`` (one of :data:`CHARTS`, e.g. "XYZ" or "ZYZ").

    The chart is the initial one; the simulation switches charts near singular configurations.
    """

    kind = "spherical_euler"
    kernels = JointKernels(calc_spherical_euler, layout_spherical_euler, expand_spherical_euler,
                           reparam_spherical_euler, event_spherical_euler)
    scene_keys = ("chart",)
    code = SPHERICAL_EULER
    nq = 3
    dof_labels = ("q1", "q2", "q3")

    def __init__(self, chart: str = "XYZ"):
        self.chart = chart

    def params(self, owner):
        self._chart_index(owner)
        return np.zeros(0)

    def _chart_index(self, owner: str) -> int:
        name = str(self.chart).upper()
        if name not in CHARTS:
            raise ModelError(f"{owner}: unknown Euler chart {self.chart!r}; expected one of {', '.join(CHARTS)}")
        return CHARTS.index(name)

    def jstate(self) -> int:
        return self._chart_index("spherical_euler joint")

    def can_reparam(self) -> bool:
        return True

    def chart_shifts(self) -> tuple[int, ...]:
        return (0,)

    @classmethod
    def from_scene(cls, read):
        return cls(read.string("chart", "XYZ"))

    def maximal_basis(self, p):
        return np.vstack([np.eye(3), np.zeros((3, 3))]), "spherical"

    def describe(self):
        return {"type": self.kind, "chart": str(self.chart).upper()}


def euler_angles(chart: str, R) -> np.ndarray:
    """Angles (3,) of ``chart`` for rotation matrix R (3, 3); convenience for setting initial states."""
    c = SphericalEuler(chart)._chart_index("euler_angles")
    q = np.empty(3)
    euler_from_R(c, np.ascontiguousarray(np.asarray(R, dtype=float)), q)
    return q
