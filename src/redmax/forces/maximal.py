"""Maximal forces: point forces, springs, cables and penalty ground contact (Sueda notes §1.9).

All are :class:`~redmax.forces.points.PointForce` laws: world forces on body points with their
derivatives; the shared machinery turns them into body wrenches and exact K, D.  Points are given as
``(body name, (x, y, z))`` in the body frame (centre of mass, principal axes; for boxes, spheres and
cylinders the shape's own axes) or ``(None, (x, y, z))`` for a fixed world point.
"""

from __future__ import annotations

import numpy as np

from redmax._validate import check_finite, check_nonneg, check_vector
from redmax.errors import ModelError
from redmax.forces.points import PointForce

__all__ = [
    "Cable",
    "GenericSpring",
    "GroundContact",
    "MultiPointSpring",
    "PointSpring",
    "SpringDamper",
    "WorldPointForce",
    "path_law",
]


def _zeros_derivs(n, dt=float):
    return np.zeros((n, n, 3, 3), dtype=dt), np.zeros((n, n, 3, 3), dtype=dt)


def path_geometry(x, xd):
    """Segments of a path through points x (n,3): unit directions u (n-1,3), lengths (n-1,), total
    length l and its rate ldot."""
    dx = x[1:] - x[:-1]
    dxd = xd[1:] - xd[:-1]
    ls = np.sqrt(np.sum(dx * dx, axis=1))
    u = dx / ls[:, None]
    ldots = np.sum(u * dxd, axis=1)
    return u, ls, dxd, np.sum(ls), np.sum(ldots)


def path_law(x, xd, tension, want: bool):
    """Forces of a tension ``T(l, ldot)`` pulling along a path of n >= 2 points (notes §1.9.7-1.9.8).

    Point k receives ``T w_k`` with ``w_k = u_k - u_{k-1}`` (unit segment directions, missing terms
    zero).  With ``dl/dx_k = -w_k``, ``dldot/dxd_k = -w_k``, ``dldot/dx_k = g_{k-1} - g_k``
    (``g_s = P_s dxd_s``, ``P_s = (I - u_s u_s^T)/l_s``) and ``du_s/dx_{s+1} = P_s = -du_s/dx_s``:

        dF_k/dx_j = T dw_k/dx_j + w_k (T_l dl/dx_j + T_ld dldot/dx_j),   dF_k/dxd_j = -T_ld w_k w_j^T.

    Args:
        tension: callable ``(l, ldot) -> (T, dT/dl, dT/dldot)``.
    Returns:
        (F, dFdx, dFdxd) as required by PointForce.law.
    """
    n = x.shape[0]
    u, ls, dxd, l, ldot = path_geometry(x, xd)
    T, Tl, Tld = tension(l, ldot)
    w = np.zeros_like(x)
    w[:-1] += u
    w[1:] -= u
    F = T * w
    if not want:
        return F, None, None
    dt = np.result_type(x, xd)
    dFdx, dFdxd = _zeros_derivs(n, dt)
    I3 = np.eye(3)
    P = np.array([(I3 - np.outer(u[s], u[s])) / ls[s] for s in range(n - 1)]).reshape(n - 1, 3, 3)
    g = np.array([P[s] @ dxd[s] for s in range(n - 1)]).reshape(n - 1, 3)
    dl = -w  # (n,3): dl/dx_k
    dld = np.zeros_like(x)  # dldot/dx_k
    dld[1:] += g
    dld[:-1] -= g
    for k in range(n):
        for j in range(n):
            blk = np.outer(w[k], Tl * dl[j] + Tld * dld[j])
            # dw_k/dx_j from u_k (k < n-1) and -u_{k-1} (k > 0)
            if k < n - 1:
                if j == k + 1:
                    blk = blk + T * P[k]
                elif j == k:
                    blk = blk - T * P[k]
            if k > 0:
                if j == k:
                    blk = blk - T * P[k - 1]
                elif j == k - 1:
                    blk = blk + T * P[k - 1]
            dFdx[k, j] = blk
            dFdxd[k, j] = -Tld * np.outer(w[k], w[j])
    return F, dFdx, dFdxd


