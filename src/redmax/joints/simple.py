"""Joints with closed-form Q, S and Sdot: fixed, revolute, prismatic, planar, translational, universal.

Kernel contract (all families): ``calc(p, q, qd, js, Q, S, Sdot)`` fills the joint transform ``Q``
(4, 4), the joint Jacobian ``S`` (6, n) with ``[S_k] = Q^-1 dQ/dq_k`` and its time derivative ``Sdot``
(6, n) for coordinates ``q`` and rates ``qd`` (both (n,)); ``p`` holds the joint parameters and ``js`` the
chart word.  Outputs are zero on entry (the dispatcher clears them) and share the dtype of ``q``.
Formulas: RedMax supplemental §4 and Sueda notes §2.4.  Their core expansions (``layout``, ``expand``; see
:class:`redmax.joints.base.JointKernels`): one core joint with ``A = 1`` (revolute, prismatic: a screw; planar,
translational: a planar or translational core joint); universal: two screws, the first turned by the second
angle.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.errors import ModelError
from redmax.joints.base import Joint, JointKernels, as_axis

FIXED = 0
REVOLUTE = 1
PRISMATIC = 2
PLANAR = 3
TRANSLATIONAL = 4
UNIVERSAL = 5


@njit(cache=True)
def calc_fixed(p, q, qd, js, Q, S, Sdot):
    """Fixed joint: Q = I, S is 6x0 (supplemental §4.1)."""
    for k in range(4):
        Q[k, k] = 1.0


@njit(cache=True)
def calc_revolute(p, q, qd, js, Q, S, Sdot):
    """Revolute about unit axis a = p[0:3]: Q = [Rot(a, q) 0; 0 1], S = [a; 0], Sdot = 0 (notes Eq. 2.46)."""
    a0 = p[0]
    a1 = p[1]
    a2 = p[2]
    c = np.cos(q[0])
    s = np.sin(q[0])
    t = 1.0 - c
    Q[0, 0] = c + a0 * a0 * t
    Q[0, 1] = a0 * a1 * t - a2 * s
    Q[0, 2] = a0 * a2 * t + a1 * s
    Q[1, 0] = a1 * a0 * t + a2 * s
    Q[1, 1] = c + a1 * a1 * t
    Q[1, 2] = a1 * a2 * t - a0 * s
    Q[2, 0] = a2 * a0 * t - a1 * s
    Q[2, 1] = a2 * a1 * t + a0 * s
    Q[2, 2] = c + a2 * a2 * t
    Q[3, 3] = 1.0
    S[0, 0] = a0
    S[1, 0] = a1
    S[2, 0] = a2


@njit(cache=True)
def calc_prismatic(p, q, qd, js, Q, S, Sdot):
    """Prismatic along unit axis a = p[0:3]: Q = [I a q; 0 1], S = [0; a] (supplemental Eqs. 23-24)."""
    for k in range(4):
        Q[k, k] = 1.0
    for k in range(3):
        Q[k, 3] = p[k] * q[0]
        S[3 + k, 0] = p[k]


@njit(cache=True, inline="always")
def calc_simple(code, p, q, qd, js, Q, S, Sdot):
    """:func:`calc_fixed`, :func:`calc_revolute` or :func:`calc_prismatic` by type code (the joints of a lean
    model, ``redmax.model.layout``)."""
    if code == REVOLUTE:
        calc_revolute(p, q, qd, js, Q, S, Sdot)
    elif code == PRISMATIC:
        calc_prismatic(p, q, qd, js, Q, S, Sdot)
    else:
        calc_fixed(p, q, qd, js, Q, S, Sdot)


@njit(cache=True)
def calc_planar(p, q, qd, js, Q, S, Sdot):
    """Planar translation along b1 = p[0:3], b2 = p[3:6]: Q = [I B q; 0 1], S = [0; B] (notes Eqs. 2.27-2.28)."""
    for k in range(4):
        Q[k, k] = 1.0
    for k in range(3):
        Q[k, 3] = p[k] * q[0] + p[3 + k] * q[1]
        S[3 + k, 0] = p[k]
        S[3 + k, 1] = p[3 + k]


@njit(cache=True)
def calc_translational(p, q, qd, js, Q, S, Sdot):
    """Translational joint: Q = [I q; 0 1], S = [0; I] (notes Eqs. 2.29-2.30)."""
    for k in range(4):
        Q[k, k] = 1.0
    for k in range(3):
        Q[k, 3] = q[k]
        S[3 + k, k] = 1.0


@njit(cache=True)
def calc_universal(p, q, qd, js, Q, S, Sdot):
    """Universal joint Q = Rx(q1) Ry(q2); S = [(c2, 0, s2, 0, 0, 0), e_y] (supplemental Eqs. 32-35)."""
    c1 = np.cos(q[0])
    s1 = np.sin(q[0])
    c2 = np.cos(q[1])
    s2 = np.sin(q[1])
    Q[0, 0] = c2
    Q[0, 2] = s2
    Q[1, 0] = s1 * s2
    Q[1, 1] = c1
    Q[1, 2] = -s1 * c2
    Q[2, 0] = -c1 * s2
    Q[2, 1] = s1
    Q[2, 2] = c1 * c2
    Q[3, 3] = 1.0
    S[0, 0] = c2
    S[2, 0] = s2
    S[1, 1] = 1.0
    Sdot[0, 0] = -s2 * qd[1]
    Sdot[2, 0] = c2 * qd[1]


@njit(cache=True)
def layout_screw(js, tangent, sizes, o):
    """One 1-DOF core joint (revolute, prismatic)."""
    sizes[o] = 1
    return o + 1, True


@njit(cache=True)
def layout_planar(js, tangent, sizes, o):
    """One 2-DOF (planar) core joint."""
    sizes[o] = 2
    return o + 1, True


@njit(cache=True)
def layout_translational(js, tangent, sizes, o):
    """One 3-DOF (translational) core joint."""
    sizes[o] = 3
    return o + 1, True


@njit(cache=True)
def layout_universal(js, tangent, sizes, o):
    """Two screws."""
    sizes[o] = 1
    sizes[o + 1] = 1
    return o + 2, True


@njit(cache=True)
def expand_revolute(p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """Sv = [a; 0], A = 1."""
    for k in range(3):
        Sv[k, 0] = p[k]
    A[0, 0] = 1.0


@njit(cache=True)
def expand_prismatic(p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """Sv = [0; a], A = 1."""
    for k in range(3):
        Sv[3 + k, 0] = p[k]
    A[0, 0] = 1.0


@njit(cache=True)
def expand_planar(p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """Sv = [0 0; b1 b2], A = 1."""
    for k in range(3):
        Sv[3 + k, 0] = p[k]
        Sv[3 + k, 1] = p[3 + k]
    A[0, 0] = 1.0
    A[1, 1] = 1.0


@njit(cache=True)
def expand_translational(p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """Sv = [0; 1], A = 1."""
    for k in range(3):
        Sv[3 + k, k] = 1.0
        A[k, k] = 1.0


@njit(cache=True)
def expand_universal(p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """Screws Ry(q2)^T e_x and e_y in the joint's frame, A = 1."""
    Sv[0, 0] = np.cos(q[1])
    Sv[2, 0] = np.sin(q[1])
    Sv[1, 1] = 1.0
    A[0, 0] = 1.0
    A[1, 1] = 1.0


