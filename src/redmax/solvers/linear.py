"""Linear solvers for the linearised step ``A qd1 = b`` (:class:`redmax.integrators.step.LinearizedStep`).

A solver is an object with a ``name`` and ``solve(step) -> qd1``, chosen by name through :func:`get_solver`.
``"dense"`` assembles A (O(n d + blocks), never J) and factorises it: Cholesky when A is symmetric, LU with
partial pivoting otherwise (both compiled, :mod:`redmax.integrators._stages`); the compiled Euler loop uses the
same kernels.  Iterative and sparse solvers plug in here (``register``); a constrained solver wraps a linear one.
"""

from __future__ import annotations

import numpy as np

from redmax.errors import SimulationError
from redmax.registry import Registry
from redmax.solvers._dense import solve_stage

__all__ = ["SOLVERS", "DenseSolver", "LinearSolver", "get_solver", "register"]


class LinearSolver:
    """Interface: ``solve(step) -> qd1`` (n,); raise SimulationError when the step cannot be solved."""

    name = "linear"
    compiled = False  # True when the compiled Euler loop implements this solver
    matrix_free = False  # True when it never forms A (the compiled loop then carries no n x n matrix)

    def solve(self, step) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError(f"{type(self).__name__} must implement solve()")

    def begin(self, model) -> None:
        """Called once before the steps of a run (reset per-run records)."""

    def run_meta(self, steps: int) -> dict:
        """Entries for ``Result.meta`` after a run of ``steps`` steps (e.g. iteration counts)."""
        return {}


class DenseSolver(LinearSolver):
    """Dense direct solve: Cholesky for symmetric A, LU with partial pivoting otherwise."""

    name = "dense"
    compiled = True

    def solve(self, step) -> np.ndarray:
        A = step.dense()
        n = A.shape[0]
        x = np.zeros(n)
        _, piv = solve_stage(A, step.b.copy(), x, step.symmetric, np.zeros(n, dtype=np.int64))
        if not piv > 0.0:
            raise SimulationError(f"singular linearly implicit system at t = {step.t_next - step.h:.6g}")
        return x


SOLVERS = Registry("linear solver", SimulationError)  # name -> LinearSolver class
SOLVERS.register("dense", DenseSolver)


def register(cls) -> type:
    """Register a LinearSolver class under its ``name`` (usable as ``simulate(..., solver=name)``); a decorator."""
    return SOLVERS.register(cls.name, cls)


def get_solver(name) -> LinearSolver:
    """A solver instance by name (or the instance itself)."""
    if isinstance(name, LinearSolver):
        return name
    return SOLVERS.lookup(name)()
