"""The RedMax equations of motion in reduced coordinates with maximal forces (dense form, for small systems).

    Mr qdd = fr,   Mr = J^T Mm J,   fr = J^T (fm - Mm Jdot qd) + f_reduced + tau

(RedMax supplemental Eq. 12, Sueda notes Eqs. 2.19 and 2.80): ``Mm`` is block-diagonal with each body's diagonal
spatial inertia (body frames), ``fm`` holds gravity, the Coriolis wrench ``ad(phi)^T M phi`` (both always: they are
part of the dynamics) and the applied wrenches, ``-J^T Mm Jdot qd`` is the quadratic velocity vector,
``f_reduced`` the applied reduced forces and ``tau`` the input torques.  The dense J makes this O(n^2) memory; the
integrators use the recursive stages instead, and this module is their independent check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve

from redmax._validate import check_model
from redmax.dynamics.diagnostics import singular_inertia_message
from redmax.errors import ModelError
from redmax.forces.base import ForceTerms
from redmax.forces.builtin import coriolis_wrenches, model_forces, split_legacy
from redmax.kinematics import Kinematics, jacobian, kinematics

__all__ = ["RedMaxSystem", "applied_terms", "energies", "gravity_wrenches", "redmax_accelerations",
           "redmax_mass_matrix", "redmax_system"]


@dataclass
class RedMaxSystem:
    """Everything evaluated at one state.

    Attributes:
        kin: the Kinematics.  J, Jdot: (6nb, ndof) (body frames).  Mm: (6nb,) diagonal of the maximal inertia.
        Mr: (ndof, ndof) reduced inertia.  terms: the applied forces' ForceTerms (world coordinates).
        fm: (nb, 6) body-frame maximal wrenches: gravity + Coriolis + applied.
        fr: (ndof,) total reduced force ``J^T (fm - Mm Jdot qd) + f_reduced + tau``.
    """

    kin: Kinematics
    J: np.ndarray
    Jdot: np.ndarray
    Mm: np.ndarray
    Mr: np.ndarray
    terms: ForceTerms
    fm: np.ndarray
    fr: np.ndarray


def gravity_wrenches(model, kin) -> np.ndarray:
    """Gravity on every body's centre of mass as body-frame wrenches (nb, 6): ``[0; R^T m g]`` (notes Eq. 1.22)."""
    w = model.mass[:, None] * np.einsum("bji,j->bi", kin.E_wb[:, :3, :3], model.gravity)
    out = np.zeros((model.nb, 6), dtype=w.dtype)
    out[:, 3:] = w
    return out


def applied_terms(model, kin, t: float = 0.0, forces=None, want: bool = False) -> ForceTerms:
    """The applied forces' terms at ``kin`` (world coordinates; see :mod:`redmax.forces.base`)."""
    flist = model_forces(model) if forces is None else split_legacy(forces)[0]
    terms = ForceTerms(model.nb, model.ndof, dtype=np.result_type(kin.q, kin.qd, float))
    for f in flist:
        terms.add(f, f.evaluate(model, kin, t, want, want))
    return terms


def redmax_system(model, q, qd, t: float = 0.0, jstate=None, forces=None, want_K=False, want_D=False,
                  kin: Kinematics | None = None, tau=None) -> RedMaxSystem:
    """Evaluate J, Jdot, Mr and all forces at (q, qd, t).

    Args:
        forces: the applied forces (default: the model's); gravity and Coriolis are always included.
        want_K, want_D: also evaluate the applied forces' stiffness and damping.
        tau: (ndof,) input torques (default: the model's inputs at t).
    """
    if check_model(model, "redmax_system").uncoupled is not None:  # hyper-reduced: J_mR = J_mr T, Mr = T^T Mr T,
        # fr = T^T fr (paper Eqs. 9-10)
        full = model.uncoupled
        k = kinematics(model, q, qd, jstate) if kin is None else kin
        sys = redmax_system(full, k.q, k.qd, t, k.jstate, forces, want_K, want_D, kin=k,
                            tau=None if tau is None else _coordinate_tau(model, tau))
        T = model.dofs.T
        return RedMaxSystem(k, sys.J @ T, sys.Jdot @ T, sys.Mm, T.T @ sys.Mr @ T, sys.terms, sys.fm, T.T @ sys.fr)
    k = kinematics(model, q, qd, jstate) if kin is None else kin
    J, Jd = jacobian(model, q, qd, jstate, kin=k)
    Mm = model.M_body.reshape(-1).astype(J.dtype)
    Mr = _add_armature(model, J.T @ (Mm[:, None] * J))
    terms = applied_terms(model, k, t, forces, want_K or want_D)
    fm = gravity_wrenches(model, k) + coriolis_wrenches(model.M_body, k.phi) + terms.fm_body(k)
    qvv = Mm * (Jd @ k.qd)
    tq = model.inputs.torque(t) if tau is None else np.asarray(tau)
    fr = J.T @ (fm.reshape(-1) - qvv) + terms.fr + tq
    return RedMaxSystem(k, J, Jd, Mm, Mr, terms, fm, fr)