class WorldPointForce(PointForce):
    """Constant world force ``F`` (3,) at a body point (the "directional point force", notes §1.9.2).

    Its potential is ``-F . x``; set ``count_energy=False`` to leave it out of the energy (as the
    original implementation does in reference/10).  ``stiffness`` as in PointForce ("none" in the
    reference scenes).
    """

    def __init__(self, body: str, point, force, name: str = "point_force", stiffness: str = "full",
                 count_energy: bool = True):
        super().__init__([(body, point)], name, stiffness)
        self.force = force
        self.energy_key = "applied" if count_energy else None

    def check(self):
        self.F = check_vector(self.force, 3, f"force '{self.name}': force")
        if self.point_set.bodies[0] < 0:
            raise ModelError(f"force '{self.name}': the point must be attached to a body")

    def law(self, x, xd, want):
        F = np.broadcast_to(self.F, x.shape).astype(np.result_type(x, float)).copy()
        if not want:
            return F, None, None
        return (F, *_zeros_derivs(x.shape[0], F.dtype))

    def potential(self, x):
        return -float(self.F @ x[0])


class PointSpring(PointForce):
    """Zero-rest-length spring with optional damping between two points (notes Eqs. 1.40-1.48).

    Point 0 feels ``ks (x1 - x0) + kd (xd1 - xd0)``, point 1 the opposite; energy ``ks/2 |x1 - x0|^2``.
    """

    def __init__(self, point0, point1, ks: float, kd: float = 0.0, name: str = "point_spring",
                 stiffness: str = "full"):
        super().__init__([point0, point1], name, stiffness)
        self.ks_in, self.kd_in = ks, kd

    def check(self):
        self.ks = check_nonneg(self.ks_in, f"force '{self.name}': ks")
        self.kd = check_nonneg(self.kd_in, f"force '{self.name}': kd")

    def law(self, x, xd, want):
        F0 = self.ks * (x[1] - x[0]) + self.kd * (xd[1] - xd[0])
        F = np.array([F0, -F0])
        if not want:
            return F, None, None
        I3 = np.eye(3)
        sign = np.array([[-1.0, 1.0], [1.0, -1.0]])
        dFdx = np.einsum("kj,ab->kjab", sign, self.ks * I3)
        dFdxd = np.einsum("kj,ab->kjab", sign, self.kd * I3)
        return F, dFdx, dFdxd

    def potential(self, x):
        d = x[1] - x[0]
        return 0.5 * self.ks * float(d @ d)


class _PathSpring(PointForce):
    """Common part of springs acting along a path of points (two or more)."""

    min_points = 2

    def check(self):
        if self.point_set.n < self.min_points:
            raise ModelError(f"force '{self.name}': needs at least {self.min_points} points, got {self.point_set.n}")
        if np.all(self.point_set.bodies < 0):
            raise ModelError(f"force '{self.name}': at least one point must be attached to a body")

    def tension(self, l, ldot):  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement tension()")

    def law(self, x, xd, want):
        return path_law(x, xd, self.tension, want)

    def initialize(self, model, kin) -> None:
        """Take a missing rest length from the initial configuration."""
        if getattr(self, "L", 1.0) is None:
            x = self.point_set.evaluate(kin)[0]
            self.L = float(np.real(path_geometry(x, np.zeros_like(x))[3]))
            if not self.L > 0:
                raise ModelError(f"force '{self.name}': initial length is zero; give rest_length")


class SpringDamper(_PathSpring):
    """Spring-damper with rest length L (notes §1.9.9): tension ``k e + d edot``, ``e = (l - L)/L``,
    ``edot = ldot/L``; energy ``k e^2 L / 2``.  ``rest_length=None`` takes the initial length."""

    def __init__(self, point0, point1, k: float, d: float = 0.0, rest_length: float | None = None,
                 name: str = "spring_damper", stiffness: str = "full"):
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

    def tension(self, l, ldot):
        L = self.L
        return self.k * (l - L) / L + self.d * ldot / L, self.k / L, self.d / L

    def potential(self, x):
        l = path_geometry(x, np.zeros_like(x))[3]
        e = (l - self.L) / self.L
        return 0.5 * self.k * e * e * self.L


class Cable(SpringDamper):
    """Tension-only cable through two or more via points (notes §1.9.10): the spring-damper tension
    when the strain is positive, zero otherwise."""

    def __init__(self, points, k: float, d: float = 0.0, rest_length: float | None = None, name: str = "cable",
                 stiffness: str = "full"):
        PointForce.__init__(self, points, name, stiffness)
        self.k_in, self.d_in, self.L_in = k, d, rest_length

    def tension(self, l, ldot):
        if np.real(l) > self.L:
            return super().tension(l, ldot)
        return 0.0 * l, 0.0, 0.0

    def potential(self, x):
        l = path_geometry(x, np.zeros_like(x))[3]
        return super().potential(x) if l > self.L else 0.0


