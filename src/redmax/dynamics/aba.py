"""Recursive hybrid dynamics of Kim & Pollard (2011), RedMax supplemental Algorithm 6, on the packed model.

Joints marked ``prescribed`` take their acceleration as input and return the torque that produces
it; the others take their torque and return their acceleration.  With no prescribed joint this is the
articulated-body algorithm (forward dynamics).  Joint frames throughout; gravity enters through the
base acceleration ``[0; -g]`` instead of a per-body external force (same physics, fewer products).

Backward pass (lines 6-17):  ``Mhat_j = M_j + sum_c X_c^T Pi_c X_c``,
``Bhat_j = -ad(V_j)^T M_j V_j - F_ext_j + sum_c X_c^T beta_c``, then either
``Pi = Mhat, beta = Bhat + Mhat (eta + S qdd)`` (prescribed) or, with ``U = Mhat S``,
``Psi = (S^T U)^-1, Pi = Mhat - U Psi U^T, beta = Bhat + Mhat eta + U Psi (tau - U^T eta - S^T Bhat)``.
Forward pass (lines 18-28) gives qdd (or tau) and the joint accelerations.
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
    small_inverse,
    sub_cross_force,
)
from redmax.dynamics.rnea import check_inputs


@njit(cache=True)
def congruence_add(W, r, pp, P, dst):
    """W[dst] (6x6) += X^T P X with ``X = Ad(E^-1) = [[R^T, 0], [-R^T [p], R^T]]`` for E = (W[r], W[pp])."""
    # Z = -R^T [p]  (3x3), X = [[Rt, 0], [Z, Rt]]
    Rt = np.empty((3, 3), dtype=W.dtype)
    for k in range(3):
        for l in range(3):
            Rt[k, l] = W[r + 3 * l + k]
    p0 = W[pp]
    p1 = W[pp + 1]
    p2 = W[pp + 2]
    Z = np.empty((3, 3), dtype=W.dtype)
    for k in range(3):
        # row k of -R^T [p]: -(Rt[k,0]*[p]row0 + ...), [p] = [[0,-p2,p1],[p2,0,-p0],[-p1,p0,0]]
        Z[k, 0] = -(Rt[k, 1] * p2 - Rt[k, 2] * p1)
        Z[k, 1] = -(-Rt[k, 0] * p2 + Rt[k, 2] * p0)
        Z[k, 2] = -(Rt[k, 0] * p1 - Rt[k, 1] * p0)
    PX = np.empty((6, 6), dtype=W.dtype)
    for k in range(6):
        for l in range(3):
            s1 = 0.0
            s2 = 0.0
            for m in range(3):
                s1 += W[P + 6 * k + m] * Rt[m, l] + W[P + 6 * k + 3 + m] * Z[m, l]
                s2 += W[P + 6 * k + 3 + m] * Rt[m, l]
            PX[k, l] = s1
            PX[k, 3 + l] = s2
    for k in range(3):
        for l in range(6):
            s1 = 0.0
            s2 = 0.0
            for m in range(3):
                s1 += Rt[m, k] * PX[m, l] + Z[m, k] * PX[3 + m, l]
                s2 += Rt[m, k] * PX[3 + m, l]
            W[dst + 6 * k + l] += s1
            W[dst + 6 * (3 + k) + l] += s2


@njit(cache=True)
def hybrid_kernel(Ii, Ff, q, qd, tau_in, qdd_in, prescribed, jstate, f_body, gscale):
    """Hybrid dynamics: returns (qdd (n,), tau (n,)).  ``prescribed`` (nb,) bool; ``f_body`` (nb, 6) or (0, 6)."""
    check_inputs(Ii, q, qd, tau_in, jstate, f_body)
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    if qdd_in.shape[0] != n or prescribed.shape[0] != nb:
        raise ValueError("size")
    wR = 0
    wp = 9 * nb
    wV = 12 * nb
    wE = 18 * nb  # eta
    wB = 24 * nb  # Bhat
    wD = 30 * nb  # Vdot
    wH = 36 * nb  # scratch 6 per body
    wM = 42 * nb  # Mhat 36 per body
    wP = 78 * nb  # Psi 36 per body
    wS = 114 * nb  # S (6 per dof)
    wU = wS + 6 * n  # U (6 per dof)
    wT = wU + 6 * n  # scratch 36
    W = np.empty(wT + 72, dtype=q.dtype)
    qdd = np.empty(n, dtype=q.dtype)
    tau = np.empty(n, dtype=q.dtype)
    for k in range(n):
        qdd[k] = qdd_in[k]
        tau[k] = tau_in[k]
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        r = wR + 9 * i
        pp = wp + 3 * i
        v = wV + 6 * i
        e = wE + 6 * i
        h = wH + 6 * i
        typ = Ii[o_typ + i]
        if typ <= SIMPLE_MAX:
            simple_motion(Ii, Ff, i, typ, q, W, r, pp, wS + 6 * a, e)
        else:
            generic_motion(Ii, Ff, i, typ, q, qd, jstate, W, r, pp, wS + 6 * a, e)  # e <- Sdot qd
        par = Ii[o_par + i]
        if par >= 0:
            motion_to_child(W, r, pp, wV + 6 * par, v)
        else:
            for k in range(6):
                W[v + k] = 0.0
        for k in range(6):
            W[h + k] = 0.0
        for d in range(a, b):
            for k in range(6):
                W[h + k] += W[wS + 6 * d + k] * qd[d]
        for k in range(6):
            W[v + k] += W[h + k]
        add_cross_motion(W, v, h, e)  # eta = ad(V) S qd + Sdot qd
        # Mhat = M, Bhat = -ad(V)^T M V - F_ext
        M = f_M + 36 * i
        mh = wM + 36 * i
        bh = wB + 6 * i
        for k in range(36):
            W[mh + k] = Ff[M + k]
        for k in range(6):
            s1 = 0.0
            for l in range(6):
                s1 += Ff[M + 6 * k + l] * W[v + l]
            W[h + k] = s1
            W[bh + k] = 0.0
        sub_cross_force(W, v, h, bh)
        if f_body.shape[0] != 0:
            A = f_A + 36 * i
            for k in range(6):
                s1 = 0.0
                for l in range(6):
                    s1 += Ff[A + 6 * l + k] * f_body[i, l]
                W[bh + k] -= s1
    for i in range(nb - 1, -1, -1):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        nj = b - a
        mh = wM + 36 * i
        bh = wB + 6 * i
        e = wE + 6 * i
        h = wH + 6 * i
        Pi = wT  # scratch 6x6 holding Pi
        # beta into h
        for k in range(6):
            s1 = 0.0
            for l in range(6):
                s1 += W[mh + 6 * k + l] * W[e + l]
            W[h + k] = W[bh + k] + s1  # Bhat + Mhat eta
        for k in range(36):
            W[Pi + k] = W[mh + k]
        if prescribed[i] or nj == 0:
            for d in range(a, b):
                for k in range(6):
                    s1 = 0.0
                    for l in range(6):
                        s1 += W[mh + 6 * k + l] * W[wS + 6 * d + l]
                    W[h + k] += s1 * qdd[d]
        else:
            for d in range(a, b):  # U = Mhat S
                for k in range(6):
                    s1 = 0.0
                    for l in range(6):
                        s1 += W[mh + 6 * k + l] * W[wS + 6 * d + l]
                    W[wU + 6 * d + k] = s1
            D = wT + 36  # n_j x n_j (<= 6 x 6)
            for r1 in range(nj):
                for c1 in range(nj):
                    s1 = 0.0
                    for k in range(6):
                        s1 += W[wS + 6 * (a + r1) + k] * W[wU + 6 * (a + c1) + k]
                    W[D + nj * r1 + c1] = s1
            small_inverse(W, D, wP + 36 * i, nj)
            # u = tau - U^T eta - S^T Bhat  (into D, reused)
            for r1 in range(nj):
                s1 = tau[a + r1]
                for k in range(6):
                    s1 -= W[wU + 6 * (a + r1) + k] * W[e + k] + W[wS + 6 * (a + r1) + k] * W[bh + k]
                W[D + r1] = s1
            # Pi -= U Psi U^T; beta += U Psi u
            for r1 in range(nj):
                pu = 0.0
                for c1 in range(nj):
                    pu += W[wP + 36 * i + nj * r1 + c1] * W[D + c1]
                for k in range(6):
                    W[h + k] += W[wU + 6 * (a + r1) + k] * pu
            for r1 in range(nj):
                for c1 in range(nj):
                    ps = W[wP + 36 * i + nj * r1 + c1]
                    for k in range(6):
                        uk = W[wU + 6 * (a + r1) + k] * ps
                        for l in range(6):
                            W[Pi + 6 * k + l] -= uk * W[wU + 6 * (a + c1) + l]
        par = Ii[o_par + i]
        if par >= 0:
            congruence_add(W, wR + 9 * i, wp + 3 * i, Pi, wM + 36 * par)
            force_to_parent_add(W, wR + 9 * i, wp + 3 * i, h, wB + 6 * par)
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        nj = b - a
        r = wR + 9 * i
        pp = wp + 3 * i
        vd = wD + 6 * i
        e = wE + 6 * i
        mh = wM + 36 * i
        bh = wB + 6 * i
        par = Ii[o_par + i]
        if par >= 0:
            motion_to_child(W, r, pp, wD + 6 * par, vd)
        else:
            g = wT
            for k in range(3):
                W[g + k] = 0.0
                W[g + 3 + k] = -gscale * Ff[f_g + k]
            motion_to_child(W, r, pp, g, vd)
        if prescribed[i] or nj == 0:
            for k in range(6):
                W[vd + k] += W[e + k]
            for d in range(a, b):
                for k in range(6):
                    W[vd + k] += W[wS + 6 * d + k] * qdd[d]
            for d in range(a, b):  # tau = S^T (Mhat Vdot + Bhat)
                s1 = 0.0
                for k in range(6):
                    mv = W[bh + k]
                    for l in range(6):
                        mv += W[mh + 6 * k + l] * W[vd + l]
                    s1 += W[wS + 6 * d + k] * mv
                tau[d] = s1
        else:
            u = wT
            for r1 in range(nj):  # u = tau - U^T (X Vdot_p + eta) - S^T Bhat
                s1 = tau[a + r1]
                for k in range(6):
                    s1 -= W[wU + 6 * (a + r1) + k] * (W[vd + k] + W[e + k]) + W[wS + 6 * (a + r1) + k] * W[bh + k]
                W[u + r1] = s1
            for r1 in range(nj):
                s1 = 0.0
                for c1 in range(nj):
                    s1 += W[wP + 36 * i + nj * r1 + c1] * W[u + c1]
                qdd[a + r1] = s1
            for k in range(6):
                W[vd + k] += W[e + k]
            for d in range(a, b):
                for k in range(6):
                    W[vd + k] += W[wS + 6 * d + k] * qdd[d]
    return qdd, tau
