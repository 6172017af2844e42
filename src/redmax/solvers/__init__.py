"""Linear solvers: KKT systems (later: QP adapter, PCG with the projected block-Jacobi preconditioner)."""

from redmax.solvers.kkt import solve_kkt

__all__ = ["solve_kkt"]
