"""Spherical joint in exponential coordinates (RedMax supplemental §4.7, Sueda notes §2.4.8).

``R = exp([q])``.  The joint Jacobian is the right Jacobian of SO(3),

    S_top(q) = I - b(t^2) [q] + c(t^2) [q]^2,   b = (1 - cos t)/t^2,  c = (t - sin t)/t^3,  t = |q|,

which equals the Gallego-Yezzi columns ``[S_i] = R^T dR/dq_i`` (supplemental Eq. 38) in closed form and
has the limit S = I as q -> 0.  Its time derivative differentiates b and c through ``t^2``:

    Sdot_top = -b' [q] - b [qd] + c' [q]^2 + c ([qd][q] + [q][qd]),  b' = db/d(t^2) * 2 q.qd (same for c).

Near t = 0 the coefficients use their Taylor series (all scalar-generic: the kernels accept complex q).
S is singular on |q| = 2 pi; before a step, coordinates with |q| > 1.5 pi are replaced by the
equivalent ``(1 - 2 pi/|q|) q`` and the rates by ``S_new^-1 S_old qd`` (Grassia 1998), which keeps the
rotation and the angular velocity unchanged.
"""

from __future__ import annotations

import math

import numpy as np

from redmax._jit import njit
from redmax.joints.base import Joint, JointKernels
from redmax.spatial import skew, solve3

SPHERICAL_EXP = 6

REPARAM_RADIUS = 1.5 * math.pi  # re-parameterise when |q| exceeds this (strictly)
_SERIES_X = 0.25  # use series for t^2 below this
_JR_SERIES_X = 6.25  # |q|^2 below which the jets of J_r use their (entire) series


@njit(cache=True)
def so3_jr_coeffs(x):
    """Return b, c, db/dx, dc/dx of the right Jacobian for squared angle ``x = t^2``.

    b = (1 - cos t)/t^2 = sum (-1)^k x^k/(2k+2)!,  c = (t - sin t)/t^3 = sum (-1)^k x^k/(2k+3)!.
    """
    if abs(x.real) < _SERIES_X:
        b = 0.0 * x
        c = 0.0 * x
        db = 0.0 * x
        dc = 0.0 * x
        fb = 0.5  # 1/(2k+2)!
        fc = 1.0 / 6.0  # 1/(2k+3)!
        xk = 1.0 + 0.0 * x  # x^k
        xkm1 = 0.0 * x  # x^(k-1)
        sign = 1.0
        for k in range(10):
            b += sign * fb * xk
            c += sign * fc * xk
            if k > 0:
                db += sign * k * fb * xkm1
                dc += sign * k * fc * xkm1
            xkm1 = xk
            xk = xk * x
            sign = -sign
            fb = fb / ((2 * k + 3) * (2 * k + 4))
            fc = fc / ((2 * k + 4) * (2 * k + 5))
        return b, c, db, dc
    t = np.sqrt(x)
    s = np.sin(t)
    co = np.cos(t)
    b = (1.0 - co) / x
    c = (t - s) / (x * t)
    db = (0.5 * t * s - (1.0 - co)) / (x * x)
    dc = ((1.0 - co) * t - 3.0 * (t - s)) / (2.0 * x * x * t)
    return b, c, db, dc


@njit(cache=True)
def sin_t_over_t(x):
    """sin(t)/t for x = t^2 (real or complex): its series below ``_SERIES_X``, where the quotient loses digits."""
    if abs(x.real) < _SERIES_X:
        a = 0.0 * x
        f = 1.0  # 1/(2k+1)!
        xk = 1.0 + 0.0 * x
        sign = 1.0
        for k in range(10):
            a += sign * f * xk
            xk = xk * x
            sign = -sign
            f = f / ((2 * k + 2) * (2 * k + 3))
        return a
    t = np.sqrt(x)
    return np.sin(t) / t


@njit(cache=True)
def sph_exp_S(q, qd, Stop, Sdot_top):
    """Fill the 3x3 angular blocks of S and Sdot for rotation vector q (3,) and rates qd (3,)."""
    x = q[0] * q[0] + q[1] * q[1] + q[2] * q[2]
    b, c, db, dc = so3_jr_coeffs(x)
    W = skew(q)
    Wd = skew(qd)
    W2 = W @ W
    mix = Wd @ W + W @ Wd
    xd = 2.0 * (q[0] * qd[0] + q[1] * qd[1] + q[2] * qd[2])
    bd = db * xd
    cd = dc * xd
    for r in range(3):
        for k in range(3):
            Stop[r, k] = -b * W[r, k] + c * W2[r, k]
            Sdot_top[r, k] = -bd * W[r, k] - b * Wd[r, k] + cd * W2[r, k] + c * mix[r, k]
        Stop[r, r] += 1.0


