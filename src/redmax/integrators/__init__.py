"""Time integrators: linearly implicit Euler (RedMax Eq. 2), fully implicit BDF1/SDIRK2/BDF2 with Newton (Sueda notes
§3.4) and ODE integration with solve_ivp."""

from __future__ import annotations

from redmax.errors import SimulationError
from redmax.integrators.bdf import IMPLICIT, Tape, simulate_implicit  # (each family registers its integrators)
from redmax.integrators.common import _METHODS, DEPRECATED, INTEGRATORS, Result, Settings, reparameterize, time_grid
from redmax.integrators.euler import euler_step, euler_system, linearized_step, simulate_euler
from redmax.integrators.instability import check_mode
from redmax.integrators.ode import accelerations, simulate_ode
from redmax.integrators.rollout import Rollouts, rollout
from redmax.integrators.step import LinearizedStep, StepOptions
from redmax.solvers.newton import NewtonOptions

INTEGRATORS.arrange(("euler", *_METHODS, *IMPLICIT, *DEPRECATED))  # the built-ins in their documented order

__all__ = [
    "INTEGRATORS",
    "LinearizedStep",
    "NewtonOptions",
    "Result",
    "Rollouts",
    "Settings",
    "StepOptions",
    "Tape",
    "accelerations",
    "euler_step",
    "euler_system",
    "linearized_step",
    "reparameterize",
    "rollout",
    "simulate",
    "simulate_euler",
    "simulate_implicit",
    "simulate_ode",
    "time_grid",
]


_POSITIONAL = ("integrator", "dt", "duration", "method", "rtol", "atol", "forces", "symmetrize", "progress")


