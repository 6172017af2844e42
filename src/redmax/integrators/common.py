"""Pieces shared by the integrators: the registry of integrators and the settings they receive, the simulation
Result, re-parameterisation, time grids."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from redmax._validate import check_model, describe_model_arg  # noqa: F401  (re-exported)
from redmax.configuration import reparameterize
from redmax.dynamics.redmax import energies
from redmax.errors import SimulationError
from redmax.registry import Registry

__all__ = ["INTEGRATORS", "Result", "Settings", "check_model", "check_simulation_state", "reparameterize",
           "time_grid"]

# name -> run(model, state, settings: Settings) -> Result; each integrator family registers its names in its own
# module (euler, bdf, ode), :func:`redmax.integrators.simulate` looks them up
INTEGRATORS = Registry("integrator", SimulationError)
# SciPy's integrators by their redmax names (solve_ivp's method names)
_METHODS = {"rk45": "RK45", "dop853": "DOP853", "rk23": "RK23", "radau": "Radau", "scipy-bdf": "BDF",
            "lsoda": "LSODA"}
DEPRECATED = {"bdf": "scipy-bdf"}  # old name of SciPy's BDF (now "bdf1"/"bdf2" are redmax's own integrators)


@dataclass(frozen=True)
class Settings:
    """What :func:`redmax.integrators.simulate` was asked for, as one object handed to the integrator's ``run``
    (each integrator reads the fields that concern it; their meaning is simulate's)."""

    integrator: str = "euler"
    dt: float = 1e-2
    duration: float = 1.0
    method: str = "redmax"
    rtol: float = 1e-8
    atol: float = 1e-8
    forces: object = None
    symmetrize: bool = False
    progress: object = None
    inputs: object = None
    coriolis: str = "explicit"
    gravity: str = "explicit"
    solver: object = "dense"
    baumgarte: float = 5.0
    baumgarte_acc: tuple = (5.0, 5.0)
    constraint_solver: object = "auto"
    newton: object = None
    on_instability: str = "warn"
    friction_solver: str = "bisp"
    compat: object = None


MAX_SAMPLES = 1e8  # a trajectory longer than this would not fit in memory for any useful model


def time_grid(t0: float, h: float, duration: float) -> tuple[int, np.ndarray]:
    """Number of steps ``round(T / h)`` and sample times ``t_k = t0 + k h`` (formed by multiplication)."""
    if not (np.isfinite(h) and h > 0.0):
        raise SimulationError(f"time step must be positive and finite, got {h}")
    if not (np.isfinite(duration) and duration >= 0.0):
        raise SimulationError(f"duration must be non-negative and finite, got {duration}")
    n = duration / h
    if n > MAX_SAMPLES:
        raise SimulationError(f"duration / dt = {n:.3g} samples is more than {MAX_SAMPLES:.0e}: choose a larger "
                              f"dt (got dt = {h}, duration = {duration})")
    n = int(np.rint(n))
    return n, t0 + h * np.arange(n + 1)


@dataclass
class Result:
    """A simulated trajectory sampled at ``t`` (N+1,).

    Attributes:
        t: (N+1,) times.  q, qdot: (N+1, ndof) coordinates and rates (as stored by the integrator,
            i.e. before any re-parameterisation applied at the start of the next step).
        jstate: (N+1, nb) chart words.  energy: dict of (N+1,) arrays with keys ``kinetic``,
            ``gravity``, ``joint_springs``, ``springs``, ``applied`` (when a force counts one) and ``total``.
        meta: integrator name, step, method, scene name, statistics.
        constraint_violation: dict constraint name -> (N+1, rows): g for equality rows, max(c, 0) for inequality
            rows; empty without constraints.
        reactions: dict constraint name -> (N+1, k) (sample 0 zero): the joint torque ``-G_r^T lam / h`` on the
            constraint's DOFs (reduced rows) or the wrench ``-G_m^T lam / h`` on its body (maximal rows; body frame,
            angular first); for prescribed motion the required torque or wrench.
    """

    t: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    jstate: np.ndarray
    energy: dict
    meta: dict = field(default_factory=dict)
    constraint_violation: dict = field(default_factory=dict)
    reactions: dict = field(default_factory=dict)
    model: object = field(default=None, repr=False, compare=False)  # the simulated model (set by redmax.simulate)

    def to_html(self, path, model=None, **options) -> dict:
        """Write a self-contained HTML replay of this result (:func:`redmax.viz.html.replay_html`; ``model``
        defaults to the simulated one)."""
        from redmax.errors import RedmaxError
        from redmax.viz.html import replay_html

        model = self.model if model is None else model
        if model is None:
            raise RedmaxError("Result.to_html: this result does not know its model; pass model=")
        return replay_html(model, self, path, **options)

    @property
    def H(self) -> float:
        """``T(t_end) + V(t_end) - V(0)``: the change of total energy over the run (the reference scenes' number)."""
        e = self.energy
        V = e["total"] - e["kinetic"]
        return float(e["kinetic"][-1] + V[-1] - V[0])


def record_energies(model, forces, qs, qds, jss) -> dict:
    """Energies at every sample, as a dict of arrays (keys as :func:`redmax.dynamics.energies`)."""
    rows = [energies(model, q, qd, js, forces) for q, qd, js in zip(qs, qds, jss, strict=True)]
    keys = list(rows[0].keys())
    return {k: np.array([r[k] for r in rows]) for k in keys}


def check_dt(dt, duration) -> None:
    """Validate a step and a duration (SimulationError naming the bad one)."""
    for name, v in (("dt", dt), ("duration", duration)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise SimulationError(f"{name} must be a number, got {v!r}")
    if not (np.isfinite(dt) and dt > 0):
        raise SimulationError(f"time step must be positive and finite, got dt = {dt}")
    if not (np.isfinite(duration) and duration >= 0):
        raise SimulationError(f"duration must be non-negative and finite, got {duration}")
    if dt > duration > 0:
        raise SimulationError(f"dt = {dt} is longer than duration = {duration}: not one step would be taken")


def check_finite_state(q, qd, t) -> None:
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
        raise SimulationError(f"the state became non-finite at t = {t:.6g}; reduce the time step")


def check_simulation_state(model, state):
    """``state`` when it is a :class:`redmax.State`; a SimulationError naming the model otherwise."""
    from redmax.configuration import State

    if isinstance(state, State):
        return state
    hint = " (simulate takes integrator=, dt=, duration=... as keywords)" if isinstance(state, str | int | float) \
        else ""
    raise SimulationError(f"{model.name}: state must be a redmax.State, got {type(state).__name__}{hint}")
