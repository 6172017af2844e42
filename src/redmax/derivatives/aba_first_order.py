"""First-order derivatives of forward dynamics (FDSVA: Singh, Russell & Wensing 2022; Carpentier & Mansard 2018).

Forward dynamics ``qdd = FD(q, qd, tau)`` inverts inverse dynamics, ``ID(q, qd, FD(q, qd, tau)) = tau``, so
(Singh et al. Eq. 45)

    dqdd/du = -M^-1 dtau/du |_(q, qd, qdd),   u in {q, qd, f_ext},    dqdd/dtau = M^-1,

with ``dtau/du`` from IDSVA (:func:`redmax.rnea_derivatives`) at the accelerations of ABA and ``M^-1`` from the
recursive O(n^2) algorithm (:func:`redmax.minv`); the two products are one matrix multiplication.  With
``tangent=True`` the rates of spherical and free joints are their body twists (``dynamics.tangent``):
``M_t^-1 = T M^-1 T^T`` and ``nud = T qdd + Tdot qd``.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax.derivatives.rnea_first_order import rnea_derivatives_kernel
from redmax.dynamics.aba import NO_TANGENT, aba_minv_kernel
from redmax.dynamics.tangent import body_tangent_modes, tangent_blocks_nu
from redmax.model.layout import NO_FEXT, initial_jstate

__all__ = ["aba_derivatives_kernel", "aba_derivatives_plain", "aba_derivatives_plain_tangent",
           "aba_derivatives_tangent_kernel"]



@njit(cache=True, fastmath=FAST)
def aba_derivatives_kernel(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale):
    """(dqdd_dq, dqdd_dqd, Minv) in the model's coordinates: ABA and M^-1 (notes Alg. 10) in one articulated
    pass (:func:`redmax.dynamics.aba.aba_minv_kernel`), IDSVA at its accelerations and ``-M^-1 dtau`` (two
    matrix products).  The accelerations come from ABA, not from the inverse:
    ``M^-1 (tau - RNEA(q, qd, 0))`` costs half as much but loses digits where M is ill-conditioned (on a chain of
    18 with cond(M) = 6e5 the derivatives were 300 times less accurate), and IDSVA at qdd passes that on."""
    qdd, Minv = aba_minv_kernel(Ii, Ff, q, qd, tau, jstate, f_body, gscale, NO_TANGENT)
    dq, dqd = rnea_derivatives_kernel(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, False)
    return _neg_products(Minv, dq, dqd)


@njit(cache=True, fastmath=FAST)
def aba_derivatives_tangent_kernel(Ii, Ff, CI, q, nu, tau_t, jstate, f_body, gscale):
    """(dnud_dq, dnud_dnu, Minv_t) in tangent rates (CI of the tangent core).  When every changed joint is a whole
    spherical or free joint (:func:`redmax.dynamics.tangent.body_tangent_modes`), ABA and M^-1
    run in those rates directly (their S columns are the joint frame's unit twists); otherwise through the
    model's rates: ``qd = T^-1 nu``, ``qdd = ABA(q, qd, T^T tau_t)``, ``nud = T qdd + Tdot qd``,
    ``M_t^-1 = T M^-1 T^T`` (T block diagonal, applied by loops over its 3x3 and 6x6 blocks)."""
    tmode = body_tangent_modes(Ii, Ff)
    if tmode.shape[0] != 0:
        nud, Mt = aba_minv_kernel(Ii, Ff, q, nu, tau_t, jstate, f_body, gscale, tmode)
        dq, dv = rnea_derivatives_kernel(Ii, Ff, CI, q, nu, nud, jstate, f_body, gscale, True)
        return _neg_products(Mt, dq, dv)
    k, st, sz, Tb, Tdb, qd = tangent_blocks_nu(Ii, Ff, q, nu, jstate)
    tau = tau_t.copy()
    for b in range(k):  # tau = T^T tau_t
        a, m = st[b], sz[b]
        for c in range(m):
            acc = 0.0 * tau_t[0]
            for r in range(m):
                acc += Tb[b, r, c] * tau_t[a + r]
            tau[a + c] = acc
    qdd, Mt = aba_minv_kernel(Ii, Ff, q, qd, tau, jstate, f_body, gscale, NO_TANGENT)
    nud = qdd.copy()
    for b in range(k):  # nud = T qdd + Tdot qd
        a, m = st[b], sz[b]
        for r in range(m):
            acc = 0.0 * qdd[0]
            for c in range(m):
                acc += Tb[b, r, c] * qdd[a + c] + Tdb[b, r, c] * qd[a + c]
            nud[a + r] = acc
    dq, dv = rnea_derivatives_kernel(Ii, Ff, CI, q, nu, nud, jstate, f_body, gscale, True)
    n = q.shape[0]
    tmp = np.empty((6, n), dtype=Mt.dtype)
    for b in range(k):  # rows, then columns, of the blocks: T M^-1 T^T
        a, m = st[b], sz[b]
        for r in range(m):
            for j in range(n):
                acc = 0.0 * Mt[0, 0]
                for c in range(m):
                    acc += Tb[b, r, c] * Mt[a + c, j]
                tmp[r, j] = acc
        for r in range(m):
            for j in range(n):
                Mt[a + r, j] = tmp[r, j]
        for j in range(n):
            for r in range(m):
                acc = 0.0 * Mt[0, 0]
                for c in range(m):
                    acc += Mt[j, a + c] * Tb[b, r, c]
                tmp[r, j] = acc
            for r in range(m):
                Mt[j, a + r] = tmp[r, j]
    return _neg_products(Mt, dq, dv)


@njit(cache=True, fastmath=FAST)
def _neg_products(Minv, dq, dv):
    """``(-Minv dq, -Minv dv, Minv)``: the two products with the negation done in place on ``dq`` and ``dv``
    (fresh arrays of the caller) rather than on a copy of ``Minv``."""
    n = dq.shape[0]
    for r in range(n):
        for c in range(n):
            dq[r, c] = -dq[r, c]
            dv[r, c] = -dv[r, c]
    return np.dot(Minv, dq), np.dot(Minv, dv), Minv


@njit(cache=True, fastmath=FAST)
def aba_derivatives_plain(Ii, Ff, CI, q, qd, tau):
    """:func:`aba_derivatives_kernel` with gravity, no wrenches and the initial charts (the fast path)."""
    return aba_derivatives_kernel(Ii, Ff, CI, q, qd, tau, initial_jstate(Ii), NO_FEXT, 1.0)


@njit(cache=True, fastmath=FAST)
def aba_derivatives_plain_tangent(Ii, Ff, CI, q, nu, tau):
    """:func:`aba_derivatives_tangent_kernel` with gravity, no wrenches and the initial charts."""
    return aba_derivatives_tangent_kernel(Ii, Ff, CI, q, nu, tau, initial_jstate(Ii), NO_FEXT, 1.0)
