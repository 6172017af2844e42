"""Per-joint transforms for the O(n)-per-right-hand-side M^-1 products (notes Algorithm 10).

Everything is expressed in joint frames (Kim 2012; RedMax supplemental §6): ``X_i = Ad(E_pj^-1)``
maps a twist from the parent joint frame to joint i's frame, ``X_i^T`` maps a wrench back.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.kinematics import joint_pass as kin_joint_pass
from redmax.spatial import Ad, inv_se3


@njit(cache=True)
def joint_pass(jtype, idx, jp_off, jparam, E_pj0, q, qd, jstate):
    """``X_i = Ad(E_pj^-1)`` (nb,6,6), S (6,ndof) and Sdot (6,ndof) in the dtype of q."""
    E_pj, S, Sdot = kin_joint_pass(jtype, idx, jp_off, jparam, E_pj0, q, qd, jstate)
    nb = jtype.shape[0]
    X = np.zeros((nb, 6, 6), dtype=q.dtype)
    for i in range(nb):
        X[i] = Ad(inv_se3(E_pj[i]))
    return X, S, Sdot
