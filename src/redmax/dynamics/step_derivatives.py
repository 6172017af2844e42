"""Derivatives of one time step with respect to the state and the joint torques, for iLQR/DDP.

With x = (q, qd) (2 ndof,) and joint torques tau (ndof,), one step ``x1 = F(x, tau)`` and its linearisation
``dx1 = A dx + B dtau``, ``A = dF/dx`` (2n, 2n), ``B = dF/dtau`` (2n, n), which iLQR and DDP propagate
backwards (the second-order terms of DDP come from :func:`redmax.rnea_second_order_derivatives` and
:func:`redmax.aba_second_order_derivatives`).  ``tau`` replaces the model's own joint torques; every other
force of the model (or of ``forces``: springs, dampers, contacts, gravity) acts as in the simulator.

``scheme="linearly_implicit"`` is redmax's Euler step (RedMax Eq. 2, :func:`redmax.integrators.euler_step`):

    (M + h D - h^2 K) qd1 = M qd + h (tau + f_rhs - b(q, qd)),   q1 = q + h qd1,

with ``b = RNEA(q, qd, 0)`` the gravity and velocity-product forces, f_rhs, K = df/dq and D = -df/dqd the force
elements' terms.  Differentiating, with ``a = (qd1 - qd)/h`` and ``T_q, T_qd`` the derivatives of
``RNEA(q, qd, a)`` (:func:`redmax.rnea_derivatives`: ``h T_q = dM/dq (qd1 - qd) + h db/dq`` folds the
inertia's derivative and the bias into one call):

    dqd1/dq   = A_s^-1 h (-T_q + G_q),      dqd1/dqd = A_s^-1 (M - h T_qd + h G_qd),   dqd1/dtau = h A_s^-1,

``A_s = M + h D - h^2 K`` and ``G = d/dx (f_rhs - D y + h K y)`` at fixed ``y = qd1`` (the force elements'
own derivatives, including those of their K and D).  ``scheme="semi_implicit"`` is symplectic Euler with every
force explicit: ``qd1 = qd + h FD(q, qd, tau + f)``, ``q1 = q + h qd1``, differentiated through
:func:`redmax.aba_derivatives` plus ``M^-1 df/dx``.

The rigid-body terms are analytic; the force elements' terms G and df/dx are the exact (complex-step)
derivatives of their scalar-generic force assembly (``redmax.dynamics.redmax_system``), computed only when the
model has such forces (not for gravity alone).  The state must be inside its charts: a state that the
simulator would re-parameterise first (spherical joints past 1.5 pi, Euler angles near gimbal lock) raises
SimulationError (re-parameterise it with :func:`redmax.integrators.reparameterize`).
"""

from __future__ import annotations

import numpy as np

from redmax.errors import SimulationError

__all__ = ["step", "step_derivatives"]

_CS = 1e-30  # complex-step increment (exact to rounding: no subtraction)
SCHEMES = ("linearly_implicit", "semi_implicit")


def _state(model, state):
    if hasattr(state, "q"):
        q, qd, t, js = state.q, state.qd, float(state.t), state.jstate
    else:
        q, qd = state
        t, js = 0.0, None
    q, qd = model.check_state(np.asarray(q, dtype=float), np.asarray(qd, dtype=float), "step")
    js = model.jstate0.copy() if js is None else np.asarray(js, dtype=np.int64)
    if model.reparam_joints.size and np.any(model.events(q, js) < 0.0):
        raise SimulationError(f"{model.name}: this state would be re-parameterised before the step (a spherical "
                              "joint past 1.5 pi or Euler angles near their singularity); call "
                              "redmax.integrators.reparameterize on it first")
    return q, qd, t, js


def _split_forces(model, forces):
    """(passive forces, gravity on?) from the model's forces: inertial ones go to RNEA, joint torques to tau."""
    from redmax.forces.builtin import Coriolis, Gravity, JointTorque, model_forces

    forces = model_forces(model) if forces is None else list(forces)
    gravity = False
    passive = []
    for f in forces:
        if isinstance(f, Gravity):
            if f.stiffness:
                raise SimulationError("step_derivatives: Gravity(stiffness=True) is not supported")
            gravity = True
        elif isinstance(f, Coriolis):
            if f.damping:
                raise SimulationError("step_derivatives: Coriolis(damping=True) is not supported")
        elif not isinstance(f, JointTorque):
            passive.append(f)
    return passive, gravity


def _force_terms(model, q, qd, t, js, passive):
    """(f, f_rhs, K, D) in reduced coordinates of the passive forces at (q, qd): ``f = J^T fm + fr``,
    ``K = J^T Km J + Kr``, ``D = J^T Dm J + Dr`` (the assembly of ``integrators.euler.euler_system``)."""
    from redmax.dynamics.redmax import redmax_system

    n = model.ndof
    sys = redmax_system(model, q, qd, t, js, passive, want_K=True, want_D=True)
    J, T = sys.J, sys.terms
    f = J.T @ T.fm.reshape(-1) + T.fr
    f_rhs = J.T @ T.fm_rhs.reshape(-1) + T.fr_rhs
    K = np.zeros((n, n), dtype=J.dtype)
    D = np.zeros((n, n), dtype=J.dtype)
    if T.Km is not None:
        K += J.T @ T.Km @ J
    if T.Kr is not None:
        K += T.Kr
    if T.Dm is not None:
        D += J.T @ T.Dm @ J
    if T.Dr is not None:
        D += T.Dr
    return f, f_rhs, K, D


