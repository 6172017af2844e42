"""Second-order derivatives of forward dynamics (FDSVA-SO: Singh, Russell & Wensing, §VI, Eqs. 46-49).

Differentiating ``ID(q, qd, FD(q, qd, tau)) = tau`` twice, with ``FD_u = -M^-1 ID_u`` and the tensor convention
``T[i, j, k] = d/dx_k (d f_i/dy_j)`` of :mod:`redmax.dynamics.rnea_second_order`:

    d2qdd_dq2[:, j, k]    = -M^-1 (d2tau_dq2[:, j, k] + dM[:, :, k] FD_q[:, j] + dM[:, :, j] FD_q[:, k])
    d2qdd_dqd2            = -M^-1 d2tau_dqd2
    d2qdd_dqdqd[:, j, k]  = -M^-1 (d2tau_dqdqd[:, j, k] + dM[:, :, j] FD_qd[:, k])
    d2qdd_dqdtau[:, j, k] = -M^-1 dM[:, :, j] M^-1[:, k]          (= d(M^-1)_{ik}/dq_j, Eq. 44)

with every inverse-dynamics derivative evaluated at ``qdd = FD(q, qd, tau)``.  The contractions are done as
batched matrix products (the "DTM" variant of §VI-A, the faster one for these sizes on this class of machine).
"""

from __future__ import annotations

import numpy as np

from redmax.dynamics.first_order import forward_state, rnea_derivatives
from redmax.dynamics.rnea_second_order import rnea_second_order_derivatives

__all__ = ["aba_second_order_derivatives"]


def _outer(Minv, X):
    """-M^-1 X for X (n, n, n) along its first axis."""
    n = Minv.shape[0]
    return -(Minv @ X.reshape(n, -1)).reshape(X.shape)


def _contract(dM, F):
    """C[i, j, k] = sum_l dM[i, l, k] F[l, j]  ((n, n, n) x (n, n))."""
    # (k, i, l) @ (l, j) -> (k, i, j)
    return np.matmul(np.ascontiguousarray(dM.transpose(2, 0, 1)), F).transpose(1, 2, 0)


def aba_second_order_derivatives(model, q, qd, tau, f_ext=None, jstate=None, gravity: bool = True,
                                 tangent: bool = False):
    """Second-order derivatives of forward dynamics (module docstring).

    Args:
        q, qd, tau: (ndof,) coordinates, rates and joint forces.
        f_ext: optional (nb, 6) external wrenches (body frames, angular first).
        jstate, gravity, tangent: as :func:`redmax.aba_derivatives`.
    Returns:
        ``(d2qdd_dq2, d2qdd_dqd2, d2qdd_dqdqd, d2qdd_dqdtau)``, each (ndof, ndof, ndof):
        ``d2qdd_dq2[i, j, k] = d/dq_k (dqdd_i/dq_j)``, ``d2qdd_dqd2[i, j, k] = d/dqd_k (dqdd_i/dqd_j)``,
        ``d2qdd_dqdqd[i, j, k] = d/dqd_k (dqdd_i/dq_j)``, ``d2qdd_dqdtau[i, j, k] = d/dtau_k (dqdd_i/dq_j)``.
    """
    qd, qdd, Minv = forward_state(model, q, qd, tau, f_ext, jstate, gravity, tangent)
    d_q, d_qd = rnea_derivatives(model, q, qd, qdd, f_ext, jstate, gravity, tangent)
    d2q, d2v, d2qv, dM = rnea_second_order_derivatives(model, q, qd, qdd, f_ext, jstate, gravity, tangent)
    FDq = -(Minv @ d_q)
    FDv = -(Minv @ d_qd)
    C = _contract(dM, FDq)  # C[i, j, k] = sum_l dM[i, l, k] FDq[l, j]
    out_qq = _outer(Minv, d2q + C + C.transpose(0, 2, 1))
    out_vv = _outer(Minv, d2v)
    out_qv = _outer(Minv, d2qv + _contract(dM, FDv).transpose(0, 2, 1))  # sum_l dM[i, l, j] FDv[l, k]
    out_qt = _outer(Minv, _contract(dM, Minv).transpose(0, 2, 1))  # sum_l dM[i, l, j] Minv[l, k]
    return out_qq, out_vv, out_qv, out_qt
