"""Per-joint forward pass shared by the recursive algorithms (RNEA, hybrid dynamics, CRBA, M^-1).

Everything is expressed in joint frames (Kim 2012; RedMax supplemental §6): ``X_i = Ad(E_pj^-1)``
maps a twist from the parent joint frame to joint i's frame, ``X_i^T`` maps a wrench back.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from redmax.joints.dispatch import joint_calc
from redmax.spatial import Ad, compose, inv_se3


@njit(cache=True)
def joint_pass(jtype, idx, jp_off, jparam, E_pj0, q, qd, jstate):
    """Joint transforms to parent (X (nb,6,6)), S (6,ndof) and Sdot (6,ndof) in the dtype of q."""
    nb = jtype.shape[0]
    n = q.shape[0]
    dt = q.dtype
    X = np.zeros((nb, 6, 6), dtype=dt)
    S = np.zeros((6, n), dtype=dt)
    Sdot = np.zeros((6, n), dtype=dt)
    for i in range(nb):
        a = idx[i]
        b = idx[i + 1]
        Qi = np.zeros((4, 4), dtype=dt)
        Si = np.zeros((6, b - a), dtype=dt)
        Sdi = np.zeros((6, b - a), dtype=dt)
        joint_calc(jtype[i], jparam[jp_off[i] : jp_off[i + 1]], q[a:b], qd[a:b], jstate[i], Qi, Si, Sdi)
        S[:, a:b] = Si
        Sdot[:, a:b] = Sdi
        X[i] = Ad(inv_se3(compose(E_pj0[i].astype(dt), Qi)))
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
