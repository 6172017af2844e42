"""The public first-order derivatives: :func:`rnea_derivatives` (IDSVA) and :func:`aba_derivatives` (FDSVA).

The compiled kernels live in :mod:`.rnea_first_order` and :mod:`.aba_first_order` (their docstrings give the
equations), one per chain kind of the model (:func:`.rnea_first_order.chain_kind`); here are the three tiers of a
call.  The common call (float64 C-contiguous vectors, gravity, no external wrench, the initial charts) goes
through one C call (:mod:`._first_order_c_entry`); float64 arrays the C call declines go to the kernel's Numba
dispatcher; everything else (lists, complex step, external wrenches, Euler charts, ``wrt_fext``) to the checked
path, which converts and checks the inputs and names what is wrong.
"""

from __future__ import annotations

import numpy as np

from redmax.derivatives._first_order_c_entry import lean_record
from redmax.derivatives.aba_first_order import ABA_KERNELS
from redmax.derivatives.core_tree import core_structure
from redmax.derivatives.rnea_first_order import RNEA_KERNELS, chain_kind, dtau_dfext_kernel, run_checked
from redmax.dynamics._single_call import model_table
from redmax.model.layout import NO_FEXT

__all__ = ["aba_derivatives", "forward_state", "rnea_derivatives"]

_F64 = np.dtype(np.float64)


class _Record:
    """Per model, kind ("rnea" or "aba") and ``tangent``: the kernel of its chain kind, the initial charts (a
    writeable array) and "no wrenches" (read-only ``NO_FEXT``), the types of every other call (one compiled type,
    shared with ``redmax.aba``'s articulated pass), and the C call where it is built."""

    def __init__(self, model, kind: str, tangent: bool):
        self.Ii, self.Ff = model.packed
        self.CI = core_structure(model, tangent)
        chain = chain_kind(self.CI)
        self.kernel = RNEA_KERNELS[chain] if kind == "rnea" else ABA_KERNELS[(tangent, chain)]
        self.js = np.array(model.jstate0, dtype=np.int64)
        self.fb = NO_FEXT
        self.c = lean_record(model, kind, tangent, chain, self.js, self.fb)


def _record(model, kind: str, tangent: bool) -> _Record:
    per = model_table(model)
    key = ("first_order", kind, tangent)
    rec = per.get(key)
    if rec is None:
        rec = per[key] = _Record(model, kind, tangent)
    return rec


def _common_call(model, kind: str, tangent, q, qd, x):
    """The result of the common call (gravity, no wrench, the initial charts; the caller checked those) of
    ``kind`` ("rnea" or "aba"), or None for the checked path: first the one C call (float64 C-contiguous vectors;
    NotImplemented or a declining kernel fall through), then, where that is not built, the kernel's dispatcher for
    float64 C-contiguous vectors."""
    if (tangent is not True and tangent is not False) or model.chart_joints.size:
        return None
    rec = _record(model, kind, tangent)
    c = rec.c
    if c:
        n = c[2]
        a = np.empty((n, n))
        b = np.empty((n, n))
        if kind == "rnea":
            if c[0](c[1], q, qd, x, a, b) == 0:
                return a, b
        else:
            m = np.empty((n, n))
            if c[0](c[1], q, qd, x, a, b, m) == 0:
                return a, b, m
    try:
        if (q.dtype == _F64 and qd.dtype == _F64 and x.dtype == _F64 and q.ndim == 1 and qd.ndim == 1
                and x.ndim == 1 and q.flags.carray and qd.flags.carray and x.flags.carray):  # one compiled type
            if kind == "rnea":
                return rec.kernel(rec.Ii, rec.Ff, rec.CI, q, qd, x, rec.js, rec.fb, 1.0, tangent)
            return rec.kernel(rec.Ii, rec.Ff, rec.CI, q, qd, x, rec.js, rec.fb, 1.0)
    except (AttributeError, ValueError, ZeroDivisionError):
        pass  # not arrays, or rejected by the kernel: the checked path names the problem
    return None


def _state_args(model, jstate, f_ext, dtype):
    """The chart words (writeable) and external wrenches (read-only) of a checked call as contiguous arrays (the
    compiled types of the common call's)."""
    from redmax.dynamics import _fext, _js

    return np.array(_js(model, jstate), dtype=np.int64), _fext(model, f_ext, dtype)


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
    from redmax.dynamics import _arrays

    Ii, Ff = model.packed
    q, qd, qdd = _arrays(model, q, qd, qdd)
    js, fb = _state_args(model, jstate, f_ext, q.dtype)
    CI = core_structure(model, tangent)
    out = run_checked(model, RNEA_KERNELS[chain_kind(CI)], Ii, Ff, CI, q, qd, qdd, js, fb, 1.0 if gravity else 0.0,
                      bool(tangent))
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
    from redmax.dynamics import _arrays

    Ii, Ff = model.packed
    q, qd, tau = _arrays(model, q, qd, tau, names=("q", "qd", "tau"))
    js, fb = _state_args(model, jstate, f_ext, q.dtype)
    g = 1.0 if gravity else 0.0
    CI = core_structure(model, tangent)
    out = run_checked(model, ABA_KERNELS[(bool(tangent), chain_kind(CI))], Ii, Ff, CI, q, qd, tau, js, fb, g)
    if not wrt_fext:
        return out
    qd_t, qdd, Minv = forward_state(model, q, qd, tau, f_ext, jstate, gravity, tangent)
    d = dtau_dfext_kernel(Ii, Ff, CI, q, qd_t, qdd, js, bool(tangent))
    return (*out, -(Minv @ d.reshape(model.ndof, -1)).reshape(d.shape))