@njit(cache=True)
def calc_spherical_exp(p, q, qd, js, Q, S, Sdot):
    """Spherical joint, exponential coordinates: Q = [exp([q]) 0; 0 1], S = [S_top; 0]."""
    x = q[0] * q[0] + q[1] * q[1] + q[2] * q[2]
    a = sin_t_over_t(x)
    if abs(x.real) < _SERIES_X:
        b, _, _, _ = so3_jr_coeffs(x)
    else:
        b = (1.0 - np.cos(np.sqrt(x))) / x
    W = skew(q)
    W2 = W @ W
    for r in range(3):
        for k in range(3):
            Q[r, k] = a * W[r, k] + b * W2[r, k]
        Q[r, r] += 1.0
    Q[3, 3] = 1.0
    Stop = np.zeros((3, 3), dtype=q.dtype)
    Sdt = np.zeros((3, 3), dtype=q.dtype)
    sph_exp_S(q, qd, Stop, Sdt)
    for r in range(3):
        for k in range(3):
            S[r, k] = Stop[r, k]
            Sdot[r, k] = Sdt[r, k]


@njit(cache=True)
def reparam_spherical_exp(p, q, qd, js, margin):
    """Grassia re-parameterisation: if |q| > 1.5 pi - margin, q <- (1 - 2 pi/|q|) q, qd <- S_new^-1 S_old qd.

    ``margin`` is 0 between steps (the strict rule) and small when an ODE event located the crossing.
    Modifies ``q`` and ``qd`` (3,) in place.  Returns ``(js, changed)``.
    """
    for k in range(3):  # a state that blew up is left to the caller's finiteness check (no solve on inf/NaN)
        if not (np.isfinite(q[k].real) and np.isfinite(qd[k].real)):
            return js, False
    x = q[0] * q[0] + q[1] * q[1] + q[2] * q[2]
    t = np.sqrt(x)
    if not (t.real > REPARAM_RADIUS - margin):
        return js, False
    S_old = np.zeros((3, 3), dtype=q.dtype)
    tmp = np.zeros((3, 3), dtype=q.dtype)
    sph_exp_S(q, qd, S_old, tmp)
    w = S_old @ qd  # angular velocity, to be preserved
    f = 1.0 - 2.0 * math.pi / t
    for k in range(3):
        q[k] = f * q[k]
    S_new = np.zeros((3, 3), dtype=q.dtype)
    sph_exp_S(q, qd, S_new, tmp)
    for r in range(3):
        if not np.isfinite(w[r].real):  # an angular velocity that overflowed: report it as a non-finite rate
            for k in range(3):
                qd[k] = w[r]
            return js, True
    det = (S_new[0, 0] * (S_new[1, 1] * S_new[2, 2] - S_new[1, 2] * S_new[2, 1])
           - S_new[0, 1] * (S_new[1, 0] * S_new[2, 2] - S_new[1, 2] * S_new[2, 0])
           + S_new[0, 2] * (S_new[1, 0] * S_new[2, 1] - S_new[1, 1] * S_new[2, 0]))
    if not abs(det.real) > 1e-300:  # a blown-up state (|q| a multiple of 2 pi): leave it to the finiteness check
        for k in range(3):
            qd[k] = np.nan
        return js, True
    solve3(S_new, w, qd)  # no exception on a numerically singular S_new: non-finite rates are reported later
    return js, True


@njit(cache=True)
def event_spherical_exp(p, q, js):
    """Signed distance to the re-parameterisation sphere: positive while |q| < 1.5 pi."""
    return REPARAM_RADIUS - math.sqrt(q[0].real ** 2 + q[1].real ** 2 + q[2].real ** 2)


