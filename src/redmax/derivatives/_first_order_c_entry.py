"""C entry points of the first-order lean call (``rnea_derivatives``, ``aba_derivatives``) for
:class:`redmax._ccall.Table`.

The common call -- float64 C-contiguous vectors, gravity, no external wrench, the initial charts -- would spend
microseconds around a kernel of a few microseconds in the Numba dispatcher (matching and unboxing the arrays,
boxing the result tuple) and the Python checks in front of it.  Here a ``numba.cfunc`` of the C signature ``int64
kernel(int64 *T)`` reads every array from an int64 table ``T``; ``Table``'s C code checks the caller's vectors
and result matrices (exact float64 ndarrays of the right shape, C-contiguous, aligned, native order; the results
writeable) and writes their data addresses into ``T``; the entry point runs the kernel of the model's chain kind
(:func:`.rnea_first_order.chain_kind`; inlined: this is its only compiled copy on the common path) and copies its
matrices into the results.  Nothing is raised: 0 on success, -2 when the kernel raised (a non-finite input or
result, a singular joint inertia); the caller then runs its checked path, which names the problem.

Table layout (``nvar`` = 5 for ``rnea_derivatives``, 6 for ``aba_derivatives``)::

    T[0:2 nvar]   (address, spec) of q, qd, qdd or tau (spec 1: 1-D of length n) and the results dq, dqd
                  [, Minv] (spec -2: writeable (n, n)); the addresses are written by Table's call
    T[2 nvar]     n
    then          Ii, Ff, CI, jstate: (address, length) each; f_ext: (address, rows) of an (rows, 6) array;
                  tangent (0 or 1)
"""

from __future__ import annotations

import numpy as np
from numba import carray, cfunc, typeof, types

from redmax._jit import compiling, njit
from redmax._kernels.tables import as_ptr
from redmax.derivatives.aba_first_order import (
    aba_derivatives_aligned,
    aba_derivatives_core,
    aba_derivatives_general,
    aba_derivatives_tangent_aligned,
    aba_derivatives_tangent_core,
    aba_derivatives_tangent_general,
)
from redmax.derivatives.rnea_first_order import (
    rnea_derivatives_aligned,
    rnea_derivatives_core,
    rnea_derivatives_general,
)
from redmax.dynamics._c_entry import _readonly

__all__ = ["NVAR", "address", "table"]

NVAR = {"rnea": 5, "aba": 6}
_SIG = types.int64(types.CPointer(types.int64))
_I64R = types.Array(types.int64, 1, "C", readonly=True)
FIXED_TYPES = (_I64R, types.Array(types.float64, 1, "C", readonly=True), _I64R)  # Ii, Ff, CI


@njit(cache=True, inline="always")
def _inputs(T, o):
    """``(Ii, Ff, CI, a, b, c, jstate, f_ext, tangent, n)`` from the table T whose fixed slots start at ``o``."""
    n = T[o - 1]
    return (_readonly(carray(as_ptr(T[o], np.int64), (T[o + 1],))),
            _readonly(carray(as_ptr(T[o + 2], np.float64), (T[o + 3],))),
            _readonly(carray(as_ptr(T[o + 4], np.int64), (T[o + 5],))),
            carray(as_ptr(T[0], np.float64), (n,)), carray(as_ptr(T[2], np.float64), (n,)),
            carray(as_ptr(T[4], np.float64), (n,)), carray(as_ptr(T[o + 6], np.int64), (T[o + 7],)),
            _readonly(carray(as_ptr(T[o + 8], np.float64), (T[o + 9], 6))), T[o + 10] != 0, n)


@njit(cache=True, inline="always")
def _store(T, k, src, n):
    """Copy the (n, n) matrix ``src`` into the result of slot k."""
    dst = carray(as_ptr(T[2 * k], np.float64), (n, n))
    for r in range(n):
        for c in range(n):
            dst[r, c] = src[r, c]


@njit(cache=True, inline="always")
def _finite(a, b, c, n):
    """All of the three input vectors finite (a non-finite input is declined before the kernel sees it: its
    caller's checked path names it)."""
    for i in range(n):
        if not (np.isfinite(a[i]) and np.isfinite(b[i]) and np.isfinite(c[i])):
            return False
    return True


# one entry point per kernel (a function of its own: compiled only for the models that call it)


def _rnea_core(T):
    try:
        Ii, Ff, CI, q, qd, qdd, js, fb, tg, n = _inputs(T, 11)
        if not _finite(q, qd, qdd, n):
            return -2
        dq, dv = rnea_derivatives_core(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, tg)
        _store(T, 3, dq, n)
        _store(T, 4, dv, n)
        return 0
    except Exception:  # rejected: the caller's checked path names the problem
        return -2


def _rnea_aligned(T):
    try:
        Ii, Ff, CI, q, qd, qdd, js, fb, tg, n = _inputs(T, 11)
        if not _finite(q, qd, qdd, n):
            return -2
        dq, dv = rnea_derivatives_aligned(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, tg)
        _store(T, 3, dq, n)
        _store(T, 4, dv, n)
        return 0
    except Exception:
        return -2


def _rnea_general(T):
    try:
        Ii, Ff, CI, q, qd, qdd, js, fb, tg, n = _inputs(T, 11)
        if not _finite(q, qd, qdd, n):
            return -2
        dq, dv = rnea_derivatives_general(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, tg)
        _store(T, 3, dq, n)
        _store(T, 4, dv, n)
        return 0
    except Exception:
        return -2


def _aba_core(T):
    try:
        Ii, Ff, CI, q, qd, tau, js, fb, tg, n = _inputs(T, 13)
        if not _finite(q, qd, tau, n):
            return -2
        dq, dv, Minv = aba_derivatives_core(Ii, Ff, CI, q, qd, tau, js, fb, 1.0)
        _store(T, 3, dq, n)
        _store(T, 4, dv, n)
        _store(T, 5, Minv, n)
        return 0
    except Exception:
        return -2


