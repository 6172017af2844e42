"""Composite joints ``Q = Q_1 Q_2 ... Q_m`` of primitive joints, and the free joints built from them.

Generalising RedMax supplemental §5.1 (two joints) to m joints chained through massless frames: with
``P_k = Q_{k+1} ... Q_m`` (``P_m = I``), the columns of joint k are ``Ad(P_k^-1) S_k`` and, because
``d/dt Ad(P^-1) = -ad(W) Ad(P^-1)`` where W is the body twist of P,

    Sdot block k = -ad(W_k) Ad(P_k^-1) S_k + Ad(P_k^-1) Sdot_k,    W_{k-1} = W_k + Ad(P_k^-1) S_k qd_k.

For two joints this is supplemental Eq. 51.  Free 2D = Composite(Planar, Revolute z) (notes §2.4.10);
free 3D = Composite(Translational, spherical) (notes §2.4.11) so that ``S = [[0, S_sph]; [R^T, 0]]``.

Parameter layout: ``[m, (code, nq, plen, params...) * m]``.  Sub-joint k's chart lives in bits
``4k..4k+3`` of the joint's ``jstate`` word.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.errors import ModelError
from redmax.joints.base import Joint
from redmax.joints.primitive import COMPOSITE, primitive_calc, primitive_event, primitive_reparam
from redmax.joints.simple import TRANSLATIONAL, Planar, Revolute, Translational
from redmax.joints.spherical_euler import SphericalEuler
from redmax.joints.spherical_exp import SPHERICAL_EXP, SphericalExp, sin_t_over_t, so3_jr_coeffs
from redmax.spatial import Ad, ad, compose, inv_se3


@njit(cache=True)
def _layout(p):
    """Return arrays (code, nq, poff, plen, qoff) of the m sub-joints."""
    m = int(p[0])
    code = np.empty(m, dtype=np.int64)
    nq = np.empty(m, dtype=np.int64)
    poff = np.empty(m, dtype=np.int64)
    plen = np.empty(m, dtype=np.int64)
    qoff = np.empty(m, dtype=np.int64)
    o = 1
    qo = 0
    for k in range(m):
        code[k] = int(p[o])
        nq[k] = int(p[o + 1])
        plen[k] = int(p[o + 2])
        poff[k] = o + 3
        qoff[k] = qo
        o += 3 + plen[k]
        qo += nq[k]
    return code, nq, poff, plen, qoff


@njit(cache=True, inline="always")
def is_free_exp(p):
    """Whether the parameters ``p`` of a composite joint are those of the free joint in exponential coordinates:
    translation (q[0:3]), then a spherical joint in exponential coordinates (q[3:6])."""
    return p.shape[0] == 7 and p[0] == 2 and p[1] == TRANSLATIONAL and p[4] == SPHERICAL_EXP


@njit(cache=True)
def calc_composite(p, q, qd, js, Q, S, Sdot):
    """Composite joint kernel (see module docstring)."""
    if is_free_exp(p):
        calc_free_exp(q, qd, Q, S, Sdot)  # the free joint in exponential coordinates, in closed form
        return
    dt = q.dtype
    code, nq, poff, plen, qoff = _layout(p)
    m = code.shape[0]
    Qs = np.zeros((m, 4, 4), dtype=dt)
    E = np.zeros((4, 4), dtype=dt)
    for r in range(4):
        E[r, r] = 1.0
    for k in range(m):
        n = nq[k]
        Sk = np.zeros((6, n), dtype=dt)
        Sdk = np.zeros((6, n), dtype=dt)
        Qk = np.zeros((4, 4), dtype=dt)
        sub = p[poff[k] : poff[k] + plen[k]]
        primitive_calc(code[k], sub, q[qoff[k] : qoff[k] + n], qd[qoff[k] : qoff[k] + n], (js >> (4 * k)) & 15,
                       Qk, Sk, Sdk)
        Qs[k] = Qk
        E = compose(E, Qk)
        for r in range(6):
            for c in range(n):
                S[r, qoff[k] + c] = Sk[r, c]
                Sdot[r, qoff[k] + c] = Sdk[r, c]
    for r in range(4):
        for c in range(4):
            Q[r, c] = E[r, c]
    # Backward sweep: A = Ad(P_k^-1), W = body twist of P_k.
    A = np.zeros((6, 6), dtype=dt)
    for r in range(6):
        A[r, r] = 1.0
    W = np.zeros(6, dtype=dt)
    for k in range(m - 1, -1, -1):
        n = nq[k]
        o = qoff[k]
        Sk = np.ascontiguousarray(S[:, o : o + n])
        Sdk = np.ascontiguousarray(Sdot[:, o : o + n])
        AS = A @ Sk
        newSd = -(ad(W) @ AS) + A @ Sdk
        for r in range(6):
            for c in range(n):
                S[r, o + c] = AS[r, c]
                Sdot[r, o + c] = newSd[r, c]
        W = W + AS @ np.ascontiguousarray(qd[o : o + n])
        if k > 0:
            A = A @ Ad(inv_se3(np.ascontiguousarray(Qs[k])))


@njit(cache=True)
def calc_free_exp(q, qd, Q, S, Sdot):
    """Free 3D joint (translation t = q[:3], then rotation vector r = q[3:]) in closed form, the result of the
    composite sweep above without its small matrix products: ``Q = [R t; 0 1]`` with ``R = exp([r])``,

        S = [[0, J_r]; [R^T, 0]],   Sdot = [[0, Jdot_r]; [-[w] R^T, 0]],   w = J_r rdot,

    ``J_r = 1 - b [r] + c [r]^2`` the right Jacobian of SO(3) and ``Jdot_r`` its rate (as
    :func:`redmax.joints.spherical_exp.sph_exp_S`).  Scalar-generic; outputs zero on entry."""
    r0, r1, r2 = q[3], q[4], q[5]
    d0, d1, d2 = qd[3], qd[4], qd[5]
    x = r0 * r0 + r1 * r1 + r2 * r2
    b, c, db, dc = so3_jr_coeffs(x)
    a = sin_t_over_t(x)
    # [r] and [r]^2 (symmetric: r r^T - x 1)
    W01, W02, W12 = -r2, r1, -r0
    V00, V11, V22 = r0 * r0 - x, r1 * r1 - x, r2 * r2 - x
    V01, V02, V12 = r0 * r1, r0 * r2, r1 * r2
    R00, R01, R02 = 1.0 + b * V00, a * W01 + b * V01, a * W02 + b * V02
    R10, R11, R12 = -a * W01 + b * V01, 1.0 + b * V11, a * W12 + b * V12
    R20, R21, R22 = -a * W02 + b * V02, -a * W12 + b * V12, 1.0 + b * V22
    J00, J01, J02 = 1.0 + c * V00, -b * W01 + c * V01, -b * W02 + c * V02
    J10, J11, J12 = b * W01 + c * V01, 1.0 + c * V11, -b * W12 + c * V12
    J20, J21, J22 = b * W02 + c * V02, b * W12 + c * V12, 1.0 + c * V22
    Q[0, 0], Q[0, 1], Q[0, 2], Q[0, 3] = R00, R01, R02, q[0]
    Q[1, 0], Q[1, 1], Q[1, 2], Q[1, 3] = R10, R11, R12, q[1]
    Q[2, 0], Q[2, 1], Q[2, 2], Q[2, 3] = R20, R21, R22, q[2]
    Q[3, 3] = 1.0
    S[3, 0], S[3, 1], S[3, 2] = R00, R10, R20  # R^T
    S[4, 0], S[4, 1], S[4, 2] = R01, R11, R21
    S[5, 0], S[5, 1], S[5, 2] = R02, R12, R22
    S[0, 3], S[0, 4], S[0, 5] = J00, J01, J02
    S[1, 3], S[1, 4], S[1, 5] = J10, J11, J12
    S[2, 3], S[2, 4], S[2, 5] = J20, J21, J22
    # Jdot_r = -bd [r] - b [rdot] + cd [r]^2 + c ([rdot][r] + [r][rdot]),  bd = db xd, cd = dc xd, xd = 2 r.rdot
    xd = 2.0 * (r0 * d0 + r1 * d1 + r2 * d2)
    bd = db * xd
    cd = dc * xd
    rd = r0 * d0 + r1 * d1 + r2 * d2  # [d][r] + [r][d] = d r^T + r d^T - 2 (r.d) 1
    M00, M11, M22 = 2.0 * (d0 * r0 - rd), 2.0 * (d1 * r1 - rd), 2.0 * (d2 * r2 - rd)
    M01, M02, M12 = d0 * r1 + r0 * d1, d0 * r2 + r0 * d2, d1 * r2 + r1 * d2
    D01, D02, D12 = -d2, d1, -d0
    Sdot[0, 3] = cd * V00 + c * M00
    Sdot[0, 4] = -bd * W01 - b * D01 + cd * V01 + c * M01
    Sdot[0, 5] = -bd * W02 - b * D02 + cd * V02 + c * M02
    Sdot[1, 3] = bd * W01 + b * D01 + cd * V01 + c * M01
    Sdot[1, 4] = cd * V11 + c * M11
    Sdot[1, 5] = -bd * W12 - b * D12 + cd * V12 + c * M12
    Sdot[2, 3] = bd * W02 + b * D02 + cd * V02 + c * M02
    Sdot[2, 4] = bd * W12 + b * D12 + cd * V12 + c * M12
    Sdot[2, 5] = cd * V22 + c * M22
    w0 = J00 * d0 + J01 * d1 + J02 * d2  # body angular velocity of the rotation
    w1 = J10 * d0 + J11 * d1 + J12 * d2
    w2 = J20 * d0 + J21 * d1 + J22 * d2
    for k in range(3):  # -[w] R^T, column k of R^T = row k of R
        a0, a1, a2 = Q[k, 0], Q[k, 1], Q[k, 2]
        Sdot[3, k] = -(w1 * a2 - w2 * a1)
        Sdot[4, k] = -(w2 * a0 - w0 * a2)
        Sdot[5, k] = -(w0 * a1 - w1 * a0)


@njit(cache=True)
def reparam_composite(p, q, qd, js, margin):
    """Re-parameterise each sub-joint in place; returns (js, changed)."""
    code, nq, poff, plen, qoff = _layout(p)
    changed = False
    out = js
    for k in range(code.shape[0]):
        n = nq[k]
        sub_js = (js >> (4 * k)) & 15
        new_js, ch = primitive_reparam(code[k], p[poff[k] : poff[k] + plen[k]], q[qoff[k] : qoff[k] + n],
                                       qd[qoff[k] : qoff[k] + n], sub_js, margin)
        if ch:
            changed = True
            out = (out & ~(15 << (4 * k))) | (new_js << (4 * k))
    return out, changed


@njit(cache=True)
def event_composite(p, q, js):
    """Smallest event value over the sub-joints."""
    code, nq, poff, plen, qoff = _layout(p)
    v = 1.0
    for k in range(code.shape[0]):
        e = primitive_event(code[k], p[poff[k] : poff[k] + plen[k]], q[qoff[k] : qoff[k] + nq[k]],
                            (js >> (4 * k)) & 15)
        if e < v:
            v = e
    return v


class Composite(Joint):
    """Chain of primitive joints through massless frames: ``Composite(j1, j2, ...)``, Q = Q1 Q2 ...

    Nested composites are flattened.  q is the concatenation of the sub-joints' coordinates.
    """

    kind = "composite"
    code = COMPOSITE
    scene_keys = ("joints",)

    def __init__(self, *joints):
        flat = []
        for j in joints:
            if isinstance(j, Composite):
                flat.extend(j.joints)
            elif isinstance(j, Joint):
                flat.append(j)
            else:
                raise ModelError(f"composite joint: expected Joint instances, got {type(j).__name__}")
        if len(flat) < 1:
            raise ModelError("composite joint: needs at least one sub-joint")
        if len(flat) > 15:
            raise ModelError("composite joint: at most 15 sub-joints are supported")
        self.joints = tuple(flat)
        self.nq = sum(j.nq for j in flat)
        labels = []
        for k, j in enumerate(flat):
            for lab in j.dof_labels:
                labels.append(f"{k}{lab}" if lab else f"{k}")
        self.dof_labels = tuple(labels)

    def params(self, owner):
        parts = [np.array([float(len(self.joints))])]
        for k, j in enumerate(self.joints):
            pk = np.asarray(j.params(f"{owner} (sub-joint {k}, {j.kind})"), dtype=float)
            parts.append(np.array([float(j.code), float(j.nq), float(pk.size)]))
            parts.append(pk)
        return np.concatenate(parts)

    def jstate(self) -> int:
        w = 0
        for k, j in enumerate(self.joints):
            w |= (j.jstate() & 15) << (4 * k)
        return w

    def can_reparam(self) -> bool:
        return any(j.can_reparam() for j in self.joints)

    def chart_shifts(self) -> tuple[int, ...]:
        return tuple(4 * k for k, j in enumerate(self.joints) if j.chart_shifts())

    def describe(self):
        return {"type": self.kind, "joints": [j.describe() for j in self.joints]}

    @classmethod
    def from_scene(cls, read):
        return cls(*read.joints("joints"))

    def to_scene(self, write) -> dict:
        return {"type": "composite", "joints": [j.to_scene(write) for j in self.joints]}


class Free2D(Composite):
    """Free motion in the joint's xy plane: planar (x, y) then revolute about z; q = (x, y, theta)."""

    kind = "free2d"
    scene_keys = ()

    def __init__(self):
        super().__init__(Planar(), Revolute((0.0, 0.0, 1.0)))
        self.dof_labels = ("x", "y", "theta")

    def describe(self):
        return {"type": self.kind}

    @classmethod
    def from_scene(cls, read):
        return cls()

    def to_scene(self, write) -> dict:
        return self.describe()


