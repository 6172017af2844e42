"""Integration of the equations of motion as a first-order ODE with SciPy's ``solve_ivp``.

``d/dt (q, qd) = (qd, qdd(q, qd, t))`` (Sueda notes Eq. 2.22) where qdd comes either from the RedMax
equations (``method="redmax"``: ``Mr^-1 fr``) or from recursive forward dynamics
(``method="recursive"``: the articulated-body/hybrid algorithm with the reduced forces as joint
torques and the maximal forces as external body wrenches).  The two give the same solution.

Joints that re-parameterise are handled by terminal events: when a joint's event value
(``1.5 pi - |q|`` for exponential coordinates, ``|det S| - 1/2`` for Euler charts) crosses zero the
integration stops, the state is re-parameterised (rotation and angular velocity unchanged) and
integration restarts.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from redmax.configuration import State, charts_for
from redmax.dynamics import aba, redmax_accelerations
from redmax.dynamics.redmax import applied_terms
from redmax.errors import ModelError, SimulationError
from redmax.forces.builtin import model_forces, split_legacy
from redmax.integrators.common import (
    _METHODS,
    DEPRECATED,
    INTEGRATORS,
    Result,
    check_model,
    record_energies,
    reparameterize,
    time_grid,
)
from redmax.integrators.instability import StepGuard, check_mode, rate_bounds, watch_samples
from redmax.kinematics import kinematics

__all__ = ["accelerations", "simulate_ode"]

_EVENT_MARGIN = 1e-6  # event roots are located to solver tolerance; widen the trigger by this much


def accelerations(model, q, qd, t, jstate, forces=None, method: str = "redmax", inputs=None) -> np.ndarray:
    """qdd (ndof,) at (q, qd, t) by the RedMax equations or by recursive forward dynamics.

    ``forces`` are the applied forces (default: the model's); gravity and the Coriolis terms are part of both
    methods whatever the list holds.  ``inputs`` default to the model's.  Constraints and coupled joints act at
    acceleration level (default Baumgarte gains; :mod:`redmax.integrators.ode_constrained`)."""
    model = check_model(model, "accelerations")
    if model.constraints or model.uncoupled is not None:  # constraints, hyper-reduced coordinates
        from redmax.integrators.ode_constrained import constrained_accelerations

        return constrained_accelerations(model, q, qd, t, jstate, forces, method, inputs)
    tau = (model.inputs if inputs is None else inputs).torque(t)
    if method == "redmax":
        return redmax_accelerations(model, q, qd, t, jstate, forces, tau)
    if method == "recursive":
        kin = kinematics(model, q, qd, jstate)
        terms = applied_terms(model, kin, t, forces)
        return aba(model, q, qd, terms.fr + tau, f_ext=terms.fm_body(kin), jstate=kin.jstate)
    raise SimulationError(f"unknown dynamics method {method!r}; expected 'redmax' or 'recursive'")


def _deprecated_name(key: str, stacklevel: int = 3) -> str:
    """Map a deprecated integrator name to its new one, with a DeprecationWarning (``stacklevel``: the caller's
    caller by default)."""
    if key in DEPRECATED:
        import warnings

        warnings.warn(f"integrator {key!r} (SciPy's BDF) is deprecated: use {DEPRECATED[key]!r}; 'bdf1' and 'bdf2' are "
                      "redmax's own fully implicit BDF integrators", DeprecationWarning, stacklevel=stacklevel)
        return DEPRECATED[key]
    return key


def simulate_ode(model, state, h: float, duration: float, integrator: str = "rk45", method: str = "redmax",
                 rtol: float = 1e-8, atol: float = 1e-8, forces=None, progress=None, *, inputs=None,
                 baumgarte_acc=(5.0, 5.0), on_instability: str = "warn") -> Result:
    """Integrate with ``solve_ivp`` and sample at ``t_k = t0 + k h``.

    Args:
        integrator: "rk45" or "dop853" (also "rk23", "radau", "scipy-bdf", "lsoda").
        method: "redmax" or "recursive".
        rtol, atol: solve_ivp tolerances.
        baumgarte_acc: acceleration-level gains (b1, b2) of the model's constraints.
        on_instability: "warn", "raise" or "ignore": the energy rule of :mod:`redmax.integrators.instability` on the
            samples.  Whatever it says, a run that cannot make progress (more than 1e4 steps to go while the step is
            below 1e-6 s or a rate beyond any physical motion, 1e5 rad/s) raises a SimulationError naming the step
            size (:class:`redmax.integrators.instability.StepGuard`).
    """
    model = check_model(model, "simulate_ode")
    check_mode(on_instability)
    if not isinstance(integrator, str):
        raise SimulationError(f"integrator must be a name (one of {', '.join(_METHODS)}), got {integrator!r}")
    key = integrator.lower()
    key = _deprecated_name(key)
    if key not in _METHODS:
        raise SimulationError(f"unknown ODE integrator {integrator!r}; expected one of {', '.join(_METHODS)}")
    if method not in ("redmax", "recursive"):
        raise SimulationError(f"unknown dynamics method {method!r}; expected 'redmax' or 'recursive'")
    forces = model_forces(model) if forces is None else split_legacy(forces)[0]
    if not (np.isfinite(rtol) and rtol > 0 and np.isfinite(atol) and atol > 0):
        raise SimulationError(f"rtol and atol must be positive and finite, got rtol={rtol}, atol={atol}")
    if not isinstance(state, State):
        raise SimulationError(f"{model.name}: state must be a redmax.State, got {type(state).__name__}")
    if model.constraints or model.uncoupled is not None:  # constraints, hyper-reduced coordinates
        from redmax.integrators.ode_constrained import simulate_ode_constrained

        return simulate_ode_constrained(model, state, h, duration, key, method, rtol, atol, forces, progress, inputs,
                                        baumgarte_acc, on_instability=on_instability)
    n, t_samples = time_grid(state.t, h, duration)
    nd = model.ndof
    q0, qd0 = model.check_state(state.q, state.qd)
    q = np.array(q0, dtype=float)
    qd = np.array(qd0, dtype=float)
    js = np.array(charts_for(model, state.jstate, q=q0), dtype=np.int64)
    reparameterize(model, q, qd, js)
    qs = np.empty((n + 1, nd))
    qds = np.empty((n + 1, nd))
    jss = np.empty((n + 1, model.nb), dtype=np.int64)
    qs[0], qds[0], jss[0] = q, qd, js
    filled = 1
    t = float(t_samples[0])
    t_end = float(t_samples[-1])
    nfev = 0
    nrestart = 0
    guard = StepGuard(model.name, key, _METHODS[key], t_end, model.dof_names,
                      rate_bounds(model, kinematics(model, q, qd, js).S))
    while filled <= n:
        cur_js = js.copy()

        def rhs(tt, y, cur_js=cur_js):
            if progress is not None:
                progress(tt, t_end)
            qq = y[:nd]
            vv = y[nd:]
            guard(tt, vv)
            try:
                acc = accelerations(model, qq, vv, tt, cur_js, forces, method, inputs)
            except ModelError as e:  # e.g. a singular configuration reached during the motion
                raise SimulationError(f"{model.name}: at t = {tt:.6g}: {e}") from None
            if not np.all(np.isfinite(acc)):
                k = int(np.flatnonzero(~np.isfinite(acc))[0])
                raise SimulationError(f"{model.name}: at t = {tt:.6g}: the acceleration of DOF "
                                      f"'{model.dof_names[k]}' is not finite (the state is too large)")
            return np.concatenate([vv, acc])

        events = None
        if model.reparam_joints.size:

            def ev(tt, y, cur_js=cur_js):
                return float(np.min(model.events(y[:nd], cur_js)))

            ev.terminal = True
            ev.direction = -1
            events = ev
        t_eval = t_samples[filled:]
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # reported below as a SimulationError
                sol = solve_ivp(rhs, (t, t_end), np.concatenate([q, qd]), method=_METHODS[key], t_eval=t_eval,
                                events=events, rtol=rtol, atol=atol)
        except ValueError as e:  # SciPy refuses a state or derivative that overflowed
            raise SimulationError(f"{model.name}: ODE integration failed after t = {t:.6g}: {e} (the state became "
                                  "too large: check the forces or the initial state)") from None
        nfev += sol.nfev
        if sol.status == -1:
            raise SimulationError(f"ODE integration failed at t = {t:.6g}: {sol.message}")
        k = np.asarray(sol.t).size  # SciPy leaves an empty list when a terminal event fires at the start
        if k:
            qs[filled : filled + k] = sol.y[:nd].T
            qds[filled : filled + k] = sol.y[nd:].T
            jss[filled : filled + k] = js
            filled += k
        if sol.status == 1 and filled <= n:  # a re-parameterisation event
            y = sol.y_events[0][0]
            t = float(sol.t_events[0][0])
            q, qd = y[:nd].copy(), y[nd:].copy()
            if not reparameterize(model, q, qd, js, margin=_EVENT_MARGIN):
                raise SimulationError(f"re-parameterisation event at t = {t:.6g} changed nothing")
            nrestart += 1
        elif filled <= n:
            raise SimulationError(f"ODE integration stopped early at t = {t:.6g}: {sol.message}")
    energy = record_energies(model, forces, qs, qds, jss)
    watch_samples(model, on_instability, t_samples, energy, qds, inputs, model.name)
    meta = {"integrator": key, "dt": h, "steps": n, "method": method, "rtol": rtol, "atol": atol, "nfev": nfev,
            "reparameterizations": nrestart}
    return Result(t_samples, qs, qds, jss, energy, meta)


def _run(model, state, s) -> Result:
    """``simulate(..., integrator=name)`` for SciPy's integrators (adaptive, sampled every ``s.dt``); a deprecated
    name warns and runs its successor."""
    return simulate_ode(model, state, s.dt, s.duration, _deprecated_name(s.integrator, stacklevel=4), s.method,
                        s.rtol, s.atol, s.forces, s.progress, inputs=s.inputs, baumgarte_acc=s.baumgarte_acc,
                        on_instability=s.on_instability)


for _name in (*_METHODS, *DEPRECATED):
    INTEGRATORS.register(_name, _run)
