"""Body-twist ("tangent") rates of spherical and free joints, for the ``tangent=True`` derivatives.

With ``tangent=True`` the derivative functions use, for every spherical joint (exponential coordinates or
Euler angles, also inside composites) the body angular velocity ``w = S_top(q) qd`` as its rates, and for
every free 3D joint (a composite of a translational and a spherical joint) the body twist
``[w; R^T xdot] = S(q) qd`` (angular first); derivatives with respect to configuration are then the Lie
derivatives along the body-twist perturbations ``E <- E exp([dx])`` (Singh et al. §II; Pinocchio's
convention up to the linear-first order of its free flyer).  All other joints keep their rates.

:func:`tangent_map` returns the block-diagonal map ``T`` (ndof, ndof) with ``nu = T qd`` and ``Tdot`` with
``nud = T qdd + Tdot qd``; :func:`tangent_rates` and :func:`model_rates` convert rates both ways.  The kernel
:func:`tangent_blocks` returns only the non-identity diagonal blocks (the compiled derivative functions apply
them in O(n m^2) per block).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.configuration import charts_for
from redmax.errors import ModelError
from redmax.joints.composite import _layout
from redmax.joints.dispatch import joint_calc
from redmax.joints.primitive import COMPOSITE, primitive_calc
from redmax.joints.simple import TRANSLATIONAL
from redmax.joints.spherical_euler import SPHERICAL_EULER
from redmax.joints.spherical_exp import SPHERICAL_EXP
from redmax.model.layout import offsets

__all__ = ["body_tangent_modes", "model_rates", "tangent_blocks", "tangent_blocks_nu", "tangent_map", "tangent_rates"]

_SPHERICAL = (SPHERICAL_EXP, SPHERICAL_EULER)


@njit(cache=True)
def _block(code, p, q, qd, js, primitive, size, k, starts, sizes, Tb, Tdb, a):
    Q = np.zeros((4, 4), dtype=q.dtype)
    S = np.zeros((6, q.shape[0]), dtype=q.dtype)
    Sd = np.zeros((6, q.shape[0]), dtype=q.dtype)
    if primitive:
        primitive_calc(code, p, q, qd, js, Q, S, Sd)
    else:
        joint_calc(code, p, q, qd, js, Q, S, Sd)
    starts[k] = a
    sizes[k] = size
    for r in range(size):
        for c in range(size):
            Tb[k, r, c] = S[r, c]
            Tdb[k, r, c] = Sd[r, c]
    return k + 1


@njit(cache=True)
def _blocks(Ii, Ff, q, qd, jstate, from_nu):
    """:func:`tangent_blocks`; with ``from_nu`` the given rates are tangent rates ``nu`` and each block first
    solves its model rates ``qd = T^-1 nu`` (written into a copy, returned last) before ``Tdot`` is formed."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    dt = q.dtype
    cap = n // 3 + 1
    starts = np.zeros(cap, dtype=np.int64)
    sizes = np.zeros(cap, dtype=np.int64)
    Tb = np.zeros((cap, 6, 6), dtype=dt)
    Tdb = np.zeros((cap, 6, 6), dtype=dt)
    rates = qd.copy()
    k = 0
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        code = Ii[o_typ + i]
        p = Ff[f_jp + Ii[o_jp + i]:f_jp + Ii[o_jp + i + 1]]
        js = jstate[i]
        if code == SPHERICAL_EXP or code == SPHERICAL_EULER:
            k = _rates_block(code, p, q[a:b], rates[a:b], js, True, 3, k, starts, sizes, Tb, Tdb, a, from_nu)
        elif code == COMPOSITE:
            sub, nq, poff, plen, qoff = _layout(p)
            if sub.shape[0] == 2 and sub[0] == TRANSLATIONAL and (sub[1] == SPHERICAL_EXP
                                                                 or sub[1] == SPHERICAL_EULER):
                k = _rates_block(code, p, q[a:b], rates[a:b], js, False, 6, k, starts, sizes, Tb, Tdb, a, from_nu)
                continue
            for s in range(sub.shape[0]):
                if sub[s] == SPHERICAL_EXP or sub[s] == SPHERICAL_EULER:
                    o = a + qoff[s]
                    k = _rates_block(sub[s], p[poff[s]:poff[s] + plen[s]], q[o:o + 3], rates[o:o + 3],
                                     (js >> (4 * s)) & 15, True, 3, k, starts, sizes, Tb, Tdb, o, from_nu)
    return k, starts, sizes, Tb, Tdb, rates


@njit(cache=True)
def body_tangent_modes(Ii, Ff):
    """Which bodies' joints change rates under ``tangent=True``, when all of them are whole joints: (nb,) int64
    with 3 for a spherical joint, 6 for a free joint (translational + spherical composite), 0 otherwise
    (:func:`redmax.dynamics._world_pass.tangent_columns`).  Empty (0,) when a spherical joint sits inside another
    composite: then the tangent rates are not those of whole joints and the callers convert through ``T``.  (An
    armature on these DOFs is not diagonal in body twists; ``core_structure`` refuses ``tangent=True`` for it.)"""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    modes = np.zeros(nb, dtype=np.int64)
    for i in range(nb):
        code = Ii[o_typ + i]
        if code == SPHERICAL_EXP or code == SPHERICAL_EULER:
            modes[i] = 3
        elif code == COMPOSITE:
            sub, nq, poff, plen, qoff = _layout(Ff[f_jp + Ii[o_jp + i]:f_jp + Ii[o_jp + i + 1]])
            if sub.shape[0] == 2 and sub[0] == TRANSLATIONAL and (sub[1] == SPHERICAL_EXP
                                                                 or sub[1] == SPHERICAL_EULER):
                modes[i] = 6
            else:
                for s in range(sub.shape[0]):
                    if sub[s] == SPHERICAL_EXP or sub[s] == SPHERICAL_EULER:
                        return np.zeros(0, dtype=np.int64)
    return modes


