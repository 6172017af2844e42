"""Derivatives of one time step with respect to the state and the joint torques, for iLQR/DDP.

With x = (q, qd) (2 ndof,) and joint torques tau (ndof,), one step ``x1 = F(x, tau)`` and its linearisation
``dx1 = A dx + B dtau``, ``A = dF/dx`` (2n, 2n), ``B = dF/dtau`` (2n, n), which iLQR and DDP propagate
backwards (the second-order terms of DDP come from :func:`redmax.rnea_second_order_derivatives` and
:func:`redmax.aba_second_order_derivatives`).  ``tau`` replaces the model's input torques for the step; the
applied forces (the model's, or ``forces``) act as in the simulator, and gravity and the quadratic velocity terms
are always part of the dynamics.

``scheme="linearly_implicit"`` is exactly redmax's Euler step :func:`redmax.integrators.euler_step` (RedMax
Eq. 2, :mod:`redmax.integrators.step`), with the same options ``coriolis``, ``gravity`` and ``symmetrize``:

    A_s qd1 = M qd + h (tau + f_rhs - c(q, qd) [+ Cv qd]),   q1 = q + h qd1,
    A_s = M + h D - h^2 K [+ h Cv],

with ``c = RNEA(q, qd, 0)`` (gravity and velocity products), ``Cv = dc/dqd`` (only with coriolis="implicit"),
and the applied forces' ``f_rhs = f + D v``, ``K = df/dq`` and ``D = -df/dqd`` in reduced coordinates (RedMax's
``J^T K_m J + K_r``; symmetrised with ``symmetrize``; with gravity="implicit" K also holds gravity's stiffness).
With ``y = qd1`` held fixed, the step is the root of the residual

    R(x, y) = h RNEA(q, qd, (y - qd)/h) + (h D - h^2 K) y - h f_rhs - h tau [+ h Cv (y - qd)],

so ``dqd1/dx = -A_s^-1 dR/dx`` and ``dqd1/dtau = h A_s^-1``, with

    -dR/dq  = -h T_q + h G_q [- h d2c/dq dqd . w],
    -dR/dqd = M - h T_qd + h G_qd [- h (d2c/dqd2 . w - Cv)],     w = y - qd,

``T_q, T_qd`` the first-order derivatives of RNEA at the step's acceleration ``(y - qd)/h``
(:func:`redmax.rnea_derivatives`, IDSVA: ``h T_q`` holds ``dM/dq (y - qd)`` and ``h dc/dq`` in one call), the
second-order terms from :func:`redmax.rnea_second_order_derivatives` (IDSVA-SO at qdd = 0), and
``G = d/dx (f_rhs - D y + h K y)`` the force elements' own derivatives (including those of their K and D).

``scheme="semi_implicit"`` is symplectic Euler with every force explicit: ``qd1 = qd + h FD(q, qd, tau + f)``,
``q1 = q + h qd1`` (:func:`step`), differentiated through :func:`redmax.aba_derivatives` plus ``M^-1 df/dx``.

The rigid-body terms are analytic; the force elements' terms G and df/dx are the exact (complex-step)
derivatives of their scalar-generic evaluation (the Python face of the force kernels), computed only when there
are applied forces.  The state must be inside its charts: a state that the step would re-parameterise first
(spherical joints past 1.5 pi, Euler angles near gimbal lock) raises SimulationError (re-parameterise it with
:func:`redmax.configuration.reparameterize` first; the derivatives are then those of the new chart).
"""

from __future__ import annotations

import numpy as np

from redmax.configuration import State, charts_for, events
from redmax.errors import SimulationError
from redmax.forces.builtin import GravityStiffness, model_forces, split_legacy
from redmax.integrators.step import StepOptions

__all__ = ["SCHEMES", "step", "step_derivatives"]

_CS = 1e-30  # complex-step increment (exact to rounding: no subtraction)
SCHEMES = ("linearly_implicit", "semi_implicit")


def _state(model, state) -> State:
    if isinstance(state, State):
        q, qd, t, js = state.q, state.qd, float(state.t), state.jstate
    else:
        q, qd = state
        t, js = 0.0, None
    q, qd = model.check_state(np.asarray(q, dtype=float), np.asarray(qd, dtype=float), "step")
    js = charts_for(model, js).copy()
    if model.reparam_joints.size and np.any(events(model, q, js) < 0.0):
        raise SimulationError(f"{model.name}: this state would be re-parameterised before the step (a spherical "
                              "joint past 1.5 pi or Euler angles near their singularity); call "
                              "redmax.configuration.reparameterize on it first")
    return State(np.array(q, dtype=float), np.array(qd, dtype=float), t, js)


