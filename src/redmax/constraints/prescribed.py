"""Prescribed motion: hybrid dynamics as equality rows (RedMax paper §4, Eq. 7; Sueda notes §2.9).

* :class:`PrescribedJoint` -- reduced rows ``g = q*(t) - q``, ``G = -I`` on the joint's coordinates,
  ``gdot = q̇*(t)`` (``gddot = q̈*``), so linearly implicit Euler gives ``q̇₁ = q̇*(t₁) + beta (q*(t₁) - q₀)``
  and the ODE integrators ``q̈ = q̈* + 2 b1 (q̇* - q̇) + b2² (q* - q)``.  While a joint is prescribed its own
  torque, stiffness and damping do not act on it (they change only the reported torque, which is the required
  torque ``lam / h``).  ``method="recursive"`` handles these rows with the O(n) hybrid dynamics.
* :class:`PrescribedBody` -- maximal rows on a subset of the body-frame twist components (angular first):
  ``G = -(rows of I6)``, ``g = 0``, ``gdot = phi*(t)`` (no position feedback, as the original).  A profile with
  ``frame = "world"`` gives a world vector; the target is ``R^T x_w(t)`` with R the body's rotation at the start
  of the step.  The reaction is the required wrench on the body.
* :class:`PrescribedPoint` -- a body point follows a world trajectory ``p*(t)`` (3 maximal equality rows with
  position feedback: ``g = p - p*``, ``G`` the point Jacobian ``R Gamma(x) J``, ``gdot = -pdot*``): the paper's
  prescribed fingertips (HAND, "maximal point-Jacobian rows").  The reaction is the wrench on the body.
* :class:`PrescribedRate` -- the rate of a revolute (or prismatic) joint through the maximal twists of its two
  bodies: ``G v = a . (omega_i - omega_p)`` (= q̇), ``g = 0``, ``gdot = -omega*(t)`` so that ``q̇₁ = +omega*``
  (the original's sign defect is not copied).  The reaction is the wrench on the child body (its motor torque
  about the axis is the axis component).

Profiles (:mod:`redmax.constraints.profiles`) are declarative: constant, piecewise linear, sigmoid, sinusoid.
"""

from __future__ import annotations

import numpy as np

from redmax.constraints.base import Constraint, body_index, joint_dofs, joint_index
from redmax.constraints.closures import WRENCH_LABELS
from redmax.constraints.equalities import coordinate_names
from redmax.constraints.profiles import Constant, Profile, profile_from
from redmax.errors import ModelError

__all__ = ["COMPONENTS", "PrescribedBody", "PrescribedJoint", "PrescribedPoint", "PrescribedRate"]

COMPONENTS = ("wx", "wy", "wz", "vx", "vy", "vz")


def _profile(con, p, field) -> Profile:
    try:
        return profile_from(p, field)
    except ModelError as e:
        raise ModelError(f"constraint '{con.name}' ({con.type}): {e}") from None


class PrescribedJoint(Constraint):
    """A joint's coordinates follow ``profile`` (one reduced equality row per DOF).

    Args:
        joint: joint name.  profile: a :class:`~redmax.constraints.profiles.Profile` or its table (one value
            per DOF, or one for all).
    """

    type = "prescribed_joint"
    fields = ("joint", "profile")
    time_dependent = True

    def __init__(self, joint, profile, *, name: str | None = None):
        super().__init__(name)
        self.joint = joint
        self.profile = _profile(self, profile, "profile")

    def _field_to_scene(self, f):
        if f == "profile":
            return self.profile.to_scene()
        return super()._field_to_scene(f)

    def _bind(self, model):
        i = joint_index(model, self, self.joint, "joint")
        self.dofs = joint_dofs(model, i)
        if self.dofs.size == 0:
            raise self.err("joint", f"joint '{self.joint}' has no DOFs")
        try:
            self.profile.broadcast(self.dofs.size, "profile")
        except ModelError as e:
            raise self.err("profile", str(e).removeprefix("profile: ")) from None
        self.nrows = int(self.dofs.size)
        names = coordinate_names(model)
        self.react_labels = tuple(names[d] for d in self.dofs)
        self.row_labels = tuple(f"{self.name}[{k}]" for k in range(self.nrows))

    def encode(self):
        return [self.dofs.size, *self.dofs], list(self.profile.encode())


