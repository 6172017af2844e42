"""``solver="pcg"``: the Euler step solved by preconditioned conjugate gradients with the projected block-Jacobi
preconditioner (RedMax paper §3, Eq. 3, Alg. 1), matrix-free in O(n + blocks) time and memory per iteration
(kernels: :mod:`redmax.solvers._pcg`).

PCG needs a symmetric positive definite step matrix: a model with ``coriolis="implicit"``, a force whose stiffness
is the exact, non-symmetric derivative (``stiffness="full"`` on a maximal force between points) or a reduced block
that is not symmetric is refused with a :class:`redmax.errors.SimulationError` naming the cause (pass
``symmetrize=True``, use the forces' ``stiffness="symmetric"``, or the ``"dense"`` solver).

Equality rows (loop closures, couplings) in the compiled loop: by default one projected PCG solve on the rows'
null space (``rows="projected"``, :func:`redmax.solvers._pcg.pcg_projected`: m exact preconditioner solves for
the rows, then one conjugate-gradient solve whose iterations do not grow with the rows), or the paper's Schur
complement with one PCG solve per row (``rows="schur"``, paper Eq. 4, :func:`redmax.solvers._pcg.pcg_rows`).
Steps with inequality rows run in Python and take the Schur complement
(:class:`redmax.solvers.constrained.KKTSolver`).
"""

from __future__ import annotations

import numpy as np

from redmax.errors import SimulationError
from redmax.solvers._pcg import pcg, precondition_setup
from redmax.solvers.linear import LinearSolver, register

__all__ = ["PCGSolver", "pack_blocks"]


def pack_blocks(rblocks, n: int):
    """``(rb_dofs, rb_off, rb_val)``: the reduced blocks ``[(dofs, block), ...]`` of a step as flat arrays (the
    DOFs of block k at ``rb_dofs[rb_off[k]:rb_off[k + 1]]``, its values row-major one after the other)."""
    dofs = [np.asarray(d, dtype=np.int64).reshape(-1) for d, _ in rblocks]
    off = np.zeros(len(dofs) + 1, dtype=np.int64)
    off[1:] = np.cumsum([d.size for d in dofs])
    vals = [np.asarray(b, dtype=float).reshape(-1) for _, b in rblocks]
    return (np.concatenate(dofs) if dofs else np.zeros(0, np.int64), off,
            np.concatenate(vals) if vals else np.zeros(0))


