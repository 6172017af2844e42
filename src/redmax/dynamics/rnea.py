"""Recursive Newton-Euler inverse dynamics (RNEA) in joint frames, on the packed model.

Forward pass (RedMax supplemental Alg. 6, lines 1-5, with the accelerations of lines 20-21):

    V_i = X_i V_p + S_i qd_i,   eta_i = ad(V_i) S_i qd_i + Sdot_i qd_i,
    A_i = X_i A_p + S_i qdd_i + eta_i,   F_i = M_i A_i - ad(V_i)^T M_i V_i - F_ext_i,

with ``X_i = Ad(E_pj^-1)`` and the base acceleration ``A_0 = [0; -g]`` carrying gravity.  Backward pass:
``tau_i = S_i^T F_i``, ``F_p += X_i^T F_i``.  Scalar-generic (complex step works).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from redmax.dynamics._packed import (
    SIMPLE_MAX,
    add_cross_motion,
    force_to_parent_add,
    generic_motion,
    motion_to_child,
    offsets,
    simple_motion,
    sub_cross_force,
)


@njit(cache=True)
def check_inputs(Ii, q, qd, qdd, jstate, f_body):
    """Raise ValueError for wrong sizes or non-finite values (messages are refined by the caller)."""
    nb = Ii[0]
    n = Ii[1]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n:
        raise ValueError("size")
    if jstate.shape[0] != nb:
        raise ValueError("jstate")
    if f_body.shape[0] != 0 and (f_body.shape[0] != nb or f_body.shape[1] != 6):
        raise ValueError("f_ext")
    for k in range(n):
        if not (np.isfinite(q[k]) and np.isfinite(qd[k]) and np.isfinite(qdd[k])):
            raise ValueError("nonfinite")
    for i in range(f_body.shape[0]):
        for k in range(6):
            if not np.isfinite(f_body[i, k]):
                raise ValueError("nonfinite f_ext")


@njit(cache=True)
def rnea_kernel(Ii, Ff, q, qd, qdd, jstate, f_body, gscale):
    """Joint torques (n,) for (q, qd, qdd); ``f_body`` (nb, 6) body-frame wrenches or (0, 6); gravity
    scaled by ``gscale`` (1 or 0)."""
    check_inputs(Ii, q, qd, qdd, jstate, f_body)
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    wR = 0
    wp = 9 * nb
    wV = 12 * nb
    wA = 18 * nb
    wF = 24 * nb
    wH = 30 * nb
    wS = 36 * nb
    wE = wS + 6 * n
    W = np.empty(wE + 6 * nb, dtype=q.dtype)
    tau = np.empty(n, dtype=q.dtype)
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        r = wR + 9 * i
        pp = wp + 3 * i
        v = wV + 6 * i
        acc = wA + 6 * i
        sdq = wE + 6 * i
        typ = Ii[o_typ + i]
        if typ <= SIMPLE_MAX:
            simple_motion(Ii, Ff, i, typ, q, W, r, pp, wS + 6 * a, sdq)
        else:
            generic_motion(Ii, Ff, i, typ, q, qd, jstate, W, r, pp, wS + 6 * a, sdq)  # sdq <- Sdot qd
        par = Ii[o_par + i]
        if par >= 0:
            motion_to_child(W, r, pp, wV + 6 * par, v)
            motion_to_child(W, r, pp, wA + 6 * par, acc)
        else:
            # V_0 = 0, A_0 = [0; -g] in the world frame
            h = wH + 6 * i  # scratch
            for k in range(3):
                W[h + k] = 0.0
                W[h + 3 + k] = -gscale * Ff[f_g + k]
            motion_to_child(W, r, pp, h, acc)
            for k in range(6):
                W[v + k] = 0.0
        # S qd into the scratch slot h, then V += S qd, A += S qdd + ad(V) S qd + Sdot qd
        h = wH + 6 * i
        for k in range(6):
            W[h + k] = 0.0
        for d in range(a, b):
            sd = wS + 6 * d
            for k in range(6):
                W[h + k] += W[sd + k] * qd[d]
                W[acc + k] += W[sd + k] * qdd[d]
        for k in range(6):
            W[v + k] += W[h + k]
            W[acc + k] += W[sdq + k]
        add_cross_motion(W, v, h, acc)
        # F = M A - ad(V)^T M V - F_ext
        M = f_M + 36 * i
        fw = wF + 6 * i
        for k in range(6):
            s1 = 0.0
            s2 = 0.0
            for l in range(6):
                s1 += Ff[M + 6 * k + l] * W[acc + l]
                s2 += Ff[M + 6 * k + l] * W[v + l]
            W[fw + k] = s1
            W[h + k] = s2
        sub_cross_force(W, v, h, fw)
        if f_body.shape[0] != 0:
            A = f_A + 36 * i
            for k in range(6):
                s1 = 0.0
                for l in range(6):
                    s1 += Ff[A + 6 * l + k] * f_body[i, l]
                W[fw + k] -= s1
    for i in range(nb - 1, -1, -1):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        fw = wF + 6 * i
        for d in range(a, b):
            sd = wS + 6 * d
            s1 = 0.0
            for k in range(6):
                s1 += W[sd + k] * W[fw + k]
            tau[d] = s1
        par = Ii[o_par + i]
        if par >= 0:
            force_to_parent_add(W, wR + 9 * i, wp + 3 * i, fw, wF + 6 * par)
    return tau
