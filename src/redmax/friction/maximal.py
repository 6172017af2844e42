"""The maximal side of a linearised step that friction needs (RedMax paper §5, Sueda's notes §2.11): the bodies'
world twists, the system ``Mt = M_m + h D_m - h^2 K_m`` (6 nb x 6 nb, sparse, factorised once per step) and its
right-hand side ``ft = M_m V0 + h f_m``, contact rows ``[x x d; d]`` on the twists (world frame, at the origin),
and wrench transforms between the world and the bodies' joint frames.

Frames: twists ``V = (omega, v)`` and wrenches ``f = (n, f)`` of each body in world coordinates at the world
origin, as the step's kernels use them (``redmax.integrators._stages``); a body's joint frame (R, p) is read from
the kinematics workspace.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from redmax._kernels.workspace import work_offsets
from redmax.errors import SimulationError
from redmax.integrators._stages import inertia_world

__all__ = ["MaximalSystem", "frames", "point_rows", "to_local", "to_world"]


def frames(model, W):
    """``(R (nb, 3, 3), p (nb, 3))``: the bodies' joint frames in the world."""
    nb = model.nb
    o = work_offsets(nb, int(model.idx[-1]))
    return W[o.wR:o.wR + 9 * nb].reshape(nb, 3, 3), W[o.wp:o.wp + 3 * nb].reshape(nb, 3)


def to_local(R, p, f):
    """World wrenches (nb, 6) at the origin -> the same wrenches in each body's joint frame (``Ad^T f``)."""
    n, F = f[:, :3], f[:, 3:]
    nl = np.einsum("kji,kj->ki", R, n + np.cross(F, p))  # R^T (n - p x F)
    Fl = np.einsum("kji,kj->ki", R, F)
    return np.concatenate([nl, Fl], axis=1)


def to_world(R, p, f):
    """Inverse of :func:`to_local`."""
    nl, Fl = f[:, :3], f[:, 3:]
    F = np.einsum("kij,kj->ki", R, Fl)
    n = np.einsum("kij,kj->ki", R, nl) + np.cross(p, F)
    return np.concatenate([n, F], axis=1)


def point_rows(x, d):
    """Rows (k, 6) ``d . (v + omega x x) = [x x d; d] . V`` of world points x (k, 3) along directions d (k, 3)."""
    return np.concatenate([np.cross(x, d), d], axis=1)


class MaximalSystem:
    """``Mt`` and ``ft`` of one step and solves with ``Mt`` (SuperLU of the sparse 6 nb x 6 nb matrix).

    Args:
        model: the coordinate model.  step: its :class:`redmax.integrators.step.LinearizedStep` (with
            ``fm_rhs``, the world wrenches as they enter the right-hand side).
    Attributes:
        I (nb, 6, 6): world inertias.  V0 (nb, 6): twists at the start.  ft (6 nb,).  Mt (csc).
    """

    def __init__(self, model, step):
        nb = model.nb
        self.nb = nb
        Ii, _ = model.packed
        W = step.W
        I = np.zeros((nb, 6, 6))
        E = np.zeros((nb, 6))
        out = np.zeros((nb, 6))
        for k in range(6):
            E[:] = 0.0
            E[:, k] = 1.0
            inertia_world(Ii, W, E, out)
            I[:, :, k] = out
        self.I = I
        self.V0 = step.J(step.qd)
        g = np.asarray(model.gravity, float)
        grav = np.einsum("kij,j->ki", I[:, :, 3:], g)  # I (0, g)
        P = np.einsum("kij,kj->ki", I, self.V0)
        w, v = self.V0[:, :3], self.V0[:, 3:]
        cor = -np.concatenate([np.cross(w, P[:, :3]) + np.cross(v, P[:, 3:]), np.cross(w, P[:, 3:])], axis=1)
        fm = step.fm_rhs if step.fm_rhs is not None else step.fm
        self.fm = grav + cor + fm  # f_m (nb, 6)
        h = step.h
        self.ft = (P + h * self.fm).reshape(-1)
        rows, cols, vals = [], [], []
        base = 6 * np.arange(nb)
        ii, jj = np.meshgrid(np.arange(6), np.arange(6), indexing="ij")
        for i in range(nb):
            rows.append(base[i] + ii.ravel())
            cols.append(base[i] + jj.ravel())
            vals.append(I[i].ravel())
        for (a, c), blk in zip(step.bpair, step.bB, strict=True):
            if a < 0 or c < 0:
                continue
            rows.append(base[a] + ii.ravel())
            cols.append(base[c] + jj.ravel())
            vals.append(np.asarray(blk).ravel())
        n6 = 6 * nb
        self.Mt = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n6, n6))
        try:
            self._lu = splu(self.Mt)
        except RuntimeError as e:
            raise SimulationError(f"{model.name}: friction: the maximal system M + h D - h^2 K is singular ({e}); "
                                  "every body needs mass and inertia") from None

    def solve(self, rhs):
        """``Mt^-1 rhs`` for rhs (6 nb,) or (6 nb, k)."""
        return self._lu.solve(np.asarray(rhs, dtype=float))
