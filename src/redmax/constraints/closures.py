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

from redmax._validate import check_vector
from redmax.constraints.base import Constraint, body_index, parse_point, points_to_scene, to_joint_frame
from redmax.errors import ModelError

__all__ = ["Loop", "Point", "Universal", "Weld"]

WRENCH_LABELS = ("tx", "ty", "tz", "fx", "fy", "fz")


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
    nrows = 3


class Weld(_TwoPoints):
    """Full 6-DOF closure: ``p_A - p_B = 0`` and the relative rotation held at its initial value (6 rows)."""

    type = "weld"
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