def _aba_aligned(T):
    try:
        Ii, Ff, CI, q, qd, tau, js, fb, tg, n = _inputs(T, 13)
        if not _finite(q, qd, tau, n):
            return -2
        dq, dv, Minv = aba_derivatives_aligned(Ii, Ff, CI, q, qd, tau, js, fb, 1.0)
        _store(T, 3, dq, n)
        _store(T, 4, dv, n)
        _store(T, 5, Minv, n)
        return 0
    except Exception:
        return -2


def _aba_general(T):
    try:
        Ii, Ff, CI, q, qd, tau, js, fb, tg, n = _inputs(T, 13)
        if not _finite(q, qd, tau, n):
            return -2
        dq, dv, Minv = aba_derivatives_general(Ii, Ff, CI, q, qd, tau, js, fb, 1.0)
        _store(T, 3, dq, n)
        _store(T, 4, dv, n)
        _store(T, 5, Minv, n)
        return 0
    except Exception:
        return -2


def _aba_tangent_core(T):
    try:
        Ii, Ff, CI, q, qd, tau, js, fb, tg, n = _inputs(T, 13)
        if not _finite(q, qd, tau, n):
            return -2
        dq, dv, Minv = aba_derivatives_tangent_core(Ii, Ff, CI, q, qd, tau, js, fb, 1.0)
        _store(T, 3, dq, n)
        _store(T, 4, dv, n)
        _store(T, 5, Minv, n)
        return 0
    except Exception:
        return -2


def _aba_tangent_aligned(T):
    try:
        Ii, Ff, CI, q, qd, tau, js, fb, tg, n = _inputs(T, 13)
        if not _finite(q, qd, tau, n):
            return -2
        dq, dv, Minv = aba_derivatives_tangent_aligned(Ii, Ff, CI, q, qd, tau, js, fb, 1.0)
        _store(T, 3, dq, n)
        _store(T, 4, dv, n)
        _store(T, 5, Minv, n)
        return 0
    except Exception:
        return -2


def _aba_tangent_general(T):
    try:
        Ii, Ff, CI, q, qd, tau, js, fb, tg, n = _inputs(T, 13)
        if not _finite(q, qd, tau, n):
            return -2
        dq, dv, Minv = aba_derivatives_tangent_general(Ii, Ff, CI, q, qd, tau, js, fb, 1.0)
        _store(T, 3, dq, n)
        _store(T, 4, dv, n)
        _store(T, 5, Minv, n)
        return 0
    except Exception:
        return -2


_ENTRIES = {("rnea", False, 0): _rnea_core, ("rnea", False, 1): _rnea_aligned, ("rnea", False, 2): _rnea_general,
            ("rnea", True, 0): _rnea_core, ("rnea", True, 1): _rnea_aligned, ("rnea", True, 2): _rnea_general,
            ("aba", False, 0): _aba_core, ("aba", False, 1): _aba_aligned, ("aba", False, 2): _aba_general,
            ("aba", True, 0): _aba_tangent_core, ("aba", True, 1): _aba_tangent_aligned,
            ("aba", True, 2): _aba_tangent_general}
_COMPILED: dict = {}


def address(kind: str, tangent: bool, chain: int) -> int:
    """The C address of the entry point of ``kind`` ("rnea" or "aba"), ``tangent`` and the chain kind ``chain``,
    compiled (or loaded from Numba's cache) on first use."""
    py = _ENTRIES[(kind, bool(tangent), chain)]
    cf = _COMPILED.get(py)
    if cf is None:
        with compiling(py.__name__):
            cf = _COMPILED[py] = cfunc(_SIG, cache=True)(py)
    return cf.address


def table(kind: str, n: int, Ii, Ff, CI, js, fb, tangent: bool):
    """The int64 table of the module docstring, or None when ``Ii``, ``Ff``, ``CI`` do not have the types of
    ``FIXED_TYPES`` (the caller keeps its other paths).  The caller keeps the arrays alive as long as the table."""
    if any(typeof(a) != t for a, t in zip((Ii, Ff, CI), FIXED_TYPES, strict=True)):
        return None
    nvar = NVAR[kind]
    T = [0, 1] * 3 + [0, -2] * (nvar - 3) + [n]
    for a in (Ii, Ff, CI, js, fb):
        T += [a.ctypes.data, a.shape[0]]
    T.append(1 if tangent else 0)
    return np.array(T, dtype=np.int64)


def lean_record(model, kind: str, tangent: bool, chain: int, js, fb):
    """``(call, T, n, keep)`` of the lean call of ``kind`` for ``model``, ``tangent`` and its chain kind:
    ``call(T, q, qd, x, *results)`` returns 0 once the results are written, anything else when the caller must take
    its other paths; ``keep`` holds the arrays T points into (``js``, ``fb``: the initial charts and no wrenches as
    writeable arrays, the types of every other call).  False where the C extension is not built, the model has
    Euler charts (their calls need ``jstate``) or its arrays have other types."""
    from redmax.derivatives.core_tree import core_structure
    from redmax.dynamics import _single_call

    if not _single_call.USE_C or model.chart_joints.size:
        return False
    Ii, Ff = model.packed
    CI = core_structure(model, tangent)
    T = table(kind, model.ndof, Ii, Ff, CI, js, fb, tangent)
    if T is None:
        return False
    try:
        call = _single_call._ccall.Table(address(kind, tangent, chain), NVAR[kind])
    except Exception:  # a Numba or C failure costs speed only: the other paths compute the same
        return False
    return call, T, model.ndof, (Ii, Ff, CI, js, fb)
