"""Maximal forces defined by world forces on body points, with exact stiffness and damping matrices.

Every point force of the Sueda notes §1.9 (directional point force, point-to-point springs, generic and
multi-point springs, cables, ground contact) is a *law*: given the world positions ``x_k`` and velocities
``xd_k`` of its points it returns the world forces ``F_k`` and the derivatives ``dF_k/dx_j``, ``dF_k/dxd_j``
(3x3 blocks).  One compiled mapping (:func:`redmax.forces._points.map_point_law`) turns any law into world
wrenches and exact 6x6 body-pair blocks of K and D; the library's laws are compiled too
(:mod:`redmax.forces._compiled`), and laws given as Python callables (generic springs) run in Python and share
the mapping.  This reproduces notes Eqs. 1.32, 1.35, 1.44, 1.47, 1.48, 1.52-1.61 and 1.65-1.80 without
transcribing them one by one.
"""

from __future__ import annotations

import numpy as np

from redmax.errors import ModelError
from redmax.forces._points import STIFFNESS_MODES
from redmax.forces.base import Force, ForceOutput
from redmax.spatial import skew

__all__ = ["PointForce", "PointSet", "attach_points", "points_to_scene"]


class PointSet:
    """Points attached to bodies (or to the world), resolved against a model.

    Attributes:
        bodies: (n,) int64 body index of each point, -1 for a fixed world point.
        r: (n, 3) point coordinates: in the body frame (centre of mass, principal axes), or in the
            world frame for world points.
    """

    def __init__(self, bodies: np.ndarray, r: np.ndarray):
        self.bodies = bodies
        self.r = r
        self.n = r.shape[0]

    def joint_frame(self, model) -> np.ndarray:
        """The points in their joint frames (world points unchanged), (n, 3): ``E_jb r``."""
        out = np.empty((self.n, 3))
        for k in range(self.n):
            b = self.bodies[k]
            out[k] = self.r[k] if b < 0 else model.E_jb[b, :3, :3] @ self.r[k] + model.E_jb[b, :3, 3]
        return out

    def world(self, kin):
        """World positions x (n, 3) and velocities xd (n, 3) (dtype of the kinematics)."""
        x, xd, _, _ = self.evaluate(kin)
        return x, xd

    def evaluate(self, kin):
        """World positions x (n,3), velocities xd (n,3), rotations R (n,3,3), Gamma (n,3,6)."""
        n = self.n
        x = np.empty((n, 3), dtype=kin.E_wb.dtype)
        xd = np.zeros((n, 3), dtype=kin.E_wb.dtype)
        R = np.zeros((n, 3, 3), dtype=kin.E_wb.dtype)
        G = np.zeros((n, 3, 6), dtype=kin.E_wb.dtype)
        for k in range(n):
            b = self.bodies[k]
            if b < 0:
                x[k] = self.r[k]
                continue
            E = kin.E_wb[b]
            R[k] = E[:3, :3]
            x[k] = R[k] @ self.r[k] + E[:3, 3]
            G[k, :, :3] = skew(self.r[k]).T
            G[k, :, 3:] = np.eye(3)
            xd[k] = R[k] @ (G[k] @ kin.phi[b])
        return x, xd, R, G


