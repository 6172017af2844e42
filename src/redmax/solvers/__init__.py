"""Solvers: linear solvers for the step (chosen by name), KKT systems (later: QP adapter, PCG with the projected
block-Jacobi preconditioner, staggered projections)."""

from redmax.solvers.kkt import solve_kkt
from redmax.solvers.linear import SOLVERS, DenseSolver, LinearSolver, get_solver, register

__all__ = ["SOLVERS", "DenseSolver", "LinearSolver", "get_solver", "register", "solve_kkt"]