@register
class PCGSolver(LinearSolver):
    """Preconditioned conjugate gradients (``simulate(..., solver="pcg")`` or ``solver=PCGSolver(tol=1e-8)``).

    Args:
        tol: the relative residual at which a solve stops: ``|r| < tol |r0|``, r0 the residual of the warm start
            (the velocity at the start of the step, for every solve of the step, as in the paper's code).
        max_iter: the most iterations of one solve; a solve that does not meet ``tol`` by then raises
            :class:`redmax.errors.SimulationError` with its residual.
        rows: how the compiled loop solves a step with equality rows: ``"projected"`` (one projected PCG solve,
            its residual the KKT residual ``b - A x - G^T lam``) or ``"schur"`` (the paper's Eq. 4: one PCG solve
            per row and one for the right-hand side, the row solves warm-started from the previous step's).
    Attributes:
        iterations: the iteration count of every solve of the last run, in order (``Result.meta["pcg_iterations"]``
            holds them per step: (steps, solves per step)).
    """

    name = "pcg"
    compiled = True  # the compiled Euler loop and Simulator run it (inequality rows step in Python)
    matrix_free = True

    ROWS = ("projected", "schur")

    def __init__(self, tol: float = 1e-6, max_iter: int = 1000, rows: str = "projected"):
        tol = float(tol)
        if not (np.isfinite(tol) and 0.0 < tol < 1.0):
            raise SimulationError(f"PCGSolver: tol must be in (0, 1), got {tol!r}")
        if isinstance(max_iter, bool) or not isinstance(max_iter, int | np.integer) or max_iter < 1:
            raise SimulationError(f"PCGSolver: max_iter must be a positive integer, got {max_iter!r}")
        if rows not in self.ROWS:
            raise SimulationError(f"PCGSolver: rows must be one of {', '.join(map(repr, self.ROWS))}, got {rows!r}")
        self.tol = tol
        self.max_iter = int(max_iter)
        self.rows = rows
        self.iterations: list[int] = []
        self._key = None

    def begin(self, model) -> None:
        """Called once at the start of a run: forget the counts of the previous one."""
        self.iterations = []
        self._key = None

    def run_meta(self, steps: int) -> dict:
        """``{"pcg_iterations": (steps, solves per step) int array}`` for the Result of a run of ``steps`` steps."""
        it = np.asarray(self.iterations, dtype=np.int64)
        if steps > 0 and it.size % steps == 0:
            it = it.reshape(steps, -1)
        return {"pcg_iterations": it, "pcg_tol": self.tol}

    @classmethod
    def check(cls, symmetric: bool, coriolis: str) -> None:
        """Refuse a step matrix this solver cannot solve (not symmetric), naming the cause."""
        if coriolis != "explicit":
            raise SimulationError(f"the '{cls.name}' solver needs a symmetric step matrix; coriolis='implicit' adds "
                                  "the non-symmetric h dc/dqd (use coriolis='explicit' or the 'dense' solver)")
        if not symmetric:
            raise SimulationError(f"the '{cls.name}' solver needs a symmetric step matrix; a force's exact stiffness "
                                  "is not symmetric (use stiffness='symmetric' on the force, symmetrize=True, or the "
                                  "'dense' solver)")

    def compiled_workspace(self, model, symmetric: bool, coriolis: str, steps: int, cv=None, dofs=None,
                           program=None):
        """``(pcgw, IT)``: the PCG workspace of the compiled Euler loop (``redmax.integrators._loop._solve``) and
        the iteration counts of its solves (steps, 2 + rows; the last column the number of solves of the step).

        ``cv``: the packed, matrix-free constraint views of the run (``_constrained.pack_views``; their ``G``,
        ``r``, ``lam`` are shared with the loop's constrained calls), ``dofs`` its DOF layout (couplings become
        rows), ``program`` its ``ForceProgram`` (read by subclasses).  Memory O(n + m n) for m rows: no n x n
        matrix."""
        from redmax.integrators._constrained import coupling_rows

        self.check(symmetric, coriolis)
        n, nb = model.ndof, model.nb
        if cv is not None and cv.active:
            G, r, lam = cv.G, cv.r, cv.lam
        else:
            G, r, lam = np.zeros((1, n)), np.zeros(1), np.zeros(1)
        mcap = G.shape[0]
        its = np.zeros(mcap + 2, dtype=np.int64)
        pcgw = (self.tol, self.max_iter, np.zeros((n, 6)), np.zeros((n, 6)), np.zeros((nb, 6, 6)),
                np.zeros(4 * n + 24 * nb), *pack_blocks([], n), G, r, lam, np.zeros((mcap, n)),
                np.zeros((2 * mcap, mcap)), np.zeros(mcap), np.zeros(mcap, np.int64), np.zeros(mcap, np.int64),
                np.zeros(mcap), its, *coupling_rows(dofs), 1 if self.rows == "projected" else 0)
        return pcgw, np.zeros((max(steps, 1), its.size), dtype=np.int64)

    def take_iterations(self, IT) -> None:
        """Keep the counts of a compiled run (``IT`` of :meth:`compiled_workspace`) as :attr:`iterations`."""
        s = int(IT[:, -1].max()) if IT.size else 1
        self.iterations = IT[:, :max(s, 1)].reshape(-1).tolist()

    def solve(self, step) -> np.ndarray:
        self.check(step.symmetric, "implicit" if step.Cv is not None else "explicit")
        Ii, _ = step.model.packed
        n, nb = step.model.ndof, step.model.nb
        key = id(step.W)
        if self._key != key:  # factors once per step: its m + 1 solves (constraint rows: copies of the step with
            # another b, the same workspace) share them
            self._rb = pack_blocks(step.rblocks, n)
            self._U = np.zeros((n, 6))
            self._Psi = np.zeros((n, 6))
            self._Mh = np.zeros((nb, 6, 6))
            self._work = np.zeros(4 * n + 24 * nb)
            bad = precondition_setup(Ii, step.W, step.bpair, step.bB, step.bpair.shape[0], step.rdiag, *self._rb,
                                     self._Mh, self._U, self._Psi)
            if bad >= 0:
                raise SimulationError(f"the 'pcg' preconditioner is singular at joint "
                                      f"'{step.model.joint_names[bad]}' (its projected inertia and joint terms have "
                                      "no inverse)")
            self._key = key
            self._W = step.W  # (kept alive: its id keys the factors)
        x = np.array(step.qd, dtype=float)  # the warm start: the velocity at the start of the step
        it, ok, rr = pcg(Ii, step.W, step.bpair, step.bB, step.bpair.shape[0], step.rdiag, *self._rb, self._U,
                         self._Psi, np.ascontiguousarray(step.b, dtype=float), x, self.tol, self.max_iter, self._work)
        self.iterations.append(int(it))
        if not ok:
            raise SimulationError(f"PCG did not converge in {it} iterations (residual {np.sqrt(max(rr, 0.0)):.3g}, "
                                  f"tol {self.tol:g} relative to the warm start's; raise max_iter or use the 'dense' "
                                  "solver)")
        return x
