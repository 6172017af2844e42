"""Inequality constraints (RedMax paper §4, Eq. 5; Sueda notes §1.11), solved as a QP each step.

* :class:`Limit` -- joint limits, one reduced row per finite bound and DOF: lower ``C = -1``, ``c = q_l - q``;
  upper ``C = +1``, ``c = q - q_u`` (the original's upper sign defect is not copied).  A row is active in a
  step whose start has ``q <= q_l`` (``q >= q_u``).
* :class:`Floor` -- a sphere (``radius``, centred at the body frame's origin) or box corners (``corners``, body
  frame) against the plane through ``origin`` with unit ``normal``: per point, with z its height above the plane,
  ``c = r - z`` (r = 0 for corners), ``C = -n^T R Gamma(x_c)`` at the contact point ``x_c`` (the centre minus
  ``r n``); active when ``z < r`` (strict).
* :class:`SelfCollision` -- **reconstruction** (the paper gives only "a spline through the body, colliding points
  found with Newton's method, inequality rows of the QP"): spheres at sample points along a curve through a
  chain of bodies; for every pair of points on bodies at least ``skip`` apart in the chain whose gap
  ``d = |p_i - p_j| - r_i - r_j`` is below ``margin`` a row ``c = -d``, ``C = -n . (pdot_i - pdot_j)`` (n from j
  to i, points on the sphere surfaces), i.e. ``n . (pdot_i - pdot_j) >= beta d``: an approaching pair closes at
  most a fraction ``beta h`` of its gap per step, so with ``beta h <= 1`` the spheres never interpenetrate
  beyond round-off.  At most ``max_rows`` rows (the closest pairs).

Velocity level: ``C q̇₁ <= -cdot - beta c`` with ``cdot = 0``.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax._kernels.registers import cross
from redmax._validate import check_vector
from redmax.constraints._row_kernels import INEQ_ACTIVE, INEQ_INACTIVE, _body_vector, _clear_row, _point, _pvel, _twist
from redmax.constraints.base import Constraint, body_index, joint_dofs, joint_index, to_joint_frame
from redmax.constraints.closures import WRENCH_LABELS
from redmax.constraints.equalities import coordinate_names
from redmax.errors import ModelError

__all__ = ["Floor", "Limit", "SelfCollision"]


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_limit(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
               row):
    """``lo - q_d <= 0`` and ``q_d - hi <= 0`` for the finite bounds of each listed DOF."""
    nd = ci[io]
    for k in range(nd):
        d = ci[io + 1 + k]
        lo = cf[fo + k]
        hi = cf[fo + nd + k]
        if np.isfinite(lo):
            g[row] = lo - q[d]
            rkind[row] = INEQ_ACTIVE if q[d] <= lo else INEQ_INACTIVE
            if mode < 2:
                G[row, d] = -1.0
            row += 1
        if np.isfinite(hi):
            g[row] = q[d] - hi
            rkind[row] = INEQ_ACTIVE if q[d] >= hi else INEQ_INACTIVE
            if mode < 2:
                G[row, d] = 1.0
            row += 1
    return row


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_floor(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
               row):
    """One row per corner (or the sphere's centre) against the floor plane: ``r - z <= 0``."""
    wR, wp, wS, wV = wo[0], wo[1], wo[2], wo[3]
    body = ci[io]
    ncorner = ci[io + 1]
    o0, o1, o2 = cf[fo], cf[fo + 1], cf[fo + 2]
    n0, n1, n2 = cf[fo + 3], cf[fo + 4], cf[fo + 5]
    rad = cf[fo + 6]
    npts = 1 if ncorner == 0 else ncorner
    for k in range(npts):
        if ncorner == 0:
            x = cf[fo + 7:fo + 10]  # body centre in the joint frame
        else:
            x = cf[fo + 10 + 3 * k:fo + 13 + 3 * k]
        c0, c1, c2 = _point(W, wR, wp, body, x[0], x[1], x[2])
        z = n0 * (c0 - o0) + n1 * (c1 - o1) + n2 * (c2 - o2)
        r = rad if ncorner == 0 else 0.0
        g[row] = r - z
        rkind[row] = INEQ_ACTIVE if z < r else INEQ_INACTIVE
        p0, p1, p2 = c0 - r * n0, c1 - r * n1, c2 - r * n2  # contact point
        e0, e1, e2 = cross(p0, p1, p2, n0, n1, n2)
        wv = (e0, e1, e2, n0, n1, n2)
        acc = _body_vector(Ii, W, wS, G, row, body, -1.0, wv, mode, alpha, WA, True)
        if mode == 1:  # p moves with the centre (n fixed): w-dot . V = -(cdot x n) . omega
            oa = _twist(W, wV, body)
            v0, v1, v2 = _pvel(W, wV, body, c0, c1, c2)
            d0, d1, d2 = cross(v0, v1, v2, n0, n1, n2)
            ga[row] = acc - (d0 * oa[0] + d1 * oa[1] + d2 * oa[2])
        row += 1
    return row


@njit(cache=True, inline="always")  # compiled into the rows loop
def rows_self_collision(ci, cf, io, fo, cap, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, alpha,
                        row):
    """Self-collision rows of a chain of spheres swept along a curve (see :class:`SelfCollision`): for every
    pair of sample points (i, j) on bodies at least ``skip`` apart whose gap ``d = |p_i - p_j| - r_i - r_j`` is
    below ``margin``, one inequality row ``c = -d``, ``C = -n . (pdot_i - pdot_j)`` with ``n`` from j to i
    (active when the gap is below the margin; the Baumgarte form ``n . (pdot_i - pdot_j) >= beta d`` then lets
    the gap close at most at rate ``beta d``).  At most ``cap`` rows, the closest pairs first.

    ``ci = [npts, skip, body[npts], order[npts]]`` and ``cf = [margin, (x (3), r) per point]`` (x in the
    body's joint frame)."""
    wR, wp, wS, _wV = wo[0], wo[1], wo[2], wo[3]
    n = q.shape[0]
    npts = ci[io]
    skip = ci[io + 1]
    margin = cf[fo]
    P = np.empty((npts, 3))
    for k in range(npts):
        b = ci[io + 2 + k]
        x = cf[fo + 1 + 4 * k:fo + 4 + 4 * k]
        P[k, 0], P[k, 1], P[k, 2] = _point(W, wR, wp, b, x[0], x[1], x[2])
    # candidate pairs below the margin: keep the cap closest (simple insertion into a sorted list)
    ncand = 0
    cd = np.empty(cap)
    ck = np.empty((cap, 2), dtype=np.int64)
    for i in range(npts):
        ri = cf[fo + 4 + 4 * i]
        oi = ci[io + 2 + npts + i]
        for j in range(i + 1, npts):
            if ci[io + 2 + npts + j] - oi < skip:
                continue
            dx = P[i, 0] - P[j, 0]
            dy = P[i, 1] - P[j, 1]
            dz = P[i, 2] - P[j, 2]
            d = np.sqrt(dx * dx + dy * dy + dz * dz) - ri - cf[fo + 4 + 4 * j]
            if d >= margin:
                continue
            if ncand == cap and d >= cd[ncand - 1]:
                continue
            s = ncand if ncand < cap else cap - 1
            while s > 0 and cd[s - 1] > d:
                if s < cap:
                    cd[s] = cd[s - 1]
                    ck[s, 0] = ck[s - 1, 0]
                    ck[s, 1] = ck[s - 1, 1]
                s -= 1
            cd[s] = d
            ck[s, 0] = i
            ck[s, 1] = j
            if ncand < cap:
                ncand += 1
    for k in range(ncand):
        i = ck[k, 0]
        j = ck[k, 1]
        _clear_row(G, g, gd, ga, rkind, WA, row, n, mode)
        bi = ci[io + 2 + i]
        bj = ci[io + 2 + j]
        dx = P[i, 0] - P[j, 0]
        dy = P[i, 1] - P[j, 1]
        dz = P[i, 2] - P[j, 2]
        dn = np.sqrt(dx * dx + dy * dy + dz * dz)
        n0, n1, n2 = dx / dn, dy / dn, dz / dn
        g[row] = -cd[k]
        rkind[row] = INEQ_ACTIVE
        # contact points on the two surfaces, moving with their bodies
        ri = cf[fo + 4 + 4 * i]
        rj = cf[fo + 4 + 4 * j]
        a0, a1, a2 = P[i, 0] - ri * n0, P[i, 1] - ri * n1, P[i, 2] - ri * n2
        b0, b1, b2 = P[j, 0] + rj * n0, P[j, 1] + rj * n1, P[j, 2] + rj * n2
        e0, e1, e2 = cross(a0, a1, a2, n0, n1, n2)
        wv = (e0, e1, e2, n0, n1, n2)
        acc = _body_vector(Ii, W, wS, G, row, bi, -1.0, wv, mode, alpha, WA, True)
        e0, e1, e2 = cross(b0, b1, b2, n0, n1, n2)
        wv = (e0, e1, e2, n0, n1, n2)
        acc += _body_vector(Ii, W, wS, G, row, bj, 1.0, wv, mode, alpha, WA, False)
        if mode == 1:
            ga[row] = acc
        row += 1
    return row



class Limit(Constraint):
    """Joint limits ``lower <= q <= upper`` per DOF (None or an infinite bound: no bound).

    Args:
        joint: joint name.  lower, upper: a number or one per DOF (at least one of them).
    """

    type = "limit"
    code = 10
    rows = rows_limit
    kind = "inequality"
    fields = ("joint", "lower", "upper")

    def __init__(self, joint, lower=None, upper=None, *, name: str | None = None):
        super().__init__(name)
        if lower is None and upper is None:
            raise self.err("lower", "give lower and/or upper")
        self.joint = joint
        self.lower, self.upper = self._bound(lower, "lower", -np.inf), self._bound(upper, "upper", np.inf)

    def _bound(self, v, field, none):
        if v is None:
            return None
        if isinstance(v, list | tuple):  # a None entry: no bound on that DOF
            v = [none if x is None else x for x in v]
        try:
            a = np.atleast_1d(np.asarray(v, dtype=float)).reshape(-1)
        except (TypeError, ValueError):
            raise self.err(field, f"expected numbers, got {v!r}") from None
        if a.size == 0 or np.any(np.isnan(a)) or isinstance(v, bool):
            raise self.err(field, f"expected numbers, got {v!r}")
        return a

    def _bind(self, model):
        i = joint_index(model, self, self.joint, "joint")
        self.dofs = joint_dofs(model, i)
        nd = self.dofs.size
        if nd == 0:
            raise self.err("joint", f"joint '{self.joint}' has no DOFs")
        lo = np.full(nd, -np.inf) if self.lower is None else self.lower
        hi = np.full(nd, np.inf) if self.upper is None else self.upper
        for key, a in (("lower", lo), ("upper", hi)):
            if a.size not in (1, nd):
                many = "1 value" if nd == 1 else f"1 or {nd} values"
                raise self.err(key, f"expected {many} (one per DOF of joint '{self.joint}'), got {a.size}")
        self.lo = np.broadcast_to(lo, (nd,)).copy()
        self.hi = np.broadcast_to(hi, (nd,)).copy()
        if np.any(self.lo > self.hi):
            raise self.err("lower", f"lower {self.lo.tolist()} exceeds upper {self.hi.tolist()}")
        names = coordinate_names(model)
        labels = []
        for k, d in enumerate(self.dofs):
            if np.isfinite(self.lo[k]):
                labels.append(f"{names[d]}.lower")
            if np.isfinite(self.hi[k]):
                labels.append(f"{names[d]}.upper")
        if not labels:
            raise self.err("lower", "no finite bound")
        self.row_labels = tuple(labels)
        self.nrows = len(labels)
        self.react_labels = tuple(names[d] for d in self.dofs)

    def _field_to_scene(self, f):
        v = getattr(self, f)
        if isinstance(v, np.ndarray):
            return v.tolist()
        return v

    def encode(self):
        return [self.dofs.size, *self.dofs], [*self.lo, *self.hi]


class Floor(Constraint):
    """A sphere body or a body's corners against a plane (maximal inequality rows).

    Args:
        body: body name.
        radius: sphere radius (centre at the body frame's origin), or
        corners: (k, 3) points in the body frame.
        origin: a point of the plane (default 0).
        normal: the plane's normal, pointing out of the floor (default +z).
    """

    type = "floor"
    code = 11
    rows = rows_floor
    kind = "inequality"
    family = "maximal"
    fields = ("body", "radius", "corners", "origin", "normal")

    def __init__(self, body, radius=None, corners=None, origin=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), *,
                 name: str | None = None):
        super().__init__(name)
        if (radius is None) == (corners is None):
            raise self.err("radius", "give either radius (sphere) or corners (box corners)")
        self.body = body
        self.radius = None
        self.corners = None
        if radius is not None:
            try:
                self.radius = float(radius)
            except (TypeError, ValueError):
                raise self.err("radius", f"expected a number, got {radius!r}") from None
            if not (np.isfinite(self.radius) and self.radius >= 0):
                raise self.err("radius", f"must be finite and >= 0, got {radius!r}")
        else:
            try:
                c = np.asarray(corners, dtype=float).reshape(-1, 3)
            except (TypeError, ValueError):
                raise self.err("corners", f"expected a list of 3-vectors, got {corners!r}") from None
            if c.shape[0] == 0 or not np.all(np.isfinite(c)):
                raise self.err("corners", "expected a non-empty list of finite 3-vectors")
            self.corners = c
        vecs = []
        for field, v in (("origin", origin), ("normal", normal)):
            try:
                vecs.append(check_vector(v, 3, field))
            except ModelError as e:
                raise self.err(field, str(e).removeprefix(f"{field}: ")) from None
        self.origin, nv = vecs
        if not np.linalg.norm(nv) > 0:
            raise self.err("normal", "must be non-zero")
        self.normal = nv  # as given (a scene file keeps the user's numbers)
        self.n = nv / np.linalg.norm(nv)
        self.nrows = 1 if self.corners is None else self.corners.shape[0]

    def _bind(self, model):
        self.b = body_index(model, self, self.body, "body", allow_world=False)
        self.centre = model.E_jb[self.b, :3, 3].copy()
        self.cj = (np.zeros((0, 3)) if self.corners is None else
                   np.array([to_joint_frame(model, self.b, x) for x in self.corners]))
        self.react_labels = tuple(f"{self.body}.{c}" for c in WRENCH_LABELS)
        self.row_labels = ((f"{self.name}",) if self.corners is None else
                           tuple(f"{self.name}[{k}]" for k in range(self.nrows)))

    def encode(self):
        r = 0.0 if self.radius is None else self.radius
        return [self.b, self.cj.shape[0]], [*self.origin, *self.n, r, *self.centre, *self.cj.reshape(-1)]


