"""C entry points of the second-order lean call for :class:`redmax._ccall.Table` (talos, tangent: the public call
about 2 µs faster than through the compiled entry point of the Numba dispatcher, 2.3-3.0 µs with ``out=``; one
process, 2026-11-29).

Each entry point is a ``numba.cfunc`` of the C signature ``int64 kernel(int64 *T)`` that reads every array from
the int64 table ``T`` of :func:`table`, wraps it with ``carray`` as an array of exactly the type the lean path's
dispatcher entry point has for it (the packed model's arrays read-only), and runs
:func:`._second_order_drivers.rnea_second_order_into` (or ``_into_aligned``): the very
specialisation the dispatcher compiles, so the entry point adds no compilation of the kernel.  Arrays made by
``carray`` carry no memory-info pointer: the compiled code keeps no reference counts (atomic operations) on
them, and nothing unboxes or boxes its 22 arguments.  Nothing is raised: the result is the kernel's (-1, or
k >= 0 for a non-zero probe of ``out[k]``), or -2 when the kernel raised (a non-finite input, a singular tangent
map): the caller then runs its checked path, which names the problem.

Table layout (``VAR`` variable slots, then ``n``, then the fixed slots :func:`table` writes once)::

    T[0:14]   (address, spec) of q, qd, qdd (spec 1: 1-D of length n) and d2q, d2v, d2qv, dM (spec -3:
              writeable (n, n, n); 3 for the lean path's own read-only block); the addresses are written by
              Table's call
    T[14]     n
    T[15:]    Ii, Ff, CI, rel, cj, starts, mstarts, i0, i1, i2, i3, zr, zs, zm: each (address, shape...)
              (two entries for a vector, three for a matrix), then tangent (0 or 1)
"""

from __future__ import annotations

import numpy as np
from numba import carray, cfunc, typeof, types
from numba.extending import intrinsic

from redmax._jit import njit
from redmax.derivatives._second_order_drivers import rnea_second_order_into, rnea_second_order_into_aligned
from redmax.dynamics._c_entry import _readonly

__all__ = ["VAR", "address", "table"]

VAR = 7  # q, qd, qdd, d2q, d2v, d2qv, dM
_SPECS = (1, 1, 1, -3, -3, -3, -3)
_SIG = types.int64(types.CPointer(types.int64))
_I64 = types.Array(types.int64, 1, "C")
_I64R = types.Array(types.int64, 1, "C", readonly=True)
# the types the fixed slots must have (the lean record's arrays): else the lean path keeps the dispatcher
FIXED_TYPES = (_I64R, types.Array(types.float64, 1, "C", readonly=True), _I64R,
               types.Array(types.uint8, 2, "C"), _I64, _I64, _I64, _I64, _I64, _I64, _I64,
               types.Array(types.int64, 2, "C"), _I64, types.Array(types.int8, 2, "C"))


@intrinsic
def _ptr(typingctx, addr):
    """The int64 ``addr`` as a ``void *`` (no code but the cast)."""
    sig = types.voidptr(types.int64)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))

    return sig, codegen


@njit(cache=True, inline="always")
def _unpack(T):
    """The kernel's arguments from the table T (module docstring)."""
    n = T[14]
    return (_readonly(carray(_ptr(T[15]), (T[16],), np.int64)),
            _readonly(carray(_ptr(T[17]), (T[18],), np.float64)),
            _readonly(carray(_ptr(T[19]), (T[20],), np.int64)),
            carray(_ptr(T[0]), (n,), np.float64), carray(_ptr(T[2]), (n,), np.float64),
            carray(_ptr(T[4]), (n,), np.float64), T[46] != 0,
            carray(_ptr(T[21]), (T[22], T[23]), np.uint8), carray(_ptr(T[24]), (T[25],), np.int64),
            carray(_ptr(T[26]), (T[27],), np.int64), carray(_ptr(T[28]), (T[29],), np.int64),
            carray(_ptr(T[30]), (T[31],), np.int64), carray(_ptr(T[32]), (T[33],), np.int64),
            carray(_ptr(T[34]), (T[35],), np.int64), carray(_ptr(T[36]), (T[37],), np.int64),
            carray(_ptr(T[38]), (T[39], T[40]), np.int64), carray(_ptr(T[41]), (T[42],), np.int64),
            carray(_ptr(T[43]), (T[44], T[45]), np.int8),
            carray(_ptr(T[6]), (n, n, n), np.float64), carray(_ptr(T[8]), (n, n, n), np.float64),
            carray(_ptr(T[10]), (n, n, n), np.float64), carray(_ptr(T[12]), (n, n, n), np.float64))


def _into_entry(T):
    """rnea_second_order_into on the table T."""
    try:
        return rnea_second_order_into(*_unpack(T))
    except Exception:  # rejected (a non-finite input): the caller's checked path names it
        return -2


def _into_aligned_entry(T):
    """rnea_second_order_into_aligned on the table T."""
    try:
        return rnea_second_order_into_aligned(*_unpack(T))
    except Exception:  # rejected (a non-finite input, a singular tangent map): the checked path names it
        return -2


def table(n: int, fixed, tangent: bool, own: bool = False):
    """The int64 table of the module docstring for ``fixed = (Ii, Ff, CI, rel, cj, starts, mstarts, i0, i1, i2,
    i3, zr, zs, zm)``, or None when one of them does not have the type of ``FIXED_TYPES`` (the caller keeps
    the dispatcher's entry point).  The caller keeps ``fixed`` alive as long as the table.  ``own``: the tensors
    are the lean path's own block, read-only to its callers (spec 3: not checked for the WRITEABLE flag)."""
    if len(fixed) != len(FIXED_TYPES) or any(typeof(a) != t for a, t in zip(fixed, FIXED_TYPES, strict=True)):
        return None
    T = [0, 0] * VAR + [n]
    for k, s in enumerate(_SPECS):
        T[2 * k + 1] = -s if own and s < 0 else s
    for a in fixed:
        T.append(a.ctypes.data)
        T.extend(a.shape)
    T.append(1 if tangent else 0)
    return np.array(T, dtype=np.int64)


_ENTRIES = {"into": _into_entry, "into_aligned": _into_aligned_entry}
_COMPILED: dict = {}


def address(name: str) -> int:
    """The C address of the entry point ``name`` ("into" or "into_aligned"), compiled (or loaded from Numba's
    cache) on first use."""
    cf = _COMPILED.get(name)
    if cf is None:
        cf = _COMPILED[name] = cfunc(_SIG, cache=True)(_ENTRIES[name])
    return cf.address