def _options(forces, coriolis, gravity, symmetrize):
    """(applied force list, StepOptions) as the simulator resolves them (deprecated markers become options)."""
    flist = None if forces is None else list(forces)
    legacy = {}
    if flist is not None:
        flist, legacy = split_legacy(flist)
    opts = StepOptions(legacy.get("coriolis", coriolis), legacy.get("gravity", gravity), bool(symmetrize))
    return flist, opts


def _force_list(model, flist, opts):
    out = model_forces(model) if flist is None else list(flist)
    if opts.gravity == "implicit":
        out.append(GravityStiffness())
    return out


def _evaluate(model, kin, t, force, symmetrize):
    """One force's output as the step uses it: with ``symmetrize``, compiled forces in "full" stiffness mode are
    evaluated in "symmetric" mode (as :func:`redmax.forces.program.build_program` does; gravity's stiffness
    excepted) and Python forces get ``(K + K^T)/2`` (as :func:`redmax.integrators.step.linearize` does)."""
    from redmax.forces._points import MODE_FULL, MODE_SYMMETRIC
    from redmax.forces.evaluate import evaluate_compiled
    from redmax.forces.terms import BlockSparse, DofBlocks

    if not symmetrize or isinstance(force, GravityStiffness):
        return force.evaluate(model, kin, t, True, True)
    prog = force.program(model)
    if prog is not None:
        if prog[1] == MODE_FULL:
            prog = (prog[0], MODE_SYMMETRIC, *prog[2:])
        return evaluate_compiled(force, prog, model, kin, True, True)
    out = force.evaluate(model, kin, t, True, True)
    if out.K is not None and out.space == "maximal":
        KT = out.K.transposed()
        out.K = BlockSparse(out.K.nb, np.concatenate([out.K.pairs, KT.pairs]),
                            np.concatenate([0.5 * out.K.blocks, 0.5 * KT.blocks]))
    elif out.K is not None:
        out.K = DofBlocks(out.K.ndof, [(d, 0.5 * (b + b.T)) for d, b in out.K.items])
    return out


def _reduced_forces(model, q, qd, t, js, flist, symmetrize):
    """``(f, f_rhs, K, D)`` of the applied forces in reduced coordinates at (q, qd) (scalar-generic):
    ``f = J^T f_body + f_r``, ``K = J^T K_body J + K_r``, ``D = J^T D_body J + D_r`` (body-frame J and matrices),
    ``f_rhs = f + D qd``, as :func:`redmax.integrators.step.linearize` assembles them
    (``symmetrize``: see :func:`_evaluate`)."""
    from redmax.forces.terms import ForceTerms
    from redmax.kinematics import jacobian, kinematics

    kin = kinematics(model, q, qd, js)
    J, _ = jacobian(model, q, qd, js, kin=kin)
    terms = ForceTerms(model.nb, model.ndof, dtype=np.result_type(q, qd, float))
    for fo in flist:
        terms.add(fo, _evaluate(model, kin, t, fo, symmetrize))
    d = terms.dense(kin, "body")
    K = J.T @ d["Km"] @ J + d["Kr"]
    D = J.T @ d["Dm"] @ J + d["Dr"]
    f = J.T @ terms.fm_body(kin).reshape(-1) + terms.fr
    f_rhs = J.T @ terms.fm_body(kin, rhs=True).reshape(-1) + terms.rhs(kin)[1]
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


def _tau(model, tau):
    t = np.asarray(tau, dtype=float)
    if t.shape != (model.ndof,) or not np.all(np.isfinite(t)):
        raise SimulationError(f"{model.name}: tau must be a finite ({model.ndof},) vector, got shape {t.shape}")
    return t


def _check(h, scheme):
    if not (np.isfinite(h) and h > 0):
        raise SimulationError(f"time step must be positive and finite, got {h}")
    if scheme not in SCHEMES:
        raise SimulationError(f"unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")


