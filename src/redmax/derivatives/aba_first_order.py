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
from redmax.derivatives.rnea_first_order import (
    rnea_derivatives_aligned,
    rnea_derivatives_core,
    rnea_derivatives_general,
)
from redmax.dynamics.aba import NO_TANGENT, aba_minv_kernel
from redmax.dynamics.tangent import body_tangent_modes, tangent_blocks_nu

__all__ = ["ABA_KERNELS", "aba_derivatives_aligned", "aba_derivatives_core", "aba_derivatives_general",
           "aba_derivatives_tangent_aligned", "aba_derivatives_tangent_core", "aba_derivatives_tangent_general"]



# One kernel per chain kind of the inverse-dynamics derivatives (:func:`.rnea_first_order.chain_kind`) and per
# rates, so that a model compiles only what it needs; inlined into their callers (the C entry points of
# ._first_order_c_entry), each a function of its own when called from Python.  Scalar-generic.


@njit(inline="always", fastmath=FAST)
def _forward(Ii, Ff, q, qd, tau, jstate, f_body, gscale):
    """ABA and M^-1 (notes Alg. 10) in one articulated pass (:func:`redmax.dynamics.aba.aba_minv_kernel`).  The
    accelerations come from ABA, not from the inverse: ``M^-1 (tau - RNEA(q, qd, 0))`` costs half as much but loses
    digits where M is ill-conditioned (on a chain of 18 with cond(M) = 6e5 the derivatives were 300 times less
    accurate), and IDSVA at qdd passes that on."""
    return aba_minv_kernel(Ii, Ff, q, qd, tau, jstate, f_body, gscale, NO_TANGENT)


@njit(inline="always", fastmath=FAST)
def aba_derivatives_core(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale):
    """(dqdd_dq, dqdd_dqd, Minv) in the model's coordinates: ABA and M^-1, IDSVA at its accelerations and
    ``-M^-1 dtau`` (two matrix products); the core's coordinates are the model's."""
    qdd, Minv = _forward(Ii, Ff, q, qd, tau, jstate, f_body, gscale)
    dq, dqd = rnea_derivatives_core(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, False)
    return _neg_products(Minv, dq, dqd)


@njit(inline="always", fastmath=FAST)
def aba_derivatives_aligned(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale):
    """:func:`aba_derivatives_core` for a model whose core indices are its own (the chain rule in place)."""
    qdd, Minv = _forward(Ii, Ff, q, qd, tau, jstate, f_body, gscale)
    dq, dqd = rnea_derivatives_aligned(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, False)
    return _neg_products(Minv, dq, dqd)


@njit(inline="always", fastmath=FAST)
def aba_derivatives_general(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale):
    """:func:`aba_derivatives_core` through the general chain rule."""
    qdd, Minv = _forward(Ii, Ff, q, qd, tau, jstate, f_body, gscale)
    dq, dqd = rnea_derivatives_general(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, False)
    return _neg_products(Minv, dq, dqd)


@njit(cache=True, fastmath=FAST)
def tangent_forward(Ii, Ff, q, nu, tau_t, jstate, f_body, gscale):
    """Forward dynamics in tangent rates: ``(nud, Minv_t, k, st, sz, Tb)`` with the blocks of T (``k`` of them;
    k = -1 when the rates are the body twists of whole spherical and free joints, where ABA and M^-1 run in those
    rates directly: :func:`redmax.dynamics.tangent.body_tangent_modes`).  Otherwise through the model's rates:
    ``qd = T^-1 nu``, ``qdd = ABA(q, qd, T^T tau_t)``, ``nud = T qdd + Tdot qd`` (T block diagonal, applied by loops
    over its 3x3 and 6x6 blocks); M^-1 then still needs :func:`tangent_minv`."""
    tmode = body_tangent_modes(Ii, Ff)
    if tmode.shape[0] != 0:
        nud, Mt = aba_minv_kernel(Ii, Ff, q, nu, tau_t, jstate, f_body, gscale, tmode)
        return nud, Mt, -1, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 6, 6), Mt.dtype)
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
    return nud, Mt, k, st, sz, Tb


