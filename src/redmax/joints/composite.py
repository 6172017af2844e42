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
from redmax.joints.simple import Planar, Revolute, Translational
from redmax.joints.spherical_euler import SphericalEuler
from redmax.joints.spherical_exp import SphericalExp
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


@njit(cache=True)
def calc_composite(p, q, qd, js, Q, S, Sdot):
    """Composite joint kernel (see module docstring)."""
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
