"""Rigid-body shapes and their mass properties (mass, centre of mass, principal inertia and frame).

Conventions:

* Every shape has its own frame *s* (the frame its geometry is described in) and a body frame *b* at the
  centre of mass with principal axes.  ``E_sb`` (4, 4) is frame *b* expressed in frame *s*.
* ``I`` (3,) holds the principal moments about the centre of mass, so the spatial inertia in frame *b* is
  ``diag(I1, I2, I3, m, m, m)`` (6, 6), angular first.
* Units are whatever the inputs use: with lengths in cm and density in g/cm^3, mass is in g and moments in
  g cm^2.  Nothing in this module assumes a particular unit system.

Principal frames of composites and meshes come from ``numpy.linalg.eigh`` of the 3x3 inertia tensor about
the centre of mass.  The eigenvector matrix is made right-handed by negating its last column when its
determinant is negative.  When the tensor is already diagonal (largest off-diagonal magnitude at most
``1e-12`` times the largest diagonal entry) the axes are kept as they are (``V = identity``), so a shape
that is aligned with its own axes never has them reordered.

Mesh volume integrals follow B. Mirtich, "Fast and Accurate Computation of Polyhedral Mass Properties",
J. Graphics Tools 1(2):31-50, 1996.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from redmax import spatial
from redmax._validate import plain
from redmax.errors import ModelError

__all__ = ["Composite", "Cuboid", "Cylinder", "Mesh", "Shape", "Sphere", "principal_frame"]

_DIAG_TOL = 1e-12  # relative off-diagonal size under which an inertia tensor counts as diagonal
_RIGID_TOL = 1e-9  # tolerance on orthonormality, determinant and last row of a placement transform


def _readonly(a) -> np.ndarray:
    """A float64 (or int) copy of ``a`` that cannot be written to."""
    out = np.array(a, copy=True)
    out.setflags(write=False)
    return out


def _positive(element: str, what: str, values) -> tuple[float, ...]:
    """Convert ``values`` to floats, raising ModelError unless all are positive and finite."""
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        out = None
    if out is None or not all(math.isfinite(v) and v > 0.0 for v in out):
        shown = plain(values[0] if len(values) == 1 else tuple(values))
        noun = "a positive finite number" if len(values) == 1 else "positive finite numbers"
        raise ModelError(f"{element}: {what} must be {noun}, got {shown!r}")
    return out


def principal_frame(J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal axes of a symmetric (3, 3) inertia tensor ``J``.

    Returns:
        ``(V, I)``: (3, 3) right-handed rotation whose columns are the principal axes, and (3,) moments
        with ``J = V diag(I) V^T``.  ``V`` is the identity when ``J`` is already diagonal.
    """
    J = 0.5 * (J + J.T)
    off = np.abs(J - np.diag(np.diag(J))).max()
    if off <= _DIAG_TOL * np.abs(np.diag(J)).max():
        return np.eye(3), np.diag(J).copy()
    I, V = np.linalg.eigh(J)
    if np.linalg.det(V) < 0.0:
        V[:, 2] = -V[:, 2]
    return V, I


class Shape:
    """Base class of rigid-body shapes.  Instances are immutable after construction.

    Attributes:
        kind: ``"cuboid"``, ``"sphere"``, ``"cylinder"``, ``"composite"`` or ``"mesh"``.
        density: mass per unit volume (for a composite, total mass over summed part volumes).
        volume: volume of the shape (length^3).
        mass: total mass, > 0.
        I: (3,) principal moments of inertia about the centre of mass (mass length^2), all > 0.
        E_sb: (4, 4) principal body frame *b* (origin at the centre of mass) expressed in the shape frame *s*.
    """

    kind = "shape"

    density: float
    volume: float
    mass: float
    I: np.ndarray
    E_sb: np.ndarray

    def _finish(self, element: str, density: float, volume: float, mass: float, I, E_sb) -> None:
        """Store the mass properties, check them, and freeze the instance."""
        I = np.asarray(I, dtype=float)
        if not (math.isfinite(mass) and mass > 0.0):
            raise ModelError(f"{element}: mass must be positive and finite, got {mass!r}")
        if I.shape != (3,) or not np.all(np.isfinite(I)) or not np.all(I > 0.0):
            raise ModelError(f"{element}: principal moments must be positive and finite, got {I.tolist()}")
        self.__dict__.update(density=float(density), volume=float(volume), mass=float(mass), I=_readonly(I),
                             E_sb=_readonly(np.asarray(E_sb, dtype=float)), _frozen=True)

    def __setattr__(self, name, value):
        if getattr(self, "_frozen", False):
            raise AttributeError(f"{self.kind}: shapes are immutable (cannot set {name!r})")
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        raise AttributeError(f"{self.kind}: shapes are immutable (cannot delete {name!r})")

    def spatial_inertia(self) -> np.ndarray:
        """Spatial inertia ``diag(I1, I2, I3, m, m, m)`` (6, 6) in the principal body frame *b*."""
        return spatial.spatial_inertia(self.mass, np.array(self.I))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mass={self.mass:.6g}, I={np.array2string(self.I, precision=6)})"


