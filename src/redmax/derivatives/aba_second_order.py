"""Second-order derivatives of forward dynamics (FDSVA-SO: Singh, Russell & Wensing, §VI, Eqs. 46-49).

Differentiating ``ID(q, qd, FD(q, qd, tau)) = tau`` twice, with ``FD_u = -M^-1 ID_u`` and the tensor convention
``T[i, j, k] = d/dx_k (d f_i/dy_j)`` of :mod:`.rnea_second_order`:

    d2qdd_dq2[:, j, k]    = -M^-1 (d2tau_dq2[:, j, k] + dM[:, :, k] FD_q[:, j] + dM[:, :, j] FD_q[:, k])
    d2qdd_dqd2            = -M^-1 d2tau_dqd2
    d2qdd_dqdqd[:, j, k]  = -M^-1 (d2tau_dqdqd[:, j, k] + dM[:, :, j] FD_qd[:, k])
    d2qdd_dqdtau[:, j, k] = -M^-1 dM[:, :, j] M^-1[:, k]          (= d(M^-1)_{ik}/dq_j, Eq. 44)

with every inverse-dynamics derivative evaluated at ``qdd = FD(q, qd, tau)``.  The bracketed terms are formed
first (over the non-zero entries of dM on trees), then multiplied by -M^-1 as matrix products (the "DTM" variant of
§VI-A), NumPy's (BLAS).  A product of up to :data:`SPLIT_GEMM` multiply-adds (n <= 45) is cut into column blocks
of at most :data:`ONE_THREAD_GEMM` each, which BLAS runs on the calling thread: on these sizes its threads gain
nothing, and OpenBLAS's threads spin for about 0.1 s after a threaded call, taking the cores that redmax's own
threads (the second-order walk, batched calls) want next.  The process's BLAS settings are never changed.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax.derivatives.first_order import aba_derivatives, forward_state
from redmax.derivatives.rnea_second_order import rnea_second_order_derivatives

__all__ = ["aba_second_order_derivatives"]


@njit(cache=True, fastmath=FAST)
def fdsva_terms(Minv, FDq, FDv, d2q, d2qv, dM):
    """The bracketed terms of the module docstring, ``(Xq, Xqv, Xqt)`` (n, n, n) each:
    ``Xq[a, j, k] = d2q[a, j, k] + sum_l dM[a, l, k] FD_q[l, j] + dM[a, l, j] FD_q[l, k]``,
    ``Xqv[a, j, k] = d2qv[a, j, k] + sum_l dM[a, l, j] FD_qd[l, k]``, ``Xqt[a, j, k] = sum_l dM[a, l, j]
    M^-1[l, k]``, over the non-zero entries of dM only (branch-induced sparsity: about a tenth of them on a
    humanoid), each adding three rows of n; scalar-generic (one scalar type for all six arrays)."""
    n = Minv.shape[0]
    Xq = np.empty((n, n, n), dtype=d2q.dtype)
    Xqv = np.empty((n, n, n), dtype=d2q.dtype)
    Xqt = np.zeros((n, n, n), dtype=d2q.dtype)
    Y = np.empty((n, n), dtype=d2q.dtype)  # Y[j, c] = sum_l dM[a, l, j] FD_q[l, c] of slab a
    for a in range(n):
        Y[:, :] = 0.0
        Xqv[a] = d2qv[a]
        for l in range(n):
            for j in range(n):
                d = dM[a, l, j]
                if d != 0:
                    for c in range(n):
                        Y[j, c] += d * FDq[l, c]
                        Xqv[a, j, c] += d * FDv[l, c]
                        Xqt[a, j, c] += d * Minv[l, c]
        for j in range(n):
            for k in range(n):
                Xq[a, j, k] = d2q[a, j, k] + Y[k, j] + Y[j, k]
    return Xq, Xqv, Xqt


SPARSE_DM = 0.25  # below this fraction of non-zero entries of dM the bracketed terms skip its zeros


def _products(Minv, FDq, FDv, d2q, d2v, d2qv, dM):
    """The four tensors of the module docstring from M^-1 (n, n), FD_q, FD_qd (n, n) and the inverse-dynamics
    tensors (n, n, n): the bracketed terms, then one (n, n) x (n, n^2) product per tensor with -M^-1 (exact: the
    sign moves into M^-1).  The bracketed terms over the non-zero entries of dM (:func:`fdsva_terms`) on trees
    where fewer than ``SPARSE_DM`` of them are non-zero, else by one dense batched product, the faster one where
    most are (chains: about two thirds)."""
    n = Minv.shape[0]
    if np.count_nonzero(dM) < SPARSE_DM * dM.size:
        Xq, Xqv, Xqt = fdsva_terms(Minv, FDq, FDv, d2q, d2qv, dM)
    else:
        Dt = np.ascontiguousarray(dM.transpose(2, 0, 1))  # Dt[k, i, l] = dM[i, l, k]
        R = np.matmul(Dt, np.concatenate((FDq, FDv, Minv), axis=1))  # R[k, i, c] = sum_l dM[i, l, k] F[l, c]
        Cq = R[:, :, :n].transpose(1, 2, 0)  # Cq[i, j, k] = sum_l dM[i, l, k] FD_q[l, j]
        Xq = np.add(d2q, Cq)
        Xq += Cq.transpose(0, 2, 1)  # + sum_l dM[i, l, j] FD_q[l, k]
        Xqv = np.add(d2qv, R[:, :, n:2 * n].transpose(1, 0, 2))  # + sum_l dM[i, l, j] FD_qd[l, k]
        Xqt = np.ascontiguousarray(R[:, :, 2 * n:].transpose(1, 0, 2))  # sum_l dM[i, l, j] M^-1[l, k]
    nM = -Minv
    return tuple(_product(nM, X) for X in (Xq, d2v, Xqv, Xqt))


ONE_THREAD_GEMM = 1 << 17  # multiply-adds of one BLAS call that OpenBLAS runs on the calling thread (m n k < 2^18)
SPLIT_GEMM = 1 << 22  # products up to this many multiply-adds (n <= 45) are cut into such calls


def _product(nM, X):
    """``nM @ X`` for (n, n) ``nM`` and (n, n, n) ``X`` as an (n, n, n) array: one BLAS call when the product is
    large (where BLAS's threads pay), else column blocks of at most :data:`ONE_THREAD_GEMM` multiply-adds each."""
    n = nM.shape[0]
    X2 = X.reshape(n, n * n)
    out = np.empty((n, n * n), dtype=np.result_type(nM, X2))
    if n * n * n * n > SPLIT_GEMM or n == 0:
        np.matmul(nM, X2, out=out)
    else:
        w = max(1, ONE_THREAD_GEMM // (n * n))
        for c in range(0, n * n, w):
            np.matmul(nM, X2[:, c:c + w], out=out[:, c:c + w])
    return out.reshape(n, n, n)


def aba_second_order_derivatives(model, q, qd, tau, f_ext=None, jstate=None, gravity: bool = True,
                                 tangent: bool = False, *, threads=None):
    """Second-order derivatives of forward dynamics (module docstring).

    Args:
        q, qd, tau: (ndof,) coordinates, rates and joint forces.
        f_ext: optional (nb, 6) external wrenches (body frames, angular first).
        jstate, gravity, tangent: as :func:`redmax.aba_derivatives`.
    Returns:
        ``(d2qdd_dq2, d2qdd_dqd2, d2qdd_dqdqd, d2qdd_dqdtau)``, each (ndof, ndof, ndof), C-contiguous and
        writeable: ``d2qdd_dq2[i, j, k] = d/dq_k (dqdd_i/dq_j)``, ``d2qdd_dqd2[i, j, k] = d/dqd_k (dqdd_i/dqd_j)``,
        ``d2qdd_dqdqd[i, j, k] = d/dqd_k (dqdd_i/dq_j)``, ``d2qdd_dqdtau[i, j, k] = d/dtau_k (dqdd_i/dq_j)``.
        threads: threads of the inverse-dynamics tensors (:func:`redmax.rnea_second_order_derivatives`).
    """
    qd, qdd, _ = forward_state(model, q, qd, tau, f_ext, jstate, gravity, tangent, want_minv=False)  # (M^-1 below)
    FDq, FDv, Minv = aba_derivatives(model, q, qd, tau, f_ext, jstate, gravity, tangent)
    d2q, d2v, d2qv, dM = rnea_second_order_derivatives(model, q, qd, qdd, f_ext, jstate, gravity, tangent,
                                                       threads=threads)
    return _products(np.asarray(Minv), np.asarray(FDq), np.asarray(FDv), d2q, d2v, d2qv, dM)