@njit(cache=True)
def _rates_block(code, p, q, r, js, primitive, size, k, starts, sizes, Tb, Tdb, a, from_nu):
    """One block of :func:`_blocks`: with ``from_nu`` replace the tangent rates r (a view) by T^-1 r first."""
    if from_nu:
        _block(code, p, q, np.zeros_like(r), js, primitive, size, k, starts, sizes, Tb, Tdb, a)
        solve_small(Tb[k], r, size)
    return _block(code, p, q, r, js, primitive, size, k, starts, sizes, Tb, Tdb, a)


@njit(cache=True)
def solve_small(A, x, m):
    """x <- A[:m, :m]^-1 x in place (Gaussian elimination with partial pivoting on the real parts, so that
    complex-step inputs keep their pivots); A is not modified.  Raises ValueError("singular tangent map")."""
    B = np.empty((m, m + 1), dtype=x.dtype)
    for r in range(m):
        for c in range(m):
            B[r, c] = A[r, c]
        B[r, m] = x[r]
    for c in range(m):
        piv = c
        for r in range(c + 1, m):
            if abs(B[r, c].real) > abs(B[piv, c].real):
                piv = r
        if not abs(B[piv, c].real) > 0.0:
            raise ValueError("singular tangent map")
        if piv != c:
            for k in range(c, m + 1):
                B[c, k], B[piv, k] = B[piv, k], B[c, k]
        inv = 1.0 / B[c, c]
        for r in range(c + 1, m):
            f = B[r, c] * inv
            if f != 0.0:
                for k in range(c + 1, m + 1):
                    B[r, k] -= f * B[c, k]
    for r in range(m - 1, -1, -1):
        acc = B[r, m]
        for k in range(r + 1, m):
            acc -= B[r, k] * x[k]
        x[r] = acc / B[r, r]


@njit(cache=True)
def tangent_blocks(Ii, Ff, q, qd, jstate):
    """The non-identity blocks of the tangent map (module docstring): ``(count, starts, sizes, Tb, Tdb)`` with
    block k covering DOFs ``starts[k]:starts[k] + sizes[k]`` (3 for a spherical joint, 6 for a free joint),
    ``T`` in ``Tb[k, :size, :size]`` and ``Tdot`` in ``Tdb[k]``."""
    k, starts, sizes, Tb, Tdb, _ = _blocks(Ii, Ff, q, qd, jstate, False)
    return k, starts, sizes, Tb, Tdb


@njit(cache=True)
def tangent_blocks_nu(Ii, Ff, q, nu, jstate):
    """:func:`tangent_blocks` at the model rates of the tangent rates ``nu``: ``(count, starts, sizes, Tb, Tdb,
    qd)`` with ``qd = T^-1 nu`` (one pass over the joints)."""
    return _blocks(Ii, Ff, q, nu, jstate, True)


def tangent_map(model, q, qd=None, jstate=None):
    """``(T, Tdot)`` (ndof, ndof): tangent rates ``nu = T(q) qd``, ``nud = T qdd + Tdot(q, qd) qd`` (module
    docstring).  ``Tdot`` is zero when ``qd`` is None.  Complex q, qd are kept complex."""
    q = np.asarray(q)
    qd = np.zeros_like(q) if qd is None else np.asarray(qd)
    dt = np.result_type(q, qd, np.float64)
    n = model.ndof
    if q.shape != (n,) or qd.shape != (n,):
        raise ModelError(f"{model.name}: q and qd must have shape ({n},), got {q.shape} and {qd.shape}")
    js = charts_for(model, jstate)
    Ii, Ff = model.packed
    k, starts, sizes, Tb, Tdb = tangent_blocks(Ii, Ff, np.ascontiguousarray(q, dtype=dt),
                                               np.ascontiguousarray(qd, dtype=dt), js)
    T = np.eye(n, dtype=dt)
    Td = np.zeros((n, n), dtype=dt)
    for b in range(k):
        a, m = int(starts[b]), int(sizes[b])
        T[a:a + m, a:a + m] = Tb[b, :m, :m]
        Td[a:a + m, a:a + m] = Tdb[b, :m, :m]
    return T, Td


def tangent_rates(model, q, qd, qdd=None, jstate=None):
    """The tangent rates ``nu = T qd`` (and ``nud = T qdd + Tdot qd`` if ``qdd`` is given) of the model's
    rates (see :func:`tangent_map`)."""
    T, Td = tangent_map(model, q, qd, jstate)
    nu = T @ np.asarray(qd)
    if qdd is None:
        return nu
    return nu, T @ np.asarray(qdd) + Td @ np.asarray(qd)


def model_rates(model, q, nu, nud=None, jstate=None):
    """Inverse of :func:`tangent_rates`: the model's ``qd`` (and ``qdd``) for tangent rates ``nu`` (``nud``)."""
    T, _ = tangent_map(model, q, None, jstate)
    qd = np.linalg.solve(T, np.asarray(nu))
    if nud is None:
        return qd
    _, Td = tangent_map(model, q, qd, jstate)
    return qd, np.linalg.solve(T, np.asarray(nud) - Td @ qd)
