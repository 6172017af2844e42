"""The public first-order derivatives: :func:`rnea_derivatives` (IDSVA) and :func:`aba_derivatives` (FDSVA).

The compiled kernels live in :mod:`.rnea_first_order` and :mod:`.aba_first_order`
(their docstrings give the equations); here are the three tiers of a call.  The common call (float64
C-contiguous vectors, gravity, no external wrench, the initial charts) goes through one C call
(:mod:`._first_order_c_entry`, :func:`lean_first_order`); float64 arrays the C call declines go to the
compiled fast path of the Numba dispatcher; everything else (lists, complex step, external wrenches, Euler charts,
``wrt_fext``) to the checked path, which converts and checks the inputs and names what is wrong.
"""

from __future__ import annotations

import numpy as np

from redmax.derivatives._first_order_c_entry import lean_record
from redmax.derivatives.aba_first_order import (
    aba_derivatives_kernel,
    aba_derivatives_plain,
    aba_derivatives_plain_tangent,
    aba_derivatives_tangent_kernel,
)
from redmax.derivatives.core_tree import core_structure
from redmax.derivatives.rnea_first_order import (
    dtau_dfext_kernel,
    rnea_derivatives_kernel,
    rnea_derivatives_plain,
    rnea_derivatives_plain_tangent,
    run_checked,
)
from redmax.dynamics._single_call import model_table

__all__ = ["aba_derivatives", "forward_state", "lean_first_order", "rnea_derivatives"]

_F64 = np.dtype(np.float64)


def lean_first_order(model, kind: str, tangent):
    """The lean call record of :func:`._first_order_c_entry.lean_record` for ``model``, ``kind`` ("rnea",
    "aba") and ``tangent`` (True or False; anything else: False), kept in the model's table."""
    if tangent is not True and tangent is not False:
        return False
    per = model_table(model)
    key = ("fo", kind, tangent)
    rec = per.get(key)
    if rec is None:
        rec = per[key] = lean_record(model, kind, tangent)
    return rec


_PLAIN = {("rnea", False): rnea_derivatives_plain, ("rnea", True): rnea_derivatives_plain_tangent,
          ("aba", False): aba_derivatives_plain, ("aba", True): aba_derivatives_plain_tangent}


def _common_call(model, kind: str, tangent, q, qd, x):
    """The result of the common call (gravity, no wrench, the initial charts; the caller checked those) of
    ``kind`` ("rnea" or "aba"), or None for the checked path: first the one C call (float64 C-contiguous vectors;
    NotImplemented or a declining kernel fall through), then, where that is not built, the dispatcher's compiled
    fast path for float64 C-contiguous vectors."""
    rec = lean_first_order(model, kind, tangent)
    if rec:
        n = rec[2]
        a = np.empty((n, n))
        b = np.empty((n, n))
        if kind == "rnea":
            if rec[0](rec[1], q, qd, x, a, b) == 0:
                return a, b
        else:
            c = np.empty((n, n))
            if rec[0](rec[1], q, qd, x, a, b, c) == 0:
                return a, b, c
    if (tangent is not True and tangent is not False) or model.chart_joints.size:
        return None
    try:
        if (q.dtype == _F64 and qd.dtype == _F64 and x.dtype == _F64 and q.ndim == 1 and qd.ndim == 1
                and x.ndim == 1 and q.flags.carray and qd.flags.carray and x.flags.carray):  # one compiled type
            Ii, Ff = model.packed
            return _PLAIN[(kind, tangent)](Ii, Ff, core_structure(model, tangent), q, qd, x)
    except (AttributeError, ValueError, ZeroDivisionError):
        pass  # not arrays, or rejected by the kernel: the checked path names the problem
    return None


