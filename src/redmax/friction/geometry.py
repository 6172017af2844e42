"""Contact geometry of joints and loop closures: where the implicit contacts of a joint are (RedMax paper §5.1,
Sueda's notes §2.11).

A joint with friction is modelled as the solid it would be made of: a revolute joint a cylinder about its axis,
a prismatic joint a box sliding along its axis, a spherical joint a ball.  Its contacts are fixed in the child
body; each is a point with one or two normals (the directions in which the joint's reaction can push) and one
or two tangents (the directions of relative sliding that friction resists).  The friction bound of a contact's
tangent rows is ``mu * sum_normals |a|``, a the normal impulses (spec of the original, §2.5.1).

* Revolute, :class:`Cylinder` (radius r, height h): a frame whose z is the joint axis; at the angles 0, pi/2, pi,
  3 pi/2 and the ends z = -h/2, +h/2, a point ``(r cos t, r sin t, z)`` with the inward radial normal and the
  axial normal toward the middle, and the circumferential tangent: 8 points, 16 normals, 8 tangent rows.
* Prismatic, :class:`Box` (sides s in the joint frame): at the 8 corners, the two inward normals across the slide
  axis and the tangent along it.
* Spherical, :class:`Ball` (radius r): the 6 points ``+-r e_k`` with the inward normal and two tangents each.
* A hinge-type :class:`redmax.constraints.Loop` with a :class:`Cylinder`: the revolute set about the loop's axis,
  at the first point, in the first body's frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from redmax.errors import ModelError

__all__ = ["Ball", "Box", "ContactSet", "Cylinder", "contact_from_scene", "contact_set", "rotation_z_to"]


def _positive(owner: str, field: str, v) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {field} must be a number, got {v!r}") from None
    if not (np.isfinite(x) and x > 0.0):
        raise ModelError(f"{owner}: {field} must be finite and > 0, got {v!r}")
    return x


@dataclass(frozen=True)
class Cylinder:
    """A revolute joint's (or a hinge loop's) contact cylinder about its axis (length units of the model)."""

    radius: float = 1.0
    height: float = 1.0
    type = "cylinder"

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive("Cylinder", "radius", self.radius))
        object.__setattr__(self, "height", _positive("Cylinder", "height", self.height))

    def to_scene(self) -> dict:
        return {"type": "cylinder", "radius": self.radius, "height": self.height}


@dataclass(frozen=True)
class Box:
    """A prismatic joint's contact box: side lengths (3,) along the joint frame's x, y, z."""

    sides: tuple = (1.0, 1.0, 1.0)
    type = "box"

    def __post_init__(self):
        try:
            s = np.asarray(self.sides, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ModelError(f"Box: sides must be 3 numbers, got {self.sides!r}") from None
        if s.shape != (3,) or not np.all(np.isfinite(s)) or not np.all(s > 0.0):
            raise ModelError(f"Box: sides must be 3 finite numbers > 0, got {self.sides!r}")
        object.__setattr__(self, "sides", tuple(float(x) for x in s))

    def to_scene(self) -> dict:
        return {"type": "box", "sides": list(self.sides)}


@dataclass(frozen=True)
class Ball:
    """A spherical joint's contact ball."""

    radius: float = 1.0
    type = "ball"

    def __post_init__(self):
        object.__setattr__(self, "radius", _positive("Ball", "radius", self.radius))

    def to_scene(self) -> dict:
        return {"type": "ball", "radius": self.radius}


TYPES = {"cylinder": Cylinder, "box": Box, "ball": Ball}
FOR_JOINT = {"revolute": Cylinder, "prismatic": Box, "spherical_exp": Ball, "spherical_euler": Ball}


def contact_from_scene(table, owner: str):
    """A contact geometry from a scene-file table ``{ type = "cylinder", radius, height }`` (or box/ball)."""
    if isinstance(table, Cylinder | Box | Ball):
        return table
    if not isinstance(table, dict):
        raise ModelError(f"{owner}: contact must be a table {{ type = \"cylinder\" | \"box\" | \"ball\", ... }}, got "
                         f"{table!r}")
    kind = table.get("type")
    if kind not in TYPES:
        raise ModelError(f"{owner}: contact type must be one of {sorted(TYPES)}, got {kind!r}")
    keys = {"cylinder": ("radius", "height"), "box": ("sides",), "ball": ("radius",)}[kind]
    extra = sorted(set(table) - {"type", *keys})
    if extra:
        raise ModelError(f"{owner}: contact '{kind}' has unknown key(s) {extra}; valid: {list(keys)}")
    try:
        return TYPES[kind](**{k: table[k] for k in keys if k in table})
    except ModelError as e:
        raise ModelError(f"{owner}: contact: {e}") from None


