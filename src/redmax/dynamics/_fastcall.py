"""The lean single-call path of rnea/aba/crba/minv (issue 11: per-call overhead on small robots).

A Numba dispatcher spends about a microsecond per call matching the argument types against its compiled
signatures.  For the common call -- a model without Euler charts and float64 vectors that are C-contiguous,
aligned and writeable (``a.flags.carray``) -- the types are known in advance, so the compiled entry point of that
exact signature is looked up once per model and dispatcher and called directly.  The kernels still check sizes and
finiteness; every other call goes through the dispatcher (or the checked path), so nothing is lost but time.

``entry(model, disp, kind)`` returns the entry point for ``kind``: "vvv" (Ii, Ff, q, qd, x), "vvvv" (with a
vector ``out``), "v" (Ii, Ff, q), "vm" (Ii, Ff, q, matrix ``out``); or None when the model's packed arrays are not
the standard read-only C arrays (or ``disp`` is not a Numba dispatcher: the caller then calls ``disp`` itself).

The leaner tier in front of it, :func:`lean`, spends no Python time on type checks at all: ``RNEA``, ``ABA`` and
``CRBA`` are dispatchers that hold exactly one compiled signature (the model's packed arrays and writeable
C-contiguous float64 vectors/matrices, result written into a preallocated array) and never compile another, so
Numba's own C-level type match is the check: any other argument (a float32 or strided array, a list, a scalar)
raises ``TypeError`` there, and the caller falls back to the tiers above.  Measured on ur5 (per-call timing of
the pieces): the Python-level checks of the ``entry`` tier cost about 1 µs per call, the dispatcher's match about
0.3 µs (``benchmarks/vs_pinocchio.py --only small`` gives the resulting ratios).
"""

from __future__ import annotations

import weakref

import numpy as np
from numba import typeof, types

from redmax._jit import njit
from redmax.dynamics.aba import aba_out
from redmax.dynamics.crba import crba_out
from redmax.dynamics.rnea import rnea_out

__all__ = ["ABA", "CRBA", "RNEA", "entry", "lean"]

_V = types.Array(types.float64, 1, "C")  # a writeable, aligned, C-contiguous float64 vector (a.flags.carray)
_M = types.Array(types.float64, 2, "C")
_KINDS = {"v": (_V,), "vvv": (_V, _V, _V), "vvvv": (_V, _V, _V, _V), "vm": (_V, _M)}
_MODELS: dict[int, tuple] = {}  # id(model) -> (weakref to the model, {(dispatcher, kind): entry point or None})


def _table(model) -> dict:
    key = id(model)
    hit = _MODELS.get(key)
    if hit is not None and hit[0]() is model:
        return hit[1]
    table: dict = {}
    _MODELS[key] = (weakref.ref(model, lambda _r, key=key: _MODELS.pop(key, None)), table)
    return table


def entry(model, disp, kind: str):
    """The compiled entry point of ``disp`` for ``model``'s packed arrays and argument pattern ``kind``."""
    table = _table(model)
    ep = table.get((disp, kind), False)
    if ep is not False:
        return ep
    Ii, Ff = model.packed
    ok = (hasattr(disp, "overloads") and isinstance(Ii, np.ndarray) and isinstance(Ff, np.ndarray)
          and Ii.dtype == np.int64 and Ff.dtype == np.float64 and Ii.ndim == 1 and Ff.ndim == 1
          and Ii.flags.c_contiguous and Ff.flags.c_contiguous and Ii.flags.aligned and Ff.flags.aligned)
    ep = None
    if ok:
        sig = (typeof(Ii), typeof(Ff), *_KINDS[kind])
        if sig not in disp.overloads:
            disp.compile(sig)  # loads the cached compile (or compiles once)
        ep = disp.overloads[sig].entry_point
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
_FF = types.Array(types.float64, 1, "C", readonly=True)
_SEALED: list = []  # [True] once RNEA, ABA and CRBA hold their one signature


def _seal() -> None:
    """Compile (or load from the cache) the one signature of RNEA, ABA and CRBA, then forbid any other."""
    if not _SEALED:
        RNEA.compile((_II, _FF, _V, _V, _V, _V))
        ABA.compile((_II, _FF, _V, _V, _V, _V))
        CRBA.compile((_II, _FF, _V, _M))
        for disp in (RNEA, ABA, CRBA):
            disp.disable_compile()
        _SEALED.append(True)


def lean(model):
    """``(Ii, Ff, ndof)`` for the lean tier, or None when ``model`` cannot take it (not a Model, coupled
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
        if isinstance(Ii, np.ndarray) and isinstance(Ff, np.ndarray) and typeof(Ii) == _II and typeof(Ff) == _FF:
            _seal()
            rec = (Ii, Ff, int(model.ndof))
    object.__setattr__(model, "_lean", rec)  # the model is a frozen dataclass: a private cache entry only
    return rec
