"""Dynamics: RedMax equations of motion, RNEA, recursive hybrid/forward dynamics, CRBA and M^-1.

Public functions take a compiled Model and NumPy arrays (real or complex) and return new arrays.
External wrenches ``f_ext`` are (nb, 6) arrays, one wrench per body in that body's principal frame
(centre of mass), angular first ``[torque; force]``.

The recursive algorithms are built for calls on one state at a time: with float64 arrays of the right
size (and no f_ext/jstate) the call goes straight to the compiled kernel; anything else goes through
a checked path that converts the inputs and reports problems as :class:`redmax.ModelError`.
"""

from __future__ import annotations

import numpy as np

from redmax.configuration import charts_for
from redmax.dynamics.aba import aba_kernel, aba_plain, hybrid_kernel
from redmax.dynamics.crba import crba_kernel, crba_plain
from redmax.dynamics.diagnostics import singular_inertia_message
from redmax.dynamics.minv import minv_kernel, minv_plain, minv_product_kernel
from redmax.dynamics.redmax import (
    RedMaxSystem,
    energies,
    redmax_accelerations,
    redmax_mass_matrix,
    redmax_system,
)
from redmax.dynamics.rnea import rnea_kernel, rnea_plain
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

_F64 = np.dtype(np.float64)
_NO_FEXT = np.zeros((0, 6))