class Cuboid(Shape):
    """Solid box with side lengths ``(sx, sy, sz)`` along the shape's x, y, z axes, centred at its origin.

    ``m = rho sx sy sz`` and ``I = m/12 (sy^2 + sz^2, sz^2 + sx^2, sx^2 + sy^2)``.  The body frame is the
    shape frame (``E_sb = identity``); the axes follow the sides and are never reordered.
    """

    kind = "cuboid"

    def __init__(self, sx: float, sy: float, sz: float, density: float = 1.0):
        s = _positive("cuboid", "side lengths", (sx, sy, sz))
        (rho,) = _positive("cuboid", "density", (density,))
        self.sides = s
        x2, y2, z2 = s[0] * s[0], s[1] * s[1], s[2] * s[2]  # products: inf on overflow, never OverflowError
        vol = s[0] * s[1] * s[2]
        m = rho * vol
        I = (m / 12.0 * (y2 + z2), m / 12.0 * (z2 + x2), m / 12.0 * (x2 + y2))
        self._finish("cuboid", rho, vol, m, I, np.eye(4))


class Sphere(Shape):
    """Solid ball of radius ``r`` centred at the shape origin.

    ``m = rho 4/3 pi r^3``, ``I = 2/5 m r^2`` about each axis; ``E_sb = identity``.
    """

    kind = "sphere"

    def __init__(self, radius: float, density: float = 1.0):
        (r,) = _positive("sphere", "radius", (radius,))
        (rho,) = _positive("sphere", "density", (density,))
        self.radius = r
        vol = 4.0 / 3.0 * math.pi * r * r * r
        m = rho * vol
        self._finish("sphere", rho, vol, m, np.full(3, 0.4 * m * r * r), np.eye(4))


class Cylinder(Shape):
    """Solid circular cylinder, axis along the shape's z, centred at its origin.

    ``m = rho pi r^2 h``, ``I = (m (3 r^2 + h^2)/12, m (3 r^2 + h^2)/12, m r^2 / 2)``; ``E_sb = identity``.
    """

    kind = "cylinder"

    def __init__(self, radius: float, height: float, density: float = 1.0):
        r, h = _positive("cylinder", "radius and height", (radius, height))
        (rho,) = _positive("cylinder", "density", (density,))
        self.radius, self.height = r, h
        vol = math.pi * r * r * h
        m = rho * vol
        Ixy = m * (3.0 * r * r + h * h) / 12.0
        self._finish("cylinder", rho, vol, m, (Ixy, Ixy, 0.5 * m * r * r), np.eye(4))


