"""Compiled per-joint contact solves of Bilateral Staggered Projections (RedMax paper §5.2; Sueda's notes Alg. 8,
line 17): for every joint or loop with contacts, independently,

    a = h (N M^-1 N^T + eps I)^-1 N M^-1 f_c,     s_k = sum over the normals of point k of |a|,

with N the normal rows of its contacts on the child's and parent's twists (world, at the origin), M^-1 the plain
inverse world inertias of the two bodies and ``f_c = (f, f_parent)`` the reaction wrenches.  Small (at most 16
normals), independent, and solved here without Python in the loop.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit

__all__ = ["contact_sums"]


@njit(cache=True)
def contact_sums(sets, xn, nw, nidx, Iinv, F, h, eps, s):
    """Normal-impulse sums of every contact point.

    Args:
        sets (ns, 5) int64: per joint or loop: child body, parent body (-1: the world), first normal, number of
            normals, first point (its points' entries in ``s``).
        xn (m, 3), nw (m, 3): world point and world normal of every normal; nidx (m,) int64: its point within its
            set.  Iinv (nb, 6, 6): inverse world inertias.  F (ns, 12): each set's wrench pair (child's, parent's).
        h: the step.  eps: the regularisation.  s (npt,): output (added to).
    """
    for k in range(sets.shape[0]):
        c = sets[k, 0]
        p = sets[k, 1]
        o = sets[k, 2]
        m = sets[k, 3]
        po = sets[k, 4]
        N = np.empty((m, 6))
        for r in range(m):
            x0, x1, x2 = xn[o + r, 0], xn[o + r, 1], xn[o + r, 2]
            n0, n1, n2 = nw[o + r, 0], nw[o + r, 1], nw[o + r, 2]
            N[r, 0] = x1 * n2 - x2 * n1
            N[r, 1] = x2 * n0 - x0 * n2
            N[r, 2] = x0 * n1 - x1 * n0
            N[r, 3] = n0
            N[r, 4] = n1
            N[r, 5] = n2
        Mc = Iinv[c]
        NM = N @ Mc  # (m, 6)
        A = NM @ N.T
        rhs = NM @ F[k, :6]
        if p >= 0:
            NMp = N @ Iinv[p]
            A += NMp @ N.T
            rhs -= NMp @ F[k, 6:]
        for r in range(m):
            A[r, r] += eps
        a = np.linalg.solve(A, rhs)
        for r in range(m):
            s[po + nidx[o + r]] += h * abs(a[r])