def simulate(model, state=None, *args, integrator: str = "euler", dt: float = 1e-2, duration: float = 1.0,
             method: str = "redmax", rtol: float = 1e-8, atol: float = 1e-8, forces=None, symmetrize: bool = False,
             progress=None, inputs=None, coriolis: str = "explicit", gravity: str = "explicit", solver="auto",
             baumgarte: float = 5.0, baumgarte_acc=(5.0, 5.0), constraint_solver="auto", newton=None,
             on_instability: str = "warn", friction_solver: str = "bisp", compat=None) -> Result:
    """Simulate ``model`` from ``state`` (default: its initial state).

    Every argument after ``state`` is a keyword (the positional form ``simulate(model, state, "rk45", 1e-2)`` still
    works for one release, with a DeprecationWarning).

    Args:
        model: a :class:`redmax.Model` (for a :class:`redmax.scenes.Scene`, pass ``scene.model`` or call
            ``scene.simulate()``).  state: a :class:`redmax.State`.
        integrator: "euler" (linearly implicit, fixed step dt), "bdf1", "sdirk2", "bdf2" (fully implicit with
            Newton on the positions, fixed step dt; ``redmax.integrators.bdf``), "rk45" or "dop853" (adaptive,
            sampled every dt), also "rk23", "radau", "scipy-bdf", "lsoda" (SciPy; "bdf" is the deprecated name of
            "scipy-bdf").
        method: for ODE integrators, "redmax" (Mr^-1 fr) or "recursive" (forward dynamics).
        forces: the applied forces (default: the model's, ``redmax.forces.model_forces``); gravity and the
            Coriolis terms are part of the dynamics and always apply.
        symmetrize: Euler only; use ``(K + K^T)/2`` for all stiffness matrices.
        progress: optional callable ``(t, t_end)`` reporting progress.
        inputs: joint torques over time (``redmax.model.Inputs``; default: the model's).
        coriolis, gravity: Euler only; "explicit" (the reference) or "implicit" (see
            ``redmax.integrators.StepOptions``).
        solver: Euler only; the linear solver: "auto" (default: "dense" below 200 DOFs or with
            coriolis="implicit"; above, "pcg" for symmetric steps, "sparse" otherwise; ``redmax.solvers.auto``),
            "dense", "pcg", "sparse", or a solver object (``redmax.solvers.PCGSolver(tol=...)``).
            ``Result.meta["solver"]`` names the one that ran.
        baumgarte: Euler only; the velocity-level stabilisation gain of the constraints (``G qd1 = -gdot - b g``).
        baumgarte_acc: ODE integrators; the acceleration-level gains (b1, b2) of the constraints.
        constraint_solver: Euler only; "auto" (KKT, or the QP when an inequality row is active), "kkt" or "qp"
            (``redmax.solvers.constrained``).
        friction_solver: Euler only; friction in joints with a ``contact``, loops with one and floors of a model
            with a friction table: "bisp" (default; Bilateral Staggered Projections, ``redmax.friction.bisp``),
            "sp" (the Staggered Projections baseline in maximal coordinates, ``redmax.friction.sp``) or "none"
            (friction ignored).  ``Result.meta`` gets ``friction_iterations``, ``friction_unconverged`` and
            ``friction_work`` (per step, ``h f_beta . v``: never positive).
        compat: None (default), or "original": reproduce the original RedMax code's two friction defects (for
            comparison with its numbers only; ``redmax.friction.bisp``).  Ignored without friction.
        newton: "bdf1"/"sdirk2"/"bdf2" only; :class:`NewtonOptions` or a dict of them (``tol``, ``max_iter``,
            ``max_step``, ``line_search``, ``max_halvings``).
        on_instability: what to do when the run's total energy grows beyond what the model can explain: more than
            1e6 times its energy scale (the largest of its initial energy components, total mass x |g| x model
            size, and the kinetic energy of turning it at 1 rad/s) plus the work of its inputs
            (``redmax.integrators.instability``): "warn" (default; one :class:`redmax.SimulationWarning` naming the
            step, time and energy), "raise" (a :class:`redmax.SimulationError`) or "ignore".  Whatever it says, an
            adaptive integrator that cannot make progress (more than 1e4 steps to go while its step is below 1e-6 s
            or a rate beyond any physical motion, 1e5 rad/s) raises a SimulationError naming its step size.
    """
    from redmax.integrators.common import check_dt, check_model, check_simulation_state

    if args:
        if len(args) > len(_POSITIONAL):
            raise SimulationError(f"simulate takes model and state as positional arguments (then at most "
                                  f"{len(_POSITIONAL)} deprecated ones: {', '.join(_POSITIONAL)}), got "
                                  f"{2 + len(args)}")
        import warnings

        names = _POSITIONAL[:len(args)]
        warnings.warn(f"simulate(model, state, {', '.join(names)}) by position is deprecated: pass "
                      f"{', '.join(f'{k}=' for k in names)} as keywords", DeprecationWarning, stacklevel=2)
        given = dict(integrator=integrator, dt=dt, duration=duration, method=method, rtol=rtol, atol=atol,
                     forces=forces, symmetrize=symmetrize, progress=progress)
        defaults = simulate.__kwdefaults__
        for k, v in zip(names, args, strict=True):
            if given[k] is not defaults[k] and given[k] != defaults[k]:
                raise SimulationError(f"simulate: {k} given both by position and as a keyword")
            given[k] = v
        integrator, dt, duration, method, rtol, atol, forces, symmetrize, progress = (given[k] for k in _POSITIONAL)
    model = check_model(model, "simulate")
    st = model.initial_state() if state is None else check_simulation_state(model, state)
    check_dt(dt, duration)
    check_mode(on_instability)
    run = INTEGRATORS.lookup(integrator)
    from redmax.integrators.euler import check_friction_options

    check_friction_options(friction_solver, compat)
    res = run(model, st, Settings(integrator, dt, duration, method, rtol, atol, forces, symmetrize, progress, inputs,
                                  coriolis, gravity, solver, baumgarte, baumgarte_acc, constraint_solver, newton,
                                  on_instability, friction_solver, compat))
    if isinstance(res, Result):
        res.model = model
    return res
