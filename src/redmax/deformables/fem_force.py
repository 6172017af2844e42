"""The elastic force of a tetrahedral mesh on the bodies that carry its nodes (a maximal force).

Every node sits at the origin of a body's joint frame (a free node's own body, or the attachment body of an
eliminated node, at the node's point) or at a fixed world point.  Per element the kernel gathers the node positions
and velocities, evaluates the element's forces ``F_a = -dE/dx_a`` and ``H = dF/dx`` (:mod:`.elements`), adds the
stiffness-proportional Rayleigh damping ``beta H xd`` (its coefficient ``dF/dxd = beta H``), and maps the point
forces to world wrenches and 6x6 blocks with the same point-force machinery as springs
(:func:`redmax.forces._points.map_point_law`: exact, including the moment-arm terms of nodes carried by rotating
bodies).  The step integrates it like any force (RedMax Eq. 2: ``f`` on the right, ``J^T (h D - h^2 K) J`` on the
left).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.deformables.elements import element_terms
from redmax.errors import ModelError
from redmax.forces._points import MAP_SCRATCH, MODE_SYMMETRIC, map_point_law, point_xv
from redmax.forces.base import Force
from redmax.forces.terms import BlockSparse, ForceOutput

__all__ = ["FEMForce", "fem_forces"]


@njit(cache=True)
def fem_forces(code, mu, lam, beta, tets, node_body, node_r, dN, w, Rw, pw, Vw, mode, want_blocks, fw, bpair, bK, bD,
               scratch):
    """Accumulate the mesh's wrenches into ``fw`` (nb, 6); with ``want_blocks`` write the K and D blocks of each
    body pair (``bpair`` (cap, 2), ``bK``, ``bD`` (cap, 6, 6); D is zero without Rayleigh damping).

    Args:
        code: material (0 co-rotated, 1 stable neo-Hookean).  mu, lam: Lamé parameters.  beta: Rayleigh stiffness
            coefficient.  tets (m, nn): node numbers (from 0).  node_body (n,): body of each node (-1: the world).
        node_r (n, 3): node points in their body's joint frame (world points for the world).
        dN (m, nq, nn, 3), w (m, nq): material shape gradients and quadrature weights (:func:`.elements.precompute`).
        Rw (nb, 9), pw (nb, 3), Vw (nb, 6): world joint frames and twists.  mode: stiffness mode of the mapping.
    Returns:
        (elastic energy, number of blocks).
    """
    m, nn = tets.shape
    x = np.empty((nn, 3))
    xd = np.empty((nn, 3))
    F = np.empty((nn, 3))
    H = np.empty((nn, nn, 3, 3))
    Hd = np.zeros((nn, nn, 3, 3))
    bodies = np.empty(nn, dtype=np.int64)
    e = 0.0
    nblk = 0
    damped = beta > 0.0
    for el in range(m):
        for a in range(nn):
            nd = tets[el, a]
            b = node_body[nd]
            bodies[a] = b
            x0, x1, x2, v0, v1, v2 = point_xv(Rw, pw, Vw, b, node_r[nd])
            x[a, 0] = x0
            x[a, 1] = x1
            x[a, 2] = x2
            xd[a, 0] = v0
            xd[a, 1] = v1
            xd[a, 2] = v2
        e += element_terms(code, mu, lam, x, dN[el], w[el], F, H, want_blocks or damped)
        if damped:
            for a in range(nn):
                for b in range(nn):
                    for r in range(3):
                        for c in range(3):
                            Hd[a, b, r, c] = beta * H[a, b, r, c]
                for r in range(3):
                    acc = 0.0
                    for b in range(nn):
                        for c in range(3):
                            acc += Hd[a, b, r, c] * xd[b, c]
                    F[a, r] += acc
        nblk = map_point_law(bodies, x, xd, F, H, Hd, False, mode, fw, want_blocks, bpair, bK, bD, nblk, scratch)
    return e, nblk


class FEMForce(Force):
    """Elastic (and Rayleigh stiffness-damping) forces of one tetrahedral mesh; energy bucket ``deformable``.

    Built by :meth:`redmax.ModelBuilder.build` from a :class:`redmax.deformables.FEM`; its nodes are named by
    their bodies (``node_bodies``) and points (``node_points``, joint frames), resolved when the model is built.
    """

    space = "maximal"
    energy_key = "deformable"
    mode = MODE_SYMMETRIC

    def __init__(self, name: str, node_bodies, node_points, tets, dN, w, code: int, mu: float, lam: float,
                 beta: float = 0.0):
        self.name = name
        self.node_bodies = list(node_bodies)
        self.node_r = np.ascontiguousarray(node_points, dtype=float)
        self.tets = np.ascontiguousarray(tets, dtype=np.int64)
        self.dN = np.ascontiguousarray(dN, dtype=float)
        self.w = np.ascontiguousarray(w, dtype=float)
        self.code, self.mu, self.lam, self.beta = int(code), float(mu), float(lam), float(beta)
        self.node_body = None

    def initialize(self, model, kin) -> None:
        index = {n: i for i, n in enumerate(model.body_names)}
        try:
            self.node_body = np.array([-1 if b is None else index[b] for b in self.node_bodies], dtype=np.int64)
        except KeyError as e:
            raise ModelError(f"force '{self.name}': unknown body {e.args[0]!r}") from None

    def program(self, model):
        return None  # evaluated by its own kernel (the step's Python-force path)

    @property
    def nblocks(self) -> int:
        return self.tets.shape[0] * self.tets.shape[1] ** 2

    def evaluate(self, model, kin, t: float = 0.0, want_K: bool = True, want_D: bool = True) -> ForceOutput:
        from redmax.forces.evaluate import world_arrays

        Rw, pw, Vw = (np.ascontiguousarray(a.real, dtype=float) for a in world_arrays(model, kin))
        nb = model.nb
        want = bool(want_K or want_D)
        cap = self.nblocks if want else 1
        fw = np.zeros((nb, 6))
        bpair = np.zeros((cap, 2), dtype=np.int64)
        bK = np.zeros((cap, 6, 6))
        bD = np.zeros((cap, 6, 6))
        e, nblk = fem_forces(self.code, self.mu, self.lam, self.beta, self.tets, self.node_body, self.node_r, self.dN,
                             self.w, Rw, pw, Vw, self.mode, want, fw, bpair, bK, bD, np.zeros(MAP_SCRATCH))
        if not np.isfinite(e):
            raise ModelError(f"force '{self.name}': the elastic energy is not finite (an element degenerated)")
        K = BlockSparse(nb, bpair[:nblk].copy(), bK[:nblk].copy()) if want_K else None
        D = None
        if want_D:
            D = BlockSparse(nb, bpair[:nblk].copy(), bD[:nblk].copy()) if self.beta > 0 else BlockSparse.empty(nb)
        return ForceOutput("maximal", fw, K, D, energy=float(e))

    def energy(self, model, kin) -> float:
        return float(self.evaluate(model, kin, 0.0, False, False).energy)
