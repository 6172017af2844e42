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

from redmax.dynamics.aba import aba_plain
from redmax.dynamics.minv import minv_plain
from redmax.dynamics.rnea_derivatives import rnea_derivatives, rnea_derivatives_plain

__all__ = ["aba_derivatives", "forward_state"]

_F64 = np.dtype(np.float64)


def forward_state(model, q, qd, tau, f_ext=None, jstate=None, gravity: bool = True, tangent: bool = False):
    """Accelerations and M^-1 at (q, qd, tau) in the chosen rates: ``(qd_m, qdd, Minv)`` where ``qd_m`` are the
    rates the inverse-dynamics derivatives take (``qd`` itself), ``qdd`` the accelerations and ``Minv`` the
    inverse inertia, all in tangent rates if ``tangent`` (then ``qd`` and ``tau`` are tangent rates/forces)."""
    from redmax.dynamics import _arrays, aba, minv

    q, qd, tau = _arrays(model, q, qd, tau, names=("q", "qd", "tau"))
    if not tangent:
        return qd, aba(model, q, qd, tau, f_ext, jstate, gravity), minv(model, q, jstate)
    from redmax.dynamics.tangent import tangent_map

    T, _ = tangent_map(model, q, None, jstate)
    qd_m = np.linalg.solve(T, qd)  # the model's rates
    T, Td = tangent_map(model, q, qd_m, jstate)
    qdd_m = aba(model, q, qd_m, T.T @ tau, f_ext, jstate, gravity)
    Minv = minv(model, q, jstate)
    return qd, T @ qdd_m + Td @ qd_m, T @ Minv @ T.T


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
    if f_ext is None and jstate is None and gravity is True and tangent is False and wrt_fext is False:
        try:
            if (q.dtype is _F64 and qd.dtype is _F64 and tau.dtype is _F64
                    and q.ndim == 1 and qd.ndim == 1 and tau.ndim == 1):
                from redmax.dynamics._core import core_structure

                Ii, Ff = model.packed
                qdd = aba_plain(Ii, Ff, q, qd, tau)
                dq, dqd = rnea_derivatives_plain(Ii, Ff, core_structure(model, False), q, qd, qdd)
                Minv = minv_plain(Ii, Ff, q)
                return -(Minv @ dq), -(Minv @ dqd), Minv
        except (AttributeError, ValueError, ZeroDivisionError):
            pass  # not arrays, or rejected by a kernel: the checked path below names the problem
    qd, qdd, Minv = forward_state(model, q, qd, tau, f_ext, jstate, gravity, tangent)
    out = rnea_derivatives(model, q, qd, qdd, f_ext, jstate, gravity, tangent, wrt_fext)
    res = [-(Minv @ out[0]), -(Minv @ out[1]), Minv]
    if wrt_fext:
        d = out[2]
        res.append(-(Minv @ d.reshape(model.ndof, -1)).reshape(d.shape))
    return tuple(res)
