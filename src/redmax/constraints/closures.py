"""Loop closures: maximal equality rows between two points on two bodies (notes §2.8, Eqs. 2.100-2.104).

* :class:`Loop` -- hinge-type closure, 2 rows: the position difference ``p_A - p_B`` of the two
  points along the two directions orthogonal to the axis ``a`` of A's own revolute joint (world; or an axis given
  in A's body frame, rotated with A), ``v1`` the
  coordinate axis of the smallest ``|a_k|``, ``v2 = a x v1 / |.|``, ``v1 = v2 x a / |.|``, recomputed every step
  and not differentiated.  The axis is the world rotation of A's joint frame times the joint axis (the original's
  latent defect of rotating by the body frame is not copied).
* :class:`Point` -- ball-socket closure, 3 rows ``p_A - p_B``.
* :class:`Weld` -- 6 rows: ``p_A - p_B`` and the relative rotation ``E = R_A R0 R_B^T`` (R0 the relative rotation
  at the initial state, so the weld holds the bodies as they start) through ``g = vee(E - E^T) / 2``
  (``= sin(theta) axis``), whose exact rate is ``(tr(E) 1 - E) (omega_A - E omega_B) / 2``.
* :class:`Universal` -- universal-type closure, 4 rows: ``p_A - p_B`` and ``g = a_A . b_B`` (axis a fixed in A,
  axis b fixed in B, kept perpendicular; rate ``(omega_A - omega_B) . (a x b)``).

Points are ``{body, point}`` in the body frame (``body = "world"`` for a fixed world point), as in ``[[forces]]``.
The reaction is the wrench of the rows on A (on B when A is the world), body frame, angular first.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax._kernels.registers import cross, get9, rot, rot_mul
from redmax._validate import check_vector
from redmax.constraints._row_kernels import _body_vector, _frame, _point_rows, _twist
from redmax.constraints.base import Constraint, body_index, parse_point, points_to_scene, to_joint_frame
from redmax.errors import ModelError

__all__ = ["Loop", "Point", "Universal", "Weld"]

WRENCH_LABELS = ("tx", "ty", "tz", "fx", "fy", "fz")


@njit(cache=True, inline="always")
def _ends(ci, cf, io, fo):
    """The two points' bodies A, B (-1: the world), whether A reports the reaction, and the points (3,) in their
    joint frames."""
    A = ci[io]
    B = ci[io + 1]
    return A, B, A >= 0, cf[fo:fo + 3], cf[fo + 3:fo + 6]


@njit(cache=True, inline="always")
def _frames(W, wo, A, B):
    """World rotations (9,) and twists (6,) of A's and B's joint frames."""
    RA, _ = _frame(W, wo[0], wo[1], A)
    RB, _ = _frame(W, wo[0], wo[1], B)
    return RA, RB, _twist(W, wo[3], A), _twist(W, wo[3], B)


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_loop(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
              row):
    """Loop closure: two rows, the point's motion across the hinge axis (see :class:`Loop`)."""
    wR, wp, wS = wo[0], wo[1], wo[2]
    A, B, repA, xa, xb = _ends(ci, cf, io, fo)
    d = ci[io + 2]
    if d >= 0:  # the axis of A's revolute joint
        a0, a1, a2 = W[wS + 6 * d], W[wS + 6 * d + 1], W[wS + 6 * d + 2]
    else:  # an axis fixed in A's joint frame (a world axis when A is the world)
        RA, _ = _frame(W, wR, wp, A)
        a0, a1, a2 = rot(RA, cf[fo + 6], cf[fo + 7], cf[fo + 8])
    na = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    a0 /= na
    a1 /= na
    a2 /= na
    # v1: the coordinate axis of the smallest |a_k| (first on ties)
    k = 0
    if abs(a1) < abs(a0):
        k = 1
    if abs(a2) < abs(a0) and abs(a2) < abs(a1):
        k = 2
    u0 = 1.0 if k == 0 else 0.0
    u1 = 1.0 if k == 1 else 0.0
    u2 = 1.0 if k == 2 else 0.0
    b0, b1, b2 = cross(a0, a1, a2, u0, u1, u2)
    nb_ = np.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
    b0 /= nb_
    b1 /= nb_
    b2 /= nb_
    u0, u1, u2 = cross(b0, b1, b2, a0, a1, a2)
    nu = np.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    dirs = (u0 / nu, u1 / nu, u2 / nu, b0, b1, b2, 0.0, 0.0, 0.0)
    return _point_rows(Ii, W, wo, G, g, gd, ga, WA, row, A, B, xa, xb, dirs, 2, mode, alpha, repA)


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_point(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
               row):
    """Ball joint: three rows, the two points' world positions agree."""
    A, B, repA, xa, xb = _ends(ci, cf, io, fo)
    dirs = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    return _point_rows(Ii, W, wo, G, g, gd, ga, WA, row, A, B, xa, xb, dirs, 3, mode, alpha, repA)


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_universal(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
                   row):
    """Universal joint: the three point rows and one row keeping the two axes perpendicular."""
    wS = wo[2]
    row = rows_point(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha, row)
    A, B, repA, _, _ = _ends(ci, cf, io, fo)
    RA, RB, oa, ob = _frames(W, wo, A, B)
    x0, x1, x2 = rot(RA, cf[fo + 6], cf[fo + 7], cf[fo + 8])
    y0, y1, y2 = rot(RB, cf[fo + 9], cf[fo + 10], cf[fo + 11])
    g[row] = x0 * y0 + x1 * y1 + x2 * y2
    c0, c1, c2 = cross(x0, x1, x2, y0, y1, y2)
    wv = (c0, c1, c2, 0.0, 0.0, 0.0)
    acc = _body_vector(Ii, W, wS, G, row, A, 1.0, wv, mode, alpha, WA, repA)
    acc += _body_vector(Ii, W, wS, G, row, B, -1.0, wv, mode, alpha, WA, not repA)
    if mode == 1:
        xd0, xd1, xd2 = cross(oa[0], oa[1], oa[2], x0, x1, x2)
        yd0, yd1, yd2 = cross(ob[0], ob[1], ob[2], y0, y1, y2)
        e0, e1, e2 = cross(xd0, xd1, xd2, y0, y1, y2)
        f0, f1, f2 = cross(x0, x1, x2, yd0, yd1, yd2)
        acc += ((oa[0] - ob[0]) * (e0 + f0) + (oa[1] - ob[1]) * (e1 + f1)
                + (oa[2] - ob[2]) * (e2 + f2))
        ga[row] = acc
    row += 1
    return row


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_weld(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
              row):
    """Weld: the three point rows and three rows on the relative rotation ``E = R_A R0 R_B^T``."""
    wS = wo[2]
    row = rows_point(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha, row)
    A, B, repA, _, _ = _ends(ci, cf, io, fo)
    RA, RB, oa, ob = _frames(W, wo, A, B)
    # weld: E = R_A R0 R_B^T, g = vee(E - E^T)/2, gdot = M xi, M = (tr(E) 1 - E)/2, xi = w_A - E w_B
    R0 = get9(cf, fo + 6)
    E = rot_mul(rot_mul(RA, R0), (RB[0], RB[3], RB[6], RB[1], RB[4], RB[7], RB[2], RB[5], RB[8]))
    tr = E[0] + E[4] + E[8]
    M = (0.5 * (tr - E[0]), -0.5 * E[1], -0.5 * E[2], -0.5 * E[3], 0.5 * (tr - E[4]), -0.5 * E[5],
         -0.5 * E[6], -0.5 * E[7], 0.5 * (tr - E[8]))
    ME = rot_mul(M, E)
    gv = (0.5 * (E[7] - E[5]), 0.5 * (E[2] - E[6]), 0.5 * (E[3] - E[1]))
    if mode == 1:
        # xi = omega_A - E omega_B; Edot = [xi] E; d/dt M = (tr(Edot) 1 - Edot)/2
        eb0, eb1, eb2 = rot(E, ob[0], ob[1], ob[2])
        xi0, xi1, xi2 = oa[0] - eb0, oa[1] - eb1, oa[2] - eb2
        S = (0.0, -xi2, xi1, xi2, 0.0, -xi0, -xi1, xi0, 0.0)
        Ed = rot_mul(S, E)
        trd = Ed[0] + Ed[4] + Ed[8]
        Md = (0.5 * (trd - Ed[0]), -0.5 * Ed[1], -0.5 * Ed[2], -0.5 * Ed[3], 0.5 * (trd - Ed[4]),
              -0.5 * Ed[5], -0.5 * Ed[6], -0.5 * Ed[7], 0.5 * (trd - Ed[8]))
        m0, m1, m2 = rot(Md, xi0, xi1, xi2)
        z0, z1, z2 = rot(Ed, ob[0], ob[1], ob[2])
        n0, n1, n2 = rot(M, z0, z1, z2)
        vp = (m0 - n0, m1 - n1, m2 - n2)
    else:
        vp = (0.0, 0.0, 0.0)
    for k in range(3):
        g[row] = gv[k]
        wv = (M[3 * k], M[3 * k + 1], M[3 * k + 2], 0.0, 0.0, 0.0)
        acc = _body_vector(Ii, W, wS, G, row, A, 1.0, wv, mode, alpha, WA, repA)
        wv = (ME[3 * k], ME[3 * k + 1], ME[3 * k + 2], 0.0, 0.0, 0.0)
        acc += _body_vector(Ii, W, wS, G, row, B, -1.0, wv, mode, alpha, WA, not repA)
        if mode == 1:
            ga[row] = acc + vp[k]
        row += 1
    return row