@njit(cache=True, fastmath=FAST)
def tangent_minv(Mt, k, st, sz, Tb):
    """``M_t^-1 = T M^-1 T^T`` in place on ``Mt`` (the blocks of :func:`tangent_forward`; nothing for k = -1)."""
    n = Mt.shape[0]
    tmp = np.empty((6, n), dtype=Mt.dtype)
    for b in range(k):  # rows, then columns, of the blocks
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


@njit(inline="always", fastmath=FAST)
def aba_derivatives_tangent_core(Ii, Ff, CI, q, nu, tau_t, jstate, f_body, gscale):
    """(dnud_dq, dnud_dnu, Minv_t) in tangent rates (CI of the tangent core; its coordinates are the model's)."""
    nud, Mt, k, st, sz, Tb = tangent_forward(Ii, Ff, q, nu, tau_t, jstate, f_body, gscale)
    dq, dv = rnea_derivatives_core(Ii, Ff, CI, q, nu, nud, jstate, f_body, gscale, True)
    tangent_minv(Mt, k, st, sz, Tb)
    return _neg_products(Mt, dq, dv)


@njit(inline="always", fastmath=FAST)
def aba_derivatives_tangent_aligned(Ii, Ff, CI, q, nu, tau_t, jstate, f_body, gscale):
    """:func:`aba_derivatives_tangent_core` with the chain rule in place."""
    nud, Mt, k, st, sz, Tb = tangent_forward(Ii, Ff, q, nu, tau_t, jstate, f_body, gscale)
    dq, dv = rnea_derivatives_aligned(Ii, Ff, CI, q, nu, nud, jstate, f_body, gscale, True)
    tangent_minv(Mt, k, st, sz, Tb)
    return _neg_products(Mt, dq, dv)


@njit(inline="always", fastmath=FAST)
def aba_derivatives_tangent_general(Ii, Ff, CI, q, nu, tau_t, jstate, f_body, gscale):
    """:func:`aba_derivatives_tangent_core` through the general chain rule."""
    nud, Mt, k, st, sz, Tb = tangent_forward(Ii, Ff, q, nu, tau_t, jstate, f_body, gscale)
    dq, dv = rnea_derivatives_general(Ii, Ff, CI, q, nu, nud, jstate, f_body, gscale, True)
    tangent_minv(Mt, k, st, sz, Tb)
    return _neg_products(Mt, dq, dv)


# The entries called from Python: cached functions of their own around the inlined kernels above (an inlined
# kernel is not cached on disk, so calling it from Python would compile it again in every process).


@njit(cache=True, fastmath=FAST)
def aba_derivatives_core_entry(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale):
    return aba_derivatives_core(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale)


@njit(cache=True, fastmath=FAST)
def aba_derivatives_aligned_entry(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale):
    return aba_derivatives_aligned(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale)


@njit(cache=True, fastmath=FAST)
def aba_derivatives_general_entry(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale):
    return aba_derivatives_general(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale)


@njit(cache=True, fastmath=FAST)
def aba_derivatives_tangent_core_entry(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale):
    return aba_derivatives_tangent_core(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale)


@njit(cache=True, fastmath=FAST)
def aba_derivatives_tangent_aligned_entry(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale):
    return aba_derivatives_tangent_aligned(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale)


@njit(cache=True, fastmath=FAST)
def aba_derivatives_tangent_general_entry(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale):
    return aba_derivatives_tangent_general(Ii, Ff, CI, q, qd, tau, jstate, f_body, gscale)


ABA_KERNELS = {(False, 0): aba_derivatives_core_entry, (False, 1): aba_derivatives_aligned_entry,
               (False, 2): aba_derivatives_general_entry, (True, 0): aba_derivatives_tangent_core_entry,
               (True, 1): aba_derivatives_tangent_aligned_entry,
               (True, 2): aba_derivatives_tangent_general_entry}  # (tangent, chain kind) -> kernel


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
