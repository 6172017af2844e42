"""Derivatives of a joint's transform, adjoint and Jacobian with respect to its coordinates (Sueda notes §3.2).

For joint i with coordinates q (n,) and rates qd (n,), in the joint's own (child) frame:

* ``Q(q)`` (4, 4), ``dQ[:, :, k] = dQ/dq_k = Q [S_k]``;
* ``A = Ad(Q)`` (6, 6), ``dA[:, :, k] = A ad(S_k)`` (notes Eqs. 3.16-3.22 for each family, written once for all:
  ``Q^-1 dQ/dq_k = [S_k]`` gives ``dAd(Q)/dq_k = Ad(Q) ad(S_k)``, notes Eq. 1.18);
* ``Adot = A ad(S qd)`` and ``dAdot[:, :, k] = A ad(S_k) ad(S qd) + A ad(dS_k qd)`` with
  ``dS_k qd = sum_a dS[:, a, k] qd_a``;
* ``S``, ``Sdot`` (6, n), ``dS[:, a, k] = dS[:, a]/dq_k``, ``dSdot[:, a, k]`` (6, n, n) from the joint derivative
  kernels of :mod:`redmax.joints.derivatives` (every family: spline curves and surfaces, Euler charts,
  exponential coordinates, composites).

All arrays keep the dtype of q (complex step works).
"""

from __future__ import annotations

import numpy as np

from redmax.joints.derivatives import derivatives
from redmax.spatial import Ad, ad

__all__ = ["joint_jets"]


def joint_jets(model, i: int, q, qd, jstate=None) -> dict:
    """Q, A, Adot, S, Sdot and their q-derivatives dQ, dA, dAdot, dS, dSdot of joint ``i`` (module docstring).

    Args:
        model: a compiled Model.  i: joint (= body) index.
        q, qd: (n_i,) the joint's coordinates and rates.  jstate: (nb,) chart words (default: initial charts).
    Returns:
        dict with ``Q`` (4, 4), ``A``, ``Adot`` (6, 6), ``S``, ``Sdot`` (6, n_i), ``dQ`` (4, 4, n_i),
        ``dA``, ``dAdot`` (6, 6, n_i), ``dS``, ``dSdot`` (6, n_i, n_i); the last axis indexes d/dq_k.
    """
    d = derivatives(model, i, q, qd, jstate)
    Q, S, dS = d["Q"], d["S"], d["dS"]
    n = S.shape[1]
    dt = np.result_type(Q.dtype, np.asarray(qd).dtype)
    qd = np.asarray(qd, dtype=dt)
    A = Ad(np.ascontiguousarray(Q))
    w = S @ qd
    adw = ad(np.ascontiguousarray(w))
    dA = np.zeros((6, 6, n), dtype=dt)
    dAdot = np.zeros((6, 6, n), dtype=dt)
    for k in range(n):
        adk = ad(np.ascontiguousarray(S[:, k]))
        dA[:, :, k] = A @ adk
        dAdot[:, :, k] = dA[:, :, k] @ adw + A @ ad(np.ascontiguousarray(dS[:, :, k] @ qd))
    return {"Q": Q, "A": A, "Adot": A @ adw, "S": S, "Sdot": d["Sdot"], "dQ": d["dQ"], "dA": dA, "dAdot": dAdot,
            "dS": dS, "dSdot": d["dSdot"]}
