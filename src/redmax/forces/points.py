"""Maximal forces defined by world forces on body points, with exact stiffness and damping matrices.

Every point force of the Sueda notes §1.9 (directional point force, gravity, point-to-point springs,
generic and multi-point springs, cables, ground contact) is a *law* that, given the world positions
``x_k`` and velocities ``xd_k`` of its points, returns the world forces ``F_k`` on them and the
derivatives ``dF_k/dx_j``, ``dF_k/dxd_j`` (3x3 blocks).  This module maps any such law to body
wrenches and matrices.  With a point ``r`` (body frame) on body ``b``:

    x = R r + p,   xd = R Gamma(r) phi,   f_b += Gamma(r)^T R^T F          (notes Eqs. 1.12-1.13)

and, for the variation ``E <- E exp([delta])`` (``delta = [w; v]``), ``dx = R Gamma delta``,
``d(R^T a) = [R^T a] w`` (notes Eq. 1.33) and ``dxd = -R [Gamma phi] w``, so

    K_bk,bj += Gamma_k^T [[R_k^T F_k] 0] delta_kj
             + Gamma_k^T R_k^T (dF_k/dx_j R_j Gamma_j - dF_k/dxd_j R_j [[Gamma_j phi_j] 0])
    D_bk,bj -= Gamma_k^T R_k^T dF_k/dxd_j R_j Gamma_j

(``D`` is the damping coefficient, the negative velocity derivative).  Points attached to the world
(body index -1) are fixed and contribute no columns.  This reproduces notes Eqs. 1.32, 1.35, 1.44,
1.47, 1.48, 1.52-1.61 and 1.65-1.80 without transcribing them one by one.
"""

from __future__ import annotations

import numpy as np

from redmax.errors import ModelError
from redmax.forces.base import Force, ForceTerms
from redmax.spatial import skew

__all__ = ["PointForce", "PointSet", "attach_points"]


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
    for k, item in enumerate(points):
        try:
            name, r = item
        except (TypeError, ValueError):
            msg = f"{owner}: point {k} must be a (body name or None, (x, y, z)) pair, got {item!r}"
            raise ModelError(msg) from None
        if name is None or name == "world":
            bodies.append(-1)
        elif name in body_index:
            bodies.append(body_index[name])
        else:
            raise ModelError(f"{owner}: point {k} is attached to unknown body '{name}'")
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

    Subclasses set ``self.points`` (a list of ``(body name or None, r)``) and implement
    :meth:`law`.  ``stiffness`` chooses how K enters implicit integration: "full" (the exact
    derivative), "symmetric" (``(K + K^T)/2``, Baraff & Witkin) or "none" (explicit).
    """

    space = "maximal"
    energy_key = "springs"

    def __init__(self, points, name: str, stiffness: str = "full"):
        if stiffness not in ("full", "symmetric", "none"):
            raise ModelError(f"force '{name}': stiffness must be 'full', 'symmetric' or 'none', got {stiffness!r}")
        self.points = list(points)
        self.name = name
        self.stiffness = stiffness
        self._set: PointSet | None = None

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

    # -- the law --------------------------------------------------------------------------------
    def law(self, x, xd, want_derivatives: bool):
        """World forces on the points.

        Args:
            x, xd: (n, 3) world positions and velocities of the points.
        Returns:
            ``(F, dFdx, dFdxd)``: F (n, 3); dFdx and dFdxd (n, n, 3, 3) with ``[k, j] = dF_k/dx_j``,
            or None when ``want_derivatives`` is False.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement law()")

    def potential(self, x) -> float:
        """Potential energy of the conservative part (0 if none)."""
        return 0.0

    # -- assembly -------------------------------------------------------------------------------
    def wrenches(self, model, kin, want: bool):
        """Body wrenches (nb, 6) and, if ``want``, K and D (6nb, 6nb) of this force alone."""
        ps = self.point_set
        x, xd, R, G = ps.evaluate(kin)
        F, dFdx, dFdxd = self.law(x, xd, want)
        dt = kin.E_wb.dtype
        f = np.zeros((model.nb, 6), dtype=dt)
        for k in range(ps.n):
            b = ps.bodies[k]
            if b >= 0:
                f[b] += G[k].T @ (R[k].T @ F[k])
        if not want:
            return f, None, None
        nm = 6 * model.nb
        K = np.zeros((nm, nm), dtype=dt)
        D = np.zeros((nm, nm), dtype=dt)
        for k in range(ps.n):
            bk = ps.bodies[k]
            if bk < 0:
                continue
            rk = slice(6 * bk, 6 * bk + 6)
            GRt = G[k].T @ R[k].T  # (6, 3)
            K[rk, 6 * bk : 6 * bk + 3] += G[k].T @ skew(R[k].T @ F[k])
            for j in range(ps.n):
                bj = ps.bodies[j]
                if bj < 0:
                    continue
                cj = slice(6 * bj, 6 * bj + 6)
                RG = R[j] @ G[j]  # (3, 6)
                K[rk, cj] += GRt @ (dFdx[k, j] @ RG)
                K[rk, 6 * bj : 6 * bj + 3] -= GRt @ (dFdxd[k, j] @ (R[j] @ skew(G[j] @ kin.phi[bj])))
                D[rk, cj] -= GRt @ (dFdxd[k, j] @ RG)
        return f, K, D

    def accumulate(self, model, kin, t, terms: ForceTerms) -> None:
        want = terms.want_K or terms.want_D
        f, K, D = self.wrenches(model, kin, want)
        terms.fm += f
        rhs = f.copy()
        if want:
            if terms.want_D and np.any(D):
                terms.Dm_()[...] += D
                rhs += (D @ kin.phi.reshape(-1)).reshape(model.nb, 6)
            if terms.want_K and self.stiffness != "none":
                terms.Km_()[...] += 0.5 * (K + K.T) if self.stiffness == "symmetric" else K
        terms.fm_rhs += rhs

    def energy(self, model, kin) -> float:
        x, _, _, _ = self.point_set.evaluate(kin)
        return float(np.real(self.potential(x.real)))
