"""Body-twist ("tangent") rates of spherical and free joints, for the ``tangent=True`` derivatives.

With ``tangent=True`` the derivative functions use, for every spherical joint (exponential coordinates or
Euler angles, also inside composites) the body angular velocity ``w = S_top(q) qd`` as its rates, and for
every free 3D joint (a composite of a translational and a spherical joint) the body twist
``[w; R^T xdot] = S(q) qd`` (angular first); derivatives with respect to configuration are then the Lie
derivatives along the body-twist perturbations ``E <- E exp([dx])`` (Singh et al. §II; Pinocchio's
convention up to the linear-first order of its free flyer).  All other joints keep their rates.

:func:`tangent_map` returns the block-diagonal map ``T`` (ndof, ndof) with ``nu = T qd`` and ``Tdot`` with
``nud = T qdd + Tdot qd``; :func:`tangent_rates` and :func:`model_rates` convert rates both ways.
"""

from __future__ import annotations

import numpy as np

from redmax.errors import ModelError
from redmax.joints.composite import _layout
from redmax.joints.dispatch import joint_calc
from redmax.joints.primitive import COMPOSITE, primitive_calc
from redmax.joints.simple import TRANSLATIONAL
from redmax.joints.spherical_euler import SPHERICAL_EULER
from redmax.joints.spherical_exp import SPHERICAL_EXP

__all__ = ["model_rates", "tangent_map", "tangent_rates"]

_SPHERICAL = (SPHERICAL_EXP, SPHERICAL_EULER)


def tangent_map(model, q, qd=None, jstate=None):
    """``(T, Tdot)`` (ndof, ndof): tangent rates ``nu = T(q) qd``, ``nud = T qdd + Tdot(q, qd) qd`` (module
    docstring).  ``Tdot`` is zero when ``qd`` is None.  Complex q, qd are kept complex."""
    q = np.asarray(q)
    qd = np.zeros_like(q) if qd is None else np.asarray(qd)
    dt = np.result_type(q, qd, np.float64)
    n = model.ndof
    if q.shape != (n,) or qd.shape != (n,):
        raise ModelError(f"{model.name}: q and qd must have shape ({n},), got {q.shape} and {qd.shape}")
    T = np.eye(n, dtype=dt)
    Td = np.zeros((n, n), dtype=dt)
    js_all = model.jstate0 if jstate is None else np.asarray(jstate, dtype=np.int64)
    for i in range(model.nb):
        a, b = int(model.idx[i]), int(model.idx[i + 1])
        code = int(model.jtype[i])
        p = model.jparam[model.jp_off[i]:model.jp_off[i + 1]]
        js = int(js_all[i])
        qi = np.ascontiguousarray(q[a:b], dtype=dt)
        qdi = np.ascontiguousarray(qd[a:b], dtype=dt)
        if code in _SPHERICAL:
            _put_calc(code, p, qi, qdi, js, T, Td, a, 3, primitive=True)
        elif code == COMPOSITE:
            sub, nq, poff, plen, qoff = _layout(p)
            if len(sub) == 2 and sub[0] == TRANSLATIONAL and sub[1] in _SPHERICAL:  # free joint: S(q)
                _put_calc(code, p, qi, qdi, js, T, Td, a, 6, primitive=False)
                continue
            for k in range(len(sub)):
                if sub[k] in _SPHERICAL:
                    o = int(qoff[k])
                    _put_calc(int(sub[k]), p[poff[k]:poff[k] + plen[k]], qi[o:o + 3], qdi[o:o + 3],
                              (js >> (4 * k)) & 15, T, Td, a + o, 3, primitive=True)
    return T, Td


def _put_calc(code, p, q, qd, js, T, Td, a, n, primitive):
    Q = np.zeros((4, 4), dtype=T.dtype)
    S = np.zeros((6, q.shape[0]), dtype=T.dtype)
    Sd = np.zeros((6, q.shape[0]), dtype=T.dtype)
    (primitive_calc if primitive else joint_calc)(code, p, q, qd, js, Q, S, Sd)
    T[a:a + n, a:a + n] = S[:n]
    Td[a:a + n, a:a + n] = Sd[:n]


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
