"""The lean single-call path of rnea/aba/crba/minv: low per-call overhead on small robots.

A Numba dispatcher spends, on every call, about as long matching the argument types against its compiled signatures
as the whole recursion takes on a small robot.  For the common call -- a model without Euler charts and float64
vectors that are C-contiguous, aligned and writeable (``a.flags.carray``) -- the types are known in advance, so the
compiled entry point of that exact signature is looked up once per model and dispatcher and called directly.  The
kernels still check sizes and finiteness; every other call goes through the dispatcher (or the checked path), so
nothing is lost but time.

``entry(model, disp, kind)`` returns the entry point for ``kind``: "vvv" (Ii, Ff, q, qd, x), "vvvv" (with a
vector ``out``), "v" (Ii, Ff, q), "vm" (Ii, Ff, q, matrix ``out``); or None when the model's packed arrays are not
the standard read-only C arrays (or ``disp`` is not a Numba dispatcher: the caller then calls ``disp`` itself).

The leanest tier, :func:`lean`, answers a :class:`Lean` record per model whose ``rnea``, ``aba`` and ``crba``
take the common call (float64 C-contiguous vectors, gravity, no external wrench, initial charts) with no Python
check at all.  Where the C extension :mod:`redmax._ccall` is built they are its ``Bound`` objects: C code checks
the arrays' types and shapes and hands their data pointers to ``numba.cfunc`` entry points of the same compiled
recursions (:mod:`redmax.dynamics._c_entry`).  Measured (``benchmarks/vs_pinocchio.py --only small``): the
median per-call ratio to Pinocchio over the 23 example-robot-data robots of 1-7 DOF went from rnea 1.72 / aba
1.39 through the Numba dispatchers to 0.71 / 0.77.  Without the extension they fall back to ``RNEA``, ``ABA``
and ``CRBA``: dispatchers that hold exactly one compiled signature (the model's packed arrays and writeable
C-contiguous float64 vectors/matrices, result written into a preallocated array) and never compile another, so
Numba's own C-level type match is the check.  Either way any other argument (a float32 or strided array, a
list, a scalar) is declined, and the caller falls back to the tiers above.
"""

from __future__ import annotations

import weakref

import numpy as np
from numba import typeof, types

from redmax._jit import njit
from redmax.dynamics.aba import aba_out
from redmax.dynamics.crba import crba_out
from redmax.dynamics.rnea import rnea_out

__all__ = ["ABA", "CRBA", "RNEA", "USE_C", "Lean", "entry", "lean"]

_V = types.Array(types.float64, 1, "C")  # a writeable, aligned, C-contiguous float64 vector (a.flags.carray)
_M = types.Array(types.float64, 2, "C")
_KINDS = {"v": (_V,), "vvv": (_V, _V, _V), "vvvv": (_V, _V, _V, _V), "vm": (_V, _M)}
_MODELS: dict[int, tuple] = {}  # id(model) -> (weakref to the model, its model_table)


def model_table(model) -> dict:
    """A dict kept per model in this process and dropped with the model: the entry points of this module and of
    the other lean paths (``redmax.derivatives.rnea_second_order``)."""
    key = id(model)
    hit = _MODELS.get(key)
    if hit is not None and hit[0]() is model:
        return hit[1]
    table: dict = {}
    _MODELS[key] = (weakref.ref(model, lambda _r, key=key: _MODELS.pop(key, None)), table)
    return table


def standard_packed(Ii, Ff) -> bool:
    """True for a model's packed arrays of the standard types: int64 and float64 vectors, C-contiguous, aligned."""
    return (isinstance(Ii, np.ndarray) and isinstance(Ff, np.ndarray) and Ii.dtype == np.int64
            and Ff.dtype == np.float64 and Ii.ndim == 1 and Ff.ndim == 1 and Ii.flags.c_contiguous
            and Ff.flags.c_contiguous and Ii.flags.aligned and Ff.flags.aligned)


def entry_point(disp, sig):
    """The compiled entry point of the Numba dispatcher ``disp`` for the exact signature ``sig`` (loaded from the
    cache or compiled once): called with arguments of those types it skips the dispatcher's type match."""
    if sig not in disp.overloads:
        disp.compile(sig)
    return disp.overloads[sig].entry_point


def entry(model, disp, kind: str):
    """The compiled entry point of ``disp`` for ``model``'s packed arrays and argument pattern ``kind``."""
    table = model_table(model)
    ep = table.get((disp, kind), False)
    if ep is not False:
        return ep
    Ii, Ff = model.packed
    ep = None
    if hasattr(disp, "overloads") and standard_packed(Ii, Ff):
        ep = entry_point(disp, (typeof(Ii), typeof(Ff), *_KINDS[kind]))
    table[(disp, kind)] = ep
    return ep


@njit(cache=True)
def RNEA(Ii, Ff, q, qd, qdd, tau):
    """:func:`redmax.dynamics.rnea.rnea_out` (one compiled signature, see the module docstring)."""
    rnea_out(Ii, Ff, q, qd, qdd, tau)


@njit(cache=True)
def ABA(Ii, Ff, q, qd, tau, qdd):
    """:func:`redmax.dynamics.aba.aba_out` (one compiled signature)."""
    aba_out(Ii, Ff, q, qd, tau, qdd)


