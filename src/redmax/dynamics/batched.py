"""Batched recursive algorithms: one call evaluates B states, split into chunks run on redmax's threads.

The public functions ``rm.rnea``, ``rm.aba``, ``rm.crba`` and ``rm.minv`` route here when their inputs carry a
leading batch axis (``q`` of shape (B, n)); batches of rnea and aba without external wrenches on models of fixed,
revolute and prismatic joints go to the vectorised lane kernels of :mod:`redmax.dynamics.lanes` instead.
Each kernel here splits the B states into contiguous chunks (:func:`chunks`), one workspace per chunk (a row of
the caller's ``Wk``, reused by every state of the chunk: no per-state allocation), and runs the single-state
``*_into`` kernels (:mod:`redmax.dynamics.rnea`, ``aba``, ``crba``) on rows of the outputs.  The chunks run on
the help-first pool of :mod:`redmax._kernels.pool` (``threads`` threads: the calling thread and the workers that
are free), so a batch costs at most about its one-thread time when other processes hold the cores.  Each chunk
works on borrowed views (:mod:`redmax._kernels.borrow`) of the caller's arrays: Numba would otherwise update the
shared reference counts of the model's arrays atomically from both threads for every state (cache-line
ping-pong between the cores).  A state that fails (a singular joint-space inertia) is flagged in ``status``
(the caller names it) instead of raising inside a chunk.

Shapes: ``Q, V, A`` (B, n); ``JS`` (B, nb) chart words, or (1, nb) shared by all states; ``F`` (B, nb, 6) body
wrenches, or (1, 0, 6) for none.  Outputs are written into preallocated arrays (``out``) of shape (B, n) or
(B, n, n).  float64 only.  Every driver takes ``T`` (an int64 table of at least ``TABLE`` entries, the chunk
function's view of the arguments), ``ctl`` and ``helpers`` (:func:`redmax._kernels.pool.pool_for`).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax._kernels.borrow import borrowed
from redmax._kernels.pool import pool_run
from redmax._kernels.tables import chunk_function, put, put_float, table_of, take1, take1_ro, take2, take3, take_float
from redmax.dynamics.aba import NO_TANGENT, aba_into
from redmax.dynamics.crba import crba_into
from redmax.dynamics.minv import minv_kernel
from redmax.dynamics.rnea import rnea_into

__all__ = ["TABLE", "aba_batch", "chunks", "crba_batch", "minv_batch", "rnea_batch", "workspaces"]

TABLE = 40  # entries of a chunk table: at most 11 arrays of up to 3 dimensions and a float


def chunks(B: int, threads: int) -> int:
    """Number of chunks for B states on ``threads`` threads: a few per thread (the calling thread takes over the
    chunks of a worker that is not running), never more than B."""
    return max(1, min(B, 4 * threads if threads > 1 else 1))


def workspaces(B: int, size: int, threads: int) -> np.ndarray:
    """One workspace row of ``size`` per chunk, (chunks(B, threads), size), owned by the caller (see the module
    docstring)."""
    return np.empty((chunks(B, threads), size))


@njit(cache=True, inline="always")
def _row_js(Ii, JS, k):
    return JS[k] if JS.shape[0] > 1 else JS[0]


@njit(cache=True, inline="always")
def _row_f(F, k):
    return F[k] if F.shape[0] > 1 else F[0]


@njit(cache=True, inline="always")
def _span(c, B, nchunks):
    return c * B // nchunks, (c + 1) * B // nchunks


@njit(cache=True, inline="always")
def _states(Ii, Ff, Q, V, A, JS, F, gscale, out, status, Wk, T):
    """The table of the per-state drivers (:func:`_unpack_states`)."""
    k = put(T, 0, Ii)
    k = put(T, k, Ff)
    k = put(T, k, Q)
    k = put(T, k, V)
    k = put(T, k, A)
    k = put(T, k, JS)
    k = put(T, k, F)
    k = put(T, k, out)
    k = put(T, k, status)
    k = put(T, k, Wk)
    put_float(T, k, gscale)


@njit(cache=True, inline="always")
def _unpack_states(ctx):
    """The arrays :func:`_states` stored: ``Ii, Ff, Q, V, A, JS, F, out, status, Wk, gscale``."""
    T = table_of(ctx, TABLE)
    Ii, k = take1_ro(T, 0, np.int64)
    Ff, k = take1_ro(T, k, np.float64)
    Q, k = take2(T, k, np.float64)
    V, k = take2(T, k, np.float64)
    A, k = take2(T, k, np.float64)
    JS, k = take2(T, k, np.int64)
    F, k = take3(T, k, np.float64)
    out, k = take2(T, k, np.float64)
    status, k = take1(T, k, np.int64)
    Wk, k = take2(T, k, np.float64)
    g, k = take_float(T, k)
    return Ii, Ff, Q, V, A, JS, F, out, status, Wk, g


# ------------------------------------------------------------------------------------------------------------
# rnea


@njit(cache=True, nogil=True)
def rnea_batch(Ii, Ff, Q, V, A, JS, F, gscale, out, status, Wk, T, ctl, helpers, fn):
    """Joint torques of every state into ``out`` (B, n); ``Wk`` (chunks, >= rnea_work_size) workspaces; ``fn``
    the address of :data:`RNEA_CHUNK`."""
    _states(Ii, Ff, Q, V, A, JS, F, gscale, out, status, Wk, T)
    pool_run(ctl, fn, T.ctypes.data, Wk.shape[0], helpers)


@chunk_function
def RNEA_CHUNK(ctx, c):
    """Chunk c of :func:`rnea_batch`."""
    Ii, Ff, Q, V, A, JS, F, out, status, Wk, g = _unpack_states(ctx)
    _rnea_chunk(Ii, Ff, Q, V, A, JS, F, g, out, status, Wk[c], c, Wk.shape[0])


@njit(cache=True, fastmath=FAST)
def _rnea_chunk(Ii, Ff, Q, V, A, JS, F, gscale, out, status, W, c, nchunks):
    Ii, Ff, Q, V, A = borrowed(Ii), borrowed(Ff), borrowed(Q), borrowed(V), borrowed(A)
    JS, F, out, W = borrowed(JS), borrowed(F), borrowed(out), borrowed(W)
    k0, k1 = _span(c, Q.shape[0], nchunks)
    for k in range(k0, k1):
        rnea_into(Ii, Ff, Q[k], V[k], A[k], _row_js(Ii, JS, k), _row_f(F, k), gscale, W, out[k])
        status[k] = _finite(out[k])


# ------------------------------------------------------------------------------------------------------------
# aba


@njit(cache=True, nogil=True)
def aba_batch(Ii, Ff, Q, V, Tau, JS, F, gscale, out, status, Wk, T, ctl, helpers, fn):
    """Accelerations of every state into ``out`` (B, n); ``status[k] = 1`` where a joint's D is singular; ``fn``
    the address of :data:`ABA_CHUNK`."""
    _states(Ii, Ff, Q, V, Tau, JS, F, gscale, out, status, Wk, T)
    pool_run(ctl, fn, T.ctypes.data, Wk.shape[0], helpers)


@chunk_function
def ABA_CHUNK(ctx, c):
    """Chunk c of :func:`aba_batch`."""
    Ii, Ff, Q, V, Tau, JS, F, out, status, Wk, g = _unpack_states(ctx)
    _aba_chunk(Ii, Ff, Q, V, Tau, JS, F, g, out, status, Wk[c], c, Wk.shape[0])


@njit(cache=True, fastmath=FAST)
def _aba_chunk(Ii, Ff, Q, V, Tau, JS, F, gscale, out, status, W, c, nchunks):
    Ii, Ff, Q, V, Tau = borrowed(Ii), borrowed(Ff), borrowed(Q), borrowed(V), borrowed(Tau)
    JS, F, out, W = borrowed(JS), borrowed(F), borrowed(out), borrowed(W)
    k0, k1 = _span(c, Q.shape[0], nchunks)
    for k in range(k0, k1):
        status[k] = _aba_one(Ii, Ff, Q[k], V[k], Tau[k], _row_js(Ii, JS, k), _row_f(F, k), gscale, W, out[k])


@njit(cache=True, fastmath=FAST)
def _aba_one(Ii, Ff, q, qd, tau, js, f, gscale, W, qdd):
    try:
        aba_into(Ii, Ff, q, qd, tau, js, f, gscale, W, qdd, NO_TANGENT)
    except Exception:
        return 1
    return _finite(qdd)


# ------------------------------------------------------------------------------------------------------------
# crba and minv


@njit(cache=True, inline="always")
def _configurations(Ii, Ff, Q, JS, out, status, Wk, T):
    k = put(T, 0, Ii)
    k = put(T, k, Ff)
    k = put(T, k, Q)
    k = put(T, k, JS)
    k = put(T, k, out)
    k = put(T, k, status)
    put(T, k, Wk)


@njit(cache=True, inline="always")
def _unpack_configurations(ctx):
    """The arrays :func:`_configurations` stored: ``Ii, Ff, Q, JS, out, status, Wk``."""
    T = table_of(ctx, TABLE)
    Ii, k = take1_ro(T, 0, np.int64)
    Ff, k = take1_ro(T, k, np.float64)
    Q, k = take2(T, k, np.float64)
    JS, k = take2(T, k, np.int64)
    out, k = take3(T, k, np.float64)
    status, k = take1(T, k, np.int64)
    Wk, k = take2(T, k, np.float64)
    return Ii, Ff, Q, JS, out, status, Wk


@njit(cache=True, nogil=True)
def crba_batch(Ii, Ff, Q, JS, out, status, Wk, T, ctl, helpers, fn):
    """Joint-space inertia of every state into ``out`` (B, n, n) (zeroed here); ``fn`` the address of
    :data:`CRBA_CHUNK`."""
    _configurations(Ii, Ff, Q, JS, out, status, Wk, T)
    pool_run(ctl, fn, T.ctypes.data, Wk.shape[0], helpers)


@chunk_function
def CRBA_CHUNK(ctx, c):
    """Chunk c of :func:`crba_batch`."""
    Ii, Ff, Q, JS, out, status, Wk = _unpack_configurations(ctx)
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


@njit(cache=True, nogil=True)
def minv_batch(Ii, Ff, Q, JS, out, status, Wk, T, ctl, helpers, fn):
    """Inverse joint-space inertia of every state into ``out`` (B, n, n) (minv_kernel allocates its own; ``Wk``
    (chunks, 0) only counts the chunks); ``fn`` the address of :data:`MINV_CHUNK`."""
    _configurations(Ii, Ff, Q, JS, out, status, Wk, T)
    pool_run(ctl, fn, T.ctypes.data, Wk.shape[0], helpers)


@chunk_function
def MINV_CHUNK(ctx, c):
    """Chunk c of :func:`minv_batch`."""
    Ii, Ff, Q, JS, out, status, Wk = _unpack_configurations(ctx)
    B = Q.shape[0]
    nchunks = Wk.shape[0]
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