def _coordinate_tau(model, tau):
    """Input torques on the DOFs of a coupled model (ndof,) as joint-coordinate torques whose ``T^T`` gives them
    back (each on its DOF's own coordinate); joint-coordinate torques (ncoord,) pass."""
    tau = np.asarray(tau)
    if tau.shape == (model.ncoord,):
        return tau
    out = np.zeros(model.ncoord, dtype=np.result_type(tau, float))
    out[model.dofs.dof_coord] = tau
    return out


def redmax_mass_matrix(model, q, jstate=None) -> np.ndarray:
    """``Mr = J^T Mm J`` (ndof, ndof) by the dense RedMax Jacobian."""
    k = kinematics(model, q, None, jstate)
    J, _ = jacobian(model, q, None, jstate, kin=k)
    Mm = model.M_body.reshape(-1).astype(J.dtype)
    return _add_armature(model, J.T @ (Mm[:, None] * J))  # J = J_mr T on a hyper-reduced model


def _add_armature(model, Mr):
    """``Mr + diag(armature)`` (rotor inertias of MJCF models), in place."""
    if model.armature is not None:
        Mr[np.diag_indices_from(Mr)] += model.armature
    return Mr


def redmax_accelerations(model, q, qd, t: float = 0.0, jstate=None, forces=None, tau=None) -> np.ndarray:
    """``qdd = Mr^-1 fr`` with every force explicit (the ODE form, notes Eq. 2.22)."""
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, not by NumPy
        sys = redmax_system(model, q, qd, t, jstate, forces, tau=tau)
    bad = ~np.isfinite(sys.fr)
    if bad.any():  # finite inputs whose forces overflowed (e.g. qd ~ 1e200): name the first DOF, never solve on inf
        k = int(np.flatnonzero(bad)[0])
        raise ModelError(f"{model.name}: redmax_accelerations: the generalized force on DOF '{model.dof_names[k]}' "
                         "is not finite (overflow: the state or the forces are too large)")
    if np.iscomplexobj(sys.Mr):  # complex step: Mr is complex symmetric, not Hermitian
        return np.linalg.solve(sys.Mr, sys.fr)
    try:
        L = np.linalg.cholesky(sys.Mr)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            regular = np.min(np.diag(L) ** 2 / np.diag(sys.Mr), initial=1.0) > 1e-10  # relative pivots
    except np.linalg.LinAlgError:
        regular = False
    if not regular:
        raise ModelError(f"{model.name}: redmax_accelerations: {singular_inertia_message(model, q, sys.kin.jstate)}")
    return cho_solve((L, True), sys.fr)


def energies(model, q, qd, jstate=None, forces=None, kin: Kinematics | None = None) -> dict:
    """Energies at one state: ``kinetic`` (sum 1/2 phi^T M phi), ``gravity`` (-sum m g.p), ``joint_springs``,
    ``springs`` (other spring-like potentials), ``applied`` when a force counts one, and ``total``."""
    if check_model(model, "energies").uncoupled is not None:
        k = kinematics(model, q, qd, jstate) if kin is None else kin
        return energies(model.uncoupled, k.q, k.qd, k.jstate, forces, kin=k)
    k = kinematics(model, q, qd, jstate) if kin is None else kin
    phi = k.phi.real
    p = k.E_wb[:, :3, 3].real
    kin_arm = 0.0 if model.armature is None else float(0.5 * np.sum(model.armature * np.real(k.qd) ** 2))
    out = {"kinetic": float(0.5 * np.sum(model.M_body * phi * phi)) + kin_arm,
           "gravity": float(-np.sum(model.mass * (p @ model.gravity))), "joint_springs": 0.0, "springs": 0.0}
    flist = model_forces(model) if forces is None else split_legacy(forces)[0]
    for f in flist:
        if f.energy_key is not None:
            out[f.energy_key] = out.get(f.energy_key, 0.0) + f.energy(model, k)
    out["total"] = out["kinetic"] + sum(v for key, v in out.items() if key != "kinetic")
    return out
