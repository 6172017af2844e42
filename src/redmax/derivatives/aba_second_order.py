"""Second-order derivatives of forward dynamics (FDSVA-SO: Singh, Russell & Wensing, §VI, Eqs. 46-49).

Differentiating ``ID(q, qd, FD(q, qd, tau)) = tau`` twice, with ``FD_u = -M^-1 ID_u`` and the tensor convention
``T[i, j, k] = d/dx_k (d f_i/dy_j)`` of :mod:`.rnea_second_order`:

    d2qdd_dq2[:, j, k]    = -M^-1 (d2tau_dq2[:, j, k] + dM[:, :, k] FD_q[:, j] + dM[:, :, j] FD_q[:, k])
    d2qdd_dqd2            = -M^-1 d2tau_dqd2
    d2qdd_dqdqd[:, j, k]  = -M^-1 (d2tau_dqdqd[:, j, k] + dM[:, :, j] FD_qd[:, k])
    d2qdd_dqdtau[:, j, k] = -M^-1 dM[:, :, j] M^-1[:, k]          (= d(M^-1)_{ik}/dq_j, Eq. 44)

with every inverse-dynamics derivative evaluated at ``qdd = FD(q, qd, tau)``.  The bracketed terms are formed
first (over the non-zero entries of dM on trees), then multiplied by -M^-1 as matrix products (the "DTM" variant of
§VI-A, the faster one for these sizes on this class of machine), on one BLAS thread (:func:`_one_blas_thread`).
"""

from __future__ import annotations

import threading

import numpy as np

from redmax._jit import FAST, njit
from redmax.derivatives.first_order import aba_derivatives, forward_state
from redmax.derivatives.rnea_second_order import rnea_second_order_derivatives

__all__ = ["aba_second_order_derivatives"]

class _OneBlasThread:
    """A context in which the BLAS libraries loaded at the first use run on one thread.

    The products below run right after the threaded second order of inverse dynamics: Numba's OpenMP workers
    still spin on the other cores, and OpenBLAS's workers, started by a product, spin after it while the next
    parallel region waits for those cores.  Talos, tangent rates, on 2 cores: 10.9 ms per call with NumPy's two
    BLAS threads against 1.2 ms with one (measured 2026-11-29, stop 42).  The libraries' controllers are found
    once (``threadpool_limits`` finds them on every use, ~0.2 ms) and their counts read and set directly.

    The limit is the process's: Python threads that overlap in it share one limit (a count of those inside), set
    by the first to enter and restored by the last to leave, so that overlapping calls cannot leave BLAS on one
    thread; while it is set, other threads' NumPy products run on one thread too.  (The OpenBLAS 0.3.31 of NumPy
    2.4's wheels ignores a new count set from a thread other than the main one once the main thread has set one:
    there the products keep its count.)"""

    def __init__(self):
        self._lock = threading.Lock()
        self._inside = 0
        self._libs = None  # threadpoolctl's controllers of the BLAS libraries, found at the first use (~0.2 ms)
        self._counts = []  # their thread counts before the first of the calls inside

    def __enter__(self):
        with self._lock:
            if self._inside == 0:
                if self._libs is None:
                    from threadpoolctl import ThreadpoolController

                    self._libs = ThreadpoolController().select(user_api="blas").lib_controllers
                self._counts = [lib.get_num_threads() for lib in self._libs]  # (read now: no cached value)
                for lib in self._libs:
                    lib.set_num_threads(1)
            self._inside += 1
        return self

    def __exit__(self, *exc):
        with self._lock:
            self._inside -= 1
            if self._inside == 0:
                for lib, k in zip(self._libs, self._counts, strict=True):
                    lib.set_num_threads(k)
        return False


_ONE_BLAS_THREAD = _OneBlasThread()


def _one_blas_thread():
    """The context of :class:`_OneBlasThread` (one per process)."""
    return _ONE_BLAS_THREAD


@njit(cache=True, fastmath=FAST)
def fdsva_terms(Minv, FDq, FDv, d2q, d2qv, dM):
    """The bracketed terms of the module docstring, ``(Xq, Xqv, Xqt)`` (n, n, n) each:
    ``Xq[a, j, k] = d2q[a, j, k] + sum_l dM[a, l, k] FD_q[l, j] + dM[a, l, j] FD_q[l, k]``,
    ``Xqv[a, j, k] = d2qv[a, j, k] + sum_l dM[a, l, j] FD_qd[l, k]``, ``Xqt[a, j, k] = sum_l dM[a, l, j]
    M^-1[l, k]``, over the non-zero entries of dM only (branch-induced sparsity: 10 % of them on talos), each
    adding three rows of n; scalar-generic (one scalar type for all six arrays).  Talos, tangent rates: 0.26 ms
    less than the dense batched product with the sums and transposes around it (0.42 ms; measured
    2026-11-29)."""
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
    most are (chains: about two thirds; chain of 36: 0.81 against 1.04 ms per call, chain of 100: 36 against 40
    ms; talos, 10 %: 0.80 against 0.98 ms; measured 2026-11-29)."""
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
    return tuple(np.matmul(nM, X.reshape(n, n * n)).reshape(n, n, n) for X in (Xq, d2v, Xqv, Xqt))


def aba_second_order_derivatives(model, q, qd, tau, f_ext=None, jstate=None, gravity: bool = True,
                                 tangent: bool = False):
    """Second-order derivatives of forward dynamics (module docstring).

    Args:
        q, qd, tau: (ndof,) coordinates, rates and joint forces.
        f_ext: optional (nb, 6) external wrenches (body frames, angular first).
        jstate, gravity, tangent: as :func:`redmax.aba_derivatives`.
    Returns:
        ``(d2qdd_dq2, d2qdd_dqd2, d2qdd_dqdqd, d2qdd_dqdtau)``, each (ndof, ndof, ndof), C-contiguous and
        writeable: ``d2qdd_dq2[i, j, k] = d/dq_k (dqdd_i/dq_j)``, ``d2qdd_dqd2[i, j, k] = d/dqd_k (dqdd_i/dqd_j)``,
        ``d2qdd_dqdqd[i, j, k] = d/dqd_k (dqdd_i/dq_j)``, ``d2qdd_dqdtau[i, j, k] = d/dtau_k (dqdd_i/dq_j)``.
        The products run on one BLAS thread (:class:`_OneBlasThread`: the process's limit while the call runs).
    """
    qd, qdd, _ = forward_state(model, q, qd, tau, f_ext, jstate, gravity, tangent, want_minv=False)  # (M^-1 below)
    FDq, FDv, Minv = aba_derivatives(model, q, qd, tau, f_ext, jstate, gravity, tangent)
    d2q, d2v, d2qv, dM = rnea_second_order_derivatives(model, q, qd, qdd, f_ext, jstate, gravity, tangent)
    with _one_blas_thread():
        return _products(np.asarray(Minv), np.asarray(FDq), np.asarray(FDv), d2q, d2v, d2qv, dM)
