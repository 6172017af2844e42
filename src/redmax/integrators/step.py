"""The linearised step: ``A qd1 = b`` of one linearly implicit Euler step, with the parts solvers need.

RedMax paper Eq. 2 (Sueda notes Eq. 2.86), see :mod:`redmax.integrators._stages`:

    A = M + J^T (h Dm - h^2 Km) J + h Dr - h^2 Kr   [+ h dc/dqd with coriolis="implicit"],
    b = M qd0 + h (J^T (fm + Dm phi) - c + fr + Dr qd0 + tau)   [+ h dc/dqd qd0].

:class:`LinearizedStep` holds the kinematics of the step, the maximal blocks ``B = h D - h^2 K`` (world
coordinates, one 6x6 block per body pair), the reduced terms and ``b``; it assembles ``A`` densely on demand
(:meth:`dense`, O(n d + pairs) without forming J), applies it matrix-free in O(n + blocks) (:meth:`apply`), and
gives the per-body and per-joint blocks a preconditioner needs and the O(n) products ``J x``, ``J^T y`` and
``M x``.  A linear solver (``redmax.solvers``) takes the step and returns ``qd1``; a constrained solver wraps
one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from redmax._jit import njit
from redmax._kernels.workspace import work_offsets
from redmax.errors import SimulationError
from redmax.forces._compiled import NE
from redmax.forces.evaluate import NO_PAIRS, NO_RECORDS
from redmax.forces.registry import eval_forces_gated
from redmax.integrators._assembly import assemble_stage, depths
from redmax.integrators._linearize import linearize_forces
from redmax.integrators._stages import J_world, JT_world, inertia_world, kinematics_stage, rhs_stage
from redmax.integrators._velocity import bias_velocity_jacobian

__all__ = ["LinearizedStep", "StepOptions", "linearize"]

CORIOLIS = ("explicit", "implicit")
GRAVITY = ("explicit", "implicit")


@dataclass(frozen=True)
class StepOptions:
    """How the Euler step linearises.

    Attributes:
        coriolis: "explicit" (the reference: quadratic velocity terms on the right only) or "implicit" (also
            ``h dc/dqd`` on the left, the exact velocity derivative, as MuJoCo's ``implicit``).
        gravity: "explicit" (reference) or "implicit" (gravity's stiffness, notes Eq. 1.35, on the left).
        symmetrize: replace every stiffness K by ``(K + K^T)/2`` (Baraff & Witkin).
        solver: name of the linear solver (``redmax.solvers.SOLVERS``).
    """

    coriolis: str = "explicit"
    gravity: str = "explicit"
    symmetrize: bool = False
    solver: str = "dense"

    def __post_init__(self):
        if self.coriolis not in CORIOLIS:
            raise SimulationError(f"coriolis must be one of {CORIOLIS}, got {self.coriolis!r}")
        if self.gravity not in GRAVITY:
            raise SimulationError(f"gravity must be one of {GRAVITY}, got {self.gravity!r}")


@dataclass
class LinearizedStep:
    """``A qd1 = b`` for one step from ``(q, qd, jstate)`` (already re-parameterised) with inputs at ``t_next``.

    Attributes:
        model, h, t_next, q, qd, jstate: the step.  W: the kinematics workspace (world frames, S_w, inertias,
        twists).  bpair (m, 2), bB (m, 6, 6): maximal blocks ``h D - h^2 K`` (world).  rdiag (n,): the diagonal of
        ``h Dr - h^2 Kr``; rblocks: its other ``(dofs, block)`` parts.  b (n,): right-hand side.
        symmetric: A is symmetric.  Cv: ``dc/dqd`` (n, n) when coriolis="implicit" (A holds ``h Cv``), else None.
        fm (nb, 6), fr (n,): the applied forces (world wrenches, generalized forces).  energy: potentials by
        bucket of the forces at this state.  fr_rhs (n,), tau (n,): the reduced forces as they enter b and the
        input torques (constrained solvers remove them from prescribed joints).  fm_rhs (nb, 6): the world
        wrenches as they enter b (``f + D phi``; friction's maximal system).
    """

    model: object
    h: float
    t_next: float
    q: np.ndarray
    qd: np.ndarray
    jstate: np.ndarray
    W: np.ndarray
    bpair: np.ndarray
    bB: np.ndarray
    rdiag: np.ndarray
    b: np.ndarray
    symmetric: bool
    fm: np.ndarray
    fr: np.ndarray
    rblocks: list = field(default_factory=list)
    Cv: np.ndarray | None = None
    energy: np.ndarray | None = None
    fr_rhs: np.ndarray | None = None  # (n,) the reduced forces as they enter b (f + D qd), per coordinate
    tau: np.ndarray | None = None  # (n,) the input torques of the step
    fm_rhs: np.ndarray | None = None  # (nb, 6) the world wrenches as they enter b (f + D phi)

    @property
    def n(self) -> int:
        return self.model.ndof

    def dense(self) -> np.ndarray:
        """The assembled A (n, n) (compiled, O(n d + blocks))."""
        m = self.model
        Ii, _ = m.packed
        n = m.ndof
        A = np.zeros((n, n))
        nblk = self.bpair.shape[0]
        cap = max(2 * self._increments(), 1)
        W = self.W.copy()
        assemble_stage(Ii, W, self.bpair, self.bB, nblk, self.rdiag, self.symmetric, depths(Ii),
                       np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.zeros((cap, 6)), np.zeros(2 * n, np.int64),
                       np.zeros(cap, np.int64), A, NO_PAIRS, NO_RECORDS, 0, np.zeros((max(n, 1), 13)),
                       np.zeros(max(n, 1), np.int64))
        for dofs, blk in self.rblocks:
            A[np.ix_(dofs, dofs)] += blk
        if self.Cv is not None:
            A += self.h * self.Cv
        return A

    def _increments(self) -> int:
        m = self.model
        return int(_path_increments(m.parent, m.idx, np.ascontiguousarray(self.bpair, dtype=np.int64)))

    # -- O(n) products ---------------------------------------------------------------------------
    def J(self, x) -> np.ndarray:
        """``J x``: world twists (nb, 6) of the bodies for rates x (n,)."""
        Ii, _ = self.model.packed
        out = np.zeros((self.model.nb, 6))
        J_world(Ii, self.W, np.ascontiguousarray(x, dtype=float), out)
        return out

    def JT(self, y) -> np.ndarray:
        """``J^T y`` (n,) for world wrenches y (nb, 6)."""
        Ii, _ = self.model.packed
        out = np.zeros(self.model.ndof)
        JT_world(Ii, self.W, np.ascontiguousarray(y, dtype=float).reshape(-1, 6), np.zeros((self.model.nb, 6)), out)
        return out

    def M(self, x) -> np.ndarray:
        """``M x`` (n,) in O(n): ``J^T (I (J x))``."""
        Ii, _ = self.model.packed
        V = self.J(x)
        f = np.zeros_like(V)
        inertia_world(Ii, self.W, V, f)
        return self.JT(f)

    def apply(self, x) -> np.ndarray:
        """``A x`` (n,) matrix-free: ``M x + J^T (B (J x)) + (h Dr - h^2 Kr) x [+ h Cv x]``."""
        x = np.asarray(x, dtype=float)
        V = self.J(x)
        f = np.zeros_like(V)
        Ii, _ = self.model.packed
        inertia_world(Ii, self.W, V, f)
        for (a, c), blk in zip(self.bpair, self.bB, strict=True):
            f[a] += blk @ V[c]
        y = self.JT(f) + self.rdiag * x
        for dofs, blk in self.rblocks:
            y[dofs] += blk @ x[dofs]
        if self.Cv is not None:
            y += self.h * (self.Cv @ x)
        return y

    # -- blocks for preconditioners --------------------------------------------------------------
    def body_blocks(self) -> np.ndarray:
        """Per-body diagonal blocks (nb, 6, 6) of ``h Dm - h^2 Km`` (world coordinates)."""
        out = np.zeros((self.model.nb, 6, 6))
        for (a, c), blk in zip(self.bpair, self.bB, strict=True):
            if a == c:
                out[a] += blk
        return out

    def joint_blocks(self) -> list[np.ndarray]:
        """Per-joint blocks of ``h Dr - h^2 Kr`` (one (n_i, n_i) array per joint)."""
        m = self.model
        R = np.diag(self.rdiag)
        for dofs, blk in self.rblocks:
            R[np.ix_(dofs, dofs)] += blk
        return [R[m.idx[i]:m.idx[i + 1], m.idx[i]:m.idx[i + 1]].copy() for i in range(m.nb)]


def linearize(model, q, qd, jstate, t_next: float, h: float, tau, program, python_forces,
              options: StepOptions) -> LinearizedStep:
    """Build the :class:`LinearizedStep` at an already re-parameterised state.

    Args:
        tau: (n,) input torques at ``t_next``.  program: the compiled forces (a ForceProgram).
        python_forces: forces without a compiled kernel, evaluated here in Python.
    """
    from redmax.forces.base import BlockSparse, DofBlocks

    Ii, Ff = model.packed
    nb, n = model.nb, model.ndof
    q = np.array(q, dtype=float)  # copies: writeable C arrays, the types of the compiled loop's calls (one
    qd = np.array(qd, dtype=float)  # compiled kernel each, not one more per read-only flag)
    js = np.array(jstate, dtype=np.int64)
    W = np.zeros(work_offsets(nb, n).size)
    kinematics_stage(Ii, Ff, q, qd, js, W)
    o = work_offsets(nb, n)
    Rw = W[o.wR:o.wR + 9 * nb].reshape(nb, 9)
    pw = W[o.wp:o.wp + 3 * nb].reshape(nb, 3)
    Vw = W[o.wV:o.wV + 6 * nb].reshape(nb, 6)
    cK, cD = -h * h, h
    cap = max(program.nblocks, 1)
    fw = np.zeros((nb, 6))
    fw_rhs = np.zeros((nb, 6))
    bpair = np.zeros((cap, 2), dtype=np.int64)
    bK = np.zeros((cap, 6, 6))
    bD = np.zeros((cap, 6, 6))
    bB = np.zeros((cap, 6, 6))
    fr = np.zeros(n)
    fr_rhs = np.zeros(n)
    rK = np.zeros(n)
    rD = np.zeros(n)
    rdiag = np.zeros(n)
    energy = np.zeros(NE)
    nblk, _ = eval_forces_gated(program.hdr, program.fi, program.ff, Rw, pw, Vw, q, qd, True, fw, bpair, bK, bD, fr,
                                rK, rD, energy, np.zeros(program.nscratch), NO_PAIRS, NO_RECORDS, False)
    # the step's weights meet the forces' own (f, K, D) here: B = cK K + cD D, f + D v
    linearize_forces(cK, cD, nblk, 0, bpair, bK, bD, bB, rK, rD, rdiag, fw, fw_rhs, fr, fr_rhs, Vw, qd, NO_PAIRS,
                     NO_RECORDS)
    bpair, bB = bpair[:nblk], bB[:nblk]
    symmetric = program.symmetric
    rblocks = []
    if python_forces:
        from redmax.kinematics import kinematics

        kin = kinematics(model, q, qd, js)
        extra_pairs, extra_blocks = [], []
        for f in python_forces:
            out = f.evaluate(model, kin, t_next, True, True)
            if out.space == "maximal":
                fw += out.f
                fw_rhs += out.f
                if out.D is not None and len(out.D.pairs):  # f + D V
                    fw_rhs += out.D.matvec(Vw)
                K = out.K if out.K is not None else BlockSparse.empty(nb)
                if options.symmetrize:  # (K + K^T)/2 = sum of 1/2 K_ab at (a, b) and 1/2 K_ab^T at (b, a)
                    KT = K.transposed()
                    K = BlockSparse(nb, np.concatenate([K.pairs, KT.pairs]),
                                    np.concatenate([0.5 * K.blocks, 0.5 * KT.blocks]))
                elif getattr(f, "mode", 1) == 0 and len(K.pairs):
                    symmetric = False
                for part, s in ((K, cK), (out.D, cD)):
                    if part is not None and len(part.pairs):
                        extra_pairs.append(part.pairs)
                        extra_blocks.append(s * part.blocks)
            else:
                fr += out.f
                fr_rhs += out.f
                if out.D is not None:  # f + D qd
                    fr_rhs += out.D.matvec(qd)
                for part, s in ((out.K, cK), (out.D, cD)):
                    if part is None:
                        continue
                    if options.symmetrize and s == cK:
                        part = DofBlocks(n, [(d, 0.5 * (blk + blk.T)) for d, blk in part.items])
                    for dofs, blk in part.items:
                        if blk.shape[0] == 1:
                            rdiag[dofs[0]] += s * blk[0, 0]
                        else:
                            rblocks.append((dofs, s * blk))
                            if np.any(blk != blk.T):
                                symmetric = False
            if f.energy_key is not None:
                from redmax.forces.program import BUCKETS

                bk = BUCKETS.get(f.energy_key, -1)
                if bk >= 0:
                    energy[bk] += float(np.real(out.energy))
        if extra_pairs:
            bpair = np.concatenate([bpair, *extra_pairs])
            bB = np.concatenate([bB, *extra_blocks])
    b = np.zeros(n)
    rhs_stage(Ii, Ff, qd, W, h, fw_rhs, fr_rhs, np.ascontiguousarray(tau, dtype=float), 1.0, np.zeros((nb, 6)),
              np.zeros((nb, 6)), b)
    if model.armature is not None:  # rotor inertia: part of M on both sides, (M + A) qd1 = (M + A) qd + h f
        rdiag += model.armature
        b += model.armature * qd
    Cv = None
    if options.coriolis == "implicit":
        Cv = np.zeros((n, n))
        bias_velocity_jacobian(Ii, Ff, W, q, qd, js, Cv)
        b += h * (Cv @ qd)
        symmetric = False
    return LinearizedStep(model, h, t_next, q, qd, js, W, np.ascontiguousarray(bpair), np.ascontiguousarray(bB),
                          rdiag, b, symmetric, fw, fr, rblocks, Cv, energy, fr_rhs,
                          np.ascontiguousarray(tau, dtype=float), fw_rhs)


@njit(cache=True)
def _path_increments(parent, idx, bpair):
    """Number of DOFs on the tree paths between the bodies of every off-diagonal pair (a, b) and their common
    ancestor: the assembly's increments (``parent[i] < i``, so the deeper index climbs first)."""
    tot = 0
    for k in range(bpair.shape[0]):
        a = bpair[k, 0]
        b = bpair[k, 1]
        while a != b:
            if a > b:
                tot += idx[a + 1] - idx[a]
                a = parent[a]
            else:
                tot += idx[b + 1] - idx[b]
                b = parent[b]
            if a < 0 or b < 0:
                while a >= 0:
                    tot += idx[a + 1] - idx[a]
                    a = parent[a]
                while b >= 0:
                    tot += idx[b + 1] - idx[b]
                    b = parent[b]
                break
    return tot
