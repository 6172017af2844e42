"""The RedMax equations of motion in reduced coordinates with maximal forces.

    Mr qdd = fr,   Mr = J^T Mm J,   fr = J^T (fm - Mm Jdot qd) + f_reduced

(RedMax supplemental Eq. 12, Sueda notes Eqs. 2.19 and 2.80): ``Mm`` is block-diagonal with each
body's diagonal spatial inertia, ``fm`` holds the maximal forces (gravity, Coriolis
``ad(phi)^T M phi``, body damping, applied wrenches), ``-J^T Mm Jdot qd`` is the quadratic velocity
vector and ``f_reduced`` the joint torques, springs and damping.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve

from redmax.errors import ModelError
from redmax.forces.base import ForceTerms
from redmax.forces.builtin import model_forces
from redmax.kinematics import Kinematics, jacobian, kinematics

__all__ = ["RedMaxSystem", "energies", "redmax_accelerations", "redmax_mass_matrix", "redmax_system"]


@dataclass
class RedMaxSystem:
    """Everything evaluated at one state.

    Attributes:
        kin: the Kinematics.  J, Jdot: (6nb, ndof).  Mm: (6nb,) diagonal of the maximal inertia.
        Mr: (ndof, ndof) reduced inertia.  terms: the ForceTerms (fm, fr, K, D).
        fr: (ndof,) total reduced force ``J^T (fm - Mm Jdot qd) + f_reduced``.
    """

    kin: Kinematics
    J: np.ndarray
    Jdot: np.ndarray
    Mm: np.ndarray
    Mr: np.ndarray
    terms: ForceTerms
    fr: np.ndarray


def redmax_system(model, q, qd, t: float = 0.0, jstate=None, forces=None, want_K=False, want_D=False,
                  kin: Kinematics | None = None) -> RedMaxSystem:
    """Evaluate J, Jdot, Mr and all forces at (q, qd, t).

    Args:
        forces: list of Force objects (default: the model's built-in forces).
        want_K, want_D: also assemble stiffness and damping matrices.
    """
    k = kinematics(model, q, qd, jstate) if kin is None else kin
    J, Jd = jacobian(model, q, qd, jstate, kin=k)
    Mm = model.M_body.reshape(-1).astype(J.dtype)
    Mr = J.T @ (Mm[:, None] * J)
    terms = ForceTerms(model.nb, model.ndof, want_K, want_D, dtype=J.dtype)
    for f in model_forces(model) if forces is None else forces:
        f.accumulate(model, k, t, terms)
    qvv = Mm * (Jd @ k.qd)
    fr = J.T @ (terms.fm.reshape(-1) - qvv) + terms.fr
    return RedMaxSystem(k, J, Jd, Mm, Mr, terms, fr)


def redmax_mass_matrix(model, q, jstate=None) -> np.ndarray:
    """``Mr = J^T Mm J`` (ndof, ndof) by the dense RedMax Jacobian."""
    k = kinematics(model, q, None, jstate)
    J, _ = jacobian(model, q, None, jstate, kin=k)
    Mm = model.M_body.reshape(-1).astype(J.dtype)
    return J.T @ (Mm[:, None] * J)


def redmax_accelerations(model, q, qd, t: float = 0.0, jstate=None, forces=None) -> np.ndarray:
    """``qdd = Mr^-1 fr`` with every force explicit (the ODE form, notes Eq. 2.22)."""
    sys = redmax_system(model, q, qd, t, jstate, forces)
    if np.iscomplexobj(sys.Mr):  # complex step: Mr is complex symmetric, not Hermitian
        return np.linalg.solve(sys.Mr, sys.fr)
    try:
        L = np.linalg.cholesky(sys.Mr)
        regular = np.min(np.diag(L) ** 2 / np.diag(sys.Mr), initial=1.0) > 1e-10  # relative pivots
    except np.linalg.LinAlgError:
        regular = False
    if not regular:
        from redmax.model import singular_inertia_message

        raise ModelError(f"{model.name}: redmax_accelerations: {singular_inertia_message(model, q, jstate)}")
    return cho_solve((L, True), sys.fr)


def energies(model, q, qd, jstate=None, forces=None, kin: Kinematics | None = None) -> dict:
    """Energies at one state: ``kinetic`` (sum 1/2 phi^T M phi), ``gravity`` (-sum m g.p),
    ``joint_springs``, ``springs`` (other spring-like potentials) and ``total``."""
    k = kinematics(model, q, qd, jstate) if kin is None else kin
    phi = k.phi.real
    out = {"kinetic": float(0.5 * np.sum(model.M_body * phi * phi)), "gravity": 0.0, "joint_springs": 0.0,
           "springs": 0.0}
    for f in model_forces(model) if forces is None else forces:
        if f.energy_key is not None:
            out[f.energy_key] = out.get(f.energy_key, 0.0) + f.energy(model, k)
    out["total"] = out["kinetic"] + sum(v for key, v in out.items() if key != "kinetic")
    return out
