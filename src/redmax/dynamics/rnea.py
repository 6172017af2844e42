"""Recursive Newton-Euler inverse dynamics (RNEA) in joint frames, on the packed model.

Forward pass (RedMax supplemental Alg. 6, lines 1-5, with the accelerations of lines 20-21):

    V_i = X_i V_p + S_i qd_i,   eta_i = ad(V_i) S_i qd_i + Sdot_i qd_i,
    A_i = X_i A_p + S_i qdd_i + eta_i,   F_i = M_i A_i - ad(V_i)^T M_i V_i - F_ext_i,

with ``X_i = Ad(E_pj^-1)`` and the base acceleration ``A_0 = [0; -g]`` carrying gravity.  Backward pass:
``tau_i = S_i^T F_i``, ``F_p += X_i^T F_i``.  Scalar-generic (complex step works).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax._kernels.registers import cross, get3, get6, get9, put3, put6, put9, rot
from redmax.dynamics._world_pass import generic_motion_gated, revolute_frame, simple_motion
from redmax.joints.simple import REVOLUTE
from redmax.model.layout import NO_FEXT, SIMPLE_MAX, armature_offset, initial_jstate, offsets


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


@njit(cache=True, inline="always")
def check_positions(Ii, q, jstate):
    """Raise ValueError for a wrong size of ``q`` or ``jstate`` or a non-finite ``q`` (kernels of q alone)."""
    if q.shape[0] != Ii[1] or jstate.shape[0] != Ii[0]:
        raise ValueError("size")
    for k in range(q.shape[0]):
        if not np.isfinite(q[k]):
            raise ValueError("nonfinite")


def rnea_work_size(nb: int, n: int) -> int:
    """Length of the workspace :func:`rnea_into` needs."""
    return 36 * nb + 6 * n + 1


@njit(cache=True, fastmath=FAST, inline="always")  # a thin wrapper: no compile level of its own
def rnea_kernel(Ii, Ff, q, qd, qdd, jstate, f_body, gscale):
    """Joint torques (n,) for (q, qd, qdd); ``f_body`` (nb, 6) body-frame wrenches or (0, 6); gravity
    scaled by ``gscale`` (1 or 0).  Allocates its workspace and result, see :func:`rnea_into`."""
    check_inputs(Ii, q, qd, qdd, jstate, f_body)
    W = np.empty(36 * Ii[0] + 6 * Ii[1] + 1, dtype=q.dtype)
    tau = np.empty(Ii[1], dtype=q.dtype)
    rnea_into(Ii, Ff, q, qd, qdd, jstate, f_body, gscale, W, tau)
    check_result(tau)
    return tau


@njit(cache=True, inline="always")
def check_result(x):
    """Raise ValueError("overflow") when a result (any shape) is not finite although the inputs were."""
    for v in x.ravel():
        if not np.isfinite(v):
            raise ValueError("overflow")


@njit(cache=True, fastmath=FAST)
def rnea_into(Ii, Ff, q, qd, qdd, jstate, f_body, gscale, W, tau):
    """:func:`rnea_kernel` on a caller's workspace ``W`` (>= :func:`rnea_work_size`) writing ``tau`` (n,);
    inputs already checked (sizes, finiteness).  The armature adds ``armature * qdd``.

    Written with scalar locals for the per-joint vectors (a shared workspace array would force the
    compiler to reload values after every store), revolute joints in closed form, and workspace
    accesses through short views indexed by literals (no negative-index checks); the transforms are
    those of the module docstring:
    ``X v = [R^T w; R^T (u - p x w)]`` and ``X^T f = [R n + p x R f; R f]`` for ``E_pj = (R, p)``.
    """
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    wR = 0
    wp = 9 * nb
    wV = 12 * nb
    wA = 18 * nb
    wF = 24 * nb
    wD = 30 * nb  # Sdot qd
    wS = 36 * nb
    has_f = f_body.shape[0] != 0
    W[0] = 0.0
    zero = W[0]  # 0 of q's scalar type (real or complex), defined even when n = 0
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        r = wR + 9 * i
        pp = wp + 3 * i
        typ = Ii[o_typ + i]
        if typ == REVOLUTE:  # closed form in registers (see revolute_frame); Sdot = 0
            R00, R01, R02, R10, R11, R12, R20, R21, R22, P0, P1, P2, ax, ay, az = revolute_frame(Ii, Ff, i, q)
            put9(W, r, (R00, R01, R02, R10, R11, R12, R20, R21, R22))
            put3(W, pp, P0, P1, P2)
            put6(W, wS + 6 * a, ax, ay, az, 0.0, 0.0, 0.0)
            vd = qd[a]
            ad = qdd[a]
            sq0 = ax * vd
            sq1 = ay * vd
            sq2 = az * vd
            sa0 = ax * ad
            sa1 = ay * ad
            sa2 = az * ad
            sq3 = sq4 = sq5 = sa3 = sa4 = sa5 = zero
            e0 = e1 = e2 = e3 = e4 = e5 = zero
        else:
            if typ <= SIMPLE_MAX:
                simple_motion(Ii, Ff, i, typ, q, W, r, pp, wS + 6 * a, wD + 6 * i)
            else:
                generic_motion_gated(Ii, Ff, i, typ, q, qd, jstate, W, r, pp, wS + 6 * a, wD + 6 * i)
            R00, R01, R02, R10, R11, R12, R20, R21, R22 = get9(W, r)
            P0, P1, P2 = get3(W, pp)
            # S qd and S qdd
            sq0 = sq1 = sq2 = sq3 = sq4 = sq5 = zero
            sa0 = sa1 = sa2 = sa3 = sa4 = sa5 = zero
            for d in range(a, b):
                s0, s1, s2, s3, s4, s5 = get6(W, wS + 6 * d)
                vd = qd[d]
                ad = qdd[d]
                sq0 += s0 * vd
                sq1 += s1 * vd
                sq2 += s2 * vd
                sq3 += s3 * vd
                sq4 += s4 * vd
                sq5 += s5 * vd
                sa0 += s0 * ad
                sa1 += s1 * ad
                sa2 += s2 * ad
                sa3 += s3 * ad
                sa4 += s4 * ad
                sa5 += s5 * ad
            e0, e1, e2, e3, e4, e5 = get6(W, wD + 6 * i)
        par = Ii[o_par + i]
        if par >= 0:
            w0, w1, w2, u0, u1, u2 = get6(W, wV + 6 * par)
            g0, g1, g2, h0, h1, h2 = get6(W, wA + 6 * par)
        else:
            w0 = w1 = w2 = u0 = u1 = u2 = g0 = g1 = g2 = zero
            h0 = -gscale * Ff[f_g]
            h1 = -gscale * Ff[f_g + 1]
            h2 = -gscale * Ff[f_g + 2]
        x0 = u0 - (P1 * w2 - P2 * w1)
        x1 = u1 - (P2 * w0 - P0 * w2)
        x2 = u2 - (P0 * w1 - P1 * w0)
        y0 = h0 - (P1 * g2 - P2 * g1)
        y1 = h1 - (P2 * g0 - P0 * g2)
        y2 = h2 - (P0 * g1 - P1 * g0)
        # V = X V_p + S qd
        V0 = R00 * w0 + R10 * w1 + R20 * w2 + sq0
        V1 = R01 * w0 + R11 * w1 + R21 * w2 + sq1
        V2 = R02 * w0 + R12 * w1 + R22 * w2 + sq2
        V3 = R00 * x0 + R10 * x1 + R20 * x2 + sq3
        V4 = R01 * x0 + R11 * x1 + R21 * x2 + sq4
        V5 = R02 * x0 + R12 * x1 + R22 * x2 + sq5
        # A = X A_p + S qdd + Sdot qd + ad(V) S qd
        A0 = R00 * g0 + R10 * g1 + R20 * g2 + sa0 + e0 + V1 * sq2 - V2 * sq1
        A1 = R01 * g0 + R11 * g1 + R21 * g2 + sa1 + e1 + V2 * sq0 - V0 * sq2
        A2 = R02 * g0 + R12 * g1 + R22 * g2 + sa2 + e2 + V0 * sq1 - V1 * sq0
        A3 = R00 * y0 + R10 * y1 + R20 * y2 + sa3 + e3 + V4 * sq2 - V5 * sq1 + V1 * sq5 - V2 * sq4
        A4 = R01 * y0 + R11 * y1 + R21 * y2 + sa4 + e4 + V5 * sq0 - V3 * sq2 + V2 * sq3 - V0 * sq5
        A5 = R02 * y0 + R12 * y1 + R22 * y2 + sa5 + e5 + V3 * sq1 - V4 * sq0 + V0 * sq4 - V1 * sq3
        put6(W, wV + 6 * i, V0, V1, V2, V3, V4, V5)
        put6(W, wA + 6 * i, A0, A1, A2, A3, A4, A5)
        # F = M A - ad(V)^T M V - F_ext, with M in compact form: M [w; u] = [Io w + h x u; m u - h x w]
        Mv = Ff[f_M + 36 * i:f_M + 36 * i + 36]
        I00 = Mv[0]
        I01 = Mv[1]
        I02 = Mv[2]
        I11 = Mv[7]
        I12 = Mv[8]
        I22 = Mv[14]
        hh0 = Mv[26]  # m c = (M42, M50, M31)
        hh1 = Mv[30]
        hh2 = Mv[19]
        m = Mv[21]
        n0 = I00 * A0 + I01 * A1 + I02 * A2 + hh1 * A5 - hh2 * A4
        n1 = I01 * A0 + I11 * A1 + I12 * A2 + hh2 * A3 - hh0 * A5
        n2 = I02 * A0 + I12 * A1 + I22 * A2 + hh0 * A4 - hh1 * A3
        f0 = m * A3 - (hh1 * A2 - hh2 * A1)
        f1 = m * A4 - (hh2 * A0 - hh0 * A2)
        f2 = m * A5 - (hh0 * A1 - hh1 * A0)
        k0 = I00 * V0 + I01 * V1 + I02 * V2 + hh1 * V5 - hh2 * V4
        k1 = I01 * V0 + I11 * V1 + I12 * V2 + hh2 * V3 - hh0 * V5
        k2 = I02 * V0 + I12 * V1 + I22 * V2 + hh0 * V4 - hh1 * V3
        l0 = m * V3 - (hh1 * V2 - hh2 * V1)
        l1 = m * V4 - (hh2 * V0 - hh0 * V2)
        l2 = m * V5 - (hh0 * V1 - hh1 * V0)
        # - ad(V)^T [k; l] = [w x k + u x l; w x l]
        n0 += V1 * k2 - V2 * k1 + V4 * l2 - V5 * l1
        n1 += V2 * k0 - V0 * k2 + V5 * l0 - V3 * l2
        n2 += V0 * k1 - V1 * k0 + V3 * l1 - V4 * l0
        f0 += V1 * l2 - V2 * l1
        f1 += V2 * l0 - V0 * l2
        f2 += V0 * l1 - V1 * l0
        put6(W, wF + 6 * i, n0, n1, n2, f0, f1, f2)
        if has_f:
            Ab = f_A + 36 * i
            for k in range(6):
                s1 = zero
                for l in range(6):
                    s1 += Ff[Ab + 6 * l + k] * f_body[i, l]
                W[wF + 6 * i + k] -= s1
    for i in range(nb - 1, -1, -1):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        n0, n1, n2, f0, f1, f2 = get6(W, wF + 6 * i)
        for d in range(a, b):
            s0, s1, s2, s3, s4, s5 = get6(W, wS + 6 * d)
            tau[d] = s0 * n0 + s1 * n1 + s2 * n2 + s3 * f0 + s4 * f1 + s5 * f2
        par = Ii[o_par + i]
        if par >= 0:  # F_p += X^T F = [R n + p x R f; R f]
            R = get9(W, wR + 9 * i)
            P0, P1, P2 = get3(W, wp + 3 * i)
            Rf0, Rf1, Rf2 = rot(R, f0, f1, f2)
            Rn0, Rn1, Rn2 = rot(R, n0, n1, n2)
            c0, c1, c2 = cross(P0, P1, P2, Rf0, Rf1, Rf2)
            pf = W[wF + 6 * par:wF + 6 * par + 6]
            pf[0] += Rn0 + c0
            pf[1] += Rn1 + c1
            pf[2] += Rn2 + c2
            pf[3] += Rf0
            pf[4] += Rf1
            pf[5] += Rf2
    fa = armature_offset(Ii)
    arm = Ff[fa:fa + n]
    for d in range(n):
        tau[d] += arm[d] * qdd[d]


@njit(cache=True, fastmath=FAST, inline="always")  # a thin wrapper: no compile level of its own
def rnea_out(Ii, Ff, q, qd, qdd, tau):
    """:func:`rnea_plain` into a caller's ``tau`` (n,) (``out=``: no result allocation, nothing returned)."""
    js = initial_jstate(Ii)
    check_inputs(Ii, q, qd, qdd, js, NO_FEXT)
    if tau.shape[0] != Ii[1]:
        raise ValueError("size")
    W = np.empty(36 * Ii[0] + 6 * Ii[1] + 1)
    rnea_into(Ii, Ff, q, qd, qdd, js, NO_FEXT, 1.0, W, tau)
    check_result(tau)


@njit(cache=True, fastmath=FAST)
def rnea_plain(Ii, Ff, q, qd, qdd):
    """:func:`rnea_kernel` with gravity, no external wrenches and the initial charts (fewer arguments
    to dispatch: this is the per-call fast path)."""
    return rnea_kernel(Ii, Ff, q, qd, qdd, initial_jstate(Ii), NO_FEXT, 1.0)
