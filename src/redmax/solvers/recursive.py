"""``solver="recursive"``: the Euler step solved directly in O(n) by the articulated-body recursion, for models in
which no force joins two moving bodies.

The step matrix (RedMax paper Eq. 2) is ``A = J^T (I + B) J + h Dr - h^2 Kr`` with the maximal blocks ``B = h D -
h^2 K`` of the forces.  When every block of B belongs to one body (gravity, body damping, springs to the world,
ground contact) and every reduced term to one joint (joint springs, dampers, limits), A is exactly the projected
block-diagonal system that PCG uses as its preconditioner (paper Eq. 3, Alg. 1; Sueda's notes Alg. 10), and one
pass of that recursion solves the step: leaves first ``Mh_i = I_i + B_ii + sum_c Pi_c``, ``Psi_i = (S_i^T Mh_i S_i
+ R_i)^-1``, then a backward and a forward pass over the right-hand side (:mod:`redmax.solvers._pcg`).  No n x n
matrix, no iteration: O(n) time and memory against the dense factorisation's O(n^3).

A model with a force between two moving bodies (a spring between two links) is refused with a
:class:`redmax.errors.SimulationError` naming the force (``"pcg"`` solves those iteratively).  ``solver="auto"``
takes this solver for such models from :data:`redmax.solvers.auto.RECURSIVE_FROM` DOFs.  Constraint rows are
solved by the Schur complement with one recursive solve per row, as PCG does.
"""

from __future__ import annotations

import numpy as np

from redmax.errors import SimulationError
from redmax.solvers.linear import register
from redmax.solvers.pcg import PCGSolver

__all__ = ["RecursiveSolver"]


def _refuse(name: str, a: str, b: str) -> SimulationError:
    return SimulationError(f"the 'recursive' solver solves the step exactly only when no force joins two moving "
                           f"bodies; force '{name}' joins '{a}' and '{b}' (use solver='pcg' or 'dense')")


@register
class RecursiveSolver(PCGSolver):
    """The direct O(n) solve of the Euler step (``simulate(..., solver="recursive")``; module docstring)."""

    name = "recursive"
    compiled = True  # the compiled Euler loop and Simulator run it (PCG's kernels with no iteration)

    def __init__(self):
        super().__init__(rows="schur")  # (rows: m + 1 exact solves, the Schur complement of the exact step)
        self.max_iter = 0  # the kernels' direct solve: x = P^-1 b

    def run_meta(self, steps: int) -> dict:
        return {}

    def compiled_workspace(self, model, symmetric: bool, coriolis: str, steps: int, cv=None, dofs=None,
                           program=None):
        """PCG's workspace with no iteration; ``program`` (the run's ``ForceProgram``) refuses a force that joins
        two moving bodies by name."""
        if program is not None and program.coupling:
            raise _refuse(*program.coupling)
        return super().compiled_workspace(model, symmetric, coriolis, steps, cv, dofs)

    def solve(self, step) -> np.ndarray:
        m = step.model
        bp = np.asarray(step.bpair, dtype=np.int64).reshape(-1, 2)
        mov = np.append(m.moving, False)  # (index -1, the world: not moving)
        joins = np.flatnonzero((bp[:, 0] != bp[:, 1]) & mov[bp[:, 0]] & mov[bp[:, 1]])
        if joins.size:
            a, b = (m.body_names[int(i)] for i in bp[joins[0]])
            raise SimulationError(f"the 'recursive' solver solves the step exactly only when no force joins two "
                                  f"moving bodies; a force joins '{a}' and '{b}' (use solver='pcg' or 'dense')")
        jof = np.repeat(np.arange(m.nb), np.diff(m.idx))
        for dofs, _ in step.rblocks:
            d = np.asarray(dofs, dtype=np.int64).reshape(-1)
            if np.unique(jof[d]).size > 1:
                names = ", ".join(m.dof_names[int(i)] for i in d)
                raise SimulationError("the 'recursive' solver solves the step exactly only when every reduced "
                                      f"force acts within one joint; a block couples the DOFs {names} (use "
                                      "solver='pcg' or 'dense')")
        return super().solve(step)
