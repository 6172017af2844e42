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
from redmax.derivatives.rnea_second_order import check_out_tensors, rnea_second_order_derivatives
from redmax.errors import ModelError

__all__ = ["aba_second_order_derivatives"]


@njit(cache=True, fastmath=FAST)
def fdsva_terms(Minv, FDq, FDv, d2q, d2qv, dM, Xq, Xqv, Xqt):
    """The bracketed terms of the module docstring into ``Xq``, ``Xqv``, ``Xqt`` (n, n, n) each:
    ``Xq[a, j, k] = d2q[a, j, k] + sum_l dM[a, l, k] FD_q[l, j] + dM[a, l, j] FD_q[l, k]``,
    ``Xqv[a, j, k] = d2qv[a, j, k] + sum_l dM[a, l, j] FD_qd[l, k]``, ``Xqt[a, j, k] = sum_l dM[a, l, j]
    M^-1[l, k]``, over the non-zero entries of dM only (branch-induced sparsity: about a tenth of them on a
    humanoid), each adding three rows of n; scalar-generic (one scalar type for all nine arrays)."""
    n = Minv.shape[0]
    Y = np.empty((n, n), dtype=Xq.dtype)  # Y[j, c] = sum_l dM[a, l, j] FD_q[l, c] of slab a
    for a in range(n):
        Y[:, :] = 0.0
        Xqv[a] = d2qv[a]
        Xqt[a] = 0.0
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


SPARSE_DM = 0.25  # below this fraction of non-zero entries of dM the bracketed terms skip its zeros


def _products(Minv, FDq, FDv, d2q, d2v, d2qv, dM, out=None):
    """The four tensors of the module docstring from M^-1 (n, n), FD_q, FD_qd (n, n) and the inverse-dynamics
    tensors (n, n, n), written into ``out`` (four (n, n, n) C-contiguous arrays; default new ones), which also
    hold the bracketed terms on their way (no other n^3 array is allocated: fresh arrays of that size cost more
    in page faults than the products cost in arithmetic).  The bracketed terms over the non-zero entries of dM
    (:func:`fdsva_terms`) on trees where fewer than ``SPARSE_DM`` of them are non-zero, else by batched products
    with dM's slabs, the faster one where most are (chains: about two thirds); then one (n, n) x (n, n^2)
    product per tensor with -M^-1 (exact: the sign moves into M^-1), each into the array whose contents were
    consumed last."""
    n = Minv.shape[0]
    if out is None:
        dt = np.result_type(Minv, FDq, FDv, d2q, d2v, d2qv, dM)
        out = tuple(np.empty((n, n, n), dtype=dt) for _ in range(4))
    O0, O1, O2, O3 = out
    nM = -Minv
    if np.count_nonzero(dM) < SPARSE_DM * dM.size:
        fdsva_terms(Minv, FDq, FDv, d2q, d2qv, dM, O2, O3, O1)  # Xq, Xqv, Xqt
        _product(nM, O2, O0)
        _product(nM, O3, O2)
        _product(nM, O1, O3)
    else:
        dMt = dM.transpose(0, 2, 1)  # dMt[i] = dM[i]^T
        np.matmul(FDq.T, dM, out=O1)  # O1[i, j, k] = sum_l dM[i, l, k] FD_q[l, j]
        np.add(d2q, O1, out=O3)
        O3 += O1.transpose(0, 2, 1)  # Xq
        _product(nM, O3, O0)
        np.matmul(dMt, FDv, out=O1)  # O1[i, j, k] = sum_l dM[i, l, j] FD_qd[l, k]
        np.add(d2qv, O1, out=O3)  # Xqv
        _product(nM, O3, O2)
        np.matmul(dMt, Minv, out=O1)  # Xqt[i, j, k] = sum_l dM[i, l, j] M^-1[l, k]
        _product(nM, O1, O3)
    _product(nM, d2v, O1)
    return out