class Free3D(Composite):
    """Free rigid motion: translation then spherical; q = (x, y, z, r1, r2, r3).

    ``rotation="exp"`` (default) uses exponential coordinates, ``rotation="euler"`` Euler angles of
    ``chart``.  qd = (translation rate in the joint's parent frame, rotation-coordinate rates).
    """

    kind = "free3d"
    scene_keys = ("rotation", "chart")

    def __init__(self, rotation: str = "exp", chart: str = "XYZ"):
        if rotation == "exp":
            sph = SphericalExp()
        elif rotation == "euler":
            sph = SphericalEuler(chart)
        else:
            raise ModelError(f"free3d joint: rotation must be 'exp' or 'euler', got {rotation!r}")
        self.rotation = rotation
        self.chart = chart
        super().__init__(Translational(), sph)
        self.dof_labels = ("x", "y", "z", *sph.dof_labels)

    def describe(self):
        d = {"type": self.kind, "rotation": self.rotation}
        if self.rotation == "euler":
            d["chart"] = str(self.chart).upper()
        return d

    @classmethod
    def from_scene(cls, read):
        return cls(read.string("rotation", "exp"), read.string("chart", "XYZ"))

    def to_scene(self, write) -> dict:
        return self.describe()

    def maximal_basis(self, p):
        return np.eye(6), "free3d"
