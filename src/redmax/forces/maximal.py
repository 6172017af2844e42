"""Maximal forces: point forces, springs, cables and penalty ground contact (Sueda notes §1.9).

All are :class:`~redmax.forces.points.PointForce` laws: world forces on body points with their
derivatives; the shared machinery turns them into world wrenches and exact K, D blocks.  Points are given as
``(body name, (x, y, z))`` in the body frame (centre of mass, principal axes; for boxes, spheres and
cylinders the shape's own axes) or ``(None, (x, y, z))`` for a fixed world point.  The laws of the library are
compiled kernels (:mod:`redmax.forces._compiled`); :class:`GenericSpring` and :class:`MultiPointSpring` take
Python callables for their tension and run their law in Python.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from redmax._jit import njit
from redmax._validate import check_finite, check_nonneg, check_vector
from redmax.errors import ModelError
from redmax.forces._compiled import (
    F_GROUND,
    F_PATH,
    F_POINT_SPRING,
    F_WORLD_POINT,
    _point_spring_pair,
    _points,
    ground_law,
    path_law,
    path_length,
    path_rate,
    point_finish,
    point_views,
)
from redmax.forces.points import PointForce, points_to_scene

__all__ = [
    "Cable",
    "GenericSpring",
    "GroundContact",
    "MultiPointSpring",
    "PointSpring",
    "SpringDamper",
    "WorldPointForce",
    "path_geometry",
]


def path_geometry(x, xd):
    """Total length l and its rate ldot of the path through the points x (n, 3) with velocities xd."""
    x = np.ascontiguousarray(x)
    xd = np.ascontiguousarray(xd, dtype=x.dtype)
    return path_length(x), path_rate(x, xd)


@njit(cache=True, inline="always")  # compiled into the step's force loop
def kernel_world_point(fi, ff, io, fo, mode, bucket, Rw, pw, Vw, q, qd, want_blocks, fw, bpair, bK, bD, fr, rK,
                       rD, energy, scratch, ppair, prec, pairs_on, nblk, npair):
    """A constant world force at one body point (F at ff[fo + 3:fo + 6]); energy ``-F . x``."""
    x, xd, F, dFdx, dFdxd, rest = point_views(scratch, 1)
    bodies = _points(fi, ff, io, fo, 1, Rw, pw, Vw, x, xd)
    for r in range(3):
        F[0, r] = ff[fo + 3 + r]
    e = -(F[0, 0] * x[0, 0] + F[0, 1] * x[0, 1] + F[0, 2] * x[0, 2]).real
    return point_finish(False, bodies, x, xd, F, dFdx, dFdxd, False, e, mode, bucket, energy, fw, want_blocks, bpair,
                        bK, bD, nblk, rest, ppair, prec, npair, pairs_on)


@njit(cache=True, inline="always")  # compiled into the step's force loop
def kernel_point_spring(fi, ff, io, fo, mode, bucket, Rw, pw, Vw, q, qd, want_blocks, fw, bpair, bK, bD, fr, rK,
                        rD, energy, scratch, ppair, prec, pairs_on, nblk, npair):
    """Zero-rest-length spring and damper between two points (ks, kd at ff[fo + 6:fo + 8])."""
    if pairs_on and want_blocks and mode != 0:  # the step's fast assembly: a compact pair record
        e = _point_spring_pair(fi, ff, io, fo, mode, Rw, pw, Vw, fw, ppair, prec, npair)
        if bucket >= 0:
            energy[bucket] += e
        return nblk, npair + 1
    x, xd, F, dFdx, dFdxd, rest = point_views(scratch, 2)
    bodies = _points(fi, ff, io, fo, 2, Rw, pw, Vw, x, xd)
    ks = ff[fo + 6]
    kd = ff[fo + 7]
    for r in range(3):
        F0 = ks * (x[1, r] - x[0, r]) + kd * (xd[1, r] - xd[0, r])
        F[0, r] = F0
        F[1, r] = -F0
        dFdx[0, 0, r, r] = -ks
        dFdx[0, 1, r, r] = ks
        dFdx[1, 0, r, r] = ks
        dFdx[1, 1, r, r] = -ks
        dFdxd[0, 0, r, r] = -kd
        dFdxd[0, 1, r, r] = kd
        dFdxd[1, 0, r, r] = kd
        dFdxd[1, 1, r, r] = -kd
    d0 = x[1, 0] - x[0, 0]
    d1 = x[1, 1] - x[0, 1]
    d2 = x[1, 2] - x[0, 2]
    e = 0.5 * ks * (d0 * d0 + d1 * d1 + d2 * d2).real
    return point_finish(True, bodies, x, xd, F, dFdx, dFdxd, False, e, mode, bucket, energy, fw, want_blocks, bpair,
                        bK, bD, nblk, rest, ppair, prec, npair, pairs_on)


@njit(cache=True, inline="always")  # compiled into the step's force loop
def kernel_path(fi, ff, io, fo, mode, bucket, Rw, pw, Vw, q, qd, want_blocks, fw, bpair, bK, bD, fr, rK,
                rD, energy, scratch, ppair, prec, pairs_on, nblk, npair):
    """Spring-damper or cable along a path of points: tension ``k e + d edot``, ``e = (l - L)/L`` (a cable: none
    while slack); ints [npts, cable, bodies...], floats [points (3 npts), k, d, L]."""
    npt = fi[io]
    x, xd, F, dFdx, dFdxd, rest = point_views(scratch, npt)
    bodies = _points(fi, ff, io + 2, fo, npt, Rw, pw, Vw, x, xd)
    cable = fi[io + 1] != 0
    k = ff[fo + 3 * npt]
    d = ff[fo + 3 * npt + 1]
    L = ff[fo + 3 * npt + 2]
    l = path_length(x)
    e = 0.0
    if cable and not l.real > L:
        T = 0.0 * l
        Tl = 0.0
        Tld = 0.0
    else:
        T = k * (l - L) / L + d * path_rate(x, xd) / L
        Tl = k / L
        Tld = d / L
        s = (l.real - L) / L
        e = 0.5 * k * s * s * L
    path_law(x, xd, T, Tl, Tld, F, dFdx, dFdxd, rest)
    return point_finish(True, bodies, x, xd, F, dFdx, dFdxd, False, e, mode, bucket, energy, fw, want_blocks, bpair,
                        bK, bD, nblk, rest, ppair, prec, npair, pairs_on)


@njit(cache=True, inline="always")  # compiled into the step's force loop
def kernel_ground(fi, ff, io, fo, mode, bucket, Rw, pw, Vw, q, qd, want_blocks, fw, bpair, bK, bD, fr, rK,
                  rD, energy, scratch, ppair, prec, pairs_on, nblk, npair):
    """Penalty contact with a plane with Coulomb-like friction at each point (:func:`ground_law`); ints
    [npts, bodies...], floats [points (3 npts), kn, kd, kt, mu, normal (3), origin (3), dynamic sign]."""
    npt = fi[io]
    x, xd, F, dFdx, dFdxd, rest = point_views(scratch, npt)
    bodies = _points(fi, ff, io + 1, fo, npt, Rw, pw, Vw, x, xd)
    o = fo + 3 * npt
    e = ground_law(x, xd, ff[o], ff[o + 1], ff[o + 2], ff[o + 3], ff[o + 4:o + 7], ff[o + 7:o + 10], ff[o + 10], F,
                   dFdx, dFdxd).real
    return point_finish(False, bodies, x, xd, F, dFdx, dFdxd, True, e, mode, bucket, energy, fw, want_blocks, bpair,
                        bK, bD, nblk, rest, ppair, prec, npair, pairs_on)


class WorldPointForce(PointForce):
    """Constant world force ``F`` (3,) at a body point (the "directional point force", notes §1.9.2).

    Its potential is ``-F . x``; set ``count_energy=False`` to leave it out of the energy (as the
    original implementation does in reference/10).  ``stiffness`` as in PointForce ("none" in the
    reference scenes).
    """

    code = F_WORLD_POINT
    kernel = kernel_world_point
    scene_type = "world_point_force"
    scene_keys = ("body", "point", "force", "stiffness", "count_energy")
    scene_required = ("body", "point", "force")

    def __init__(self, body: str, point, force, name: str = "point_force", stiffness: str = "full",
                 count_energy: bool = True):
        super().__init__([(body, point)], name, stiffness)
        self.force = force
        self.energy_key = "applied" if count_energy else None

    def check(self):
        self.F = check_vector(self.force, 3, f"force '{self.name}': force")
        if self.point_set.bodies[0] < 0:
            raise ModelError(f"force '{self.name}': the point must be attached to a body")

    def program(self, model):
        b, r = self._point_ints_floats(model)
        return self.code, self.mode, b, np.concatenate([r, self.F]), (), 1

    @classmethod
    def from_scene(cls, read):
        return cls(read.string("body"), read.array("point", (3,)), read.array("force", (3,)), name=read.name,
                   stiffness=read.string("stiffness", "full"), count_energy=read.boolean("count_energy", True))

    def to_scene(self):
        (body, r), = self.points
        return {"body": body, "point": np.asarray(r, float).tolist(), "force": np.asarray(self.force, float).tolist(),
                "stiffness": self.stiffness, "count_energy": self.energy_key is not None}


class PointSpring(PointForce):
    """Zero-rest-length spring with optional damping between two points (notes Eqs. 1.40-1.48).

    Point 0 feels ``ks (x1 - x0) + kd (xd1 - xd0)``, point 1 the opposite; energy ``ks/2 |x1 - x0|^2``.
    ``stiffness`` defaults to "symmetric", RedMax's own form (the exact K with its moment-arm term, symmetrised,
    as the original implementation integrates springs); "full" keeps the exact unsymmetric K.
    """

    code = F_POINT_SPRING
    kernel = kernel_point_spring
    pair_law = True
    scene_type = "point_spring"
    scene_keys = ("points", "ks", "kd", "stiffness")
    scene_required = ("points", "ks")

    def __init__(self, point0, point1, ks: float, kd: float = 0.0, name: str = "point_spring",
                 stiffness: str = "symmetric"):
        super().__init__([point0, point1], name, stiffness)
        self.ks_in, self.kd_in = ks, kd

    def check(self):
        self.ks = check_nonneg(self.ks_in, f"force '{self.name}': ks")
        self.kd = check_nonneg(self.kd_in, f"force '{self.name}': kd")
        if np.all(self.point_set.bodies < 0):
            raise ModelError(f"force '{self.name}': at least one point must be attached to a body")

    def program(self, model):
        b, r = self._point_ints_floats(model)
        return self.code, self.mode, b, np.concatenate([r, [self.ks, self.kd]]), b, 4

    @classmethod
    def from_scene(cls, read):
        pts = read.points("points")
        if len(pts) != 2:
            raise read.err("points", f"a point spring joins exactly 2 points, got {len(pts)}")
        return cls(pts[0], pts[1], read.number("ks"), read.number("kd", 0.0), name=read.name,
                   stiffness=read.string("stiffness", "full"))

    def to_scene(self):
        return {"points": points_to_scene(self.points), "ks": float(self.ks_in), "kd": float(self.kd_in),
                "stiffness": self.stiffness}


class _PathSpring(PointForce):
    """Common part of springs acting along a path of points (two or more)."""

    min_points = 2

    def check(self):
        if self.point_set.n < self.min_points:
            raise ModelError(f"force '{self.name}': needs at least {self.min_points} points, got {self.point_set.n}")
        if np.all(self.point_set.bodies < 0):
            raise ModelError(f"force '{self.name}': at least one point must be attached to a body")

    def initialize(self, model, kin) -> None:
        """Take a missing rest length from the initial configuration."""
        if getattr(self, "L", 1.0) is None:
            x, _ = self.point_set.world(kin)
            self.L = float(np.real(path_geometry(x, np.zeros_like(x))[0]))
            if not self.L > 0:
                raise ModelError(f"force '{self.name}': initial length is zero; give rest_length")


class SpringDamper(_PathSpring):
    """Spring-damper with rest length L (notes §1.9.9): tension ``k e + d edot``, ``e = (l - L)/L``,
    ``edot = ldot/L``; energy ``k e^2 L / 2``.  ``rest_length=None`` takes the initial length.  ``stiffness``
    defaults to "symmetric" (RedMax's form, see :class:`PointSpring`)."""

    cable = False

    code = F_PATH
    kernel = kernel_path
    pair_law = True
    scene_type = "spring_damper"
    scene_keys = ("points", "k", "d", "rest_length", "stiffness")
    scene_required = ("points", "k")

    def __init__(self, point0, point1, k: float, d: float = 0.0, rest_length: float | None = None,
                 name: str = "spring_damper", stiffness: str = "symmetric"):
        super().__init__([point0, point1], name, stiffness)
        self.k_in, self.d_in, self.L_in = k, d, rest_length

    def check(self):
        super().check()
        self.k = check_nonneg(self.k_in, f"force '{self.name}': k")
        self.d = check_nonneg(self.d_in, f"force '{self.name}': d")
        if self.L_in is not None:
            self.L = check_finite(self.L_in, f"force '{self.name}': rest_length")
            if self.L <= 0:
                raise ModelError(f"force '{self.name}': rest_length must be positive, got {self.L}")
        else:
            self.L = None  # filled from the initial state by the builder

    def program(self, model):
        b, r = self._point_ints_floats(model)
        ints = np.concatenate([[b.size, int(self.cable)], b])
        return self.code, self.mode, ints, np.concatenate([r, [self.k, self.d, self.L]]), b, b.size * b.size

    @classmethod
    def _scene_args(cls, read) -> tuple:
        return (read.points("points"), read.number("k"), read.number("d", 0.0), read.number("rest_length", None),
                {"name": read.name, "stiffness": read.string("stiffness", "full")})

    @classmethod
    def from_scene(cls, read):
        pts, k, d, L, kw = cls._scene_args(read)
        if len(pts) != 2:
            raise read.err("points", f"a spring-damper joins exactly 2 points, got {len(pts)}")
        return cls(pts[0], pts[1], k, d, L, **kw)

    def to_scene(self):
        out = {"points": points_to_scene(self.points), "k": float(self.k_in), "d": float(self.d_in),
               "stiffness": self.stiffness}
        if self.L_in is not None:
            out["rest_length"] = float(self.L_in)
        return out


class Cable(SpringDamper):
    """Tension-only cable through two or more via points (notes §1.9.10): the spring-damper tension
    when the strain is positive, zero otherwise."""

    cable = True

    scene_type = "cable"

    def __init__(self, points, k: float, d: float = 0.0, rest_length: float | None = None, name: str = "cable",
                 stiffness: str = "symmetric"):
        PointForce.__init__(self, points, name, stiffness)
        self.k_in, self.d_in, self.L_in = k, d, rest_length

    @classmethod
    def from_scene(cls, read):
        pts, k, d, L, kw = cls._scene_args(read)
        return cls(pts, k, d, L, **kw)


class GenericSpring(_PathSpring):
    """Spring whose scalar tension ``f(l, ldot)`` and derivatives are user callables (notes §1.9.7).

    Args:
        f, df_dl, df_dldot: callables of (l, ldot) returning floats.
        potential: optional callable V(l) for the energy (0 if omitted).
    """

    def __init__(self, point0, point1, f, df_dl, df_dldot, potential=None, name: str = "generic_spring",
                 stiffness: str = "symmetric"):
        super().__init__([point0, point1], name, stiffness)
        self._callables(f, df_dl, df_dldot, potential, name)

    def _callables(self, f, df_dl, df_dldot, potential, name):
        self.f, self.df_dl, self.df_dldot, self.V = f, df_dl, df_dldot, potential
        for fn, nm in ((f, "f"), (df_dl, "df_dl"), (df_dldot, "df_dldot")):
            if not callable(fn):
                raise ModelError(f"force '{name}': {nm} must be callable")
        if potential is not None and not callable(potential):
            raise ModelError(f"force '{name}': potential must be callable")

    def law(self, x, xd, want):
        x = np.ascontiguousarray(x)
        xd = np.ascontiguousarray(xd, dtype=x.dtype)
        l, ld = path_length(x), path_rate(x, xd)
        T, Tl, Tld = self.f(l, ld), self.df_dl(l, ld), self.df_dldot(l, ld)
        n = x.shape[0]
        dt = np.result_type(x, T, Tl, Tld, float)
        F = np.zeros((n, 3), dtype=dt)
        dFdx = np.zeros((n, n, 3, 3), dtype=dt)
        dFdxd = np.zeros((n, n, 3, 3), dtype=dt)
        path_law(x.astype(dt), xd.astype(dt), dt.type(T), float(np.real(Tl)), float(np.real(Tld)), F, dFdx, dFdxd,
                 np.zeros(21 * n, dtype=dt))
        return F, dFdx, dFdxd

    def potential(self, x):
        if self.V is None:
            return 0.0
        return float(self.V(path_geometry(x, np.zeros_like(x))[0]))


class MultiPointSpring(GenericSpring):
    """Generic spring routed through via points on several bodies (notes §1.9.8): one scalar tension
    ``f(l, ldot)`` of the total path length acts along every segment."""

    def __init__(self, points, f, df_dl, df_dldot, potential=None, name: str = "multipoint_spring",
                 stiffness: str = "symmetric"):
        PointForce.__init__(self, points, name, stiffness)
        self._callables(f, df_dl, df_dldot, potential, name)


class GroundContact(PointForce):
    """Penalty contact of body points with a plane, with normal damping and friction (notes §1.9.6,
    Geilinger et al. 2020).

    For a point at signed distance ``d = n . (x - x_g) < 0``: normal force ``-kn d n - kd (n . xd) n``;
    tangential velocity ``a = (I - n n^T) xd``; static friction ``-kt a`` when ``mu kn |d| > kt |a|``,
    otherwise dynamic friction ``-mu kn |d| a / |a|`` (the smaller of the two; zero when ``a = 0``).
    Energy ``kn d^2 / 2``.

    ``dynamic_friction="original"`` reproduces the original RedMax code (``ForceGroundCuboid``), whose dynamic
    branch is ``-mu kn d a / |a|`` with ``d < 0``: a force of the same magnitude *along* the sliding direction.
    That is a defect of the original (sliding points are pushed forward); it exists so that the catalogue scene
    diff/11, whose regression energies were made with it, reproduces them.  The default, ``"opposing"``, is
    Coulomb's direction.

    Args:
        points: body points that can touch the plane.
        normal: plane normal (normalised); origin: a point of the plane (world).
        dynamic_friction: ``"opposing"`` (default) or ``"original"`` (above).
    """

    DYNAMIC_FRICTION: ClassVar[dict] = {"opposing": 1.0, "original": -1.0}

    code = F_GROUND
    kernel = kernel_ground
    scene_type = "ground_contact"
    scene_keys = ("points", "kn", "kd", "kt", "mu", "normal", "origin", "stiffness", "dynamic_friction")
    scene_required = ("points", "kn")

    def __init__(self, points, kn: float, kd: float = 0.0, kt: float = 0.0, mu: float = 0.0,
                 normal=(0.0, 0.0, 1.0), origin=(0.0, 0.0, 0.0), name: str = "ground", stiffness: str = "full",
                 dynamic_friction: str = "opposing"):
        super().__init__(points, name, stiffness)
        self.params_in = (kn, kd, kt, mu, normal, origin)
        self.dynamic_friction = dynamic_friction

    def check(self):
        kn, kd, kt, mu, normal, origin = self.params_in
        o = f"force '{self.name}'"
        self.kn, self.kd = check_nonneg(kn, f"{o}: kn"), check_nonneg(kd, f"{o}: kd")
        self.kt, self.mu = check_nonneg(kt, f"{o}: kt"), check_nonneg(mu, f"{o}: mu")
        n = check_vector(normal, 3, f"{o}: normal")
        if np.linalg.norm(n) < 1e-12:
            raise ModelError(f"{o}: normal must be non-zero")
        self.n = n / np.linalg.norm(n)
        self.origin = check_vector(origin, 3, f"{o}: origin")
        if np.any(self.point_set.bodies < 0):
            raise ModelError(f"{o}: contact points must be attached to bodies")
        if not isinstance(self.dynamic_friction, str) or self.dynamic_friction not in self.DYNAMIC_FRICTION:
            raise ModelError(f"{o}: dynamic_friction must be one of {sorted(self.DYNAMIC_FRICTION)}, got "
                             f"{self.dynamic_friction!r}")

    def program(self, model):
        b, r = self._point_ints_floats(model)
        sgn = self.DYNAMIC_FRICTION[self.dynamic_friction]
        ff = np.concatenate([r, [self.kn, self.kd, self.kt, self.mu], self.n, self.origin, [sgn]])
        return self.code, self.mode, np.concatenate([[b.size], b]), ff, (), b.size

    @classmethod
    def from_scene(cls, read):
        return cls(read.points("points"), read.number("kn"), read.number("kd", 0.0), read.number("kt", 0.0),
                   read.number("mu", 0.0), read.array("normal", (3,), (0.0, 0.0, 1.0)),
                   read.array("origin", (3,), (0.0, 0.0, 0.0)), name=read.name,
                   stiffness=read.string("stiffness", "full"),
                   dynamic_friction=read.choice("dynamic_friction", tuple(cls.DYNAMIC_FRICTION), "opposing"))

    def to_scene(self):
        kn, kd, kt, mu, normal, origin = self.params_in
        out = {"points": points_to_scene(self.points), "kn": float(kn), "kd": float(kd), "kt": float(kt),
               "mu": float(mu), "normal": np.asarray(normal, float).tolist(),
               "origin": np.asarray(origin, float).tolist(), "stiffness": self.stiffness}
        if self.dynamic_friction != "opposing":
            out["dynamic_friction"] = self.dynamic_friction
        return out
