"""Forces every model has from its own fields: gravity, Coriolis, body damping (maximal) and joint
torques, joint springs and joint damping (reduced).

* Gravity on body i (notes Eq. 1.22): ``[0; R_wb^T m g]``; energy ``-m g . p`` (p = centre of mass).
* Coriolis (notes Eq. 1.21): ``ad(phi)^T M phi``.
* Body damping (reference ``Body.computeForceDamping``): ``-d phi``, ``Dm = d I6``.
* Joint torque: the model's per-joint constants or callables of time.
* Joint spring (notes §2.5): ``-k (q - q_rest)``, ``Kr = -diag(k)``; energy ``1/2 k (q - q_rest)^2``.
* Joint damping (notes Eq. 2.81): ``-d qd``, ``Dr = diag(d)``.

Gravity and Coriolis are explicit (no K, no D) as in the reference implementation.
"""

from __future__ import annotations

import numpy as np

from redmax.forces.base import Force, ForceTerms
from redmax.spatial import ad, adT, skew


def coriolis_wrenches(M_body, phi):
    """``ad(phi_i)^T M_i phi_i`` for all bodies: (nb, 6) from diagonal inertias M_body (nb, 6), twists (nb, 6).

    With ``M phi = [n; g]``: ``[-(w x n) - (v x g); -(w x g)]`` (notes Eq. 1.23).
    """
    Mphi = M_body * phi
    w, v = phi[:, :3], phi[:, 3:]
    n, g = Mphi[:, :3], Mphi[:, 3:]
    out = np.empty_like(Mphi)
    out[:, :3] = -np.cross(w, n) - np.cross(v, g)
    out[:, 3:] = -np.cross(w, g)
    return out


__all__ = ["BodyDamping", "Coriolis", "Gravity", "JointDamping", "JointSpring", "JointTorque", "model_forces"]


class Gravity(Force):
    """Uniform gravity ``model.gravity`` on every body's centre of mass.

    ``stiffness=True`` adds its stiffness ``K_i = [[0, 0], [[R^T m g], 0]]`` (notes Eq. 1.35); the
    reference implementation treats gravity explicitly (the default).
    """

    space = "maximal"
    energy_key = "gravity"
    inertial = True
    name = "gravity"

    def __init__(self, stiffness: bool = False):
        self.stiffness = bool(stiffness)

    def accumulate(self, model, kin, t, terms: ForceTerms) -> None:
        # R_wb^T m g for every body at once
        w = model.mass[:, None] * np.einsum("bji,j->bi", kin.E_wb[:, :3, :3], model.gravity)
        terms.fm[:, 3:] += w
        terms.fm_rhs[:, 3:] += w
        if terms.want_K and self.stiffness:
            K = terms.Km_()
            for i in range(model.nb):
                K[6 * i + 3 : 6 * i + 6, 6 * i : 6 * i + 3] += skew(w[i])

    def energy(self, model, kin) -> float:
        p = kin.E_wb[:, :3, 3].real
        return float(-np.sum(model.mass * (p @ model.gravity)))


class Coriolis(Force):
    """Velocity-product wrench ``ad(phi)^T M phi`` of each body (notes Eq. 1.21).

    ``damping=True`` adds ``D = -d/dphi (ad(phi)^T M phi) = -(ad(phi)^T M + B(M phi))`` with
    ``B(y) phi = ad(phi)^T y`` (notes Eqs. 1.37-1.39); the reference treats it explicitly (default).
    """

    space = "maximal"
    inertial = True
    name = "coriolis"

    def __init__(self, damping: bool = False):
        self.damping = bool(damping)

    def accumulate(self, model, kin, t, terms: ForceTerms) -> None:
        w = coriolis_wrenches(model.M_body, kin.phi)
        terms.fm += w
        rhs = w.copy()
        if terms.want_D and self.damping:
            Dm = terms.Dm_()
            E6 = np.eye(6)
            for i in range(model.nb):
                phi = np.ascontiguousarray(kin.phi[i])
                My = model.M_body[i] * phi
                dfd = ad(phi).T * model.M_body[i][None, :]
                for c in range(6):
                    dfd[:, c] += adT(E6[c].astype(phi.dtype), My)
                Dm[6 * i : 6 * i + 6, 6 * i : 6 * i + 6] -= dfd
                rhs[i] -= dfd @ phi
        terms.fm_rhs += rhs


class BodyDamping(Force):
    """Viscous damping on body twists: wrench ``-d_i phi_i``, ``Dm = blockdiag(d_i I6)``."""

    space = "maximal"
    implicit_only = True
    name = "body_damping"

    def accumulate(self, model, kin, t, terms: ForceTerms) -> None:
        d = model.body_damping
        terms.fm += -d[:, None] * kin.phi
        if terms.want_D:
            Dm = terms.Dm_()
            for i in range(model.nb):
                for k in range(6):
                    Dm[6 * i + k, 6 * i + k] += d[i]


class JointTorque(Force):
    """Applied joint torques (constants or callables of time, see ``ModelBuilder.add_body``)."""

    space = "reduced"
    name = "joint_torque"

    def accumulate(self, model, kin, t, terms: ForceTerms) -> None:
        tau = model.joint_torque(t)
        terms.fr += tau
        terms.fr_rhs += tau


class JointSpring(Force):
    """Linear joint springs ``-k (q - q_rest)``; ``Kr = -diag(k)``."""

    space = "reduced"
    energy_key = "joint_springs"
    name = "joint_spring"

    def accumulate(self, model, kin, t, terms: ForceTerms) -> None:
        f = -model.joint_stiffness * (kin.q - model.q_rest)
        terms.fr += f
        terms.fr_rhs += f
        if terms.want_K:
            Kr = terms.Kr_()
            Kr[np.diag_indices(model.ndof)] -= model.joint_stiffness

    def energy(self, model, kin) -> float:
        e = kin.q.real - model.q_rest
        return float(0.5 * np.sum(model.joint_stiffness * e * e))


class JointDamping(Force):
    """Linear joint damping ``-d qd``; ``Dr = diag(d)``."""

    space = "reduced"
    implicit_only = True
    name = "joint_damping"

    def accumulate(self, model, kin, t, terms: ForceTerms) -> None:
        terms.fr += -model.joint_damping * kin.qd
        if terms.want_D:
            Dr = terms.Dr_()
            Dr[np.diag_indices(model.ndof)] += model.joint_damping


def model_forces(model, gravity_stiffness: bool = False, coriolis_damping: bool = False) -> list[Force]:
    """The forces acting on ``model``: its built-in ones (zero-valued ones left out) followed by the
    forces added with ``ModelBuilder.add_force``.

    Args:
        gravity_stiffness, coriolis_damping: make gravity / Coriolis implicit in linearly implicit
            Euler (off in the reference implementation).
    """
    out: list[Force] = [Gravity(gravity_stiffness), Coriolis(coriolis_damping)]
    if np.any(model.body_damping > 0):
        out.append(BodyDamping())
    if model.has_torques:
        out.append(JointTorque())
    if np.any(model.joint_stiffness > 0):
        out.append(JointSpring())
    if np.any(model.joint_damping > 0):
        out.append(JointDamping())
    out.extend(model.forces)
    return out