def _cs_jacobians(fun, q, qd):
    """Complex-step Jacobians (d fun/dq, d fun/dqd) of a scalar-generic vector function fun(q, qd)."""
    n = q.size
    Jq = np.empty((n, n))
    Jv = np.empty((n, n))
    for k in range(n):
        x = q.astype(complex)
        x[k] += 1j * _CS
        Jq[:, k] = np.imag(fun(x, qd.astype(complex))) / _CS
        v = qd.astype(complex)
        v[k] += 1j * _CS
        Jv[:, k] = np.imag(fun(q.astype(complex), v)) / _CS
    return Jq, Jv


def step(model, state, h: float, tau, scheme: str = "linearly_implicit", forces=None):
    """One step of ``scheme`` from ``state`` (a State or (q, qd)) with joint torques ``tau``: (q1, qd1)."""
    from redmax.dynamics import aba, crba, rnea

    q, qd, t, js = _state(model, state)
    tau = _tau(model, tau)
    passive, gravity = _split_forces(model, forces)
    z = np.zeros(model.ndof)
    if scheme == "semi_implicit":
        f = _force_terms(model, q, qd, t + h, js, passive)[0] if passive else z
        qd1 = qd + h * aba(model, q, qd, tau + f, jstate=js, gravity=gravity)
    elif scheme == "linearly_implicit":
        M = crba(model, q, js)
        rhs = M @ qd + h * (tau - rnea(model, q, qd, z, jstate=js, gravity=gravity))
        A = M
        if passive:
            _, f_rhs, K, D = _force_terms(model, q, qd, t + h, js, passive)
            A = M + h * D - h * h * K
            rhs = rhs + h * f_rhs
        qd1 = np.linalg.solve(A, rhs)
    else:
        raise SimulationError(f"unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")
    return q + h * qd1, qd1


def _tau(model, tau):
    t = np.asarray(tau, dtype=float)
    if t.shape != (model.ndof,) or not np.all(np.isfinite(t)):
        raise SimulationError(f"{model.name}: tau must be a finite ({model.ndof},) vector, got shape {t.shape}")
    return t


def step_derivatives(model, state, h: float, tau, scheme: str = "linearly_implicit", forces=None):
    """Derivatives ``(A, B)`` of one step ``x1 = (q1, qd1)`` with respect to ``x = (q, qd)`` and ``tau``.

    Args:
        state: a :class:`redmax.State` (q, qd, t, jstate) or a pair (q, qd).
        h: time step (s).  tau: (ndof,) joint torques during the step (they replace the model's own).
        scheme: "linearly_implicit" (redmax's Euler step) or "semi_implicit" (symplectic Euler).
        forces: the forces acting (default the model's, ``redmax.forces.model_forces``); time-dependent ones
            are evaluated at ``t + h`` like the simulator does.
    Returns:
        ``A`` (2 ndof, 2 ndof) and ``B`` (2 ndof, ndof) with ``x1 = [q1; qd1]`` (module docstring).
    """
    from redmax.dynamics import crba, rnea
    from redmax.dynamics.aba_derivatives import aba_derivatives
    from redmax.dynamics.rnea_derivatives import rnea_derivatives

    if not (np.isfinite(h) and h > 0):
        raise SimulationError(f"time step must be positive and finite, got {h}")
    if scheme not in SCHEMES:
        raise SimulationError(f"unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")
    q, qd, t, js = _state(model, state)
    tau = _tau(model, tau)
    n = model.ndof
    passive, gravity = _split_forces(model, forces)
    tn = t + h
    if scheme == "semi_implicit":
        f = _force_terms(model, q, qd, tn, js, passive)[0] if passive else np.zeros(n)
        a_q, a_qd, Minv = aba_derivatives(model, q, qd, tau + f, jstate=js, gravity=gravity)
        if passive:
            fq, fv = _cs_jacobians(lambda x, v: _force_terms(model, x, v, tn, js, passive)[0], q, qd)
            a_q = a_q + Minv @ fq
            a_qd = a_qd + Minv @ fv
        v_q, v_qd, v_tau = h * a_q, np.eye(n) + h * a_qd, h * Minv
    else:
        M = crba(model, q, js)
        if passive:
            _, f_rhs, K, D = _force_terms(model, q, qd, tn, js, passive)
            As = M + h * D - h * h * K
        else:
            As = M
        z = np.zeros(n)
        rhs = M @ qd + h * (tau - rnea(model, q, qd, z, jstate=js, gravity=gravity))
        if passive:
            rhs = rhs + h * f_rhs
        qd1 = np.linalg.solve(As, rhs)
        T_q, T_qd = rnea_derivatives(model, q, qd, (qd1 - qd) / h, jstate=js, gravity=gravity)
        Rq, Rv = -h * T_q, M - h * T_qd
        if passive:
            y = qd1.astype(complex)

            def g(x, v):
                _, fr, Kx, Dx = _force_terms(model, x, v, tn, js, passive)
                return fr - Dx @ y + h * (Kx @ y)

            Gq, Gv = _cs_jacobians(g, q, qd)
            Rq = Rq + h * Gq
            Rv = Rv + h * Gv
        Ainv = np.linalg.inv(As) if n else np.zeros((0, 0))
        v_q, v_qd, v_tau = Ainv @ Rq, Ainv @ Rv, h * Ainv
    A = np.zeros((2 * n, 2 * n))
    B = np.zeros((2 * n, n))
    A[n:, :n] = v_q
    A[n:, n:] = v_qd
    A[:n, :n] = np.eye(n) + h * v_q
    A[:n, n:] = h * v_qd
    B[n:] = v_tau
    B[:n] = h * v_tau
    return A, B
