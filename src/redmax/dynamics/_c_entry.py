"""C-callable entry points of rnea, aba and crba for :mod:`redmax._ccall` (the per-call path of small robots).

Each entry point is a ``numba.cfunc`` of the C signature ::

    int64 kernel(const int64 *Ii, int64 nI, const double *Ff, int64 nF, double *W, int64 nW,
                 const double *a, const double *b, const double *c, double *out, int64 n)

that wraps the pointers as arrays (the packed model's as read-only arrays, the same types the model's own arrays
have, so the recursions below are the very specialisations every other call path uses) and runs the compiled
``*_into`` recursion on the workspace ``W`` (at least :func:`work_size` long) at the model's initial charts, with
gravity and no external wrench.  Arrays made by ``carray`` carry no memory-info pointer, so no reference counts
are updated anywhere below (with every array borrowed, a call of aba_into on two revolute joints takes about a
third less time).  Nothing is raised: the result is a status, 0 for success, 1 for a size
mismatch or a non-finite input, 2 for a non-finite result, 3 for a singular joint inertia (aba).  The caller then
runs its checked path, which names the problem.

Each is compiled (or loaded from Numba's cache) on its first use, by :func:`address`.
"""

from __future__ import annotations

import numpy as np
from numba import carray, cfunc, types
from numba.extending import intrinsic

from redmax._jit import FAST, njit
from redmax.dynamics.aba import NO_TANGENT, aba_into
from redmax.dynamics.crba import crba_into
from redmax.dynamics.rnea import rnea_into
from redmax.model.layout import NO_FEXT, initial_jstate

__all__ = ["SIGNATURE", "address", "work_size"]

_I = types.CPointer(types.int64)
_F = types.CPointer(types.float64)
SIGNATURE = types.int64(_I, types.int64, _F, types.int64, _F, types.int64, _F, _F, _F, _F, types.int64)


def work_size(nb: int, n: int) -> int:
    """Workspace length that serves all three entry points (the largest of their ``*_work_size``)."""
    return max(36 * nb + 6 * n + 1, 124 * nb + 13 * n + 110, 22 * nb + 6 * n + 96)


@intrinsic
def _readonly(typingctx, arr):
    """The same array typed read-only (the type of a packed model's arrays; no code, no copy).  For arrays that own
    no memory (``carray`` views) only: it takes no reference, so an array of Numba's runtime would be freed twice."""
    sig = arr.copy(readonly=True)(arr)

    def codegen(context, builder, signature, args):
        return args[0]

    return sig, codegen


@njit(cache=True, inline="always")
def _finite(x, n):
    for k in range(n):
        if not np.isfinite(x[k]):
            return False
    return True


@njit(cache=True, fastmath=FAST, inline="always")  # (into its entry: one compile of the recursion)
def _rnea(Ii, Ff, W, q, qd, qdd, tau):
    n = q.shape[0]
    if Ii[1] != n or W.shape[0] < 36 * Ii[0] + 6 * n + 1 or not (_finite(q, n) and _finite(qd, n) and _finite(qdd, n)):
        return 1
    rnea_into(Ii, Ff, q, qd, qdd, initial_jstate(Ii), NO_FEXT, 1.0, W, tau)
    return 0 if _finite(tau, n) else 2


@njit(cache=True, fastmath=FAST, inline="always")  # (into its entry: one compile of the recursion)
def _aba(Ii, Ff, W, q, qd, tau, qdd):
    n = q.shape[0]
    if Ii[1] != n or W.shape[0] < 124 * Ii[0] + 13 * n + 110 or not (
            _finite(q, n) and _finite(qd, n) and _finite(tau, n)):
        return 1
    try:
        aba_into(Ii, Ff, q, qd, tau, initial_jstate(Ii), NO_FEXT, 1.0, W, qdd, NO_TANGENT)
    except Exception:  # a singular joint inertia (small_inverse)
        return 3
    return 0 if _finite(qdd, n) else 2