@njit(cache=True)
def _bc_jets(x):
    """b = (1 - cos t)/t^2 and c = (t - sin t)/t^3 (t^2 = x) with their first three x-derivatives.

    Series below ``_JR_SERIES_X`` (entire functions: no cancellation there); above, the recursions
    ``x b' = a/2 - b``, ``x c' = -a' - c``, ``2 x a' = cos t - a`` (a = sin t / t) differentiated twice.
    """
    if abs(x.real) < _JR_SERIES_X:
        b0 = b1 = b2 = b3 = c0 = c1 = c2 = c3 = 0.0 * x
        fb = 0.5  # (-1)^k / (2k+2)!
        fc = 1.0 / 6.0  # (-1)^k / (2k+3)!
        xk = 1.0 + 0.0 * x
        xk1 = 0.0 * x  # x^(k-1)
        xk2 = 0.0 * x
        xk3 = 0.0 * x
        for k in range(28):
            b0 += fb * xk
            c0 += fc * xk
            b1 += fb * k * xk1
            c1 += fc * k * xk1
            b2 += fb * k * (k - 1) * xk2
            c2 += fc * k * (k - 1) * xk2
            b3 += fb * k * (k - 1) * (k - 2) * xk3
            c3 += fc * k * (k - 1) * (k - 2) * xk3
            xk3 = xk2
            xk2 = xk1
            xk1 = xk
            xk = xk * x
            fb = -fb / ((2 * k + 3) * (2 * k + 4))
            fc = -fc / ((2 * k + 4) * (2 * k + 5))
        return b0, b1, b2, b3, c0, c1, c2, c3
    t = np.sqrt(x)
    s = np.sin(t)
    co = np.cos(t)
    a0 = s / t
    b0 = (1.0 - co) / x
    c0 = (1.0 - a0) / x
    a1 = (co - a0) / (2.0 * x)
    b1 = (0.5 * a0 - b0) / x
    c1 = -(a1 + c0) / x
    a2 = -(b0 + x * b1 + 3.0 * a1) / (2.0 * x)
    b2 = (0.5 * a1 - 2.0 * b1) / x
    c2 = -(a2 + 2.0 * c1) / x
    a3 = -(2.0 * b1 + x * b2 + 5.0 * a2) / (2.0 * x)
    b3 = (0.5 * a2 - 3.0 * b2) / x
    c3 = -(a3 + 3.0 * c2) / x
    return b0, b1, b2, b3, c0, c1, c2, c3


@njit(inline="always")
def _eps(r, k, a):
    """Levi-Civita symbol of indices in 0..2."""
    return 0.5 * (r - k) * (k - a) * (a - r)