def _check_rigid(element: str, E) -> np.ndarray:
    """Return ``E`` as a (4, 4) float array, raising ModelError unless it is a finite rigid transform."""
    try:
        A = np.array(E, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{element}: placement must be a 4x4 rigid transform ({exc})") from None
    if A.shape != (4, 4) or not np.all(np.isfinite(A)):
        raise ModelError(f"{element}: placement must be a finite 4x4 rigid transform, got shape {A.shape}")
    R = A[:3, :3]
    if (np.abs(A[3] - (0.0, 0.0, 0.0, 1.0)).max() > _RIGID_TOL
            or np.abs(R.T @ R - np.eye(3)).max() > _RIGID_TOL
            or abs(np.linalg.det(R) - 1.0) > _RIGID_TOL):
        raise ModelError(f"{element}: placement is not a rigid transform (rotation must be orthonormal with "
                         f"det +1 and last row 0 0 0 1 to {_RIGID_TOL:g})")
    A[3] = (0.0, 0.0, 0.0, 1.0)
    return A


class Composite(Shape):
    """Rigid union of shapes, each placed in the composite frame *c*.

    Args:
        parts: sequence of ``(shape, E_cp)``; ``E_cp`` (4, 4) is the part's own shape frame expressed in *c*.

    With ``E_cb_i = E_cp_i E_sb_i`` the part's body frame in *c* and ``p_i`` its origin:
    ``m = sum m_i``, centre ``p_c = sum m_i p_i / m`` (notes Eq. 1.25), and the inertia about ``p_c`` in axes
    parallel to *c* is ``M = sum Ad(E_ba_i)^T M_i Ad(E_ba_i)`` with ``E_ba_i = E_cb_i^-1 [[I, p_c], [0, 1]]``
    (notes Eq. 1.26).  Its 3x3 rotational block is diagonalised as described in the module docstring,
    ``E_sb = [[V, p_c], [0, 1]]``.  Overlapping parts are counted twice (no boolean union).
    """

    kind = "composite"

    def __init__(self, parts: Sequence):
        try:
            items = list(parts)
        except TypeError:
            raise ModelError("composite: parts must be a sequence of (shape, E_cp) pairs") from None
        if not items:
            raise ModelError("composite: needs at least one part")
        checked = []
        for k, item in enumerate(items):
            try:
                shape, E_cp = item
            except (TypeError, ValueError):
                raise ModelError(f"composite part {k}: expected a (shape, E_cp) pair") from None
            if not isinstance(shape, Shape):
                raise ModelError(f"composite part {k}: expected a Shape, got {type(shape).__name__}")
            checked.append((shape, _readonly(_check_rigid(f"composite part {k}", E_cp))))
        E_cb = [E @ s.E_sb for s, E in checked]
        masses = np.array([s.mass for s, _ in checked])
        m = float(masses.sum())
        p_c = sum(mi * E[:3, 3] for mi, E in zip(masses, E_cb, strict=True)) / m
        E_ca = spatial.make_E(p=p_c)
        M = np.zeros((6, 6))
        for (s, _), E in zip(checked, E_cb, strict=True):
            M += spatial.inertia_transform(s.spatial_inertia(), spatial.inv_se3(E) @ E_ca)
        V, I = principal_frame(M[:3, :3])
        vol = float(sum(s.volume for s, _ in checked))
        self.parts = tuple(checked)
        self._finish("composite", m / vol, vol, m, I, spatial.make_E(V, p_c))


def _mirtich(V: np.ndarray, F: np.ndarray):
    """Volume integrals of a closed, outward-oriented triangle mesh (Mirtich 1996, vectorised over faces).

    Args:
        V: (n, 3) vertex positions.
        F: (m, 3) triangle indices, counter-clockwise seen from outside.
    Returns:
        ``(T0, T1, T2, TP, gap)``: ``T0 = ∫ dV``; (3,) ``T1 = ∫ (x, y, z) dV``; (3,) ``T2 = ∫ (x^2, y^2, z^2)
        dV``; (3,) ``TP = ∫ (xy, yz, zx) dV``; ``gap = |∮ n dS| / ∮ dS``, zero for a closed surface.

    Steps as in the paper: the divergence theorem turns each volume integral into face integrals weighted by a
    normal component.  A face with unit normal ``n`` lies on ``n . x + w = 0``; with ``C`` the axis of the
    largest ``|n_C|`` and ``(A, B, C)`` cyclic, the face is a graph ``c(a, b)`` over its projection and
    ``∫_F f dS = (1/n_C) ∫∫_P f(a, b, c(a, b)) da db`` (signed projection integrals carry ``sign n_C``).
    Green's theorem turns each projection integral into edge integrals, e.g.
    ``∫∫ a^p b^q = 1/(p+1) ∮ a^(p+1) b^q db``, evaluated in closed form on each straight edge
    ``(a0, b0) -> (a1, b1)``, e.g. ``∫_0^1 (a0 + t da)^k dt = sum_{i=0..k} a1^i a0^(k-i) / (k+1)``.
    Degenerate (zero-area) triangles contribute nothing and are dropped.
    """
    P = V[F]  # (m, 3 vertices, 3 coordinates)
    nrm = np.cross(P[:, 1] - P[:, 0], P[:, 2] - P[:, 0])
    length = np.linalg.norm(nrm, axis=1)
    gap = float(np.linalg.norm(nrm.sum(axis=0)) / max(length.sum(), 1e-300))
    keep = length > 0.0
    P, n = P[keep], nrm[keep] / length[keep, None]
    w = -np.einsum("ij,ij->i", n, P[:, 0])
    rows = np.arange(len(P))
    C = np.argmax(np.abs(n), axis=1)
    A = (C + 1) % 3
    B = (A + 1) % 3
    corner = np.arange(3)[None, :]
    a, b = P[rows[:, None], corner, A[:, None]].T, P[rows[:, None], corner, B[:, None]].T  # (3, faces)
    nA, nB, nC = n[rows, A], n[rows, B], n[rows, C]

    # Projection integrals over the face's projection onto the A-B plane.
    P1 = Pa = Pb = Paa = Pab = Pbb = Paaa = Paab = Pabb = Pbbb = 0.0
    for e in range(3):
        a0, b0, a1, b1 = a[e], b[e], a[(e + 1) % 3], b[(e + 1) % 3]
        da, db = a1 - a0, b1 - b0
        a0_2, b0_2, a1_2, b1_2 = a0 * a0, b0 * b0, a1 * a1, b1 * b1
        a0_3, b0_3, a1_3, b1_3 = a0_2 * a0, b0_2 * b0, a1_2 * a1, b1_2 * b1
        s_a = a1 + a0  # sums of a1^i a0^(k-i) for k = 1, 2, 3, 4
        s_aa = a1 * s_a + a0_2
        s_aaa = a1 * s_aa + a0_3
        s_aaaa = a1 * s_aaa + a0_2 * a0_2
        s_bb = b1 * (b1 + b0) + b0_2
        s_bbb = b1 * s_bb + b0_3
        s_bbbb = b1 * s_bbb + b0_2 * b0_2
        # ∫_0^1 a^2 b dt, ∫ a^3 b dt and ∫ a b^3 dt split into their b1/b0 (or a1/a0) coefficients.
        c_ab1 = 3.0 * a1_2 + 2.0 * a1 * a0 + a0_2
        c_ab0 = a1_2 + 2.0 * a1 * a0 + 3.0 * a0_2
        c_aab1 = a0 * c_ab1 + 4.0 * a1_3
        c_aab0 = a1 * c_ab0 + 4.0 * a0_3
        c_abb1 = 4.0 * b1_3 + 3.0 * b1_2 * b0 + 2.0 * b1 * b0_2 + b0_3
        c_abb0 = b1_3 + 2.0 * b1_2 * b0 + 3.0 * b1 * b0_2 + 4.0 * b0_3
        P1 = P1 + db * s_a
        Pa = Pa + db * s_aa
        Paa = Paa + db * s_aaa
        Paaa = Paaa + db * s_aaaa
        Pb = Pb + da * s_bb
        Pbb = Pbb + da * s_bbb
        Pbbb = Pbbb + da * s_bbbb
        Pab = Pab + db * (b1 * c_ab1 + b0 * c_ab0)
        Paab = Paab + db * (b1 * c_aab1 + b0 * c_aab0)
        Pabb = Pabb + da * (a1 * c_abb1 + a0 * c_abb0)
    P1, Pa, Paa, Paaa, Pb, Pbb, Pbbb = P1 / 2, Pa / 6, Paa / 12, Paaa / 20, Pb / -6, Pbb / -12, Pbbb / -20
    Pab, Paab, Pabb = Pab / 24.0, Paab / 60.0, Pabb / -60.0

    # Face integrals, substituting c = -(nA a + nB b + w)/nC on the face plane.
    k1 = 1.0 / nC
    k2, k3, k4 = k1 * k1, k1 * k1 * k1, k1 * k1 * k1 * k1
    lin = nA * Pa + nB * Pb  # ∫∫ (nA a + nB b)
    quad = nA * nA * Paa + 2.0 * nA * nB * Pab + nB * nB * Pbb  # ∫∫ (nA a + nB b)^2
    Fa, Fb = k1 * Pa, k1 * Pb
    Fc = -k2 * (lin + w * P1)
    Faa, Fbb = k1 * Paa, k1 * Pbb
    Fcc = k3 * (quad + w * (2.0 * lin + w * P1))
    Faaa, Fbbb = k1 * Paaa, k1 * Pbbb
    cube = nA**3 * Paaa + 3.0 * nA * nA * nB * Paab + 3.0 * nA * nB * nB * Pabb + nB**3 * Pbbb
    Fccc = -k4 * (cube + 3.0 * w * quad + w * w * (3.0 * lin + w * P1))
    Faab = k1 * Paab
    Fbbc = -k2 * (nA * Pabb + nB * Pbbb + w * Pbb)
    Fcca = k3 * (nA * nA * Paaa + 2.0 * nA * nB * Paab + nB * nB * Pabb
                 + w * (2.0 * (nA * Paa + nB * Pab) + w * Pa))

    # Volume integrals by the divergence theorem, accumulated per coordinate axis.
    def per_axis(*terms):
        return sum(np.bincount(ax, weights=v, minlength=3) for ax, v in terms)

    T0 = float(np.sum(np.where(A == 0, nA * Fa, np.where(B == 0, nB * Fb, nC * Fc))))
    T1 = per_axis((A, nA * Faa), (B, nB * Fbb), (C, nC * Fcc)) / 2.0
    T2 = per_axis((A, nA * Faaa), (B, nB * Fbbb), (C, nC * Fccc)) / 3.0
    TP = per_axis((A, nA * Faab), (B, nB * Fbbc), (C, nC * Fcca)) / 2.0
    return T0, T1, T2, TP, gap


class Mesh(Shape):
    """Solid bounded by a closed triangle mesh, mass properties by Mirtich's volume integration.

    Args:
        vertices: (n, 3) vertex positions in the shape frame *s* (length units).
        faces: (m, 3) 0-based vertex indices of triangles, counter-clockwise seen from outside.
        density: mass per unit volume.
        name: used in error messages (``from_obj`` passes the file path).

    The integrals are taken about the centre of the vertices' bounding box (an exact identity for a closed
    surface that keeps rounding small far from the origin): ``m = rho T0``, centre ``p_c = T1 / T0``, and
    ``J = rho [[T2y + T2z, -TPxy, -TPzx], [-TPxy, T2z + T2x, -TPyz], [-TPzx, -TPyz, T2x + T2y]]`` shifted to
    the centre by the parallel-axis theorem ``J_c = J - m (|r|^2 I - r r^T)``.  The principal frame then
    follows the module docstring: ``E_sb = [[V, p_c], [0, 1]]``.  A non-positive signed volume (inverted
    or flat mesh) or a surface whose area-weighted normals do not sum to zero (relative ``1e-8``; an open
    mesh) raises ModelError.

    Attributes (besides those of :class:`Shape`): ``vertices`` (n, 3), ``faces`` (m, 3), ``name``, ``path``,
    ``scale`` (the factor ``from_obj`` applied to the file's coordinates)
    (``None`` unless loaded from a file).
    """

    kind = "mesh"

    def __init__(self, vertices, faces, density: float = 1.0, name: str = "mesh", path: str | None = None,
                 scale: float = 1.0):
        el = f"mesh {name!r}"
        file_scale = float(scale)
        (rho,) = _positive(el, "density", (density,))
        try:
            Vx = np.array(vertices, dtype=float)
            Fx = np.array(faces)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{el}: vertices and faces must be numeric arrays ({exc})") from None
        if Vx.ndim != 2 or Vx.shape[1] != 3 or Vx.shape[0] == 0:
            raise ModelError(f"{el}: vertices must have shape (n, 3) with n >= 1, got {Vx.shape}")
        if not np.all(np.isfinite(Vx)):
            bad = int(np.flatnonzero(~np.all(np.isfinite(Vx), axis=1))[0])
            raise ModelError(f"{el}: vertex {bad} is not finite: {Vx[bad].tolist()}")
        if Fx.size == 0:
            raise ModelError(f"{el}: the mesh has no faces")
        if Fx.ndim != 2 or Fx.shape[1] != 3 or Fx.dtype.kind not in "iu":
            raise ModelError(f"{el}: faces must be an integer array of shape (m, 3), "
                             f"got {Fx.dtype} {Fx.shape}")
        if Fx.min() < 0 or Fx.max() >= len(Vx):
            bad = int(np.flatnonzero((Fx < 0).any(axis=1) | (Fx >= len(Vx)).any(axis=1))[0])
            raise ModelError(f"{el}: face {bad} has a vertex index outside 0..{len(Vx) - 1}: "
                             f"{Fx[bad].tolist()}")
        Fx = Fx.astype(np.int64)

        ref = 0.5 * (Vx.min(axis=0) + Vx.max(axis=0))
        T0, T1, T2, TP, gap = _mirtich(Vx - ref, Fx)
        vol_scale = float(np.abs(Vx - ref).max()) ** 3
        if not (T0 > 1e-12 * vol_scale):
            raise ModelError(f"{el}: signed volume is not positive ({T0:.6g}); the mesh is inverted "
                             "(faces must be counter-clockwise seen from outside), flat, or not closed")
        if gap > 1e-8:
            raise ModelError(f"{el}: the surface is not closed (area-weighted normals sum to {gap:.3g} "
                             "of the total area)")
        m = rho * T0
        r = T1 / T0
        J = rho * np.array([[T2[1] + T2[2], -TP[0], -TP[2]],
                            [-TP[0], T2[2] + T2[0], -TP[1]],
                            [-TP[2], -TP[1], T2[0] + T2[1]]])
        J_c = J - m * (r @ r * np.eye(3) - np.outer(r, r))
        V, I = principal_frame(J_c)
        self.__dict__.update(vertices=_readonly(Vx), faces=_readonly(Fx), name=str(name), path=path,
                             scale=file_scale)
        self._finish(el, rho, T0, m, I, spatial.make_E(V, r + ref))

    @classmethod
    def from_obj(cls, path, density: float = 1.0, scale: float = 1.0) -> Mesh:
        """Load a Wavefront OBJ file: ``v x y z`` and ``f i j k ...`` lines; everything else is ignored.

        Face entries may be ``i``, ``i/t``, ``i/t/n`` or ``i//n``, 1-based or negative (relative to the
        vertices read so far); polygons with more than three vertices are fan-triangulated.  Vertices are
        multiplied by ``scale`` (> 0).  Errors name the file and, for parse errors, the line number.
        """
        p = os.fspath(path)
        el = f"mesh {p!r}"
        (s,) = _positive(el, "scale", (scale,))
        try:
            with open(p, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError as exc:
            raise ModelError(f"{el}: cannot read file ({exc.strerror or exc})") from None
        verts: list[tuple[float, float, float]] = []
        tris: list[tuple[int, int, int]] = []
        tri_line: list[int] = []
        for lineno, line in enumerate(lines, start=1):
            tok = line.split("#", 1)[0].split()
            if not tok or tok[0] not in ("v", "f"):
                continue
            if tok[0] == "v":
                if len(tok) < 4:
                    raise ModelError(f"{el}: line {lineno}: vertex needs three coordinates: {line.strip()!r}")
                try:
                    xyz = (float(tok[1]), float(tok[2]), float(tok[3]))
                except ValueError:
                    xyz = (math.nan,)
                if not all(math.isfinite(c) for c in xyz):
                    raise ModelError(f"{el}: line {lineno}: cannot read finite vertex coordinates: "
                                     f"{line.strip()!r}")
                verts.append(xyz)
                continue
            if len(tok) < 4:
                raise ModelError(f"{el}: line {lineno}: face needs at least three vertices: {line.strip()!r}")
            idx = []
            for t in tok[1:]:
                try:
                    k = int(t.split("/", 1)[0])
                except ValueError:
                    raise ModelError(f"{el}: line {lineno}: cannot read face index {t!r}") from None
                if k == 0:
                    raise ModelError(f"{el}: line {lineno}: face index 0 is invalid (OBJ indices start at 1)")
                idx.append(k - 1 if k > 0 else len(verts) + k)
            for j in range(1, len(idx) - 1):
                tris.append((idx[0], idx[j], idx[j + 1]))
                tri_line.append(lineno)
        if not tris:
            raise ModelError(f"{el}: the file has no faces")
        F = np.array(tris, dtype=np.int64)
        bad = np.flatnonzero(((F < 0) | (F >= len(verts))).any(axis=1))
        if bad.size:
            line = tri_line[bad[0]]
            raise ModelError(f"{el}: line {line}: face refers to a vertex outside 1..{len(verts)}")
        V = np.array(verts, dtype=float).reshape(-1, 3) * s
        return cls(V, F, density=density, name=p, path=p, scale=s)
