"""Solvers: linear solvers for the step (chosen by name: ``"dense"``, ``"pcg"``), KKT systems, the constrained
solvers (KKT, QP)."""

from redmax.solvers.kkt import solve_kkt
from redmax.solvers.linear import SOLVERS, DenseSolver, LinearSolver, get_solver, register
from redmax.solvers.pcg import PCGSolver

__all__ = ["SOLVERS", "DenseSolver", "LinearSolver", "PCGSolver", "get_solver", "register", "solve_kkt"]
