"""A scene: a compiled model with its simulation settings (the Python form of a scene file)."""

from __future__ import annotations

from dataclasses import dataclass, field

from redmax.integrators import Result, simulate

__all__ = ["Scene"]


@dataclass
class Scene:
    """A model with its simulation settings.

    Attributes:
        name: e.g. "reference/05".  model: the compiled Model.  duration, dt: default simulated time
        and step (s).  integrator: "euler", "rk45" or "dop853".  method: "redmax" or "recursive" (ODE
        integrators).  rtol, atol: ODE tolerances.  symmetrize: Euler stiffness symmetrisation.
        description: one line.  forces: replacement force list (None: the model's forces).
    """

    name: str
    model: object
    duration: float = 2.0
    dt: float = 1e-2
    integrator: str = "euler"
    description: str = ""
    forces: list | None = None
    method: str = "redmax"
    rtol: float = 1e-8
    atol: float = 1e-8
    symmetrize: bool = False
    coriolis: str = "explicit"
    gravity: str = "explicit"
    meta: dict = field(default_factory=dict)

    def simulate(self, integrator: str | None = None, dt: float | None = None, duration: float | None = None,
                 method: str | None = None, rtol: float | None = None, atol: float | None = None, state=None,
                 symmetrize: bool | None = None, progress=None, *, inputs=None, coriolis: str | None = None,
                 gravity: str | None = None, solver="dense") -> Result:
        """Simulate from the initial state (or ``state``); every argument defaults to the scene's setting.

        Args:
            integrator: "euler" (linearly implicit), "rk45" or "dop853".
            dt: step (euler) or sampling interval (ODE).  duration: simulated time.
            method: "redmax" or "recursive" (ODE integrators only).  rtol, atol: ODE tolerances.
            symmetrize: Euler only; symmetrise the stiffness matrices.
            progress: optional callable ``(t, t_end)`` called as the simulation advances.
            inputs, coriolis, gravity, solver: see :func:`redmax.simulate`.
        """
        res = simulate(self.model, state, integrator or self.integrator, self.dt if dt is None else dt,
                       self.duration if duration is None else duration, method or self.method,
                       self.rtol if rtol is None else rtol, self.atol if atol is None else atol, self.forces,
                       self.symmetrize if symmetrize is None else symmetrize, progress, inputs=inputs,
                       coriolis=coriolis or self.coriolis, gravity=gravity or self.gravity, solver=solver)
        res.meta["scene"] = self.name
        return res