class _TwoPoints(Constraint):
    family = "maximal"
    fields = ("points",)
    nrows = 0

    def __init__(self, points, *, name: str | None = None):
        super().__init__(name)
        if not isinstance(points, list | tuple) or len(points) != 2:
            raise self.err("points", f"expected two points [A, B], got {points!r}")
        self.points = [parse_point(self, p, f"points[{k}]") for k, p in enumerate(points)]

    def _field_to_scene(self, f):
        if f == "points":
            return points_to_scene(self.points)
        return super()._field_to_scene(f)

    def _bind(self, model):
        (ba, xa), (bb, xb) = self.points
        self.A = body_index(model, self, ba, "points[0].body")
        self.B = body_index(model, self, bb, "points[1].body")
        if self.A == self.B:
            raise self.err("points", "the two points are on the same body" if self.A >= 0 else "both on the world")
        self.xa = to_joint_frame(model, self.A, xa)
        self.xb = to_joint_frame(model, self.B, xb)
        self.react_body = self.A if self.A >= 0 else self.B
        self.react_labels = tuple(f"{model.body_names[self.react_body]}.{c}" for c in WRENCH_LABELS)
        self.row_labels = tuple(f"{self.name}[{k}]" for k in range(self.nrows))

    def encode(self):
        return [self.A, self.B], [*self.xa, *self.xb]