def step(model, state, h: float, tau, scheme: str = "linearly_implicit", *, forces=None,
         coriolis: str = "explicit", gravity: str = "explicit", symmetrize: bool = False) -> State:
    """One step of ``scheme`` from ``state`` (a State, or (q, qd) for models without chart joints) with joint
    torques ``tau``.  "linearly_implicit" is :func:`redmax.integrators.euler_step`; "semi_implicit" is
    ``qd1 = qd + h aba(q, qd, tau + f)``, ``q1 = q + h qd1`` with the applied forces f at ``t + h``."""
    from redmax.dynamics import aba
    from redmax.integrators.euler import euler_step

    _check(h, scheme)
    st = _state(model, state)
    tau = _tau(model, tau)
    flist, opts = _options(forces, coriolis, gravity, symmetrize)
    if scheme == "linearly_implicit":
        return euler_step(model, st, h, tau, forces=flist, coriolis=opts.coriolis, gravity=opts.gravity,
                          symmetrize=opts.symmetrize)
    fl = _force_list(model, flist, StepOptions())
    f = _reduced_forces(model, st.q, st.qd, st.t + h, st.jstate, fl, False)[0] if fl else 0.0
    qd1 = st.qd + h * aba(model, st.q, st.qd, tau + f, jstate=st.jstate)
    return State(st.q + h * qd1, qd1, st.t + h, st.jstate)


def step_derivatives(model, state, h: float, tau, scheme: str = "linearly_implicit", *, forces=None,
                     coriolis: str = "explicit", gravity: str = "explicit", symmetrize: bool = False):
    """Derivatives ``(A, B)`` of one step ``x1 = (q1, qd1)`` with respect to ``x = (q, qd)`` and ``tau``.

    Args:
        state: a :class:`redmax.State` (q, qd, t, jstate), or a pair (q, qd) for models without Euler-angle
            joints (t = 0).
        h: time step (s).  tau: (ndof,) joint torques during the step (they replace the model's inputs).
        scheme: "linearly_implicit" (redmax's Euler step, :func:`redmax.integrators.euler_step`) or
            "semi_implicit" (symplectic Euler, every force explicit).
        forces: the applied forces (default the model's, ``redmax.forces.model_forces``); time-dependent ones
            are evaluated at ``t + h`` like the simulator does.
        coriolis, gravity, symmetrize: the linearly implicit step's options
            (:class:`redmax.integrators.StepOptions`); the semi-implicit scheme has every term explicit.
    Returns:
        ``A`` (2 ndof, 2 ndof) and ``B`` (2 ndof, ndof) with ``x1 = [q1; qd1]`` (module docstring).
    """
    from redmax.derivatives.first_order import aba_derivatives, rnea_derivatives
    from redmax.dynamics import crba

    _check(h, scheme)
    st = _state(model, state)
    q, qd, js = st.q, st.qd, st.jstate
    tau = _tau(model, tau)
    n = model.ndof
    flist, opts = _options(forces, coriolis, gravity, symmetrize)
    tn = st.t + h
    if scheme == "semi_implicit":
        fl = _force_list(model, flist, StepOptions())
        f = _reduced_forces(model, q, qd, tn, js, fl, False)[0] if fl else np.zeros(n)
        a_q, a_qd, Minv = aba_derivatives(model, q, qd, tau + f, jstate=js)
        if fl:
            fq, fv = _cs_jacobians(lambda x, v: _reduced_forces(model, x, v, tn, js, fl, False)[0], q, qd)
            a_q = a_q + Minv @ fq
            a_qd = a_qd + Minv @ fv
        v_q, v_qd, v_tau = h * a_q, np.eye(n) + h * a_qd, h * Minv
    else:
        from redmax.integrators.euler import linearized_step

        ls = linearized_step(model, st, h, tau, forces=flist, coriolis=opts.coriolis, gravity=opts.gravity,
                             symmetrize=opts.symmetrize)
        As = ls.dense()
        qd1 = np.linalg.solve(As, ls.b)
        M = crba(model, q, js)
        T_q, T_qd = rnea_derivatives(model, q, qd, (qd1 - qd) / h, jstate=js)
        Rq, Rv = -h * T_q, M - h * T_qd
        if opts.coriolis == "implicit":
            from redmax.derivatives.rnea_second_order import rnea_second_order_derivatives

            w = qd1 - qd
            _, d2v, d2qv, _ = rnea_second_order_derivatives(model, q, qd, np.zeros(n), jstate=js)
            Rq = Rq - h * np.einsum("ikj,j->ik", d2qv, w)
            Rv = Rv - h * (np.einsum("ijk,j->ik", d2v, w) - ls.Cv)
        fl = _force_list(model, flist, opts)
        if fl:
            y = qd1.astype(complex)

            def g(x, v):
                _, fr, Kx, Dx = _reduced_forces(model, x, v, tn, js, fl, opts.symmetrize)
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
