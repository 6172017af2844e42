"""Composite rigid-body algorithm: the joint-space inertia matrix M(q) = J^T Mm J in O(n d).

Composite inertias in joint frames, ``Ic_p += X_i^T Ic_i X_i`` (backward), then for each joint the
force ``F = Ic_i S_i`` is carried up the ancestors, ``F <- X_j^T F``, filling ``M[j, i] = S_j^T F``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from redmax.dynamics._tree import joint_pass


@njit(cache=True)
def crba_kernel(parent, jtype, idx, jp_off, jparam, E_pj0, M_joint, q, jstate):
    """Joint-space inertia matrix (ndof, ndof), symmetric."""
    nb = parent.shape[0]
    n = q.shape[0]
    dt = q.dtype
    qd = np.zeros(n, dtype=dt)
    X, S, _ = joint_pass(jtype, idx, jp_off, jparam, E_pj0, q, qd, jstate)
    Ic = np.zeros((nb, 6, 6), dtype=dt)
    for i in range(nb):
        Ic[i] = M_joint[i].astype(dt)
    for i in range(nb - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            Ic[p] += X[i].T @ Ic[i] @ X[i]
    M = np.zeros((n, n), dtype=dt)
    for i in range(nb):
        a = idx[i]
        b = idx[i + 1]
        if b == a:
            continue
        F = Ic[i] @ np.ascontiguousarray(S[:, a:b])
        D = np.ascontiguousarray(S[:, a:b]).T @ F
        M[a:b, a:b] = 0.5 * (D + D.T)  # exactly symmetric
        j = i
        while parent[j] >= 0:
            F = X[j].T @ F
            j = parent[j]
            c = idx[j]
            d = idx[j + 1]
            if d > c:
                blk = np.ascontiguousarray(S[:, c:d]).T @ F
                M[c:d, a:b] = blk
                M[a:b, c:d] = blk.T
    return M