class Loop(_TwoPoints):
    """Hinge-type loop closure (2 maximal equality rows): ``p_A - p_B`` along the two directions orthogonal to the
    hinge axis ``a`` (world), recomputed every step (notes §2.8).

    Args:
        points: ``[A, B]``, each ``{body, point}`` or ``(body, point)`` (body frame; "world" for a world point).
        axis: the hinge axis (3,) fixed in A's body frame (a world direction when A is the world), for a closure
            whose bodies hang on other joints (the umbrella's universal joints: RedMax paper §3, its ribs and
            stretchers).  Default: the axis of A's own revolute joint (A must then hang on one).
        contact: a ``redmax.friction.Cylinder(radius, height)`` about the hinge axis at the first point, for
            friction in the closure (RedMax paper §5.3); None: frictionless.
        name: unique name.
    """

    type = "loop"
    code = 1
    rows = rows_loop
    nrows = 2
    fields = ("points", "axis", "contact")

    def __init__(self, points, *, axis=None, contact=None, name: str | None = None):
        super().__init__(points, name=name)
        if contact is not None:
            from redmax.friction.geometry import Cylinder, contact_from_scene

            try:
                contact = contact_from_scene(contact, "contact")
            except ModelError as e:
                raise self.err("contact", str(e).removeprefix("contact: ")) from None
            if not isinstance(contact, Cylinder):
                raise self.err("contact", f"a loop closure takes a cylinder contact, got a {contact.type}")
        self.contact = contact
        if axis is not None:
            try:
                v = check_vector(axis, 3, "axis")
            except ModelError as e:
                raise self.err("axis", str(e).removeprefix("axis: ")) from None
            if not np.linalg.norm(v) > 0:
                raise self.err("axis", "must be non-zero")
            axis = v
        self.axis = axis  # as given (a scene file keeps the user's numbers); a unit vector in _bind

    def _field_to_scene(self, f):
        if f == "axis":
            return None if self.axis is None else np.asarray(self.axis, float).tolist()
        if f == "contact":
            return None if self.contact is None else self.contact.to_scene()
        return super()._field_to_scene(f)

    def _bind(self, model):
        super()._bind(model)
        if self.axis is not None:
            a = self.axis / np.linalg.norm(self.axis)
            self.aj = a if self.A < 0 else model.E_jb[self.A, :3, :3] @ a  # (A's joint frame)
            self.dof = -1
            return
        if self.A < 0:
            raise self.err("points[0].body", "the first point must be on a body that hangs on a revolute joint "
                           "(or give the hinge axis: axis = [x, y, z])")
        if model.joints[self.A].kind != "revolute":
            raise self.err("points[0].body", f"body '{model.body_names[self.A]}' hangs on a "
                           f"{model.joints[self.A].kind} joint; a hinge-type loop needs a revolute joint or its "
                           "axis (axis = [x, y, z] in the body's frame; a 'point' constraint otherwise)")
        self.dof = int(model.idx[self.A])

    def encode(self):
        if self.dof < 0:
            return [self.A, self.B, -1], [*self.xa, *self.xb, *self.aj]
        return [self.A, self.B, self.dof], [*self.xa, *self.xb]