class Fixed(Joint):
    """Rigid attachment (no DOF)."""

    kind = "fixed"
    kernels = JointKernels(calc_fixed)

    def maximal_basis(self, p):
        return np.zeros((6, 0)), "fixed"
    code = FIXED
    nq = 0
    dof_labels = ()


class Revolute(Joint):
    """Hinge about ``axis`` (any non-zero 3-vector, normalised) of the joint frame; q in radians."""

    kind = "revolute"
    kernels = JointKernels(calc_revolute, layout_screw, expand_revolute)
    scene_keys = ("axis",)
    code = REVOLUTE
    nq = 1
    dof_labels = ("",)

    def __init__(self, axis=(0.0, 0.0, 1.0)):
        self.axis = axis

    def params(self, owner):
        return as_axis(self.axis, "axis", owner)

    def describe(self):
        return {"type": self.kind, "axis": np.asarray(self.axis, dtype=float).tolist()}

    @classmethod
    def from_scene(cls, read):
        return cls(read.array("axis", (3,), (0.0, 0.0, 1.0)))

    def maximal_basis(self, p):
        return np.concatenate([p[:3], np.zeros(3)])[:, None], "revolute"


class Prismatic(Joint):
    """Slider along ``axis`` (normalised) of the joint frame; q in length units."""

    kind = "prismatic"
    kernels = JointKernels(calc_prismatic, layout_screw, expand_prismatic)
    scene_keys = ("axis",)
    code = PRISMATIC
    nq = 1
    dof_labels = ("",)

    def __init__(self, axis=(1.0, 0.0, 0.0)):
        self.axis = axis

    def params(self, owner):
        return as_axis(self.axis, "axis", owner)

    def describe(self):
        return {"type": self.kind, "axis": np.asarray(self.axis, dtype=float).tolist()}

    @classmethod
    def from_scene(cls, read):
        return cls(read.array("axis", (3,), (1.0, 0.0, 0.0)))

    def maximal_basis(self, p):
        return np.concatenate([np.zeros(3), p[:3]])[:, None], "prismatic"


