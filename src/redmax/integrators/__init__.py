"""Time integrators: linearly implicit Euler (RedMax Eq. 2) and ODE integration with solve_ivp."""

from __future__ import annotations

from redmax.errors import SimulationError
from redmax.integrators.common import Result, reparameterize, time_grid
from redmax.integrators.euler import euler_step, euler_system, linearized_step, simulate_euler
from redmax.integrators.ode import _METHODS, accelerations, simulate_ode
from redmax.integrators.step import LinearizedStep, StepOptions

INTEGRATORS = ("euler", *_METHODS)  # names accepted by simulate (and scene files)

__all__ = [
    "INTEGRATORS",
    "LinearizedStep",
    "Result",
    "StepOptions",
    "accelerations",
    "euler_step",
    "euler_system",
    "linearized_step",
    "reparameterize",
    "simulate",
    "simulate_euler",
    "simulate_ode",
    "time_grid",
]


def simulate(model, state=None, integrator: str = "euler", dt: float = 1e-2, duration: float = 1.0,
             method: str = "redmax", rtol: float = 1e-8, atol: float = 1e-8, forces=None,
             symmetrize: bool = False, progress=None, *, inputs=None, coriolis: str = "explicit",
             gravity: str = "explicit", solver="dense") -> Result:
    """Simulate ``model`` from ``state`` (default: its initial state).

    Args:
        integrator: "euler" (linearly implicit, fixed step dt), "rk45" or "dop853" (adaptive, sampled
            every dt), also "rk23", "radau", "bdf", "lsoda" (SciPy).
        method: for ODE integrators, "redmax" (Mr^-1 fr) or "recursive" (forward dynamics).
        forces: the applied forces (default: the model's, ``redmax.forces.model_forces``); gravity and the
            Coriolis terms are part of the dynamics and always apply.
        symmetrize: Euler only; use ``(K + K^T)/2`` for all stiffness matrices.
        progress: optional callable ``(t, t_end)`` reporting progress.
        inputs: joint torques over time (``redmax.model.Inputs``; default: the model's).
        coriolis, gravity: Euler only; "explicit" (the reference) or "implicit" (see
            ``redmax.integrators.StepOptions``).
        solver: Euler only; the linear solver ("dense").
    """
    from redmax.integrators.common import check_dt

    st = model.initial_state() if state is None else state
    check_dt(dt, duration)
    if integrator == "euler":
        if method != "redmax":
            raise SimulationError("the linearly implicit Euler integrator uses method='redmax'")
        return simulate_euler(model, st, dt, duration, forces, symmetrize, progress, inputs=inputs, coriolis=coriolis,
                              gravity=gravity, solver=solver)
    if integrator not in INTEGRATORS:
        raise SimulationError(f"unknown integrator {integrator!r}; expected one of {', '.join(INTEGRATORS)}")
    return simulate_ode(model, st, dt, duration, integrator, method, rtol, atol, forces, progress, inputs=inputs)