@njit(cache=True)
def CRBA(Ii, Ff, q, M):
    """:func:`redmax.dynamics.crba.crba_out` (one compiled signature)."""
    crba_out(Ii, Ff, q, M)


_II = types.Array(types.int64, 1, "C", readonly=True)  # a model's packed arrays (read-only, C-contiguous)
_II_LEAN = types.Array(types.int64, 1, "C")  # the ints of a lean model (redmax.model.layout: writeable)
_FF = types.Array(types.float64, 1, "C", readonly=True)
_SEALED: set = set()  # the Ii types for which RNEA, ABA and CRBA hold their signature


def _seal(ii) -> None:
    """Compile (or load from the cache) the signature of RNEA, ABA and CRBA for the packed ints' type ``ii``
    (read-only, or a lean model's writeable ones), then forbid any other."""
    if ii not in _SEALED:
        for disp in (RNEA, ABA, CRBA):
            disp.disable_compile(False)
        RNEA.compile((ii, _FF, _V, _V, _V, _V))
        ABA.compile((ii, _FF, _V, _V, _V, _V))
        CRBA.compile((ii, _FF, _V, _M))
        for disp in (RNEA, ABA, CRBA):
            disp.disable_compile()
        _SEALED.add(ii)


class Lean:
    """The per-call record of one model: its packed arrays, ``n`` and the three callables of the lean tier.

    ``rnea(q, qd, qdd[, out])``, ``aba(q, qd, tau[, out])`` and ``crba(q[, out])`` return the result, or
    ``NotImplemented`` for any argument they do not take (not an exact C-contiguous float64 array of the right
    shape, a writeable one for ``out``) or when the kernel declines (a non-finite input or result, a singular
    joint inertia): the caller then runs its checked tiers, which name the problem.  They are
    :class:`redmax._ccall.Bound` objects (C entry points, the least work per call) where that extension is built,
    else Python closures over the one-signature dispatchers ``RNEA``, ``ABA``, ``CRBA`` (several times that work)."""

    __slots__ = ("Ff", "Ii", "W", "aba", "crba", "n", "rnea")

    def __init__(self, Ii, Ff, n):
        self.Ii, self.Ff, self.n = Ii, Ff, n
        if USE_C:  # each entry point is compiled (or loaded) on its first call, then replaced by its Bound
            from redmax.dynamics import _c_entry

            self.W = np.empty(_c_entry.work_size(int(Ii[0]), n))  # shared: calls hold the GIL, never overlap
            self.rnea = _first_call(self, "rnea", 3, 1)
            self.aba = _first_call(self, "aba", 3, 1)
            self.crba = _first_call(self, "crba", 1, 2)
        else:
            _seal(typeof(Ii))
            self.rnea = _numba_call(RNEA, Ii, Ff, 3, (n,))
            self.aba = _numba_call(ABA, Ii, Ff, 3, (n,))
            self.crba = _numba_call(CRBA, Ii, Ff, 1, (n, n))


try:  # the C extension (setup.py builds it where a C compiler is found)
    import redmax._ccall as _ccall
except ImportError:  # pragma: no cover - depends on the install
    _ccall = None
USE_C = _ccall is not None  # tests switch it off to exercise the Numba fallback


def _first_call(rec, name, nin, nd):
    """A stand-in for ``rec.<name>`` that binds the C entry point on its first call and puts the
    :class:`redmax._ccall.Bound` in its place."""

    def call(*args):
        from redmax.dynamics import _c_entry

        bound = _ccall.Bound(_c_entry.address(name, lean=rec.Ii.flags.writeable), rec.Ii, rec.Ff, rec.W, rec.n,
                             nin, nd)
        setattr(rec, name, bound)
        return bound(*args)

    return call


def _numba_call(disp, Ii, Ff, nin, shape):
    """A callable of the :class:`Lean` contract over a one-signature dispatcher (``nin`` input vectors, result of
    ``shape``)."""

    def call(*args):
        if len(args) == nin:
            res = np.empty(shape)
        elif len(args) == nin + 1:
            res = args[nin]
            args = args[:nin]
        else:
            return NotImplemented
        try:
            disp(Ii, Ff, *args, res)
        except (TypeError, ValueError, ZeroDivisionError):
            return NotImplemented
        return res

    return call


def lean(model):
    """The :class:`Lean` record for the lean tier, or None when ``model`` cannot take it (not a Model, coupled
    coordinates, Euler charts, packed arrays that are not the standard read-only C arrays, e.g. after a copy).
    Computed once per model and kept on it (dropped when the model is pickled or copied)."""
    try:
        return model.__dict__["_lean"]
    except KeyError:
        pass
    except AttributeError:
        return None
    if not (hasattr(model, "packed") and hasattr(model, "dofs")):
        return None
    rec = None
    if getattr(model, "uncoupled", None) is None and not model.chart_joints.size:
        Ii, Ff = model.packed
        if (isinstance(Ii, np.ndarray) and isinstance(Ff, np.ndarray) and typeof(Ii) in (_II, _II_LEAN)
                and typeof(Ff) == _FF):
            rec = Lean(Ii, Ff, int(model.ndof))
    object.__setattr__(model, "_lean", rec)  # the model is a frozen dataclass: a private cache entry only
    return rec