def rnea_derivatives(model, q, qd, qdd, f_ext=None, jstate=None, gravity: bool = True, tangent: bool = False,
                     wrt_fext: bool = False):
    """Derivatives of inverse dynamics ``tau = RNEA(q, qd, qdd)`` (IDSVA, O(n d); module docstring).

    Args:
        q, qd, qdd: (ndof,) coordinates, rates and accelerations (real or complex).
        f_ext: optional (nb, 6) external wrenches on the bodies (body frames at the centre of mass,
            angular first, as :func:`redmax.rnea`).
        jstate: (nb,) chart words (Euler-angle joints); default the model's initial charts.
        gravity: include the model's gravity.
        tangent: derivatives with respect to body-twist perturbations of spherical and free joints, whose
            rates (in ``qd``, ``qdd``) are then the body angular velocity / body twist (angular first) and
            their time derivatives; see :func:`redmax.dynamics.tangent_rates`.
        wrt_fext: also return ``dtau_dfext`` (ndof, nb, 6), ``[i, k, :] = dtau_i / df_ext[k]``.
    Returns:
        ``(dtau_dq, dtau_dqd)`` (ndof, ndof) with ``dtau_dq[i, j] = dtau_i/dq_j`` (``dtau/dqdd`` is M, see
        :func:`redmax.crba`), plus ``dtau_dfext`` if ``wrt_fext``.
    """
    if f_ext is None and jstate is None and gravity is True and wrt_fext is False:
        out = _common_call(model, "rnea", tangent, q, qd, qdd)
        if out is not None:
            return out
    from redmax.dynamics import _arrays, _fext, _js

    Ii, Ff = model.packed
    q, qd, qdd = _arrays(model, q, qd, qdd)
    js = _js(model, jstate)
    CI = core_structure(model, tangent)
    out = run_checked(model, rnea_derivatives_kernel, Ii, Ff, CI, q, qd, qdd, js, _fext(model, f_ext, q.dtype),
                   1.0 if gravity else 0.0, bool(tangent))
    if wrt_fext:
        out = (*out, dtau_dfext_kernel(Ii, Ff, CI, q, qd, qdd, js, bool(tangent)))
    return out


def forward_state(model, q, qd, tau, f_ext=None, jstate=None, gravity: bool = True, tangent: bool = False,
                  want_minv: bool = True):
    """Accelerations and M^-1 at (q, qd, tau) in the chosen rates: ``(qd_m, qdd, Minv)`` where ``qd_m`` are the
    rates the inverse-dynamics derivatives take (``qd`` itself), ``qdd`` the accelerations and ``Minv`` the
    inverse inertia (None unless ``want_minv``), all in tangent rates if ``tangent`` (then ``qd`` and ``tau`` are
    tangent rates/forces)."""
    from redmax.dynamics import _arrays, aba, minv

    q, qd, tau = _arrays(model, q, qd, tau, names=("q", "qd", "tau"))
    if not tangent:
        return qd, aba(model, q, qd, tau, f_ext, jstate, gravity), minv(model, q, jstate) if want_minv else None
    from redmax.dynamics.tangent import tangent_map

    T, _ = tangent_map(model, q, None, jstate)
    qd_m = np.linalg.solve(T, qd)  # the model's rates
    T, Td = tangent_map(model, q, qd_m, jstate)
    qdd_m = aba(model, q, qd_m, T.T @ tau, f_ext, jstate, gravity)
    Minv = T @ minv(model, q, jstate) @ T.T if want_minv else None
    return qd, T @ qdd_m + Td @ qd_m, Minv


def aba_derivatives(model, q, qd, tau, f_ext=None, jstate=None, gravity: bool = True, tangent: bool = False,
                    wrt_fext: bool = False):
    """Derivatives of forward dynamics ``qdd = ABA(q, qd, tau)`` (module docstring).

    Args:
        q, qd, tau: (ndof,) coordinates, rates and joint forces (real or complex).
        f_ext: optional (nb, 6) external wrenches (body frames, angular first, as :func:`redmax.aba`).
        jstate: (nb,) chart words; default the model's initial charts.
        gravity: include the model's gravity.
        tangent: body-twist rates for spherical and free joints (``qd``, ``tau`` and the outputs in those
            rates; see :func:`redmax.rnea_derivatives`).
        wrt_fext: also return ``dqdd_dfext`` (ndof, nb, 6).
    Returns:
        ``(dqdd_dq, dqdd_dqd, Minv)`` (ndof, ndof) each (``dqdd/dtau = Minv``), plus ``dqdd_dfext`` if
        ``wrt_fext``.
    """
    if f_ext is None and jstate is None and gravity is True and wrt_fext is False:
        out = _common_call(model, "aba", tangent, q, qd, tau)
        if out is not None:
            return out
    from redmax.dynamics import _arrays, _fext, _js

    Ii, Ff = model.packed
    q, qd, tau = _arrays(model, q, qd, tau, names=("q", "qd", "tau"))
    js = _js(model, jstate)
    fb = _fext(model, f_ext, q.dtype)
    g = 1.0 if gravity else 0.0
    CI = core_structure(model, tangent)
    kernel = aba_derivatives_tangent_kernel if tangent else aba_derivatives_kernel
    out = run_checked(model, kernel, Ii, Ff, CI, q, qd, tau, js, fb, g)
    if not wrt_fext:
        return out
    qd_t, qdd, Minv = forward_state(model, q, qd, tau, f_ext, jstate, gravity, tangent)
    d = dtau_dfext_kernel(Ii, Ff, CI, q, qd_t, qdd, js, bool(tangent))
    return (*out, -(Minv @ d.reshape(model.ndof, -1)).reshape(d.shape))
