"""Per-joint forward pass shared by the recursive algorithms (RNEA, hybrid dynamics, CRBA, M^-1).

Everything is expressed in joint frames (Kim 2012; RedMax supplemental §6): ``X_i = Ad(E_pj^-1)``
maps a twist from the parent joint frame to joint i's frame, ``X_i^T`` maps a wrench back.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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


@njit(cache=True)
def base_acceleration(gravity, dt):
    """Base spatial acceleration ``[0; -g]`` that applies gravity to every body (Featherstone's trick)."""
    a0 = np.zeros(6, dtype=dt)
    for k in range(3):
        a0[3 + k] = -gravity[k]
    return a0


@njit(cache=True)
def joint_wrenches(Ad_bj, f_body, dt):
    """Body-frame wrenches (nb,6) -> joint-frame wrenches ``Ad_bj^T f`` (nb,6)."""
    nb = Ad_bj.shape[0]
    out = np.zeros((nb, 6), dtype=dt)
    for i in range(nb):
        out[i] = Ad_bj[i].astype(dt).T @ f_body[i].astype(dt)
    return out
