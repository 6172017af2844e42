"""Maximal-coordinate simulation: free rigid bodies on SE(3) with joints as constraints (notes §1.8-1.12).

Each step (linearly implicit Euler in maximal coordinates, notes Eq. 1.28 with Eq. 2 terms, J = I):

    [[M + h Dm - h^2 Km, G^T], [G, 0]] [phi_1; lam] = [M phi_0 + h (fm + Dm phi_0); -gamma g(E_0)]
    E_1 = E_0 exp(h [phi_1])                                                    (notes Eq. 1.29)

G and g come from :func:`redmax.constraints.joint_constraints`.  ``fm`` holds gravity and the Coriolis wrench
(always) and the model's maximal applied forces (body damping and the ``add_force`` point forces); reduced forces
(joint torques, springs, damping, limits) need joint coordinates and are not available in this mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from redmax.constraints.joints import joint_constraints
from redmax.dynamics.redmax import gravity_wrenches
from redmax.errors import ModelError
from redmax.forces.base import ForceTerms
from redmax.forces.builtin import coriolis_wrenches, model_forces, split_legacy
from redmax.integrators.common import time_grid
from redmax.kinematics import kinematics
from redmax.solvers.kkt import solve_kkt
from redmax.spatial import exp_se3

__all__ = ["MaximalResult", "simulate_maximal"]


@dataclass(frozen=True)
class _BodyState:
    """The part of Kinematics that maximal forces read: body poses and twists (q, qd unused, zero)."""

    E_wb: np.ndarray
    phi: np.ndarray
    q: np.ndarray
    qd: np.ndarray


@dataclass
class MaximalResult:
    """Trajectory of a maximal-coordinate simulation.

    Attributes:
        t: (N+1,).  E_wb: (N+1, nb, 4, 4) body poses.  phi: (N+1, nb, 6) body twists.
        energy: dict of (N+1,) arrays (kinetic, gravity, springs, total).
        violation: (N+1,) max |g| of the joint position errors.
    """

    t: np.ndarray
    E_wb: np.ndarray
    phi: np.ndarray
    energy: dict
    violation: np.ndarray
    meta: dict = field(default_factory=dict)


def simulate_maximal(model, h: float, duration: float, baumgarte: float = 5.0, forces=None,
                     state=None) -> MaximalResult:
    """Simulate ``model`` in maximal coordinates from its initial state (or ``state``).

    Args:
        h: time step.  duration: simulated time.
        baumgarte: velocity-level stabilisation gain gamma (1/s); 0 disables it.
        forces: maximal forces (default: the model's; reduced forces raise ModelError).
    """
    forces = model_forces(model) if forces is None else split_legacy(forces)[0]
    for f in forces:
        if f.space != "maximal":
            raise ModelError(f"force '{f.name}' acts on joint coordinates; maximal-coordinate mode supports "
                             "maximal forces only")
    st = model.initial_state() if state is None else state
    k0 = kinematics(model, st.q, st.qd, st.jstate)
    E = k0.E_wb.copy()
    phi = k0.phi.copy()
    n, t = time_grid(st.t, h, duration)
    nb = model.nb
    Ms = model.M_body.reshape(-1)
    Es = np.empty((n + 1, nb, 4, 4))
    phis = np.empty((n + 1, nb, 6))
    viol = np.empty(n + 1)
    Es[0], phis[0] = E, phi
    viol[0] = np.abs(joint_constraints(model, E)[1]).max(initial=0.0)
    zq = np.zeros(model.ndof)
    for k in range(n):
        body = _BodyState(E, phi, zq, zq)
        terms = ForceTerms(nb, model.ndof)
        for f in forces:
            terms.add(f, f.evaluate(model, body, t[k + 1], True, True))
        d = terms.dense(body, "body")
        A = np.diag(Ms) + h * d["Dm"] - h * h * d["Km"]
        fm = gravity_wrenches(model, body) + coriolis_wrenches(model.M_body, phi) + terms.fm_body(body, rhs=True)
        b = Ms * phi.reshape(-1) + h * fm.reshape(-1)
        G, g, _ = joint_constraints(model, E)
        phi1, _ = solve_kkt(A, G, b, -baumgarte * g)
        phi = phi1.reshape(nb, 6)
        E = np.array([E[i] @ exp_se3(h * phi[i]) for i in range(nb)])
        Es[k + 1], phis[k + 1] = E, phi
        viol[k + 1] = np.abs(joint_constraints(model, E)[1]).max(initial=0.0)
    energy = _energies(model, forces, Es, phis)
    return MaximalResult(t, Es, phis, energy, viol, {"integrator": "maximal-euler", "dt": h, "steps": n,
                                                     "baumgarte": baumgarte})


def _energies(model, forces, Es, phis) -> dict:
    out = {"kinetic": 0.5 * np.einsum("bk,tbk->t", model.M_body, phis * phis),
           "gravity": -np.einsum("b,tb->t", model.mass, Es[:, :, :3, 3] @ model.gravity),
           "springs": np.zeros(Es.shape[0])}
    zq = np.zeros(model.ndof)
    for f in forces:
        if f.energy_key is None:
            continue
        vals = np.array([f.energy(model, _BodyState(Es[k], phis[k], zq, zq)) for k in range(Es.shape[0])])
        out[f.energy_key] = out.get(f.energy_key, 0.0) + vals
    out["total"] = sum(v for v in out.values())
    return out