def rotation_z_to(a) -> np.ndarray:
    """The rotation (3, 3) that maps e_z onto the unit vector ``a`` (the smallest one; pi about x for -e_z)."""
    a = np.asarray(a, dtype=float)
    a = a / np.linalg.norm(a)
    c = a[2]
    if c > 1.0 - 1e-15:
        return np.eye(3)
    if c < -1.0 + 1e-15:
        return np.diag([1.0, -1.0, -1.0])
    k = np.array([-a[1], a[0], 0.0]) / np.sqrt(a[0] ** 2 + a[1] ** 2)  # e_z x a, normalised
    s = np.sqrt(max(0.0, 1.0 - c * c))
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


@dataclass(frozen=True)
class ContactSet:
    """The contacts of one joint or loop in a body frame.

    Attributes:
        points (k, 3): positions.  normals (k, 2, 3), nn (k,): the normals of each point (nn[i] of them).
        tangents (k, 2, 3), nt (k,): the tangents of each point.
    """

    points: np.ndarray
    normals: np.ndarray
    nn: np.ndarray
    tangents: np.ndarray
    nt: np.ndarray

    def transformed(self, R, p) -> ContactSet:
        """The set carried by the rigid transform ``x -> R x + p``."""
        return ContactSet(self.points @ R.T + p, self.normals @ R.T, self.nn, self.tangents @ R.T, self.nt)

    @property
    def size(self) -> int:
        return int(self.points.shape[0])


def _cylinder(r: float, h: float) -> ContactSet:
    pts, nrm, tan = [], [], []
    for th in (0.0, 0.5 * np.pi, np.pi, 1.5 * np.pi):
        c, s = np.cos(th), np.sin(th)
        if abs(c) < 1e-15:
            c = 0.0
        if abs(s) < 1e-15:
            s = 0.0
        for z, nz in ((-0.5 * h, 1.0), (0.5 * h, -1.0)):
            pts.append((r * c, r * s, z))
            nrm.append(((-c, -s, 0.0), (0.0, 0.0, nz)))
            tan.append(((-s, c, 0.0), (0.0, 0.0, 0.0)))
    k = len(pts)
    return ContactSet(np.array(pts), np.array(nrm), np.full(k, 2, np.int64), np.array(tan), np.ones(k, np.int64))


def _ball(r: float) -> ContactSet:
    e = np.eye(3)
    pts, nrm, tan = [], [], []
    for k in range(3):
        a, b = e[(k + 1) % 3], e[(k + 2) % 3]
        for sgn in (1.0, -1.0):
            pts.append(sgn * r * e[k])
            nrm.append((-sgn * e[k], np.zeros(3)))
            tan.append((-sgn * a, -sgn * b))
    return ContactSet(np.array(pts), np.array(nrm), np.ones(6, np.int64), np.array(tan), np.full(6, 2, np.int64))


def _box(sides, axis) -> ContactSet:
    s = np.asarray(sides, dtype=float)
    R = rotation_z_to(axis)
    ex, ey, ez = R[:, 0], R[:, 1], R[:, 2]
    pts, nrm, tan = [], [], []
    for z in (-0.5, 0.5):
        for x, y in ((-0.5, -0.5), (-0.5, 0.5), (0.5, -0.5), (0.5, 0.5)):
            pts.append(s * (R @ np.array([x, y, z])))
            nx = -np.sign(x) * ex
            ny = -np.sign(y) * ey
            nrm.append((nx, ny))
            tan.append((ez, np.zeros(3)))
    k = len(pts)
    return ContactSet(np.array(pts), np.array(nrm), np.full(k, 2, np.int64), np.array(tan), np.ones(k, np.int64))


def contact_set(geometry, joint_kind: str, axis=None, owner: str = "joint") -> ContactSet:
    """The contacts of ``geometry`` on a joint of kind ``joint_kind`` (its axis for revolute and prismatic
    joints), in the joint frame.  Raises ModelError when the geometry does not fit the joint."""
    want = FOR_JOINT.get(joint_kind)
    if want is None:
        raise ModelError(f"{owner}: a {joint_kind} joint has no contact geometry (friction needs a revolute joint "
                         "with a cylinder, a prismatic joint with a box or a spherical joint with a ball)")
    if not isinstance(geometry, want):
        raise ModelError(f"{owner}: a {joint_kind} joint takes a {want.type} contact, got a {geometry.type}")
    if isinstance(geometry, Cylinder):
        return _cylinder(geometry.radius, geometry.height).transformed(rotation_z_to(axis), np.zeros(3))
    if isinstance(geometry, Box):
        return _box(geometry.sides, axis)
    return _ball(geometry.radius)