class Planar(Joint):
    """Translation in a plane spanned by ``axis1`` and ``axis2`` (default the joint's x and y); q = (x, y)."""

    kind = "planar"
    kernels = JointKernels(calc_planar, layout_planar, expand_planar)
    scene_keys = ("axis1", "axis2")
    code = PLANAR
    nq = 2
    dof_labels = ("x", "y")

    def __init__(self, axis1=(1.0, 0.0, 0.0), axis2=(0.0, 1.0, 0.0)):
        self.axis1 = axis1
        self.axis2 = axis2

    def params(self, owner):
        b1 = as_axis(self.axis1, "axis1", owner)
        b2 = as_axis(self.axis2, "axis2", owner)
        if np.linalg.norm(np.cross(b1, b2)) < 1e-9:
            raise ModelError(f"{owner}: planar axes must not be parallel, got {b1.tolist()} and {b2.tolist()}")
        return np.concatenate([b1, b2])

    def describe(self):
        return {
            "type": self.kind,
            "axis1": np.asarray(self.axis1, dtype=float).tolist(),
            "axis2": np.asarray(self.axis2, dtype=float).tolist(),
        }

    @classmethod
    def from_scene(cls, read):
        return cls(read.array("axis1", (3,), (1.0, 0.0, 0.0)), read.array("axis2", (3,), (0.0, 1.0, 0.0)))

    def maximal_basis(self, p):
        S = np.zeros((6, 2))
        S[3:, 0], S[3:, 1] = p[:3], p[3:6]
        return S, "planar"


class Translational(Joint):
    """Free translation, no rotation; q = (x, y, z) in the joint frame."""

    kind = "translational"
    kernels = JointKernels(calc_translational, layout_translational, expand_translational)
    code = TRANSLATIONAL
    nq = 3
    dof_labels = ("x", "y", "z")

    def maximal_basis(self, p):
        return np.vstack([np.zeros((3, 3)), np.eye(3)]), "translational"


class Universal(Joint):
    """Universal (Cardan) joint ``Q = Rx(q1) Ry(q2)``: bends about x then y, no twist about z."""

    kind = "universal"
    kernels = JointKernels(calc_universal, layout_universal, expand_universal)
    code = UNIVERSAL
    nq = 2
    dof_labels = ("x", "y")