class GenericSpring(_PathSpring):
    """Spring whose scalar tension ``f(l, ldot)`` and derivatives are user callables (notes §1.9.7).

    Args:
        f, df_dl, df_dldot: callables of (l, ldot) returning floats.
        potential: optional callable V(l) for the energy (0 if omitted).
    """

    def __init__(self, point0, point1, f, df_dl, df_dldot, potential=None, name: str = "generic_spring",
                 stiffness: str = "full"):
        super().__init__([point0, point1], name, stiffness)
        self.f, self.df_dl, self.df_dldot, self.V = f, df_dl, df_dldot, potential
        for fn, nm in ((f, "f"), (df_dl, "df_dl"), (df_dldot, "df_dldot")):
            if not callable(fn):
                raise ModelError(f"force '{name}': {nm} must be callable")

    def tension(self, l, ldot):
        return self.f(l, ldot), self.df_dl(l, ldot), self.df_dldot(l, ldot)

    def potential(self, x):
        if self.V is None:
            return 0.0
        return float(self.V(path_geometry(x, np.zeros_like(x))[3]))


class MultiPointSpring(GenericSpring):
    """Generic spring routed through via points on several bodies (notes §1.9.8): one scalar tension
    ``f(l, ldot)`` of the total path length acts along every segment."""

    def __init__(self, points, f, df_dl, df_dldot, potential=None, name: str = "multipoint_spring",
                 stiffness: str = "full"):
        PointForce.__init__(self, points, name, stiffness)
        self.f, self.df_dl, self.df_dldot, self.V = f, df_dl, df_dldot, potential


class GroundContact(PointForce):
    """Penalty contact of body points with a plane, with normal damping and friction (notes §1.9.6,
    Geilinger et al. 2020).

    For a point at signed distance ``d = n . (x - x_g) < 0``: normal force ``-kn d n - kd (n . xd) n``;
    tangential velocity ``a = (I - n n^T) xd``; static friction ``-kt a`` when ``mu kn |d| > kt |a|``,
    otherwise dynamic friction ``-mu kn |d| a / |a|`` (the smaller of the two).  Energy ``kn d^2 / 2``.

    Args:
        points: body points that can touch the plane.
        normal: plane normal (normalised); origin: a point of the plane (world).
    """

    def __init__(self, points, kn: float, kd: float = 0.0, kt: float = 0.0, mu: float = 0.0,
                 normal=(0.0, 0.0, 1.0), origin=(0.0, 0.0, 0.0), name: str = "ground", stiffness: str = "full"):
        super().__init__(points, name, stiffness)
        self.params_in = (kn, kd, kt, mu, normal, origin)

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

    def law(self, x, xd, want):
        npt = x.shape[0]
        dt = np.result_type(x, xd)
        F = np.zeros((npt, 3), dtype=dt)
        dFdx, dFdxd = _zeros_derivs(npt, dt)
        n = self.n
        N = np.outer(n, n)
        T = np.eye(3) - N
        for k in range(npt):
            d = n @ (x[k] - self.origin)
            if not np.real(d) < 0.0:
                continue
            vn = n @ xd[k]
            F[k] = -self.kn * d * n - self.kd * vn * n
            a = T @ xd[k]
            anorm = np.sqrt(a @ a)
            static = self.mu * self.kn * np.abs(np.real(d)) > self.kt * np.real(anorm)
            if static:
                F[k] += -self.kt * a
            else:
                t = a / anorm
                F[k] += self.mu * self.kn * d * t  # magnitude mu kn |d| = -mu kn d, opposing a
            if want:
                dFdx[k, k] = -self.kn * N
                dFdxd[k, k] = -self.kd * N
                if static:
                    dFdxd[k, k] += -self.kt * T
                else:
                    dFdx[k, k] += self.mu * self.kn * np.outer(t, n)
                    dFdxd[k, k] += self.mu * self.kn * d * ((np.eye(3) - np.outer(t, t)) / anorm) @ T
        if not want:
            return F, None, None
        return F, dFdx, dFdxd

    def potential(self, x):
        d = (x - self.origin) @ self.n
        d = np.minimum(d, 0.0)
        return 0.5 * self.kn * float(d @ d)