@njit(cache=True, fastmath=FAST, inline="always")  # (into its entry: one compile of the recursion)
def _crba(Ii, Ff, W, q, M):
    n = q.shape[0]
    if Ii[1] != n or W.shape[0] < 22 * Ii[0] + 6 * n + 96 or not _finite(q, n):
        return 1
    for r in range(n):
        for c in range(n):
            M[r, c] = 0.0
    crba_into(Ii, Ff, q, initial_jstate(Ii), W, M)
    return 0 if _finite(M.ravel(), n * n) else 2


def _rnea_entry(ip, ni, fp, nf, wp, nw, a, b, c, out, n):
    """rnea(q=a, qd=b, qdd=c) into out (n,)."""
    Ii = _readonly(carray(ip, (ni,)))
    Ff = _readonly(carray(fp, (nf,)))
    return _rnea(Ii, Ff, carray(wp, (nw,)), carray(a, (n,)), carray(b, (n,)), carray(c, (n,)), carray(out, (n,)))


def _aba_entry(ip, ni, fp, nf, wp, nw, a, b, c, out, n):
    """aba(q=a, qd=b, tau=c) into out (n,)."""
    Ii = _readonly(carray(ip, (ni,)))
    Ff = _readonly(carray(fp, (nf,)))
    return _aba(Ii, Ff, carray(wp, (nw,)), carray(a, (n,)), carray(b, (n,)), carray(c, (n,)), carray(out, (n,)))


def _crba_entry(ip, ni, fp, nf, wp, nw, a, b, c, out, n):
    """crba(q=a) into out (n, n) (b and c unused)."""
    Ii = _readonly(carray(ip, (ni,)))
    Ff = _readonly(carray(fp, (nf,)))
    return _crba(Ii, Ff, carray(wp, (nw,)), carray(a, (n,)), carray(out, (n, n)))


# the same for a lean model (fixed, revolute and prismatic joints only): its packed ints are writeable, so that the
# recursions compile without the other joint families (redmax.model.layout)


def _rnea_lean_entry(ip, ni, fp, nf, wp, nw, a, b, c, out, n):
    """rnea(q=a, qd=b, qdd=c) into out (n,), lean model."""
    Ff = _readonly(carray(fp, (nf,)))
    return _rnea(carray(ip, (ni,)), Ff, carray(wp, (nw,)), carray(a, (n,)), carray(b, (n,)), carray(c, (n,)),
                 carray(out, (n,)))


def _aba_lean_entry(ip, ni, fp, nf, wp, nw, a, b, c, out, n):
    """aba(q=a, qd=b, tau=c) into out (n,), lean model."""
    Ff = _readonly(carray(fp, (nf,)))
    return _aba(carray(ip, (ni,)), Ff, carray(wp, (nw,)), carray(a, (n,)), carray(b, (n,)), carray(c, (n,)),
                carray(out, (n,)))


def _crba_lean_entry(ip, ni, fp, nf, wp, nw, a, b, c, out, n):
    """crba(q=a) into out (n, n) (b and c unused), lean model."""
    Ff = _readonly(carray(fp, (nf,)))
    return _crba(carray(ip, (ni,)), Ff, carray(wp, (nw,)), carray(a, (n,)), carray(out, (n, n)))


_ENTRIES = {("rnea", False): _rnea_entry, ("aba", False): _aba_entry, ("crba", False): _crba_entry,
            ("rnea", True): _rnea_lean_entry, ("aba", True): _aba_lean_entry, ("crba", True): _crba_lean_entry}
_COMPILED: dict = {}


def address(name: str, lean: bool = False) -> int:
    """The C address of the entry point ``name`` ("rnea", "aba" or "crba"; ``lean``: for a lean model's writeable
    packed ints), compiled (or loaded from Numba's cache) on first use, so that a program calling only rnea never
    compiles the others."""
    key = (name, bool(lean))
    cf = _COMPILED.get(key)
    if cf is None:
        cf = _COMPILED[key] = cfunc(SIGNATURE, cache=True)(_ENTRIES[key])
    return cf.address
