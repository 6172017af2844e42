"""``solver="auto"`` (the default): the linear solver of the Euler step chosen by the model's size and structure
and the step's symmetry.

When no force joins two moving bodies (``ForceProgram.coupling`` empty) and the step is symmetric: the exact O(n)
recursion (:mod:`redmax.solvers.recursive`) from :data:`RECURSIVE_FROM` DOFs, unless the equality rows (loops,
prescribed motion, one per coupled coordinate) exceed :data:`RECURSIVE_ROWS` of the DOFs: each row costs the
recursion one more O(n) solve and the Schur complement m^2 n, where the dense solve pays them as m back
substitutions or removes the coupled coordinates (paper/hand: 21 coordinates, 20 rows, twice as fast dense).
Otherwise, below :data:`PCG_FROM` DOFs, the dense solve (Cholesky or LU, compiled), which is the fastest there and
keeps every scene's reference numbers; from there on PCG (:mod:`redmax.solvers.pcg`, O(n) per iteration) for a
symmetric step (``coriolis="explicit"``, symmetric stiffness), the sparse direct solve
(:mod:`redmax.solvers.sparse`) for a step made non-symmetric by a force's stiffness. The dense solve in any case
when the step is dense anyway (``coriolis="implicit"``: ``h dc/dqd`` is an n x n matrix, which makes the sparse
system dense too: the benchmark chain at 400 DOFs, 4.6 ms per step dense against 213 ms sparse) or the rows are
inequalities (a QP each step: PCG needs one solve per candidate row). Coupled joints take PCG (their couplings
become rows) when the step is symmetric, else the dense solve.
"""

from __future__ import annotations

from redmax.solvers.linear import DenseSolver, LinearSolver, register
from redmax.solvers.pcg import PCGSolver
from redmax.solvers.recursive import RecursiveSolver
from redmax.solvers.sparse import SparseSolver

__all__ = ["PCG_FROM", "RECURSIVE_FROM", "RECURSIVE_ROWS", "AutoSolver"]

PCG_FROM = 200  # DOFs from which "auto" leaves the dense solve
RECURSIVE_FROM = 20  # DOFs from which "auto" solves a step without coupling forces by the O(n) recursion
RECURSIVE_ROWS = 0.25  # ... when its equality rows are at most this fraction of the DOFs


@register
class AutoSolver(LinearSolver):
    """Chooses dense, PCG or sparse per run (:meth:`choose`; module docstring)."""

    name = "auto"
    compiled = False

    @staticmethod
    def choose(n: int, symmetric: bool, coriolis: str = "explicit", *, inequalities: bool = False,
               coupled: bool = False, exact: bool = False, rows: int = 0) -> LinearSolver:
        """The solver for a run of a model with ``n`` DOFs whose steps are ``symmetric`` or not; ``exact``: no
        force joins two moving bodies (``ForceProgram.coupling`` empty, no Python force); ``rows``: its equality
        rows (constraint rows and coupled coordinates)."""
        if inequalities or coriolis != "explicit":
            return DenseSolver()
        if exact and symmetric and n >= RECURSIVE_FROM and rows <= RECURSIVE_ROWS * n:
            return RecursiveSolver()
        if n < PCG_FROM:
            return DenseSolver()
        if coupled:  # PCG solves the couplings as rows; the sparse system has no reduced form
            return PCGSolver() if symmetric else DenseSolver()
        if symmetric and coriolis == "explicit":
            return PCGSolver()
        return SparseSolver()

    def solve(self, step):
        return self.choose(step.n, step.symmetric, "explicit" if step.Cv is None else "implicit").solve(step)