@njit(cache=True)
def so3_jr_jets(q, A, dA, d2A, d3A, jets):
    """Right Jacobian of SO(3) ``J_r(q) = 1 - b [q] + c [q]^2 = alpha 1 - b [q] + c q q^T`` (``alpha = 1 - c x``,
    ``x = q.q``) -> A (3, 3) and its first ``jets`` (0..3) derivatives ``dA[r, a, e] = dJ[r, a]/dq_e``,
    ``d2A[r, a, e, f]``, ``d3A[r, a, e, f, g]`` (zero on entry).

    Scalar coefficients ``phi(x)`` are differentiated by ``phi_e = 2 phi' q_e``,
    ``phi_ef = 4 phi'' q_e q_f + 2 phi' d_ef`` and ``phi_efg = 8 phi''' q_e q_f q_g + 4 phi'' (d_ef q_g + d_eg q_f +
    d_fg q_e)``; ``[q]_ra = eps_rka q_k`` and ``q q^T`` by the product rule.
    """
    dt = q.dtype
    x = q[0] * q[0] + q[1] * q[1] + q[2] * q[2]
    b0, b1, b2, b3, c0, c1, c2, c3 = _bc_jets(x)
    al0 = 1.0 - c0 * x
    al1 = -c0 - x * c1
    al2 = -2.0 * c1 - x * c2
    al3 = -3.0 * c2 - x * c3
    K = np.zeros((3, 3), dtype=dt)
    for r in range(3):
        for a in range(3):
            k = 3 - r - a
            if r != a:
                K[r, a] = _eps(r, k, a) * q[k]
            A[r, a] = (al0 if r == a else 0.0) - b0 * K[r, a] + c0 * q[r] * q[a]
    if jets < 1:
        return
    al = np.empty(3, dtype=dt)
    bd = np.empty(3, dtype=dt)
    cd = np.empty(3, dtype=dt)
    for e in range(3):
        al[e] = 2.0 * al1 * q[e]
        bd[e] = 2.0 * b1 * q[e]
        cd[e] = 2.0 * c1 * q[e]
    for r in range(3):
        for a in range(3):
            dra = 1.0 if r == a else 0.0
            for e in range(3):
                dre = 1.0 if r == e else 0.0
                dae = 1.0 if a == e else 0.0
                dA[r, a, e] = (al[e] * dra - bd[e] * K[r, a] - b0 * _eps(r, e, a) + cd[e] * q[r] * q[a]
                               + c0 * (dre * q[a] + q[r] * dae))
    if jets < 2:
        return
    al2m = np.empty((3, 3), dtype=dt)
    bdd = np.empty((3, 3), dtype=dt)
    cdd = np.empty((3, 3), dtype=dt)
    for e in range(3):
        for f in range(3):
            d = 1.0 if e == f else 0.0
            al2m[e, f] = 4.0 * al2 * q[e] * q[f] + 2.0 * al1 * d
            bdd[e, f] = 4.0 * b2 * q[e] * q[f] + 2.0 * b1 * d
            cdd[e, f] = 4.0 * c2 * q[e] * q[f] + 2.0 * c1 * d
    for r in range(3):
        for a in range(3):
            dra = 1.0 if r == a else 0.0
            for e in range(3):
                dre = 1.0 if r == e else 0.0
                dae = 1.0 if a == e else 0.0
                for f in range(3):
                    drf = 1.0 if r == f else 0.0
                    daf = 1.0 if a == f else 0.0
                    d2A[r, a, e, f] = (al2m[e, f] * dra - bdd[e, f] * K[r, a] - bd[e] * _eps(r, f, a)
                                       - bd[f] * _eps(r, e, a) + cdd[e, f] * q[r] * q[a]
                                       + cd[e] * (drf * q[a] + q[r] * daf) + cd[f] * (dre * q[a] + q[r] * dae)
                                       + c0 * (dre * daf + drf * dae))
    if jets < 3:
        return
    for e in range(3):
        for f in range(3):
            for g in range(3):
                def_ = 1.0 if e == f else 0.0
                deg = 1.0 if e == g else 0.0
                dfg = 1.0 if f == g else 0.0
                s3 = q[e] * q[f] * q[g]
                lin = def_ * q[g] + deg * q[f] + dfg * q[e]
                alx = 8.0 * al3 * s3 + 4.0 * al2 * lin
                bx = 8.0 * b3 * s3 + 4.0 * b2 * lin
                cx = 8.0 * c3 * s3 + 4.0 * c2 * lin
                for r in range(3):
                    dre = 1.0 if r == e else 0.0
                    drf = 1.0 if r == f else 0.0
                    drg = 1.0 if r == g else 0.0
                    for a in range(3):
                        dae = 1.0 if a == e else 0.0
                        daf = 1.0 if a == f else 0.0
                        dag = 1.0 if a == g else 0.0
                        d3A[r, a, e, f, g] = (alx * (1.0 if r == a else 0.0) - bx * K[r, a]
                                              - bdd[e, f] * _eps(r, g, a) - bdd[e, g] * _eps(r, f, a)
                                              - bdd[f, g] * _eps(r, e, a) + cx * q[r] * q[a]
                                              + cdd[e, f] * (drg * q[a] + q[r] * dag)
                                              + cdd[e, g] * (drf * q[a] + q[r] * daf)
                                              + cdd[f, g] * (dre * q[a] + q[r] * dae)
                                              + cd[e] * (drf * dag + drg * daf) + cd[f] * (dre * dag + drg * dae)
                                              + cd[g] * (dre * daf + drf * dae))


@njit(cache=True)
def layout_spherical_exp(js, tangent, sizes, o):
    """One spherical core joint; A = J_r(q) (not trivial) unless ``tangent`` (rates: the body angular velocity)."""
    sizes[o] = 3
    return o + 1, tangent


@njit(cache=True)
def expand_spherical_exp(p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """Sv = [1; 0] and A = J_r(q) with its jets (A = 1 with ``tangent``)."""
    for k in range(3):
        Sv[k, k] = 1.0
    if tangent:
        for k in range(3):
            A[k, k] = 1.0
    else:
        so3_jr_jets(q, A, dA, d2A, d3A, jets)


class SphericalExp(Joint):
    """Ball joint in exponential coordinates: q is the rotation vector (radians), qd its rate.

    Note that qd is not the angular velocity; the angular velocity (joint frame) is ``S_top(q) qd``.
    """

    kind = "spherical_exp"
    kernels = JointKernels(calc_spherical_exp, layout_spherical_exp, expand_spherical_exp,
                           reparam_spherical_exp, event_spherical_exp)
    code = SPHERICAL_EXP
    nq = 3
    dof_labels = ("rx", "ry", "rz")

    def can_reparam(self) -> bool:
        return True

    def maximal_basis(self, p):
        return np.vstack([np.eye(3), np.zeros((3, 3))]), "spherical"
