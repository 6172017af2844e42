"""Force outputs as data: block-sparse matrices, one force's output, and the sum of several (ForceTerms).

Maximal quantities are in world coordinates at the world origin (angular first); see :mod:`redmax.forces.base`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

__all__ = ["BlockSparse", "DofBlocks", "ForceOutput", "ForceTerms"]


@dataclass
class BlockSparse:
    """A (6 nb, 6 nb) matrix as a list of 6x6 body-pair blocks (duplicates add).

    Attributes:
        nb: number of bodies.  pairs: (m, 2) int64 body pairs (row body, column body).  blocks: (m, 6, 6).
    """

    nb: int
    pairs: np.ndarray
    blocks: np.ndarray

    @classmethod
    def empty(cls, nb: int, dtype=np.float64) -> BlockSparse:
        return cls(nb, np.zeros((0, 2), dtype=np.int64), np.zeros((0, 6, 6), dtype=dtype))

    def __add__(self, other: BlockSparse) -> BlockSparse:
        return BlockSparse(self.nb, np.concatenate([self.pairs, other.pairs]),
                           np.concatenate([self.blocks, other.blocks]))

    def scaled(self, s) -> BlockSparse:
        return BlockSparse(self.nb, self.pairs, s * self.blocks)

    def transposed(self) -> BlockSparse:
        return BlockSparse(self.nb, self.pairs[:, ::-1].copy(), np.transpose(self.blocks, (0, 2, 1)).copy())

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """y = B x for x (nb, 6); returns (nb, 6)."""
        y = np.zeros((self.nb, 6), dtype=np.result_type(self.blocks, x))
        for (a, b), blk in zip(self.pairs, self.blocks, strict=True):
            y[a] += blk @ x[b]
        return y

    def diagonal_blocks(self) -> np.ndarray:
        """The block diagonal (nb, 6, 6) (the per-body blocks a preconditioner uses)."""
        out = np.zeros((self.nb, 6, 6), dtype=self.blocks.dtype)
        for (a, b), blk in zip(self.pairs, self.blocks, strict=True):
            if a == b:
                out[a] += blk
        return out

    def dense(self) -> np.ndarray:
        """The (6 nb, 6 nb) matrix."""
        M = np.zeros((6 * self.nb, 6 * self.nb), dtype=self.blocks.dtype)
        for (a, b), blk in zip(self.pairs, self.blocks, strict=True):
            M[6 * a:6 * a + 6, 6 * b:6 * b + 6] += blk
        return M


@dataclass
class DofBlocks:
    """A (ndof, ndof) matrix as dense blocks on DOF index lists (duplicates add).

    Attributes:
        ndof: size.  items: list of ``(dofs (k,) int64, block (k, k))``.
    """

    ndof: int
    items: list = field(default_factory=list)

    def add(self, dofs, block) -> None:
        self.items.append((np.asarray(dofs, dtype=np.int64), np.asarray(block)))

    def add_diagonal(self, d: np.ndarray) -> None:
        nz = np.flatnonzero(d)
        for a in nz:
            self.items.append((np.array([a], dtype=np.int64), np.array([[d[a]]])))

    def __add__(self, other: DofBlocks) -> DofBlocks:
        return DofBlocks(self.ndof, self.items + other.items)

    def diagonal(self) -> np.ndarray:
        out = np.zeros(self.ndof, dtype=np.result_type(float, *[b for _, b in self.items]))
        for dofs, blk in self.items:
            out[dofs] += np.diag(blk)
        return out

    def matvec(self, x: np.ndarray) -> np.ndarray:
        y = np.zeros(self.ndof, dtype=np.result_type(x, float, *[b for _, b in self.items]))
        for dofs, blk in self.items:
            y[dofs] += blk @ x[dofs]
        return y

    def is_diagonal(self) -> bool:
        return all(b.shape[0] == 1 or not np.any(b - np.diag(np.diag(b))) for _, b in self.items)

    def dense(self) -> np.ndarray:
        M = np.zeros((self.ndof, self.ndof), dtype=np.result_type(float, *[b for _, b in self.items]))
        for dofs, blk in self.items:
            M[np.ix_(dofs, dofs)] += blk
        return M


@dataclass
class ForceOutput:
    """One force's output at one state: what the force is, ``(f, K, D)`` and its energy, with nothing of the
    integrator (the step forms ``f + D v`` and ``M + h D - h^2 K`` itself).

    Attributes:
        space: "maximal" or "reduced".  f: (nb, 6) world wrenches or (ndof,) generalized forces.
        K, D: BlockSparse (maximal) or DofBlocks (reduced), or None when not requested.
        energy: potential energy (0 for forces without one).
        f_rhs: deprecated and ignored (the integrator forms ``f + D v``); accepted so that forces written for
            earlier versions, which passed it fifth, keep working.
    """

    space: str
    f: np.ndarray
    K: object
    D: object
    f_rhs: object = None
    energy: float = 0.0

    def __post_init__(self):
        if self.f_rhs is not None:
            warnings.warn("ForceOutput's f_rhs is deprecated and ignored: the integrator forms f + D v from the "
                          "force's f and D; pass energy= by keyword", DeprecationWarning, stacklevel=3)
            self.f_rhs = None


class ForceTerms:
    """The sum of several forces' outputs at one state.

    Attributes:
        nb, ndof: sizes.  fm: (nb, 6) world wrenches.  fr: (ndof,).
        Km, Dm: BlockSparse (world).  Kr, Dr: DofBlocks.  energy: dict bucket -> value.
    """

    def __init__(self, nb: int, ndof: int, dtype=np.float64):
        self.nb = nb
        self.ndof = ndof
        self.fm = np.zeros((nb, 6), dtype=dtype)
        self.fr = np.zeros(ndof, dtype=dtype)
        self.Km = BlockSparse.empty(nb, dtype)
        self.Dm = BlockSparse.empty(nb, dtype)
        self.Kr = DofBlocks(ndof)
        self.Dr = DofBlocks(ndof)
        self.energy: dict[str, float] = {}

    def add(self, force, out: ForceOutput) -> None:
        """Accumulate one force's output."""
        if out.space == "maximal":
            self.fm = self.fm + out.f
            if out.K is not None:
                self.Km = self.Km + out.K
            if out.D is not None:
                self.Dm = self.Dm + out.D
        else:
            self.fr = self.fr + out.f
            if out.K is not None:
                self.Kr = self.Kr + out.K
            if out.D is not None:
                self.Dr = self.Dr + out.D
        if force.energy_key is not None:
            self.energy[force.energy_key] = self.energy.get(force.energy_key, 0.0) + float(np.real(out.energy))

    def rhs(self, kin) -> tuple[np.ndarray, np.ndarray]:
        """``f + D v``, what linearly implicit Euler puts on the right (RedMax Eq. 2): ((nb, 6) world wrenches
        ``fm + Dm V`` with the bodies' world twists ``V = Ad(E_wb) phi``, (ndof,) ``fr + Dr qd``), from the
        damping the forces reported (forces evaluated without D count as undamped)."""
        from redmax.spatial import Ad

        V = np.array([Ad(kin.E_wb[i]) @ kin.phi[i] for i in range(self.nb)]).reshape(self.nb, 6)
        fm = self.fm + self.Dm.matvec(V) if len(self.Dm.pairs) else self.fm
        fr = self.fr + self.Dr.matvec(kin.qd) if self.Dr.items else self.fr
        return fm, fr

    def fm_body(self, kin, rhs: bool = False) -> np.ndarray:
        """The maximal wrenches (``fm``, or ``fm + Dm V`` when ``rhs``; see :meth:`rhs`) in body frames (nb, 6):
        ``f_body = Ad(E_wb)^T f_world``."""
        from redmax.spatial import Ad

        f = self.rhs(kin)[0] if rhs else self.fm
        return np.array([Ad(kin.E_wb[i]).T @ f[i] for i in range(self.nb)]).reshape(self.nb, 6)

    def dense(self, kin=None, frame: str = "world") -> dict:
        """Dense matrices ``{"Km", "Dm", "Kr", "Dr"}``; ``frame="body"`` (needs ``kin``) gives Km and Dm with
        respect to body twists (RedMax's body-frame convention, notes §1.9)."""
        Km, Dm = self.Km.dense(), self.Dm.dense()
        if frame == "body":
            from redmax.spatial import Ad

            T = np.zeros((6 * self.nb, 6 * self.nb), dtype=np.result_type(Km, kin.E_wb))
            for i in range(self.nb):
                T[6 * i:6 * i + 6, 6 * i:6 * i + 6] = Ad(kin.E_wb[i])
            Km, Dm = T.T @ Km @ T, T.T @ Dm @ T
        elif frame != "world":
            raise ValueError(f"frame must be 'world' or 'body', got {frame!r}")
        return {"Km": Km, "Dm": Dm, "Kr": self.Kr.dense(), "Dr": self.Dr.dense()}
