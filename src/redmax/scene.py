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
        baumgarte, baumgarte_acc, constraint_solver: constraint stabilisation gains (Euler; ODE) and the
        constrained solver (see :func:`redmax.simulate`).
        objective_spec, parameter_specs: the scene's objective (:class:`redmax.objectives.Objective`) and
        parameters (:mod:`redmax.params` objects) when it defines an optimisation problem (scene files:
        ``[objective]``, ``[[parameters]]``); then :attr:`parameters` and :meth:`objective` are available.
        on_instability: "warn", "raise" or "ignore" (see :func:`redmax.simulate`; the scene-file key of the
            same name in ``[scene]``).
        solver: the linear solver of the Euler step by name (:mod:`redmax.solvers.linear`; ``[scene] solver``).
        params: the parameters a parametric scene was built with (``redmax.scenes.load(name, **params)``;
            ``[scene] params`` in a file saved from it); empty otherwise.
        friction_solver, compat: friction in joints, loops and floors (see :func:`redmax.simulate`; ``[scene]
            friction_solver`` and ``compat``).
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
    baumgarte: float = 5.0
    baumgarte_acc: tuple = (5.0, 5.0)
    constraint_solver: str = "auto"
    objective_spec: object = None
    parameter_specs: list | None = None
    on_instability: str = "warn"
    solver: str = "auto"
    params: dict = field(default_factory=dict)
    friction_solver: str = "bisp"
    compat: str | None = None

    def simulate(self, integrator: str | None = None, dt: float | None = None, duration: float | None = None,
                 method: str | None = None, rtol: float | None = None, atol: float | None = None, state=None,
                 symmetrize: bool | None = None, progress=None, *, inputs=None, coriolis: str | None = None,
                 gravity: str | None = None, solver=None, baumgarte: float | None = None, baumgarte_acc=None,
                 constraint_solver: str | None = None, newton=None, on_instability: str | None = None,
                 friction_solver: str | None = None, compat: str | None = None) -> Result:
        """Simulate from the initial state (or ``state``); every argument defaults to the scene's setting.

        Args:
            integrator: "euler" (linearly implicit), "bdf1", "sdirk2", "bdf2" (fully implicit, Newton), "rk45" or
                "dop853".
            dt: step (euler) or sampling interval (ODE).  duration: simulated time.
            method: "redmax" or "recursive" (ODE integrators only).  rtol, atol: ODE tolerances.
            symmetrize: Euler only; symmetrise the stiffness matrices.
            progress: optional callable ``(t, t_end)`` called as the simulation advances.

        The keyword-only arguments (``inputs``, ``coriolis``, ``gravity``, ``solver``, ``baumgarte``,
        ``baumgarte_acc``, ``constraint_solver``, ``newton``, ``on_instability``, ``friction_solver``, ``compat``)
        are those of :func:`redmax.simulate`.
        """
        res = simulate(self.model, state, integrator=integrator or self.integrator,
                       dt=self.dt if dt is None else dt, duration=self.duration if duration is None else duration,
                       method=method or self.method, rtol=self.rtol if rtol is None else rtol,
                       atol=self.atol if atol is None else atol, forces=self.forces,
                       symmetrize=self.symmetrize if symmetrize is None else symmetrize, progress=progress,
                       inputs=inputs, coriolis=coriolis or self.coriolis, gravity=gravity or self.gravity,
                       solver=self.solver if solver is None else solver,
                       baumgarte=self.baumgarte if baumgarte is None else baumgarte,
                       baumgarte_acc=self.baumgarte_acc if baumgarte_acc is None else baumgarte_acc,
                       constraint_solver=constraint_solver or self.constraint_solver, newton=newton,
                       on_instability=on_instability or self.on_instability,
                       friction_solver=friction_solver or self.friction_solver,
                       compat=self.compat if compat is None else compat)
        res.meta["scene"] = self.name
        return res

    # -- differentiable simulation ----------------------------------------------------------------------------
    def problem(self, integrator: str | None = None, newton=None):
        """The :class:`redmax.optimize.Problem` of a scene with an objective (cached per integrator)."""
        from redmax.errors import SceneError
        from redmax.optimize import Problem

        if self.objective_spec is None:
            raise SceneError(f"scene {self.name!r} defines no objective (scene files: [objective] and [[parameters]])")
        key = (integrator or self.integrator, id(newton))
        cache = self.meta.setdefault("_problems", {})
        if key not in cache:
            cache[key] = Problem(self.model, self.parameter_specs or [], self.objective_spec, integrator=key[0],
                                 dt=self.dt, duration=self.duration, forces=self.forces, newton=newton)
        return cache[key]

    @property
    def parameters(self):
        """Initial parameter values (stacked) of a scene with an objective; None otherwise."""
        if self.objective_spec is None:
            return None
        return self.problem().x0.copy()

    def objective(self, p, integrator: str | None = None):
        """``(value, gradient)`` of the scene's objective at parameters p by the adjoint method, ready for
        ``scipy.optimize.minimize(scene.objective, scene.parameters, jac=True)``.  ``integrator``: "bdf1",
        "sdirk2" or "bdf2" (default: the scene's)."""
        return self.problem(integrator)(p)
