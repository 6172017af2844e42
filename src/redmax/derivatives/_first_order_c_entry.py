"""C entry points of the first-order lean call (``rnea_derivatives``, ``aba_derivatives``) for
:class:`redmax._ccall.Table`.

The common call -- float64 C-contiguous vectors, gravity, no external wrench, the initial charts -- spends about
2 µs around a 6 µs kernel on talos when it goes through the Numba dispatcher (matching and unboxing six arrays,
boxing the result tuple) and the Python checks in front of it.  Here a ``numba.cfunc`` of the C signature
``int64 kernel(int64 *T)`` reads every array from an int64 table ``T``; ``Table``'s C code checks the caller's
vectors and result matrices (exact float64 ndarrays of the right shape, C-contiguous, aligned, native order; the
results writeable) and writes their data addresses into ``T``; the entry point runs the same compiled kernel as
the dispatcher's fast path (``rnea_derivatives_plain`` ...) and copies its matrices into the results.  Nothing
is raised: 0 on success, -2 when the kernel raised (a non-finite input or result, a singular joint inertia);
the caller then runs its checked path, which names the problem.

Table layout (``nvar`` = 5 for ``rnea_derivatives``, 6 for ``aba_derivatives``)::

    T[0:2 nvar]   (address, spec) of q, qd, qdd or tau (spec 1: 1-D of length n) and the results dq, dqd
                  [, Minv] (spec -2: writeable (n, n)); the addresses are written by Table's call
    T[2 nvar]     n
    then          Ii, Ff, CI: (address, length) each
"""

from __future__ import annotations

import numpy as np
from numba import carray, cfunc, typeof, types

from redmax._jit import njit
from redmax.derivatives._second_order_c_entry import _ptr
from redmax.derivatives.aba_first_order import aba_derivatives_plain, aba_derivatives_plain_tangent
from redmax.derivatives.rnea_first_order import rnea_derivatives_plain, rnea_derivatives_plain_tangent
from redmax.dynamics._c_entry import _readonly

__all__ = ["NVAR", "address", "table"]

NVAR = {"rnea": 5, "aba": 6}
_SIG = types.int64(types.CPointer(types.int64))
_I64R = types.Array(types.int64, 1, "C", readonly=True)
FIXED_TYPES = (_I64R, types.Array(types.float64, 1, "C", readonly=True), _I64R)  # Ii, Ff, CI


@njit(cache=True, inline="always")
def _inputs(T, o):
    """``(Ii, Ff, CI, a, b, c, n)`` from the table T whose fixed slots start at ``o``."""
    n = T[o - 1]
    return (_readonly(carray(_ptr(T[o]), (T[o + 1],), np.int64)),
            _readonly(carray(_ptr(T[o + 2]), (T[o + 3],), np.float64)),
            _readonly(carray(_ptr(T[o + 4]), (T[o + 5],), np.int64)),
            carray(_ptr(T[0]), (n,), np.float64), carray(_ptr(T[2]), (n,), np.float64),
            carray(_ptr(T[4]), (n,), np.float64), n)


@njit(cache=True, inline="always")
def _store(T, k, src, n):
    """Copy the (n, n) matrix ``src`` into the result of slot k."""
    dst = carray(_ptr(T[2 * k]), (n, n), np.float64)
    for r in range(n):
        for c in range(n):
            dst[r, c] = src[r, c]


@njit(cache=True, inline="always")
def _rnea_run(T, tangent):
    """rnea_derivatives_plain(_tangent) on the table T into its two results: 0, or -2 if the kernel raised."""
    try:
        Ii, Ff, CI, q, qd, qdd, n = _inputs(T, 11)
        if tangent:
            dq, dv = rnea_derivatives_plain_tangent(Ii, Ff, CI, q, qd, qdd)
        else:
            dq, dv = rnea_derivatives_plain(Ii, Ff, CI, q, qd, qdd)
        _store(T, 3, dq, n)
        _store(T, 4, dv, n)
        return 0
    except Exception:  # rejected: the caller's checked path names the problem
        return -2


@njit(cache=True, inline="always")
def _aba_run(T, tangent):
    """aba_derivatives_plain(_tangent) on the table T into its three results: 0, or -2 if the kernel raised."""
    try:
        Ii, Ff, CI, q, qd, tau, n = _inputs(T, 13)
        if tangent:
            dq, dv, Minv = aba_derivatives_plain_tangent(Ii, Ff, CI, q, qd, tau)
        else:
            dq, dv, Minv = aba_derivatives_plain(Ii, Ff, CI, q, qd, tau)
        _store(T, 3, dq, n)
        _store(T, 4, dv, n)
        _store(T, 5, Minv, n)
        return 0
    except Exception:  # rejected: the caller's checked path names the problem
        return -2


def _rnea_entry(T):
    return _rnea_run(T, False)


def _rnea_tangent_entry(T):
    return _rnea_run(T, True)


def _aba_entry(T):
    return _aba_run(T, False)


def _aba_tangent_entry(T):
    return _aba_run(T, True)


_ENTRIES = {("rnea", False): _rnea_entry, ("rnea", True): _rnea_tangent_entry,
            ("aba", False): _aba_entry, ("aba", True): _aba_tangent_entry}
_COMPILED: dict = {}


def address(kind: str, tangent: bool) -> int:
    """The C address of the entry point of ``kind`` ("rnea" or "aba") and ``tangent``, compiled (or loaded from
    Numba's cache) on first use."""
    key = (kind, bool(tangent))
    cf = _COMPILED.get(key)
    if cf is None:
        cf = _COMPILED[key] = cfunc(_SIG, cache=True)(_ENTRIES[key])
    return cf.address


def table(kind: str, n: int, Ii, Ff, CI):
    """The int64 table of the module docstring, or None when ``Ii``, ``Ff``, ``CI`` do not have the types of
    ``FIXED_TYPES`` (the caller keeps its other paths).  The caller keeps them alive as long as the table."""
    fixed = (Ii, Ff, CI)
    if any(typeof(a) != t for a, t in zip(fixed, FIXED_TYPES, strict=True)):
        return None
    nvar = NVAR[kind]
    T = [0, 1] * 3 + [0, -2] * (nvar - 3) + [n]
    for a in fixed:
        T += [a.ctypes.data, a.shape[0]]
    return np.array(T, dtype=np.int64)


def lean_record(model, kind: str, tangent: bool):
    """``(call, T, n, keep)`` of the lean call of ``kind`` for ``model`` and ``tangent``: ``call(T, q, qd, x,
    *results)`` returns 0 once the results are written, anything else when the caller must take its other
    paths; ``keep`` holds the arrays T points into.  False where the C extension is not built, the model has
    Euler charts (their calls need ``jstate``) or its arrays have other types.  Raises the ModelError of
    :func:`.core_tree.core_structure` (an armature under ``tangent=True``)."""
    from redmax.derivatives.core_tree import core_structure
    from redmax.dynamics import _single_call

    if not _single_call.USE_C or model.chart_joints.size:
        return False
    Ii, Ff = model.packed
    CI = core_structure(model, tangent)
    T = table(kind, model.ndof, Ii, Ff, CI)
    if T is None:
        return False
    try:
        call = _single_call._ccall.Table(address(kind, tangent), NVAR[kind])
    except Exception:  # a Numba or C failure costs speed only: the other paths compute the same
        return False
    return call, T, model.ndof, (Ii, Ff, CI)