class Point(_TwoPoints):
    """Ball-socket loop closure: 3 maximal equality rows ``p_A - p_B = 0`` (world)."""

    type = "point"
    code = 2
    rows = rows_point
    nrows = 3


class Weld(_TwoPoints):
    """Full 6-DOF closure: ``p_A - p_B = 0`` and the relative rotation held at its initial value (6 rows)."""

    type = "weld"
    code = 3
    rows = rows_weld
    nrows = 6

    def _bind(self, model):
        from redmax.kinematics import kinematics

        super()._bind(model)
        kin = kinematics(model, model.q0, None, model.jstate0)
        RA = np.eye(3) if self.A < 0 else kin.E_wj[self.A, :3, :3]
        RB = np.eye(3) if self.B < 0 else kin.E_wj[self.B, :3, :3]
        self.R0 = RA.T @ RB

    def encode(self):
        return [self.A, self.B], [*self.xa, *self.xb, *np.asarray(self.R0).reshape(-1)]


class Universal(_TwoPoints):
    """Universal-type closure: ``p_A - p_B = 0`` and axis ``a`` (A's body frame) kept perpendicular to axis ``b``
    (B's body frame, or a world direction): 4 maximal equality rows.

    Args:
        points: ``[A, B]`` as for :class:`Point`.  axes: ``[a, b]``, two non-zero 3-vectors.
    """

    type = "universal"
    code = 4
    rows = rows_universal
    nrows = 4
    fields = ("points", "axes")

    def __init__(self, points, axes, *, name: str | None = None):
        super().__init__(points, name=name)
        if not isinstance(axes, list | tuple) or len(axes) != 2:
            raise self.err("axes", f"expected two axes [a, b], got {axes!r}")
        out = []
        for k, a in enumerate(axes):
            try:
                v = check_vector(a, 3, "axis")
            except ModelError as e:
                raise self.err(f"axes[{k}]", str(e).removeprefix("axis: ")) from None
            nv = np.linalg.norm(v)
            if not nv > 0:
                raise self.err(f"axes[{k}]", "must be non-zero")
            out.append(v)
        self.axes = out  # as given (a scene file keeps the user's numbers); unit vectors in _bind

    def _field_to_scene(self, f):
        if f == "axes":
            return [np.asarray(a, float).tolist() for a in self.axes]
        return super()._field_to_scene(f)

    def _bind(self, model):
        super()._bind(model)
        a, b = (x / np.linalg.norm(x) for x in self.axes)
        self.aj = a if self.A < 0 else model.E_jb[self.A, :3, :3] @ a
        self.bj = b if self.B < 0 else model.E_jb[self.B, :3, :3] @ b

    def encode(self):
        return [self.A, self.B], [*self.xa, *self.xb, *self.aj, *self.bj]
