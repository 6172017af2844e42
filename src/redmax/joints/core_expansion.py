"""The core expansion of every joint kind (Singh, Russell & Wensing, §II: Lie-subgroup joints).

Every joint is written as a chain of *core joints* whose motion subspace is constant in their own frame: screws
(1 DOF), planar and translational joints (2 and 3 DOFs), spherical joints (3 DOFs, ``S = [1; 0]``) and free joints
(6 DOFs, ``S = 1_6``), separated by massless frames, with core rates ``nu = A(q) qd`` (see
:mod:`redmax.joints.derivatives` for the list per kind).  :func:`core_layout` gives the core joints' sizes,
:func:`joint_expansion` their twists ``Sv`` (6, m) in the joint's own (child) frame and the map jets ``A``,
``dA``, ``d2A``, ``d3A`` (``S = Sv A``; Sueda notes Eq. 2.41 for composites).  Scalar-generic (complex step).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.joints.composite import _layout
from redmax.joints.primitive import COMPOSITE, primitive_calc
from redmax.joints.simple import PLANAR, PRISMATIC, REVOLUTE, TRANSLATIONAL, UNIVERSAL
from redmax.joints.spherical_euler import SPHERICAL_EULER, euler_R_S
from redmax.joints.spherical_exp import SPHERICAL_EXP
from redmax.joints.spline import B_SPLINE, SPLINE_CURVE, SPLINE_SURFACE
from redmax.spatial import Ad, compose, exp_se3, inv_se3

__all__ = ["MAX_CORE", "core_count", "core_groups", "core_layout", "joint_expansion", "so3_jr_jets"]

MAX_CORE = 96  # most core joints of one joint (a composite of 15 spline surfaces has 90)


_SERIES_X = 6.25  # |q|^2 below which the SO(3) coefficients use their (entire) series


@njit(cache=True)
def _prim_layout(code, js, tangent, sizes, o):
    """Append the core-joint sizes of primitive joint ``code`` to ``sizes[o:]``; returns (o, trivial)."""
    if code == REVOLUTE or code == PRISMATIC:
        sizes[o] = 1
        return o + 1, True
    if code == PLANAR:
        sizes[o] = 2
        return o + 1, True
    if code == TRANSLATIONAL:
        sizes[o] = 3
        return o + 1, True
    if code == UNIVERSAL:
        sizes[o] = 1
        sizes[o + 1] = 1
        return o + 2, True
    if code == SPHERICAL_EXP:
        sizes[o] = 3
        return o + 1, tangent
    if code == SPHERICAL_EULER:
        if tangent:
            sizes[o] = 3
            return o + 1, True
        for k in range(3):
            sizes[o + k] = 1
        return o + 3, True
    if code == SPLINE_CURVE:
        for k in range(3):
            sizes[o + k] = 1
        return o + 3, False
    if code == SPLINE_SURFACE:
        for k in range(6):
            sizes[o + k] = 1
        return o + 6, False
    return o, True  # FIXED


@njit(cache=True)
def _is_free(p):
    """True for a composite of a translational and a spherical joint (Free3D)."""
    code = _layout(p)[0]
    return (code.shape[0] == 2 and code[0] == TRANSLATIONAL
            and (code[1] == SPHERICAL_EXP or code[1] == SPHERICAL_EULER))


@njit(cache=True)
def core_layout(code, p, js, tangent, sizes):
    """Sizes of the core joints of a joint, in order, into ``sizes`` (MAX_CORE,).

    Returns ``(count, trivial)``: ``trivial`` is True when ``A`` is the identity (core rates = the joint's
    rates, and no dA).
    """
    if code == COMPOSITE:
        if tangent and _is_free(p):
            sizes[0] = 6
            return 1, True
        sub = _layout(p)[0]
        o = 0
        triv = True
        for k in range(sub.shape[0]):
            o, t = _prim_layout(sub[k], (js >> (4 * k)) & 15, tangent, sizes, o)
            triv = triv and t
        return o, triv
    return _prim_layout(code, js, tangent, sizes, 0)


@njit(cache=True)
def _bc_jets(x):
    """b = (1 - cos t)/t^2 and c = (t - sin t)/t^3 (t^2 = x) with their first three x-derivatives.

    Series below ``_SERIES_X`` (entire functions: no cancellation there); above, the recursions
    ``x b' = a/2 - b``, ``x c' = -a' - c``, ``2 x a' = cos t - a`` (a = sin t / t) differentiated twice.
    """
    if abs(x.real) < _SERIES_X:
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
def _basis_jets(u, D):
    """Uniform cubic B-spline basis and its derivatives: D[d, i] = d^d b_i/du^d, d = 0..3."""
    for i in range(4):
        D[0, i] = B_SPLINE[i, 0] + u * (B_SPLINE[i, 1] + u * (B_SPLINE[i, 2] + u * B_SPLINE[i, 3]))
        D[1, i] = B_SPLINE[i, 1] + u * (2.0 * B_SPLINE[i, 2] + 3.0 * u * B_SPLINE[i, 3])
        D[2, i] = 2.0 * B_SPLINE[i, 2] + 6.0 * u * B_SPLINE[i, 3]
        D[3, i] = 6.0 * B_SPLINE[i, 3] + 0.0 * u


@njit(cache=True)
def _screw_chain(xi, th, Sv):
    """Twists in the final frame of the screws exp(xi_0 th_0) ... exp(xi_{m-1} th_{m-1}): Sv[:, k] =
    Ad(P_k^-1) xi_k with P_k the product of the later factors.  Returns the product (4, 4)."""
    m = th.shape[0]
    dt = Sv.dtype
    Acc = np.eye(6, dtype=dt)
    P = np.eye(4, dtype=dt)
    for k in range(m - 1, -1, -1):
        x = np.ascontiguousarray(xi[:, k])
        Sv[:, k] = Acc @ x
        Qk = exp_se3(x * th[k])
        Acc = Acc @ Ad(inv_se3(Qk))
        P = compose(Qk, P)
    return P


@njit(cache=True)
def _expand_spline_curve(p, q, jets, Sv, A, dA, d2A):
    """Spline curve (see ``joints.spline``): screws dC_{k+2..k+4} with coordinates Bt_2..4(u)."""
    n = int(p[0])
    dt = q.dtype
    m = np.floor(q[0].real / n)
    s = q[0] - m * n
    k = int(np.floor(s.real))
    if k >= n:
        k = n - 1
    if k < 0:
        k = 0
    u = s - k
    D = np.empty((4, 4), dtype=dt)
    _basis_jets(u, D)
    Bt = np.zeros((4, 4), dtype=dt)  # Bt[d, i] = sum_{j >= i} D[d, j]
    for d in range(4):
        acc = 0.0 * u
        for i in range(3, -1, -1):
            acc += D[d, i]
            Bt[d, i] = acc
    d0 = 1 + 16 * n
    xi = np.empty((6, 3), dtype=dt)
    th = np.empty(3, dtype=dt)
    for i in range(1, 4):
        j = (k + i) % n
        for r in range(6):
            xi[r, i - 1] = p[d0 + 6 * j + r]
        th[i - 1] = Bt[0, i]
        A[i - 1, 0] = Bt[1, i]
        if jets >= 1:
            dA[i - 1, 0, 0] = Bt[2, i]
        if jets >= 2:
            d2A[i - 1, 0, 0, 0] = Bt[3, i]
    _screw_chain(xi, th, Sv)


@njit(cache=True)
def _expand_spline_surface(p, q, jets, Sv, A, dA, d2A, d3A):
    """Spline surface (supplemental Alg. 5): six screws e_k with coordinates f_k(q1, q2)."""
    dt = q.dtype
    D1 = np.empty((4, 4), dtype=dt)  # basis jets in q1 (pairs with the second grid index)
    D2 = np.empty((4, 4), dtype=dt)  # in q2
    _basis_jets(q[0], D1)
    _basis_jets(q[1], D2)
    F = np.zeros((6, 4, 4), dtype=dt)  # F[k, a1, a2] = d^(a1+a2) f_k / dq1^a1 dq2^a2
    for k in range(6):
        for a1 in range(4):
            for a2 in range(4):
                v = 0.0 * q[0]
                for i1 in range(4):
                    for i2 in range(4):
                        v += p[16 * k + 4 * i1 + i2] * D2[a2, i1] * D1[a1, i2]
                F[k, a1, a2] = v
    xi = np.zeros((6, 6), dtype=dt)
    th = np.empty(6, dtype=dt)
    for k in range(6):
        if k < 3:
            xi[3 + k, k] = 1.0
        else:
            xi[k - 3, k] = 1.0
        th[k] = F[k, 0, 0]
        for a in range(2):
            A[k, a] = F[k, 1 - a, a]
            for b in range(2 if jets >= 1 else 0):
                n2 = a + b
                dA[k, a, b] = F[k, 2 - n2, n2]
                for e in range(2 if jets >= 2 else 0):
                    n3 = n2 + e
                    d2A[k, a, b, e] = F[k, 3 - n3, n3]
                    for f in range(2 if jets >= 3 else 0):
                        n4 = n3 + f
                        if n4 <= 3 and 4 - n4 <= 3:
                            d3A[k, a, b, e, f] = F[k, 4 - n4, n4]
    _screw_chain(xi, th, Sv)


@njit(cache=True)
def _prim_expand(code, p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """Expansion of a primitive joint (outputs zero on entry, see the module docstring)."""
    if code == REVOLUTE:
        for k in range(3):
            Sv[k, 0] = p[k]
        A[0, 0] = 1.0
    elif code == PRISMATIC:
        for k in range(3):
            Sv[3 + k, 0] = p[k]
        A[0, 0] = 1.0
    elif code == PLANAR:
        for k in range(3):
            Sv[3 + k, 0] = p[k]
            Sv[3 + k, 1] = p[3 + k]
        A[0, 0] = 1.0
        A[1, 1] = 1.0
    elif code == TRANSLATIONAL:
        for k in range(3):
            Sv[3 + k, k] = 1.0
            A[k, k] = 1.0
    elif code == UNIVERSAL:
        Sv[0, 0] = np.cos(q[1])
        Sv[2, 0] = np.sin(q[1])
        Sv[1, 1] = 1.0
        A[0, 0] = 1.0
        A[1, 1] = 1.0
    elif code == SPHERICAL_EXP:
        for k in range(3):
            Sv[k, k] = 1.0
        if tangent:
            for k in range(3):
                A[k, k] = 1.0
        else:
            so3_jr_jets(q, A, dA, d2A, d3A, jets)
    elif code == SPHERICAL_EULER:
        if tangent:
            for k in range(3):
                Sv[k, k] = 1.0
                A[k, k] = 1.0
        else:
            R = np.empty((3, 3), dtype=q.dtype)
            St = np.empty((3, 3), dtype=q.dtype)
            Sd = np.empty((3, 3), dtype=q.dtype)
            euler_R_S(js & 15, q, q, R, St, Sd)
            for r in range(3):
                for k in range(3):
                    Sv[r, k] = St[r, k]
                A[r, r] = 1.0
    elif code == SPLINE_CURVE:
        _expand_spline_curve(p, q, jets, Sv, A, dA, d2A)
    elif code == SPLINE_SURFACE:
        _expand_spline_surface(p, q, jets, Sv, A, dA, d2A, d3A)


@njit(cache=True)
def joint_expansion(code, p, q, js, tangent, jets, Sv, A, dA, d2A, d3A):
    """Core expansion of one joint at q: ``Sv`` (6, m), ``A`` (m, n) and its first ``jets`` (0..3) derivatives
    ``dA`` (m, n, n), ``d2A`` (m, n, n, n), ``d3A`` (m, n, n, n, n); outputs zero on entry (the unused ones may
    be empty), m from :func:`core_layout`."""
    if code != COMPOSITE:
        _prim_expand(code, p, q, js, tangent, jets, Sv, A, dA, d2A, d3A)
        return
    dt = q.dtype
    if tangent and _is_free(p):
        for k in range(6):
            Sv[k, k] = 1.0
            A[k, k] = 1.0
        return
    sub, nq, poff, plen, qoff = _layout(p)
    ns = sub.shape[0]
    sizes = np.zeros(MAX_CORE, dtype=np.int64)
    moff = np.zeros(ns + 1, dtype=np.int64)
    Qs = np.zeros((ns, 4, 4), dtype=dt)
    for k in range(ns):
        sjs = (js >> (4 * k)) & 15
        o, _ = _prim_layout(sub[k], sjs, tangent, sizes, 0)
        mk = 0
        for c in range(o):
            mk += sizes[c]
        moff[k + 1] = moff[k] + mk
        a = qoff[k]
        b = a + nq[k]
        pk = p[poff[k]:poff[k] + plen[k]]
        Qk = np.zeros((4, 4), dtype=dt)
        St = np.zeros((6, nq[k]), dtype=dt)
        Sd = np.zeros((6, nq[k]), dtype=dt)
        qk = q[a:b]
        primitive_calc(sub[k], pk, qk, qk, sjs, Qk, St, Sd)
        Qs[k] = Qk
        m0 = moff[k]
        m1 = moff[k + 1]
        _prim_expand(sub[k], pk, qk, sjs, tangent, jets, Sv[:, m0:m1], A[m0:m1, a:b], dA[m0:m1, a:b, a:b],
                     d2A[m0:m1, a:b, a:b, a:b], d3A[m0:m1, a:b, a:b, a:b, a:b])
    # move every sub-joint's twists to the final frame: Ad(P_k^-1), P_k = Q_{k+1} ... Q_m
    Acc = np.eye(6, dtype=dt)
    for k in range(ns - 1, -1, -1):
        m0 = moff[k]
        m1 = moff[k + 1]
        if k < ns - 1:
            for c in range(m0, m1):
                x = np.ascontiguousarray(Sv[:, c])
                Sv[:, c] = Acc @ x
        if k > 0:
            Acc = Acc @ Ad(inv_se3(np.ascontiguousarray(Qs[k])))


@njit(cache=True)
def core_groups(code, p, js, tangent, grp):
    """grp[c] = index of the core joint of core DOF c (grp (m,)); returns m."""
    sizes = np.zeros(MAX_CORE, dtype=np.int64)
    nc, _ = core_layout(code, p, js, tangent, sizes)
    c = 0
    for g in range(nc):
        for _ in range(sizes[g]):
            grp[c] = g
            c += 1
    return c


@njit(cache=True)
def core_count(code, p, js, tangent):
    """Number of core DOFs m of a joint."""
    sizes = np.zeros(MAX_CORE, dtype=np.int64)
    nc, _ = core_layout(code, p, js, tangent, sizes)
    m = 0
    for g in range(nc):
        m += sizes[g]
    return m