def attach_points(points, body_index: dict, owner: str) -> PointSet:
    """Resolve ``[(body_name or None, (x, y, z)), ...]`` against the model's body names."""
    bodies, coords = [], []
    try:
        items = list(points)
    except TypeError:
        raise ModelError(f"{owner}: points must be a list of (body name or None, (x, y, z)) pairs") from None
    for k, item in enumerate(items):
        try:
            name, r = item
        except (TypeError, ValueError):
            msg = f"{owner}: point {k} must be a (body name or None, (x, y, z)) pair, got {item!r}"
            raise ModelError(msg) from None
        if name is None or name == "world":
            bodies.append(-1)
        elif isinstance(name, str) and name in body_index:
            bodies.append(body_index[name])
        else:
            raise ModelError(f"{owner}: point {k} is attached to unknown body {name!r}")
        try:
            v = np.asarray(r, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ModelError(f"{owner}: point {k} coordinates must be numeric, got {r!r}") from None
        if v.shape != (3,) or not np.all(np.isfinite(v)):
            raise ModelError(f"{owner}: point {k} must have 3 finite coordinates, got {r!r}")
        coords.append(v)
    return PointSet(np.array(bodies, dtype=np.int64), np.array(coords, dtype=float).reshape(-1, 3))


class PointForce(Force):
    """Base class of maximal forces acting through body points.

    Subclasses set ``self.points`` (a list of ``(body name or None, r)``) and either implement :meth:`law` (a
    Python law, see :func:`redmax.forces.program.evaluate_point_law`) or :meth:`program` (a compiled law).
    ``stiffness`` chooses how K enters implicit integration: "full" (the exact derivative), "symmetric"
    (``(K + K^T)/2``, Baraff & Witkin) or "none" (explicit).
    """

    space = "maximal"
    energy_key = "springs"

    def __init__(self, points, name: str, stiffness: str = "full"):
        if stiffness not in STIFFNESS_MODES:
            raise ModelError(f"force '{name}': stiffness must be 'full', 'symmetric' or 'none', got {stiffness!r}")
        self.points = list(points) if not isinstance(points, str) else points
        self.name = name
        self.stiffness = stiffness
        self._set: PointSet | None = None

    @property
    def mode(self) -> int:
        return STIFFNESS_MODES[self.stiffness]

    # -- binding ------------------------------------------------------------------------------
    def bind(self, body_index: dict) -> None:
        """Resolve body names (called by ModelBuilder.build)."""
        self._set = attach_points(self.points, body_index, f"force '{self.name}'")
        self.check()

    def check(self) -> None:
        """Validate parameters after binding (override); raise ModelError naming the force."""

    def initialize(self, model, kin) -> None:
        """Hook called once with the initial kinematics (e.g. to take rest lengths); default: nothing."""

    @property
    def point_set(self) -> PointSet:
        if self._set is None:
            raise ModelError(f"force '{self.name}': not attached to a model (add it with ModelBuilder.add_force)")
        return self._set

    def _point_ints_floats(self, model):
        """(bodies (n,), joint-frame points (n, 3) flattened)."""
        ps = self.point_set
        return ps.bodies.copy(), ps.joint_frame(model).reshape(-1)

    # -- the law --------------------------------------------------------------------------------
    def law(self, x, xd, want_derivatives: bool):
        """World forces on the points (Python laws).

        Args:
            x, xd: (n, 3) world positions and velocities of the points.
        Returns:
            ``(F, dFdx, dFdxd)``: F (n, 3); dFdx and dFdxd (n, n, 3, 3) with ``[k, j] = dF_k/dx_j``.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement law() or program()")

    def potential(self, x) -> float:
        """Potential energy of the conservative part (0 if none), for Python laws."""
        return 0.0

    def evaluate(self, model, kin, t: float = 0.0, want_K: bool = True, want_D: bool = True) -> ForceOutput:
        if self.program(model) is not None:
            return super().evaluate(model, kin, t, want_K, want_D)
        from redmax.forces.evaluate import evaluate_point_law

        return evaluate_point_law(self, model, kin, want_K, want_D)

    def wrenches(self, model, kin, want: bool):
        """Body-frame wrenches (nb, 6) and, if ``want``, K and D (6nb, 6nb) with respect to body twists (the
        notes' convention; dense, for small systems and tests)."""
        from redmax.forces.base import ForceTerms

        out = self.evaluate(model, kin, 0.0, want, want)
        t = ForceTerms(model.nb, model.ndof, np.result_type(out.f, float))
        t.add(self, out)
        f = t.fm_body(kin)
        if not want:
            return f, None, None
        d = t.dense(kin, "body")
        return f, d["Km"], d["Dm"]


def points_to_scene(points) -> list:
    """Force points as scene-file tables ``{body, point}`` (``"world"`` for a fixed world point)."""
    return [{"body": "world" if b is None else b, "point": np.asarray(r, dtype=float).tolist()} for b, r in points]