class SelfCollision(Constraint):
    """Spheres along a chain of bodies that must not interpenetrate (reconstruction, see the module docstring).

    Args:
        points: ``[{body, point, radius}, ...]`` in chain order (body frame).  skip: pairs closer than this many
            points in the list are never tested (neighbours overlap by construction).  margin: gap below which a
            pair gets a row.  max_rows: cap on the rows per step.
    """

    type = "self_collision"
    code = 12
    rows = rows_self_collision
    varying_rows = True
    reaction = "world"
    kind = "inequality"
    family = "maximal"
    fields = ("points", "skip", "margin", "max_rows")

    def __init__(self, points, skip=2, margin=0.0, max_rows=64, *, name: str | None = None):
        super().__init__(name)
        if not isinstance(points, list | tuple) or len(points) < 2:
            raise self.err("points", "expected a list of at least two {body, point, radius} tables")
        pts = []
        for k, p in enumerate(points):
            if isinstance(p, dict):
                extra = set(p) - {"body", "point", "radius"}
                if extra or not {"body", "radius"} <= set(p):
                    raise self.err(f"points[{k}]", "expected {body, point, radius}")
                b, x, r = p["body"], p.get("point", (0.0, 0.0, 0.0)), p["radius"]
            else:
                try:
                    b, x, r = p
                except (TypeError, ValueError):
                    raise self.err(f"points[{k}]", f"expected (body, point, radius), got {p!r}") from None
            try:
                xv = check_vector(x, 3, "point")
                rv = float(r)
            except (ModelError, TypeError, ValueError):
                raise self.err(f"points[{k}]", f"bad point or radius in {p!r}") from None
            if not (np.isfinite(rv) and rv >= 0):
                raise self.err(f"points[{k}].radius", f"must be >= 0, got {r!r}")
            pts.append((b, xv, rv))
        self.points = pts
        self.skip, self.max_rows = int(skip), int(max_rows)
        self.margin = float(margin)
        if self.skip < 1 or self.max_rows < 1 or not np.isfinite(self.margin) or self.margin < 0:
            raise self.err("skip", "need skip >= 1, max_rows >= 1, margin >= 0")
        self.nrows = self.max_rows

    @property
    def nviol(self):
        return 1

    def _field_to_scene(self, f):
        if f == "points":
            return [{"body": b, "point": np.asarray(x).tolist(), "radius": r} for b, x, r in self.points]
        return super()._field_to_scene(f)

    def _bind(self, model):
        self.bodies = np.array([body_index(model, self, b, f"points[{k}].body", allow_world=False)
                                for k, (b, _, _) in enumerate(self.points)], dtype=np.int64)
        self.xj = np.array([to_joint_frame(model, b, x) for b, (_, x, _) in zip(self.bodies, self.points,
                                                                               strict=True)])
        self.radii = np.array([r for _, _, r in self.points])
        self.react_labels = ("tx", "ty", "tz", "fx", "fy", "fz")
        self.row_labels = (self.name,)

    def encode(self):
        n = len(self.points)
        order = np.arange(n)
        floats = [self.margin]
        for x, r in zip(self.xj, self.radii, strict=True):
            floats += [*x, r]
        return [n, self.skip, *self.bodies, *order], floats
