"""The exact velocity Jacobian of the quadratic velocity terms, ``dc/dqd`` (n, n), in O(n d) (world frame).

``c(q, v)`` is the bias of the equations of motion without gravity (Coriolis, centrifugal, gyroscopic):
``c_d = S_d . sum_{b in sub(d)} f_b`` with ``f_b = I_b a_b + V_b x* I_b V_b`` and velocity-product accelerations
``a_b = sum_{j <= b} (V_p(j) x S_j v_j + Sdot_j v_j)`` (world, at the origin).  Differentiating with respect to a
rate ``v_m`` of joint mu (``S_m`` its column):

    da_b/dv_m = S_m x V_b - S_m x (V_mu + V_p(mu)) + psi_m        for b in sub(mu), else 0,
    df_b/dv_m = B_b S_m + I_b (psi_m - S_m x (V_mu + V_p(mu))),
    B_b x = I_b (x x V_b) + x x* (I_b V_b) + V_b x* (I_b x)      (linear in x),

with ``psi_m = d(Sdot_mu v_mu)/dv_m`` (zero for joints whose joint-frame S is constant).  With the composites
``B^C_i = sum_{b in sub(i)} B_b``, ``I^C_i``:

* for d in the subtree of mu's ancestors-or-self (d <= mu):  ``dc_d/dv_m = S_d . (B^C_mu S_m + I^C_mu x_m)``;
* for d strictly below mu:  ``dc_d/dv_m = (B^C_i^T S_d) . S_m + (I^C_i S_d) . x_m`` (i the joint of d),

where ``x_m = psi_m - S_m x (V_mu + V_p(mu))``.  ``psi_m`` comes from the joint kernel by polarisation
(``Sdot(v) v`` is quadratic in the joint's own rates, so the central difference is exact up to rounding).
This is the derivative MuJoCo's ``implicit`` integrator linearises with (RNEA velocity derivative).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax._kernels.borrow import read_only
from redmax._kernels.workspace import work_offsets
from redmax.dynamics._world_pass import generic_motion_gated
from redmax.model.layout import SIMPLE_MAX, offsets

__all__ = ["bias_velocity_jacobian"]


@njit(cache=True)
def _crm(V, out):
    """out (6,6) = crm(V) = [[w], 0; [v], [w]] (motion cross product matrix)."""
    for r in range(6):
        for c in range(6):
            out[r, c] = 0.0
    w0, w1, w2, v0, v1, v2 = V[0], V[1], V[2], V[3], V[4], V[5]
    for o in range(0, 6, 3):
        out[o + 0, o + 1] = -w2
        out[o + 0, o + 2] = w1
        out[o + 1, o + 0] = w2
        out[o + 1, o + 2] = -w0
        out[o + 2, o + 0] = -w1
        out[o + 2, o + 1] = w0
    out[3, 1] = -v2
    out[3, 2] = v1
    out[4, 0] = v2
    out[4, 2] = -v0
    out[5, 0] = -v1
    out[5, 1] = v0


@njit(cache=True)
def _inertia6(c, out):
    """Full 6x6 inertia about the origin from the compact form c (10,)."""
    m, h0, h1, h2 = c[0], c[1], c[2], c[3]
    out[0, 0] = c[4]
    out[0, 1] = c[5]
    out[0, 2] = c[6]
    out[1, 0] = c[5]
    out[1, 1] = c[7]
    out[1, 2] = c[8]
    out[2, 0] = c[6]
    out[2, 1] = c[8]
    out[2, 2] = c[9]
    H = np.zeros((3, 3))
    H[0, 1] = -h2
    H[0, 2] = h1
    H[1, 0] = h2
    H[1, 2] = -h0
    H[2, 0] = -h1
    H[2, 1] = h0
    for r in range(3):
        for s in range(3):
            out[r, 3 + s] = H[r, s]
            out[3 + r, s] = H[s, r]
            out[3 + r, 3 + s] = m if r == s else 0.0


@njit(cache=True)
def bias_velocity_jacobian(Ii, Ff, W, q, qd, jstate, C):
    """``C = dc/dqd`` (n, n) at the state of the kinematics stage held in W (see the module docstring)."""
    nb = Ii[0]
    n = Ii[1]
    L = offsets(Ii)
    o = work_offsets(nb, n)
    IC = np.zeros((nb, 6, 6))
    BC = np.zeros((nb, 6, 6))
    X = np.zeros((n, 6))
    Ib = np.zeros((6, 6))
    Cm = np.zeros((6, 6))
    tmp = np.zeros((6, 6))
    hv = np.zeros(6)
    for b in range(nb):
        _inertia6(W[o.wI + 10 * b:o.wI + 10 * b + 10], Ib)
        V = W[o.wV + 6 * b:o.wV + 6 * b + 6]
        _crm(V, Cm)
        # B x = -I crm(V) x - bar(h) x + crf(V) I x,  crf(V) = -crm(V)^T,  bar(h) x = [h_n x x_w + h_f x x_v; h_f x x_w]
        # (the products written out: no matrix-product or shape-checking code to compile)
        for r in range(6):
            for c in range(6):
                s = 0.0
                for k in range(6):
                    s -= Ib[r, k] * Cm[k, c] + Cm[k, r] * Ib[k, c]
                tmp[r, c] = s
        for r in range(6):  # momentum h = I V (n; f)
            hv[r] = (Ib[r, 0] * V[0] + Ib[r, 1] * V[1] + Ib[r, 2] * V[2] + Ib[r, 3] * V[3] + Ib[r, 4] * V[4]
                     + Ib[r, 5] * V[5])
        hn0, hn1, hn2, hf0, hf1, hf2 = hv[0], hv[1], hv[2], hv[3], hv[4], hv[5]
        # - bar(h): x_w column block: -[h_n] (top) and -[h_f] (bottom); x_v column block: -[h_f] (top)
        tmp[0, 1] += hn2
        tmp[0, 2] -= hn1
        tmp[1, 0] -= hn2
        tmp[1, 2] += hn0
        tmp[2, 0] += hn1
        tmp[2, 1] -= hn0
        tmp[3, 1] += hf2
        tmp[3, 2] -= hf1
        tmp[4, 0] -= hf2
        tmp[4, 2] += hf0
        tmp[5, 0] += hf1
        tmp[5, 1] -= hf0
        tmp[0, 4] += hf2
        tmp[0, 5] -= hf1
        tmp[1, 3] -= hf2
        tmp[1, 5] += hf0
        tmp[2, 3] += hf1
        tmp[2, 4] -= hf0
        BC[b] += tmp
        IC[b] += Ib
    for b in range(nb - 1, 0, -1):
        p = Ii[L.o_par + b]
        if p >= 0:
            BC[p] += BC[b]
            IC[p] += IC[b]
    # x_m = psi_m - S_m x (V_mu + V_p(mu))
    sd = np.zeros(6)
    qp = np.empty(n, dtype=qd.dtype)
    for mu in range(nb):
        a = Ii[L.o_idx + mu]
        e = Ii[L.o_idx + mu + 1]
        par = Ii[L.o_par + mu]
        Wt = np.zeros(6)
        for k in range(6):
            Wt[k] = W[o.wV + 6 * mu + k] + (W[o.wV + 6 * par + k] if par >= 0 else 0.0)
        typ = Ii[L.o_typ + mu]
        for m in range(a, e):
            S = W[o.wS + 6 * m:o.wS + 6 * m + 6]
            # -S x Wt = Wt x S
            X[m, 0] = Wt[1] * S[2] - Wt[2] * S[1]
            X[m, 1] = Wt[2] * S[0] - Wt[0] * S[2]
            X[m, 2] = Wt[0] * S[1] - Wt[1] * S[0]
            X[m, 3] = Wt[1] * S[5] - Wt[2] * S[4] + Wt[4] * S[2] - Wt[5] * S[1]
            X[m, 4] = Wt[2] * S[3] - Wt[0] * S[5] + Wt[5] * S[0] - Wt[3] * S[2]
            X[m, 5] = Wt[0] * S[4] - Wt[1] * S[3] + Wt[3] * S[1] - Wt[4] * S[0]
            if typ > SIMPLE_MAX:
                Wj = np.zeros(18 + 6 * (e - a))
                # psi_m by polarisation of the joint's Sdot(v) v (quadratic in its own rates)
                eps = 0.0
                for k in range(a, e):
                    eps = max(eps, abs(qd[k]))
                eps = max(eps, 1.0)
                for sgn in (1.0, -1.0):
                    for k in range(n):
                        qp[k] = qd[k]
                    qp[m] += sgn * eps
                    generic_motion_gated(Ii, Ff, mu, typ, q, qp, read_only(jstate), Wj, 0, 9, 12, 12 + 6 * (e - a))
                    # rotate with the world joint frame: Ad(E_wj) [w; v] = [R w; p x R w + R v]
                    s0 = Wj[12 + 6 * (e - a)]
                    s1 = Wj[13 + 6 * (e - a)]
                    s2 = Wj[14 + 6 * (e - a)]
                    s3 = Wj[15 + 6 * (e - a)]
                    s4 = Wj[16 + 6 * (e - a)]
                    s5 = Wj[17 + 6 * (e - a)]
                    R = W[o.wR + 9 * mu:o.wR + 9 * mu + 9]
                    P = W[o.wp + 3 * mu:o.wp + 3 * mu + 3]
                    w0 = R[0] * s0 + R[1] * s1 + R[2] * s2
                    w1 = R[3] * s0 + R[4] * s1 + R[5] * s2
                    w2 = R[6] * s0 + R[7] * s1 + R[8] * s2
                    u0 = R[0] * s3 + R[1] * s4 + R[2] * s5 + P[1] * w2 - P[2] * w1
                    u1 = R[3] * s3 + R[4] * s4 + R[5] * s5 + P[2] * w0 - P[0] * w2
                    u2 = R[6] * s3 + R[7] * s4 + R[8] * s5 + P[0] * w1 - P[1] * w0
                    sd[0] = w0
                    sd[1] = w1
                    sd[2] = w2
                    sd[3] = u0
                    sd[4] = u1
                    sd[5] = u2
                    for k in range(6):
                        X[m, k] += sgn * sd[k] / (2.0 * eps)
    for k in range(n):
        for l in range(n):
            C[k, l] = 0.0
    g = np.zeros(6)
    u = np.zeros(6)
    w = np.zeros(6)
    for mu in range(nb):
        for m in range(Ii[L.o_idx + mu], Ii[L.o_idx + mu + 1]):
            S = W[o.wS + 6 * m:o.wS + 6 * m + 6]
            for r in range(6):
                acc = 0.0
                for s in range(6):
                    acc += BC[mu, r, s] * S[s] + IC[mu, r, s] * X[m, s]
                g[r] = acc
            j = mu
            while j >= 0:
                for d in range(Ii[L.o_idx + j], Ii[L.o_idx + j + 1]):
                    Sd = W[o.wS + 6 * d:o.wS + 6 * d + 6]
                    C[d, m] = Sd[0] * g[0] + Sd[1] * g[1] + Sd[2] * g[2] + Sd[3] * g[3] + Sd[4] * g[4] + Sd[5] * g[5]
                j = Ii[L.o_par + j]
    for i in range(nb):
        for d in range(Ii[L.o_idx + i], Ii[L.o_idx + i + 1]):
            Sd = W[o.wS + 6 * d:o.wS + 6 * d + 6]
            for r in range(6):
                a1 = 0.0
                a2 = 0.0
                for s in range(6):
                    a1 += BC[i, s, r] * Sd[s]
                    a2 += IC[i, r, s] * Sd[s]
                u[r] = a1
                w[r] = a2
            mu = Ii[L.o_par + i]
            while mu >= 0:
                for m in range(Ii[L.o_idx + mu], Ii[L.o_idx + mu + 1]):
                    S = W[o.wS + 6 * m:o.wS + 6 * m + 6]
                    acc = 0.0
                    for r in range(6):
                        acc += u[r] * S[r] + w[r] * X[m, r]
                    C[d, m] = acc
                mu = Ii[L.o_par + mu]
