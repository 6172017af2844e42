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

from redmax._jit import njit
from redmax._kernels.registers import cross, get9, rot, rot_mul, rot_t
from redmax.constraints._row_kernels import _body_vector, _frame, _point, _pvel, _twist, profile_eval, profile_len
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


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_prescribed_joint(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
                          row):
    """``x(t) - q_d = 0`` for each listed DOF, with the profile's rate and acceleration as time terms."""
    nd = ci[io]
    for k in range(nd):
        d = ci[io + 1 + k]
        x, xd, xdd = profile_eval(cf, fo, t, k)
        g[row] = x - q[d]
        gd[row] = xd
        ga[row] = xdd
        if mode < 2:
            G[row, d] = -1.0
        row += 1
    return row


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_prescribed_body(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
                         row):
    """Body-frame twist components follow their profiles (velocity-level rows)."""
    wR, wp, wS, wV = wo[0], wo[1], wo[2], wo[3]
    body = ci[io]
    ncomp = ci[io + 1]
    R, p = _frame(W, wR, wp, body)
    Rb = rot_mul(R, get9(Ejb[body], 0))
    c0, c1, c2 = rot(R, Ejb[body, 9], Ejb[body, 10], Ejb[body, 11])
    pb = (c0 + p[0], c1 + p[1], c2 + p[2])
    ww = _twist(W, wV, body)
    wb0, wb1, wb2 = rot_t(Rb, ww[0], ww[1], ww[2])  # body-frame angular velocity
    fr_ang = cf[fo] != 0.0
    fr_lin = cf[fo + 1] != 0.0
    oang = fo + 2
    olin = oang + profile_len(cf, oang)
    for k in range(ncomp):
        comp = ci[io + 2 + k]
        if comp < 3:
            po = oang
            world = fr_ang
        else:
            po = olin
            world = fr_lin
        j = comp % 3
        if world:  # target R^T x_w(t) with R at the start of the step
            x0, xd0, _xa0 = profile_eval(cf, po, t, 0)
            x1, xd1, _xa1 = profile_eval(cf, po, t, 1)
            x2, xd2, _xa2 = profile_eval(cf, po, t, 2)
            tx = rot_t(Rb, x0, x1, x2)
            txd = rot_t(Rb, xd0, xd1, xd2)
            e0, e1, e2 = cross(wb0, wb1, wb2, tx[0], tx[1], tx[2])
            xt = tx[j]
            xdd = txd[j] - (e0, e1, e2)[j]
        else:
            xt, xdd, _ = profile_eval(cf, po, t, j)
        gd[row] = xt
        # G phi = -phi_comp, phi = Ad(E_wb)^-1 V: w = -[e_j^T R^T ; 0] or -[p x R e_j; R e_j]
        r0, r1, r2 = Rb[j], Rb[3 + j], Rb[6 + j]
        if comp < 3:
            wv = (r0, r1, r2, 0.0, 0.0, 0.0)
        else:
            c0, c1, c2 = cross(pb[0], pb[1], pb[2], r0, r1, r2)
            wv = (c0, c1, c2, r0, r1, r2)
        acc = _body_vector(Ii, W, wS, G, row, body, -1.0, wv, mode, alpha, WA, True)
        if mode == 1:
            ga[row] = acc + xdd
        row += 1
    return row


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_prescribed_point(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
                          row):
    """``p - p*(t) = 0`` for a body point in the world (three rows)."""
    wR, wp, wS, wV = wo[0], wo[1], wo[2], wo[3]
    body = ci[io]
    p0, p1, p2 = _point(W, wR, wp, body, cf[fo], cf[fo + 1], cf[fo + 2])
    v0, v1, v2 = _pvel(W, wV, body, p0, p1, p2)
    oa = _twist(W, wV, body)
    for k in range(3):
        x, xd, xdd = profile_eval(cf, fo + 3, t, k)
        g[row] = (p0, p1, p2)[k] - x
        gd[row] = -xd
        n0 = 1.0 if k == 0 else 0.0
        n1 = 1.0 if k == 1 else 0.0
        n2 = 1.0 if k == 2 else 0.0
        c0, c1, c2 = cross(p0, p1, p2, n0, n1, n2)
        wv = (c0, c1, c2, n0, n1, n2)
        acc = _body_vector(Ii, W, wS, G, row, body, 1.0, wv, mode, alpha, WA, True)
        if mode == 1:
            d0, d1, d2 = cross(v0, v1, v2, n0, n1, n2)
            ga[row] = acc + d0 * oa[0] + d1 * oa[1] + d2 * oa[2] - xdd
        row += 1
    return row


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_prescribed_rate(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
                         row):
    """A joint's rate relative to its parent follows a profile (one velocity-level row)."""
    wS, wV = wo[2], wo[3]
    body = ci[io]
    par = ci[io + 1]
    d = ci[io + 2]
    prism = ci[io + 3] != 0
    if prism:
        a0, a1, a2 = W[wS + 6 * d + 3], W[wS + 6 * d + 4], W[wS + 6 * d + 5]
    else:
        a0, a1, a2 = W[wS + 6 * d], W[wS + 6 * d + 1], W[wS + 6 * d + 2]
    na = a0 * a0 + a1 * a1 + a2 * a2
    a0 /= na
    a1 /= na
    a2 /= na
    if prism:
        wv = (0.0, 0.0, 0.0, a0, a1, a2)
    else:
        wv = (a0, a1, a2, 0.0, 0.0, 0.0)
    x, xd, _ = profile_eval(cf, fo, t, 0)
    gd[row] = -x
    acc = _body_vector(Ii, W, wS, G, row, body, 1.0, wv, mode, alpha, WA, True)
    acc += _body_vector(Ii, W, wS, G, row, par, -1.0, wv, mode, alpha, WA, False)
    if mode == 1:
        vi = _twist(W, wV, body)
        vp_ = _twist(W, wV, par)
        if prism:  # a moves with the child: adot = omega_i x a, w-dot . (V_i - V_p)
            e0, e1, e2 = cross(vi[0], vi[1], vi[2], a0, a1, a2)
            acc += e0 * (vi[3] - vp_[3]) + e1 * (vi[4] - vp_[4]) + e2 * (vi[5] - vp_[5])
        ga[row] = acc - xd
    row += 1
    return row


class PrescribedJoint(Constraint):
    """A joint's coordinates follow ``profile`` (one reduced equality row per DOF).

    Args:
        joint: joint name.  profile: a :class:`~redmax.constraints.profiles.Profile` or its table (one value
            per DOF, or one for all).
    """

    type = "prescribed_joint"
    code = 7
    rows = rows_prescribed_joint
    drives_joints = True
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
    code = 8
    rows = rows_prescribed_body
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
    code = 9
    rows = rows_prescribed_rate
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
    code = 13
    rows = rows_prescribed_point
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