ONE_THREAD_GEMM = 1 << 17  # multiply-adds of one BLAS call that OpenBLAS runs on the calling thread (m n k < 2^18)
SPLIT_GEMM = 1 << 22  # products up to this many multiply-adds (n <= 45) are cut into such calls


def _product(nM, X, out):
    """``out = nM @ X`` for (n, n) ``nM`` and (n, n, n) ``X``, ``out`` (C-contiguous, not overlapping X): one
    BLAS call when the product is large (where BLAS's threads pay), else column blocks of at most
    :data:`ONE_THREAD_GEMM` multiply-adds each."""
    n = nM.shape[0]
    X2 = X.reshape(n, n * n)
    o2 = out.reshape(n, n * n)
    if n * n * n * n > SPLIT_GEMM or n == 0:
        np.matmul(nM, X2, out=o2)
    else:
        w = max(1, ONE_THREAD_GEMM // (n * n))
        for c in range(0, n * n, w):
            np.matmul(nM, X2[:, c:c + w], out=o2[:, c:c + w])
    return out


def aba_second_order_derivatives(model, q, qd, tau, f_ext=None, jstate=None, gravity: bool = True,
                                 tangent: bool = False, *, out=None, threads=None):
    """Second-order derivatives of forward dynamics (module docstring).

    Args:
        q, qd, tau: (ndof,) coordinates, rates and joint forces.
        f_ext: optional (nb, 6) external wrenches (body frames, angular first).
        jstate, gravity, tangent: as :func:`redmax.aba_derivatives`.
        out: optional four float64, C-contiguous, writeable (ndof, ndof, ndof) arrays, not overlapping, to fill
            and return (float64 inputs): saves allocating 4 n^3 doubles per call (e.g. in a DDP loop).
        threads: threads of the inverse-dynamics tensors (:func:`redmax.rnea_second_order_derivatives`).
    Returns:
        ``(d2qdd_dq2, d2qdd_dqd2, d2qdd_dqdqd, d2qdd_dqdtau)``, each (ndof, ndof, ndof), C-contiguous and
        writeable: ``d2qdd_dq2[i, j, k] = d/dq_k (dqdd_i/dq_j)``, ``d2qdd_dqd2[i, j, k] = d/dqd_k (dqdd_i/dqd_j)``,
        ``d2qdd_dqdqd[i, j, k] = d/dqd_k (dqdd_i/dq_j)``, ``d2qdd_dqdtau[i, j, k] = d/dtau_k (dqdd_i/dq_j)``.
    """
    if out is not None:
        out = _check_out(model, out, q, qd, tau, f_ext)
    qd, qdd, _ = forward_state(model, q, qd, tau, f_ext, jstate, gravity, tangent, want_minv=False)  # (M^-1 below)
    FDq, FDv, Minv = aba_derivatives(model, q, qd, tau, f_ext, jstate, gravity, tangent)
    d2q, d2v, d2qv, dM = rnea_second_order_derivatives(model, q, qd, qdd, f_ext, jstate, gravity, tangent,
                                                       threads=threads)
    return _products(np.asarray(Minv), np.asarray(FDq), np.asarray(FDv), d2q, d2v, d2qv, dM, out)


NAMES = ("d2qdd_dq2", "d2qdd_dqd2", "d2qdd_dqdqd", "d2qdd_dqdtau")


def _check_out(model, out, q, qd, tau, f_ext) -> tuple:
    """The caller's ``out`` (:func:`.rnea_second_order.check_out_tensors`), for real inputs only."""
    from redmax.dynamics import _model

    model = _model(model, "aba_second_order_derivatives")
    out = check_out_tensors(model, out, model.ndof, "aba_second_order_derivatives", NAMES)
    for name, v in (("q", q), ("qd", qd), ("tau", tau), ("f_ext", f_ext)):
        if v is not None and np.iscomplexobj(v):
            raise ModelError(f"{model.name}: aba_second_order_derivatives: out= takes float64 results only, got "
                             f"complex {name}")
    return out
