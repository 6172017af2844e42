"""Fully implicit integration on the positions: the residual, its exact tangent, and one Newton solve per stage
(Sueda notes §3.4, Alg. 12).

Every stage of BDF1, SDIRK2 and BDF2 solves, for its unknown positions x at time t,

    g(x) = M(x) (x - base) - c2 f(x, qd(x), t) = 0,      qd(x) = (c1 / c2) (x - z),

with ``base`` and ``z`` known combinations of earlier positions and rates (:mod:`redmax.integrators.bdf`;
always ``c2 = c1^2``) and ``f = tau + f_r + J^T f_m + f_qvv`` the total reduced
force (gravity, Coriolis, applied forces with exact stiffness, inputs).  With inverse dynamics
``ID(q, qd, qdd; f_app) = M qdd + c - J^T f_app`` (the applied maximal wrenches as body-fixed external wrenches)
the residual is one RNEA pass,

    g = c2 (ID(x, qd, (x - base)/c2; f_app) - tau - f_r),

and its tangent ``H = dg/dx = M + sum_i (dM/dq_i r) e_i^T - c1 D - c2 K`` (notes Eqs. 3.65, 3.69, 3.74, 3.80) is,
without dM/dq or dJ/dq,

    H = M + c2 dID/dq + c1 dID/dqd - c2 (K_r + J^T K_app J + J^T Dn_app Psi) - c1 (Dn_r + J^T Dn_app J)

(IDSVA at qdd = r/c2 gives ``dM/dq r`` and the rigid-body parts of K and D; :mod:`redmax.derivatives.eom`
for the force terms).  The full ``D = df/dqd`` and M at the solution are kept for the adjoint method.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from redmax.derivatives.eom import _blocks, jt_b_x, psi_columns, world_columns
from redmax.derivatives.first_order import rnea_derivatives
from redmax.derivatives.jacobian import joint_hessians
from redmax.dynamics import crba, rnea
from redmax.dynamics.redmax import applied_terms
from redmax.errors import ModelError, SimulationError
from redmax.forces.exact import exact_forces
from redmax.kinematics import kinematics
from redmax.solvers.newton import NewtonOptions, newton

__all__ = ["ImplicitSystem", "StageRecord"]


@dataclass
class StageRecord:
    """One Newton solve, as the adjoint method needs it.

    Attributes:
        t: time of the stage.  c1, c2: tangent coefficients.  x: solution (n,).  qd: its rate (n,).
        a: ``(x - base)/c2`` (the acceleration-like argument of ID).  tau: input torques used.  jstate: charts.
        lu: LU factors of H at x (or None).  M, D: inertia and ``df/dqd`` at x (or None).
        B, Z: ``base`` and ``z`` as linear combinations ``{key: coefficient}`` of earlier solves (int keys) and the
        initial state ("q0", "qd0").  step: the time step the solve belongs to (0-based).  iterations: Newton
        steps.  residuals: ``|g|`` per iterate.
    """

    t: float
    c1: float
    c2: float
    x: np.ndarray
    qd: np.ndarray
    a: np.ndarray
    tau: np.ndarray
    jstate: np.ndarray
    step: int
    B: dict
    Z: dict
    iterations: int = 0
    residuals: list | None = None
    lu: tuple | None = None
    M: np.ndarray | None = None
    D: np.ndarray | None = None


class ImplicitSystem:
    """Residual and tangent of the implicit stages of one model (module docstring).

    Args:
        model: the Model.  forces: applied forces (default: the model's; taken with exact stiffness).
        inputs: object with ``torque(t) -> (n,)`` (default: the model's inputs).
        newton: :class:`redmax.solvers.newton.NewtonOptions` (or a dict of its fields).
    """

    def __init__(self, model, forces=None, inputs=None, newton: NewtonOptions | None = None):
        self.model = model
        self.forces = exact_forces(model, forces)
        self.inputs = model.inputs if inputs is None else inputs
        self.options = NewtonOptions(**newton) if isinstance(newton, dict) else (newton or NewtonOptions())

    # -- pieces ---------------------------------------------------------------------------------------------
    def evaluate(self, x, qd, a, t, js, tau, c2):
        """Residual ``g`` and the data its tangent reuses."""
        m = self.model
        kin = kinematics(m, x, qd, js)
        terms = applied_terms(m, kin, t, self.forces, True)
        fb = terms.fm_body(kin)
        g = c2 * (rnea(m, x, qd, a, f_ext=fb, jstate=js) - tau - terms.fr)
        return g, (kin, terms, fb)

    def force_matrices(self, x, qd, js, data):
        """``(Kf, Df)`` (n, n): the applied forces' parts of K and D (plain derivatives; module docstring)."""
        m = self.model
        kin, terms, _ = data
        n = m.ndof
        Sw, Vw, AdJ = world_columns(m, kin)
        Kf = terms.Kr.dense().reshape(n, n).astype(float) if terms.Kr.items else np.zeros((n, n))
        Df = -terms.Dr.dense().reshape(n, n).astype(float) if terms.Dr.items else np.zeros((n, n))
        kp, kb = _blocks(terms.Km, float)
        dp, db = _blocks(terms.Dm, float)
        if kp.shape[0]:
            jt_b_x(m.parent, m.idx, Sw, Sw, kp, kb, Kf)
        if dp.shape[0]:
            _, dSqd = joint_hessians(m, x, qd, js)
            Psi = psi_columns(m, Sw, Vw, AdJ, dSqd)
            jt_b_x(m.parent, m.idx, Sw, Psi, dp, -db, Kf)
            jt_b_x(m.parent, m.idx, Sw, Sw, dp, -db, Df)
        return Kf, Df

    def tangent(self, x, qd, a, js, c1, c2, data, want_MD: bool = False):
        """H (and, with ``want_MD``, M and ``D = df/dqd``) at x."""
        m = self.model
        _, _, fb = data
        Tq, Tv = rnea_derivatives(m, x, qd, a, f_ext=fb, jstate=js)
        M = crba(m, x, js)
        Kf, Df = self.force_matrices(x, qd, js, data)
        H = M + c2 * (Tq - Kf) + c1 * (Tv - Df)
        if want_MD:
            return H, M, Df - Tv
        return H

    # -- one stage --------------------------------------------------------------------------------------------
    def solve(self, t, c1, c2, base, z, guess, js, record: bool, what: str):
        """Solve one stage (module docstring).  Returns ``(x, qd, result, (M, D) or None)``."""
        kappa = c1 / c2
        try:
            tau = np.asarray(self.inputs.torque(t), dtype=float)
        except ModelError as e:
            raise SimulationError(f"{what}: {e}") from None

        def residual(x):
            qd = kappa * (x - z)
            a = (x - base) / c2
            try:
                g, data = self.evaluate(x, qd, a, t, js, tau, c2)
            except ModelError as e:
                raise SimulationError(f"{what}: {e}") from None
            return g, data

        def tangent(x, data):
            return self.tangent(x, kappa * (x - z), (x - base) / c2, js, c1, c2, data)

        res = newton(residual, tangent, guess, self.options, False, what)
        x = res.x
        qd = kappa * (x - z)
        MD = None
        if record:
            H, M, D = self.tangent(x, qd, (x - base) / c2, js, c1, c2, res.data, True)
            import scipy.linalg as sla

            res.lu = sla.lu_factor(H)
            MD = (M, D)
        return x, qd, res, tau, MD
