"""Dynamics: RedMax equations of motion, RNEA, recursive hybrid/forward dynamics, CRBA and M^-1.

Public functions take a compiled Model and NumPy arrays (real or complex) and return new arrays.
External wrenches ``f_ext`` are (nb, 6) arrays, one wrench per body in that body's principal frame
(centre of mass), angular first ``[torque; force]``.
"""

from __future__ import annotations

import numpy as np

from redmax.dynamics.aba import hybrid_kernel
from redmax.dynamics.crba import crba_kernel
from redmax.dynamics.minv import minv_kernel
from redmax.dynamics.redmax import (
    RedMaxSystem,
    energies,
    redmax_accelerations,
    redmax_mass_matrix,
    redmax_system,
)
from redmax.dynamics.rnea import rnea_kernel
from redmax.errors import ModelError

__all__ = [
    "RedMaxSystem",
    "aba",
    "crba",
    "energies",
    "hybrid_dynamics",
    "minv",
    "minv_product",
    "redmax_accelerations",
    "redmax_mass_matrix",
    "redmax_system",
    "rnea",
]


def _arrays(model, *vs):
    arrs = [np.asarray(v) for v in vs]
    dt = np.result_type(*arrs, np.float64)
    out = []
    for name, a in zip(("q", "qd", "qdd/tau", "x"), arrs, strict=False):
        a = np.ascontiguousarray(a, dtype=dt)
        if a.shape != (model.ndof,):
            raise ModelError(f"{model.name}: {name} must have shape ({model.ndof},), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ModelError(f"{model.name}: {name} contains NaN or inf")
        out.append(a)
    return out


def _js(model, jstate):
    return model.jstate0 if jstate is None else np.ascontiguousarray(jstate, dtype=np.int64)


def _fext(model, f_ext, dt):
    if f_ext is None:
        return np.zeros((model.nb, 6), dtype=dt)
    f = np.ascontiguousarray(np.asarray(f_ext), dtype=np.result_type(np.asarray(f_ext), dt))
    if f.shape != (model.nb, 6):
        raise ModelError(f"{model.name}: f_ext must have shape ({model.nb}, 6), got {f.shape}")
    if not np.all(np.isfinite(f)):
        raise ModelError(f"{model.name}: f_ext contains NaN or inf")
    return f.astype(dt)


def _grav(model, gravity: bool):
    return model.gravity if gravity else np.zeros(3)


def rnea(model, q, qd, qdd, f_ext=None, jstate=None, gravity: bool = True) -> np.ndarray:
    """Inverse dynamics: joint torques (ndof,) that produce ``qdd`` at (q, qd) (RNEA, O(n)).

    Args:
        f_ext: optional (nb, 6) external wrenches on the bodies (body frames).
        gravity: include the model's gravity (default True).
    """
    q, qd, qdd = _arrays(model, q, qd, qdd)
    return rnea_kernel(model.parent, model.jtype, model.idx, model.jp_off, model.jparam, model.E_pj0,
                       model.M_joint, model.Ad_bj, _grav(model, gravity), q, qd, qdd, _js(model, jstate),
                       _fext(model, f_ext, q.dtype))


def aba(model, q, qd, tau, f_ext=None, jstate=None, gravity: bool = True) -> np.ndarray:
    """Forward dynamics: accelerations (ndof,) for torques ``tau`` (recursive, O(n); supplemental Alg. 6)."""
    q, qd, tau = _arrays(model, q, qd, tau)
    pres = np.zeros(model.nb, dtype=np.bool_)
    qdd, _ = hybrid_kernel(model.parent, model.jtype, model.idx, model.jp_off, model.jparam, model.E_pj0,
                           model.M_joint, model.Ad_bj, _grav(model, gravity), q, qd, tau, np.zeros_like(q), pres,
                           _js(model, jstate), _fext(model, f_ext, q.dtype))
    return qdd


def hybrid_dynamics(model, q, qd, tau, qdd, prescribed, f_ext=None, jstate=None, gravity: bool = True):
    """Recursive hybrid dynamics (Kim & Pollard 2011; supplemental Alg. 6).

    Args:
        tau: (ndof,) torques, used for joints that are not prescribed.
        qdd: (ndof,) accelerations, used for prescribed joints.
        prescribed: (nb,) booleans, one per joint.
    Returns:
        (qdd, tau): full accelerations and torques (ndof,) each.
    """
    q, qd, tau, qdd = _arrays(model, q, qd, tau, qdd)
    pres = np.asarray(prescribed, dtype=np.bool_)
    if pres.shape != (model.nb,):
        raise ModelError(f"{model.name}: prescribed must have shape ({model.nb},), got {pres.shape}")
    return hybrid_kernel(model.parent, model.jtype, model.idx, model.jp_off, model.jparam, model.E_pj0,
                         model.M_joint, model.Ad_bj, _grav(model, gravity), q, qd, tau, qdd, pres,
                         _js(model, jstate), _fext(model, f_ext, q.dtype))


def crba(model, q, jstate=None) -> np.ndarray:
    """Joint-space inertia matrix M(q) (ndof, ndof) by the composite rigid-body algorithm."""
    (q,) = _arrays(model, q)
    return crba_kernel(model.parent, model.jtype, model.idx, model.jp_off, model.jparam, model.E_pj0,
                       model.M_joint, q, _js(model, jstate))


def minv_product(model, q, X, jstate=None, Pr=None, Pm=None) -> np.ndarray:
    """Solve ``(M + P) Y = X`` by recursive forward dynamics (notes Alg. 10); X is (ndof,) or (ndof, k).

    Args:
        Pr: optional (ndof,) reduced diagonal term ``h D_r - h^2 K_r`` (preconditioner).
        Pm: optional (nb, 6, 6) maximal blocks ``h D_m - h^2 K_m`` in body frames.
    """
    (q,) = _arrays(model, q)
    Xa = np.asarray(X)
    vec = Xa.ndim == 1
    X2 = np.ascontiguousarray(Xa.reshape(model.ndof, -1), dtype=np.result_type(Xa, q.dtype))
    Prv = np.zeros(model.ndof) if Pr is None else np.ascontiguousarray(Pr, dtype=float)
    if Pm is None:
        Pmj = np.zeros((model.nb, 6, 6))
    else:
        Pm = np.asarray(Pm, dtype=float)
        Pmj = np.einsum("bki,bkl,blj->bij", model.Ad_bj, Pm, model.Ad_bj)
    Y = minv_kernel(model.parent, model.jtype, model.idx, model.jp_off, model.jparam, model.E_pj0,
                    model.M_joint, q.astype(X2.dtype), _js(model, jstate), Prv, Pmj, X2)
    return Y[:, 0] if vec else Y


def minv(model, q, jstate=None) -> np.ndarray:
    """Inverse joint-space inertia M(q)^-1 (ndof, ndof), O(n^2) via notes Algorithm 10."""
    return minv_product(model, q, np.eye(model.ndof), jstate)
