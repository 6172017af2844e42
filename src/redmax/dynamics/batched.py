"""Batched recursive algorithms: one call evaluates B states in parallel (Numba ``prange``).

The public functions ``rm.rnea``, ``rm.aba``, ``rm.crba`` and ``rm.minv`` route here when their inputs carry a
leading batch axis (``q`` of shape (B, n)); batches of rnea and aba without external wrenches on models of fixed,
revolute and prismatic joints go to the vectorised lane kernels of :mod:`redmax.dynamics.lanes` instead.
Each kernel here splits the B states into chunks, one workspace per chunk
(a row of the caller's ``Wk``, reused by every state of the chunk: no per-state allocation), and runs the
single-state ``*_into`` kernels (:mod:`redmax.dynamics.rnea`, ``aba``, ``crba``) on rows of the outputs.  Each
chunk works on borrowed views (:mod:`redmax._kernels.borrow`) of the caller's arrays: Numba would otherwise update the
shared reference counts of the model's arrays atomically from both threads for every state (cache-line
ping-pong between the cores).  A state that fails (a singular joint-space inertia) is flagged in ``status``
(the caller names it) instead of raising inside a parallel region.

Shapes: ``Q, V, A`` (B, n); ``JS`` (B, nb) chart words, or (1, nb) shared by all states; ``F`` (B, nb, 6) body
wrenches, or (1, 0, 6) for none.  Outputs are written into preallocated arrays (``out``) of shape (B, n) or
(B, n, n).  float64 only.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from redmax._jit import FAST, njit
from redmax._kernels.borrow import borrowed
from redmax.dynamics.aba import NO_TANGENT, aba_into
from redmax.dynamics.crba import crba_into
from redmax.dynamics.minv import minv_kernel
from redmax.dynamics.rnea import rnea_into

__all__ = ["aba_batch", "chunks", "crba_batch", "minv_batch", "rnea_batch", "workspaces"]


def chunks(B: int) -> int:
    """Number of chunks for B states: a few per thread (load balance), never more than B."""
    return max(1, min(B, 4 * numba.get_num_threads()))


def workspaces(B: int, size: int) -> np.ndarray:
    """One workspace row of ``size`` per chunk, (chunks(B), size), owned by the caller (see the module docstring)."""
    return np.empty((chunks(B), size))


@njit(cache=True, inline="always")
def _row_js(Ii, JS, k):
    return JS[k] if JS.shape[0] > 1 else JS[0]


@njit(cache=True, inline="always")
def _row_f(F, k):
    return F[k] if F.shape[0] > 1 else F[0]


@njit(cache=True, inline="always")
def _span(c, B, nchunks):
    return c * B // nchunks, (c + 1) * B // nchunks


@njit(cache=True, parallel="prange", fastmath=FAST)
def rnea_batch(Ii, Ff, Q, V, A, JS, F, gscale, out, status, Wk):
    """Joint torques of every state into ``out`` (B, n); ``Wk`` (chunks, >= rnea_work_size) workspaces."""
    for c in prange(Wk.shape[0]):
        _rnea_chunk(Ii, Ff, Q, V, A, JS, F, gscale, out, status, Wk[c], c, Wk.shape[0])


@njit(cache=True, fastmath=FAST)
def _rnea_chunk(Ii, Ff, Q, V, A, JS, F, gscale, out, status, W, c, nchunks):
    Ii, Ff, Q, V, A = borrowed(Ii), borrowed(Ff), borrowed(Q), borrowed(V), borrowed(A)
    JS, F, out, W = borrowed(JS), borrowed(F), borrowed(out), borrowed(W)
    k0, k1 = _span(c, Q.shape[0], nchunks)
    for k in range(k0, k1):
        rnea_into(Ii, Ff, Q[k], V[k], A[k], _row_js(Ii, JS, k), _row_f(F, k), gscale, W, out[k])
        status[k] = _finite(out[k])


@njit(cache=True, parallel="prange", fastmath=FAST)
def aba_batch(Ii, Ff, Q, V, T, JS, F, gscale, out, status, Wk):
    """Accelerations of every state into ``out`` (B, n); ``status[k] = 1`` where a joint's D is singular."""
    for c in prange(Wk.shape[0]):
        _aba_chunk(Ii, Ff, Q, V, T, JS, F, gscale, out, status, Wk[c], c, Wk.shape[0])


@njit(cache=True, fastmath=FAST)
def _aba_chunk(Ii, Ff, Q, V, T, JS, F, gscale, out, status, W, c, nchunks):
    Ii, Ff, Q, V, T = borrowed(Ii), borrowed(Ff), borrowed(Q), borrowed(V), borrowed(T)
    JS, F, out, W = borrowed(JS), borrowed(F), borrowed(out), borrowed(W)
    k0, k1 = _span(c, Q.shape[0], nchunks)
    for k in range(k0, k1):
        status[k] = _aba_one(Ii, Ff, Q[k], V[k], T[k], _row_js(Ii, JS, k), _row_f(F, k), gscale, W, out[k])


@njit(cache=True, fastmath=FAST)
def _aba_one(Ii, Ff, q, qd, tau, js, f, gscale, W, qdd):
    try:
        aba_into(Ii, Ff, q, qd, tau, js, f, gscale, W, qdd, NO_TANGENT)
    except Exception:
        return 1
    return _finite(qdd)


@njit(cache=True, parallel="prange", fastmath=FAST)
def crba_batch(Ii, Ff, Q, JS, out, status, Wk):
    """Joint-space inertia of every state into ``out`` (B, n, n) (zeroed here)."""
    for c in prange(Wk.shape[0]):
        _crba_chunk(Ii, Ff, Q, JS, out, status, Wk[c], c, Wk.shape[0])


@njit(cache=True, fastmath=FAST)
def _crba_chunk(Ii, Ff, Q, JS, out, status, W, c, nchunks):
    Ii, Ff, Q, JS, out, W = borrowed(Ii), borrowed(Ff), borrowed(Q), borrowed(JS), borrowed(out), borrowed(W)
    n = Ii[1]
    k0, k1 = _span(c, Q.shape[0], nchunks)
    for k in range(k0, k1):
        M = out[k]
        for r in range(n):
            for s in range(n):
                M[r, s] = 0.0
        crba_into(Ii, Ff, Q[k], _row_js(Ii, JS, k), W, M)
        status[k] = _finite(M)


@njit(cache=True, inline="always")
def _finite(x):
    """0 when every entry of x is finite, else 2 (an overflow)."""
    for v in x.ravel():
        if not np.isfinite(v):
            return 2
    return 0


@njit(cache=True, parallel="prange", fastmath=FAST)
def minv_batch(Ii, Ff, Q, JS, out, status, nchunks):
    """Inverse joint-space inertia of every state into ``out`` (B, n, n) (minv_kernel allocates its own)."""
    B = Q.shape[0]
    for c in prange(nchunks):
        for k in range(c * B // nchunks, (c + 1) * B // nchunks):
            status[k] = _minv_one(Ii, Ff, Q[k], _row_js(Ii, JS, k), out[k])


@njit(cache=True, fastmath=FAST)
def _minv_one(Ii, Ff, q, js, out):
    try:
        Mi = minv_kernel(Ii, Ff, q, js)
    except Exception:
        return 1
    n = q.shape[0]
    for r in range(n):
        for s in range(n):
            v = Mi[r, s]
            if not np.isfinite(v):
                return 1
            out[r, s] = v
    return 0
