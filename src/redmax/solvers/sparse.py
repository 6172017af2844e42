"""``solver="sparse"``: the Euler step solved as a sparse system in maximal and joint variables together (SciPy's
SuperLU), the direct baseline of RedMax paper §3 (its code factors the reduced matrix with PARDISO).

The reduced step matrix ``A = J^T L J + R`` (L: the bodies' world inertias and the forces' 6x6 blocks ``h D - h^2
K``, R: the reduced terms) is dense for a chain (J is), whatever the springs.  With the body twists V as unknowns
beside the joint rates and the tree's own relation ``V_i = V_parent(i) + S_i qd_i`` as rows (multipliers mu), the
same solution comes from

    [ L    0    C_V^T ] [ V  ]   [ 0 ]
    [ 0    R    C_q^T ] [ qd ] = [ b ]        C_V V + C_q qd = 0:  V = J qd,  (J^T L J + R) qd = b,
    [ C_V  C_q  0     ] [ mu ]   [ 0 ]

whose matrix has O(n + bodies + blocks) non-zeros for any tree (``C_V`` is the identity minus the parent
incidence, ``C_q`` minus the motion subspaces); SuperLU factors it with a fill-reducing ordering.  It solves
non-symmetric steps too (``coriolis="implicit"``: its n x n ``h dc/dqd`` goes into R).
"""

from __future__ import annotations

import numpy as np

from redmax.errors import SimulationError
from redmax.solvers.linear import LinearSolver, register

__all__ = ["SparseSolver", "maximal_system"]


def maximal_system(step):
    """``(K, rhs)``: the sparse (12 nb + n) square system above (scipy.sparse CSC) and its right-hand side."""
    import scipy.sparse as sp

    from redmax._kernels.workspace import work_offsets
    from redmax.solvers._pcg import world_inertias

    m = step.model
    Ii, _ = m.packed
    nb, n = m.nb, m.ndof
    o = work_offsets(nb, n)
    S = step.W[o.wS:o.wS + 6 * n].reshape(n, 6)
    rows, cols, vals = [], [], []

    def put(r, c, v):
        rows.append(np.asarray(r).reshape(-1))
        cols.append(np.asarray(c).reshape(-1))
        vals.append(np.asarray(v, dtype=float).reshape(-1))

    six = np.arange(6)
    # L: world inertias (6x6 per body, by columns) and the blocks B_ac
    Iw = np.zeros((nb, 6, 6))
    world_inertias(Ii, step.W, Iw)
    bi = np.arange(nb)[:, None, None]
    put(6 * bi + six[None, :, None] + 0 * six[None, None, :], 6 * bi + six[None, None, :] + 0 * six[None, :, None], Iw)
    if step.bpair.shape[0]:
        a = step.bpair[:, 0][:, None, None]
        c = step.bpair[:, 1][:, None, None]
        put(6 * a + six[None, :, None] + 0 * six[None, None, :], 6 * c + six[None, None, :] + 0 * six[None, :, None],
            step.bB)
    # R: the reduced terms (diagonal, blocks, h dc/dqd)
    v0 = 6 * nb
    d = np.arange(n)
    put(v0 + d, v0 + d, step.rdiag)
    for dofs, blk in step.rblocks:
        dofs = np.asarray(dofs)
        put(v0 + dofs[:, None] + 0 * dofs[None, :], v0 + dofs[None, :] + 0 * dofs[:, None], blk)
    if step.Cv is not None:
        nz = np.nonzero(step.Cv)
        put(v0 + nz[0], v0 + nz[1], step.h * step.Cv[nz])
    # C_V (identity minus the parent incidence) and C_q (minus S), and their transposes
    m0 = v0 + n
    par = np.asarray(m.parent)
    put(m0 + 6 * bi.reshape(-1, 1) + six, 6 * bi.reshape(-1, 1) + six, np.ones((nb, 6)))
    put(6 * bi.reshape(-1, 1) + six, m0 + 6 * bi.reshape(-1, 1) + six, np.ones((nb, 6)))
    child = np.flatnonzero(par >= 0)
    if child.size:
        pc = par[child]
        put(m0 + 6 * child[:, None] + six, 6 * pc[:, None] + six, -np.ones((child.size, 6)))
        put(6 * pc[:, None] + six, m0 + 6 * child[:, None] + six, -np.ones((child.size, 6)))
    body_of = np.repeat(np.arange(nb), np.diff(np.asarray(m.idx)))
    put(m0 + 6 * body_of[:, None] + six, v0 + d[:, None] + 0 * six, -S)
    put(v0 + d[:, None] + 0 * six, m0 + 6 * body_of[:, None] + six, -S)
    N = 12 * nb + n
    K = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(N, N))
    rhs = np.zeros(N)
    rhs[v0:v0 + n] = step.b
    return K, rhs


@register
class SparseSolver(LinearSolver):
    """Sparse direct solve of the step in maximal and joint variables (module docstring), SciPy's SuperLU."""

    name = "sparse"
    compiled = False

    def __init__(self):
        self._key = None

    def begin(self, model) -> None:
        self._key = None

    def solve(self, step) -> np.ndarray:
        import scipy.sparse.linalg as spla

        key = id(step.W)
        if self._key != key:  # one factorisation per step: its m + 1 solves (constraint rows: copies of the step
            # with another b, the same workspace) share it
            K, _ = maximal_system(step)
            try:
                self._lu = spla.splu(K, permc_spec="COLAMD")
            except RuntimeError as e:  # "Factor is exactly singular"
                raise SimulationError(f"singular linearly implicit system (sparse factorisation: {e})") from None
            self._key, self._W = key, step.W  # (kept alive: its id keys the factors)
        rhs = np.zeros(12 * step.model.nb + step.model.ndof)
        rhs[6 * step.model.nb:6 * step.model.nb + step.model.ndof] = step.b
        x = self._lu.solve(rhs)
        n = step.model.ndof
        qd = x[6 * step.model.nb:6 * step.model.nb + n]
        if not np.all(np.isfinite(qd)):
            raise SimulationError("singular linearly implicit system (the sparse solve is not finite)")
        return qd
