"""Time integrators: linearly implicit Euler (RedMax Eq. 2) and ODE integration with solve_ivp."""

from __future__ import annotations

from redmax.errors import SimulationError
from redmax.integrators.common import Result, reparameterize, time_grid
from redmax.integrators.euler import euler_step, simulate_euler
from redmax.integrators.ode import _METHODS, accelerations, simulate_ode

INTEGRATORS = ("euler", *_METHODS)  # names accepted by simulate (and scene files)

__all__ = [
    "INTEGRATORS",
    "Result",
    "accelerations",
    "euler_step",
    "reparameterize",
    "simulate",
    "simulate_euler",
    "simulate_ode",
    "time_grid",
]


def simulate(model, state=None, integrator: str = "euler", dt: float = 1e-2, duration: float = 1.0,
             method: str = "redmax", rtol: float = 1e-8, atol: float = 1e-8, forces=None,
             symmetrize: bool = False, progress=None) -> Result:
    """Simulate ``model`` from ``state`` (default: its initial state).

    Args:
        integrator: "euler" (linearly implicit, fixed step dt), "rk45" or "dop853" (adaptive, sampled
            every dt).
        method: for ODE integrators, "redmax" (Mr^-1 fr) or "recursive" (forward dynamics).
        forces: the forces to apply (default ``model_forces(model)``).
        symmetrize: Euler only; use ``(K + K^T)/2`` for all stiffness matrices.
        progress: optional callable ``(t, t_end)`` reporting progress.
    """
    st = model.initial_state() if state is None else state
    if integrator == "euler":
        if method != "redmax":
            raise SimulationError("the linearly implicit Euler integrator uses method='redmax'")
        return simulate_euler(model, st, dt, duration, forces, symmetrize, progress)
    return simulate_ode(model, st, dt, duration, integrator, method, rtol, atol, forces, progress)