class PrescribedBody(Constraint):
    """Components of a body's twist (body frame, angular first) follow profiles (maximal equality rows).

    Args:
        body: body name.  components: subset of ``["wx", "wy", "wz", "vx", "vy", "vz"]``.
        angular, linear: profiles of 3 values (angular and linear velocity targets); a profile may carry
            ``frame = "world"``.  A missing profile means zero.
    """

    type = "prescribed_body"
    family = "maximal"
    fields = ("body", "components", "angular", "linear")
    velocity_only = True
    time_dependent = True

    def __init__(self, body, components, angular=None, linear=None, *, name: str | None = None):
        super().__init__(name)
        self.body = body
        if isinstance(components, str):
            components = [components]
        if not isinstance(components, list | tuple) or not components:
            raise self.err("components", f"expected a non-empty subset of {list(COMPONENTS)}, got {components!r}")
        for c in components:
            if c not in COMPONENTS:
                raise self.err("components", f"unknown component {c!r} (expected a subset of {list(COMPONENTS)})")
        if len(set(components)) != len(components):
            raise self.err("components", "a component is listed twice")
        self.components = [c for c in COMPONENTS if c in components]  # angular first
        self.angular = None if angular is None else _profile(self, angular, "angular")
        self.linear = None if linear is None else _profile(self, linear, "linear")
        for key, p in (("angular", self.angular), ("linear", self.linear)):
            if p is not None and p.k != 3:
                raise self.err(key, f"a twist profile has 3 values (x, y, z), got {p.k}")
        self.nrows = len(self.components)

    def _field_to_scene(self, f):
        if f in ("angular", "linear"):
            p = getattr(self, f)
            return None if p is None else p.to_scene()
        return super()._field_to_scene(f)

    def _bind(self, model):
        self.b = body_index(model, self, self.body, "body", allow_world=False)
        self.react_labels = tuple(f"{self.body}.{c}" for c in WRENCH_LABELS)
        self.row_labels = tuple(f"{self.name}.{c}" for c in self.components)

    def encode(self):
        comps = [COMPONENTS.index(c) for c in self.components]
        ang = self.angular or Constant([0.0, 0.0, 0.0])
        lin = self.linear or Constant([0.0, 0.0, 0.0])
        return ([self.b, len(comps), *comps],
                [float(ang.frame == "world"), float(lin.frame == "world"), *ang.encode(), *lin.encode()])


class PrescribedRate(Constraint):
    """A revolute (or prismatic) joint's rate follows ``profile`` through the maximal twists of its child and
    parent bodies (1 maximal equality row); positive values turn the joint positively.

    Args:
        joint: joint name.  profile: the rate omega*(t) (1 value).
    """

    type = "prescribed_rate"
    family = "maximal"
    fields = ("joint", "profile")
    velocity_only = True
    time_dependent = True

    def __init__(self, joint, profile, *, name: str | None = None):
        super().__init__(name)
        self.joint = joint
        self.profile = _profile(self, profile, "profile")
        if self.profile.k != 1:
            raise self.err("profile", f"a joint rate has 1 value, got {self.profile.k}")
        self.nrows = 1

    def _field_to_scene(self, f):
        if f == "profile":
            return self.profile.to_scene()
        return super()._field_to_scene(f)

    def _bind(self, model):
        i = joint_index(model, self, self.joint, "joint")
        kind = model.joints[i].kind
        if kind not in ("revolute", "prismatic"):
            raise self.err("joint", f"joint '{self.joint}' is {kind}; a prescribed rate needs a revolute or "
                           "prismatic joint")
        self.child, self.parent, self.dof = i, int(model.parent[i]), int(model.idx[i])
        self.prismatic = kind == "prismatic"
        self.react_labels = tuple(f"{model.body_names[i]}.{c}" for c in WRENCH_LABELS)
        self.row_labels = (self.name,)

    def encode(self):
        return [self.child, self.parent, self.dof, int(self.prismatic)], list(self.profile.encode())


class PrescribedPoint(Constraint):
    """A body point (body frame) follows the world trajectory ``profile`` (3 values; 3 maximal equality rows).

    Args:
        body: body name.  point: the point in the body frame.  profile: the world position target p*(t).
    """

    type = "prescribed_point"
    family = "maximal"
    fields = ("body", "point", "profile")
    time_dependent = True

    def __init__(self, body, point, profile, *, name: str | None = None):
        from redmax._validate import check_vector

        super().__init__(name)
        self.body = body
        try:
            self.point = check_vector(point, 3, "point")
        except ModelError as e:
            raise self.err("point", str(e).removeprefix("point: ")) from None
        self.profile = _profile(self, profile, "profile")
        if self.profile.k != 3:
            raise self.err("profile", f"a world position has 3 values, got {self.profile.k}")
        self.nrows = 3

    def _field_to_scene(self, f):
        if f == "profile":
            return self.profile.to_scene()
        return super()._field_to_scene(f)

    def _bind(self, model):
        from redmax.constraints.base import to_joint_frame

        self.b = body_index(model, self, self.body, "body", allow_world=False)
        self.xj = to_joint_frame(model, self.b, self.point)
        self.react_labels = tuple(f"{self.body}.{c}" for c in WRENCH_LABELS)
        self.row_labels = tuple(f"{self.name}.{c}" for c in "xyz")

    def encode(self):
        return [self.b], [*self.xj, *self.profile.encode()]


def prescribed_dofs(constraints) -> np.ndarray:
    """Coordinates prescribed by :class:`PrescribedJoint` constraints (bound)."""
    out = [c.dofs for c in constraints if isinstance(c, PrescribedJoint)]
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)
