"""Solvers: linear solvers for the step (chosen by name: ``"auto"``, ``"dense"``, ``"pcg"``,
``"recursive"``, ``"sparse"``), KKT systems, the constrained
solvers (KKT, QP)."""

from redmax.solvers.auto import AutoSolver
from redmax.solvers.kkt import solve_kkt
from redmax.solvers.linear import SOLVERS, DenseSolver, LinearSolver, get_solver, register
from redmax.solvers.pcg import PCGSolver
from redmax.solvers.recursive import RecursiveSolver
from redmax.solvers.sparse import SparseSolver

__all__ = ["SOLVERS", "AutoSolver", "DenseSolver", "LinearSolver", "PCGSolver", "RecursiveSolver", "SparseSolver",
           "get_solver", "register", "solve_kkt"]
