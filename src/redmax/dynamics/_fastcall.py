"""The lean single-call path of rnea/aba/crba/minv (issue 11: per-call overhead on small robots).

A Numba dispatcher spends about a microsecond per call matching the argument types against its compiled
signatures.  For the common call -- a model without Euler charts and float64 vectors that are C-contiguous,
aligned and writeable (``a.flags.carray``) -- the types are known in advance, so the compiled entry point of that
exact signature is looked up once per model and dispatcher and called directly.  The kernels still check sizes and
finiteness; every other call goes through the dispatcher (or the checked path), so nothing is lost but time.

``entry(model, disp, kind)`` returns the entry point for ``kind``: "vvv" (Ii, Ff, q, qd, x), "vvvv" (with a
vector ``out``), "v" (Ii, Ff, q), "vm" (Ii, Ff, q, matrix ``out``); or None when the model's packed arrays are not
the standard read-only C arrays (or ``disp`` is not a Numba dispatcher: the caller then calls ``disp`` itself).
"""

from __future__ import annotations

import weakref

import numpy as np
from numba import typeof, types

__all__ = ["entry"]

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
