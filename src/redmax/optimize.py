"""Objective value and exact gradient of a simulated trajectory with respect to parameters (the adjoint method),
and the optimisation front end (Sueda notes §3.5).

    problem = rm.optimize.Problem(model, [rm.params.Torque("J1", scale=1e5), rm.params.Torque("J2", scale=1e5)],
                                  rm.objectives.Objective(rm.objectives.PointTarget("B2", (5, 0, 0), (10, 0, -10)),
                                                          regularization=1e-2),
                                  integrator="bdf1", dt=1e-2, duration=1.0)
    value, grad = problem(problem.x0)              # grad stacked like x0, ready for minimize(jac=True)
    out = problem.evaluate(problem.x0)             # .value, .gradients (one array per parameter), .info (cost)
    res = scipy.optimize.minimize(problem, problem.x0, jac=True, method="L-BFGS-B")

One evaluation runs the forward simulation with ``record=True`` (every stage keeps its Newton factorisation at
the solution, M and ``D = df/dqd``) and one backward sweep (:mod:`redmax.integrators.adjoint`); ``info`` reports
the cost: forward and backward seconds, Newton iterations, solves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from redmax.errors import SceneError
from redmax.integrators.adjoint import adjoint_sweep
from redmax.integrators.bdf import IMPLICIT, simulate_implicit
from redmax.integrators.common import time_grid
from redmax.objectives import Objective
from redmax.params import Setup

__all__ = ["GradientResult", "Problem", "value_and_gradient"]


@dataclass
class GradientResult:
    """``value``; ``gradients`` (one array per parameter, in order); ``result`` the forward Result; ``info`` the
    cost of the gradient (``forward_s``, ``backward_s``, ``newton_iterations``, ``solves``)."""

    value: float
    gradients: list
    result: object = None
    info: dict = field(default_factory=dict)

    @property
    def gradient(self) -> np.ndarray:
        """All gradients stacked (the order of the parameters)."""
        return np.concatenate([np.asarray(g, dtype=float).reshape(-1) for g in self.gradients]) if self.gradients \
            else np.zeros(0)


class Problem:
    """A differentiable simulation: parameters, objective and run settings (module docstring).

    Args:
        model: the Model.  parameters: list of :mod:`redmax.params` objects.  objective: an
            :class:`redmax.objectives.Objective` (or a single term).
        integrator: "bdf1", "sdirk2" or "bdf2".  dt, duration: the run.  state: initial State (default: the
            model's).  forces: applied forces (default the model's).  inputs: base joint torques (default the
            model's).  newton: Newton options.
    """

    def __init__(self, model, parameters, objective, integrator: str = "bdf1", dt: float = 1e-2,
                 duration: float = 1.0, state=None, forces=None, inputs=None, newton=None):
        if integrator not in IMPLICIT:
            raise SceneError(f"the adjoint method runs with {', '.join(IMPLICIT)}; got integrator {integrator!r}")
        self.model = model
        self.parameters = list(parameters)
        self.objective = objective if isinstance(objective, Objective) else Objective(objective)
        self.integrator = integrator
        self.dt, self.duration = float(dt), float(duration)
        self.state = model.initial_state() if state is None else state
        self.forces, self.inputs, self.newton = forces, inputs, newton
        self.nsteps, _ = time_grid(float(self.state.t), self.dt, self.duration)
        for p in self.parameters:
            p.bind(model, self.nsteps)
        self.sizes = [p.size for p in self.parameters]
        self.x0 = np.concatenate([p.initial(model) for p in self.parameters]) if self.parameters else np.zeros(0)
        self.history: list = []

    def split(self, x) -> list:
        """The stacked vector x as one array per parameter."""
        x = np.asarray(x, dtype=float).reshape(-1)
        if x.size != sum(self.sizes):
            raise SceneError(f"expected {sum(self.sizes)} parameter values, got {x.size}")
        return np.split(x, np.cumsum(self.sizes)[:-1]) if self.sizes else []

    def setup(self, x) -> Setup:
        """The run for parameter values x (model variant, inputs, initial state)."""
        st = self.state.copy()
        base = self.inputs if self.inputs is not None else self.model.inputs
        s = Setup(self.model, st, base, float(st.t), self.dt, self.nsteps)
        for p, v in zip(self.parameters, self.split(x), strict=True):
            p.apply(s, v)
        return s

    def simulate(self, x, record: bool = False):
        """The forward run at x (and its Tape when ``record``)."""
        s = self.setup(x)
        return simulate_implicit(s.model, s.state, self.integrator, self.dt, self.duration, self.forces,
                                 inputs=s.inputs, newton=self.newton, record=record), s

    def value(self, x) -> float:
        """Objective value without the gradient (one forward run)."""
        res, s = self.simulate(x)
        v, _, _ = self.objective.evaluate(s.model, res)
        xx = np.asarray(x, dtype=float).reshape(-1)
        return float(v + 0.5 * self.objective.regularization * (xx @ xx))

    def evaluate(self, x) -> GradientResult:
        """Value and gradient at x by the adjoint method (module docstring)."""
        xx = np.asarray(x, dtype=float).reshape(-1)
        t0 = time.perf_counter()
        (res, tape), s = self.simulate(xx, record=True)
        t1 = time.perf_counter()
        val, dq, dqd = self.objective.evaluate(s.model, res)
        adj = adjoint_sweep(tape, dq, dqd)
        grads = []
        for p, v in zip(self.parameters, self.split(xx), strict=True):
            grads.append(p.gradient(s, tape, adj, v) + self.objective.regularization * v)
        t2 = time.perf_counter()
        val = float(val + 0.5 * self.objective.regularization * (xx @ xx))
        info = {"forward_s": t1 - t0, "backward_s": t2 - t1, "solves": len(tape.records),
                "newton_iterations": int(np.sum(res.meta["newton_iterations"])), "steps": res.meta["steps"]}
        out = GradientResult(val, grads, res, info)
        self.history.append(val)
        return out

    def __call__(self, x):
        """``(value, gradient)`` for ``scipy.optimize.minimize(problem, x0, jac=True)``."""
        r = self.evaluate(x)
        return r.value, r.gradient


def value_and_gradient(model, parameters, objective, values=None, **run) -> GradientResult:
    """One evaluation of :class:`Problem` ``(model, parameters, objective, **run)`` at ``values`` (default: the
    parameters' initial values); returns a :class:`GradientResult` with one gradient per parameter."""
    prob = Problem(model, parameters, objective, **run)
    return prob.evaluate(prob.x0 if values is None else values)