def _arrays(model, *vs, names=("q", "qd", "qdd")):
    """The vectors as contiguous (ndof,) arrays of one common dtype; ModelError naming a bad one."""
    arrs = [np.asarray(v) for v in vs]
    dt = np.result_type(*arrs, np.float64)
    out = []
    for name, a in zip(names, arrs, strict=False):
        a = np.ascontiguousarray(a, dtype=dt)
        if a.shape != (model.ndof,):
            raise ModelError(f"{model.name}: {name} must have shape ({model.ndof},), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ModelError(f"{model.name}: {name} contains NaN or inf")
        out.append(a)
    return out


def _js(model, jstate):
    return charts_for(model, jstate)


def _fext(model, f_ext, dt):
    if f_ext is None:
        return _NO_FEXT.astype(dt)
    f = np.asarray(f_ext)
    f = np.ascontiguousarray(f, dtype=np.result_type(f, dt))
    if f.shape != (model.nb, 6):
        raise ModelError(f"{model.name}: f_ext must have shape ({model.nb}, 6), got {f.shape}")
    if not np.all(np.isfinite(f)):
        raise ModelError(f"{model.name}: f_ext contains NaN or inf")
    return f.astype(dt)


def _checked(model, kernel, *args):
    """Run a kernel (args: Ii, Ff, q, ..., jstate at index 2 + n_vectors); translate its errors."""
    try:
        return kernel(*args)
    except (ValueError, ZeroDivisionError) as e:  # raised inside the kernel for inputs the checks cannot see
        if isinstance(e, ZeroDivisionError) or "singular" in str(e):
            js = next((a for a in args[3:] if isinstance(a, np.ndarray) and a.dtype == np.int64), None)
            raise ModelError(f"{model.name}: {kernel.__name__}: "
                             f"{singular_inertia_message(model, args[2].real, js)}") from None
        raise ModelError(f"{model.name}: invalid input to {kernel.__name__} ({e})") from None


def rnea(model, q, qd, qdd, f_ext=None, jstate=None, gravity: bool = True) -> np.ndarray:
    """Inverse dynamics: joint torques (ndof,) that produce ``qdd`` at (q, qd) (RNEA, O(n)).

    Args:
        f_ext: optional (nb, 6) external wrenches on the bodies (body frames).
        jstate: (nb,) chart words (Euler-angle joints); default the model's initial charts.
        gravity: include the model's gravity (default True).
    """
    if f_ext is None and jstate is None and gravity is True and not model.chart_joints.size:
        try:  # fast path: float64 vectors go straight to the kernel (which checks sizes and finiteness)
            if (q.dtype == _F64 and qd.dtype == _F64 and qdd.dtype == _F64
                    and q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1):
                Ii, Ff = model.packed
                return rnea_plain(Ii, Ff, q, qd, qdd)
        except (AttributeError, ValueError, ZeroDivisionError):
            pass  # not arrays, or rejected by the kernel: the checked path below explains the problem
    Ii, Ff = model.packed
    g = 1.0 if gravity else 0.0
    q, qd, qdd = _arrays(model, q, qd, qdd)
    return _checked(model, rnea_kernel, Ii, Ff, q, qd, qdd, _js(model, jstate), _fext(model, f_ext, q.dtype), g)


def aba(model, q, qd, tau, f_ext=None, jstate=None, gravity: bool = True) -> np.ndarray:
    """Forward dynamics: accelerations (ndof,) for torques ``tau`` (recursive, O(n); supplemental Alg. 6)."""
    if f_ext is None and jstate is None and gravity is True and not model.chart_joints.size:
        try:
            if (q.dtype == _F64 and qd.dtype == _F64 and tau.dtype == _F64
                    and q.ndim == 1 and qd.ndim == 1 and tau.ndim == 1):
                Ii, Ff = model.packed
                return aba_plain(Ii, Ff, q, qd, tau)
        except (AttributeError, ValueError, ZeroDivisionError):
            pass
    Ii, Ff = model.packed
    g = 1.0 if gravity else 0.0
    q, qd, tau = _arrays(model, q, qd, tau, names=("q", "qd", "tau"))
    return _checked(model, aba_kernel, Ii, Ff, q, qd, tau, _js(model, jstate), _fext(model, f_ext, q.dtype), g)


def hybrid_dynamics(model, q, qd, tau, qdd, prescribed, f_ext=None, jstate=None, gravity: bool = True):
    """Recursive hybrid dynamics (Kim & Pollard 2011; supplemental Alg. 6).

    Args:
        tau: (ndof,) torques, used for joints that are not prescribed.
        qdd: (ndof,) accelerations, used for prescribed joints.
        prescribed: (nb,) booleans, one per joint.
    Returns:
        (qdd, tau): full accelerations and torques (ndof,) each.
    """
    q, qd, tau, qdd = _arrays(model, q, qd, tau, qdd, names=("q", "qd", "tau", "qdd"))
    pres = np.asarray(prescribed, dtype=np.bool_)
    if pres.shape != (model.nb,):
        raise ModelError(f"{model.name}: prescribed must have shape ({model.nb},), got {pres.shape}")
    Ii, Ff = model.packed
    return _checked(model, hybrid_kernel, Ii, Ff, q, qd, tau, qdd, pres, _js(model, jstate),
                    _fext(model, f_ext, q.dtype), 1.0 if gravity else 0.0)


def _of_q(model, q, jstate, plain, kernel):
    """Run a kernel of q alone: the lean entry point for a float64 vector and the default joint state,
    else the converting, checking one."""
    if jstate is None and not model.chart_joints.size:
        try:
            if q.dtype == _F64 and q.ndim == 1:
                Ii, Ff = model.packed
                return plain(Ii, Ff, q)
        except (AttributeError, ValueError, ZeroDivisionError):
            pass  # not an array, or rejected by the kernel: the checked path below names the problem
    Ii, Ff = model.packed
    (q,) = _arrays(model, q)
    return _checked(model, kernel, Ii, Ff, q, _js(model, jstate))


def crba(model, q, jstate=None) -> np.ndarray:
    """Joint-space inertia matrix M(q) (ndof, ndof) by the composite rigid-body algorithm."""
    return _of_q(model, q, jstate, crba_plain, crba_kernel)


def minv(model, q, jstate=None) -> np.ndarray:
    """Inverse joint-space inertia M(q)^-1 (ndof, ndof), O(n d + n^2) (notes Algorithm 10, all columns)."""
    return _of_q(model, q, jstate, minv_plain, minv_kernel)


def minv_product(model, q, X, jstate=None, Pr=None, Pm=None) -> np.ndarray:
    """Solve ``(M + P) Y = X`` by recursive forward dynamics (notes Alg. 10); X is (ndof,) or (ndof, k).

    Args:
        Pr: optional (ndof,) reduced diagonal term ``h D_r - h^2 K_r`` (preconditioner).
        Pm: optional (nb, 6, 6) maximal blocks ``h D_m - h^2 K_m`` in body frames.
    """
    (q,) = _arrays(model, q)
    Xa = np.asarray(X)
    vec = Xa.ndim == 1
    if Xa.ndim not in (1, 2) or Xa.shape[0] != model.ndof:
        raise ModelError(f"{model.name}: X must have shape ({model.ndof},) or ({model.ndof}, k), got {Xa.shape}")
    X2 = np.ascontiguousarray(Xa.reshape(model.ndof, -1), dtype=np.result_type(Xa, q.dtype))
    if not np.all(np.isfinite(X2)):
        raise ModelError(f"{model.name}: X contains NaN or inf")
    Prv = np.zeros(model.ndof) if Pr is None else np.ascontiguousarray(Pr, dtype=float)
    if Prv.shape != (model.ndof,) or not np.all(np.isfinite(Prv)):
        raise ModelError(f"{model.name}: Pr must be a finite ({model.ndof},) array, got shape {Prv.shape}")
    if Pm is None:
        Pmj = np.zeros((model.nb, 6, 6))
    else:
        Pm = np.asarray(Pm, dtype=float)
        if Pm.shape != (model.nb, 6, 6) or not np.all(np.isfinite(Pm)):
            raise ModelError(f"{model.name}: Pm must be a finite ({model.nb}, 6, 6) array, got shape {Pm.shape}")
        Pmj = np.einsum("bki,bkl,blj->bij", model.Ad_bj, Pm, model.Ad_bj)
    try:
        Y = minv_product_kernel(model.parent, model.jtype, model.idx, model.jp_off, model.jparam, model.E_pj0,
                                model.M_joint, q.astype(X2.dtype), _js(model, jstate), Prv, Pmj, X2)
    except np.linalg.LinAlgError:
        raise ModelError(f"{model.name}: minv_product: M + P is singular at this configuration "
                         "(check Pr and Pm)") from None
    return Y[:, 0] if vec else Y


# tangent (body-twist) rates of spherical and free joints (issue 14); the derivative functions themselves are
# exported by the top-level package (they call this package's checked entry points, so importing them here
# would be an import cycle)
from redmax.dynamics.tangent import model_rates, tangent_map, tangent_rates  # noqa: E402

__all__ += ["model_rates", "tangent_map", "tangent_rates"]
