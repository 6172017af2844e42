"""Chunk functions and their tables: how a parallel call hands its arrays to the C functions its chunks run in
(:mod:`redmax._kernels.pool`).

A chunk function is a ``numba.cfunc`` of the C signature ``void chunk(int64 ctx, int64 c)``, compiled on first use
(:func:`chunk_function`).  Its caller writes the arrays the chunks need into an int64 table, each as its data
address and shape (:func:`put`), and passes the table's address as ``ctx``; the chunk reads them back as arrays of
the same types (:func:`take1` ...: ``numba.carray`` views, which carry no reference count).  The caller keeps the
arrays alive while the chunks run (:func:`alive` for arrays the compiled code allocated itself).
"""

from __future__ import annotations

import numpy as np
from numba import carray, cfunc, types
from numba.extending import intrinsic

from redmax._jit import compiling, njit

__all__ = ["CHUNK_SIG", "ChunkFunction", "alive", "as_ptr", "chunk_function", "put", "put_float", "table_of",
           "take1", "take1_ro", "take2", "take3", "take4", "take5", "take_float"]

CHUNK_SIG = types.void(types.int64, types.int64)  # void chunk(int64 ctx, int64 c)


class ChunkFunction:
    """A chunk function ``py(ctx, c)`` compiled as a C function (``numba.cfunc`` with ``options``, cached on disk)
    on the first use of :attr:`address`, so that a program compiles only the parallel calls it makes.  A compile
    that takes longer than ``redmax._jit.ANNOUNCE_AFTER`` is announced on the ``redmax`` logger and counted in
    :func:`redmax._jit.compile_seconds`, as the kernels' own."""

    def __init__(self, py, options):
        self.py = py
        self.options = options
        self._cf = None

    @property
    def address(self) -> int:
        if self._cf is None:
            with compiling(self.py.__qualname__):
                self._cf = cfunc(CHUNK_SIG, cache=True, **self.options)(self.py)
        return self._cf.address


def chunk_function(py=None, **options):
    """Decorator (``@chunk_function`` or ``@chunk_function(fastmath=...)``): the :class:`ChunkFunction` of
    ``py``."""
    if py is None:
        return lambda f: ChunkFunction(f, options)
    return ChunkFunction(py, options)


@intrinsic
def as_ptr(typingctx, addr, dtype):
    """The int64 ``addr`` as a pointer to ``dtype`` (a NumPy scalar class)."""
    dt = dtype.dtype if isinstance(dtype, types.NumberClass) else dtype
    sig = types.CPointer(dt)(types.int64, dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return sig, codegen


@intrinsic
def _readonly(typingctx, arr):
    """The same array typed read-only (no code, no copy)."""
    sig = arr.copy(readonly=True)(arr)

    def codegen(context, builder, signature, args):
        return args[0]

    return sig, codegen


@njit(cache=True, inline="always")
def put(T, k, a):
    """Table entries ``T[k:k + 1 + a.ndim]``: the address of ``a``'s data and its shape; the next free entry."""
    T[k] = a.ctypes.data
    for d in range(a.ndim):
        T[k + 1 + d] = a.shape[d]
    return k + 1 + a.ndim


@njit(cache=True, inline="always")
def put_float(T, k, x):
    """Table entry ``T[k]``: the float ``x`` (its bits); the next free entry."""
    carray(as_ptr(T.ctypes.data + 8 * k, np.float64), (1,))[0] = x
    return k + 1


@njit(inline="always")
def alive(a):
    """Use ``a``: called after a parallel region on an array that compiled code allocated and passed to chunk
    functions by its address, so that Numba does not release it (after its last use by name) while the chunks
    still read it."""
    return a.shape[0]


@njit(cache=True, inline="always")
def table_of(ctx, n):
    """The int64 table of ``n`` entries at address ``ctx`` (a chunk function's first argument)."""
    return carray(as_ptr(ctx, np.int64), (n,))


@njit(cache=True, inline="always")
def take1(T, k, dtype):
    """``(a, next entry)``: the 1-D array of ``dtype`` that :func:`put` stored at ``T[k]``."""
    return carray(as_ptr(T[k], dtype), (T[k + 1],)), k + 2


@njit(cache=True, inline="always")
def take1_ro(T, k, dtype):
    """:func:`take1`, the array typed read-only (the type of a model's packed arrays)."""
    return _readonly(carray(as_ptr(T[k], dtype), (T[k + 1],))), k + 2


@njit(cache=True, inline="always")
def take2(T, k, dtype):
    """:func:`take1` for a 2-D array."""
    return carray(as_ptr(T[k], dtype), (T[k + 1], T[k + 2])), k + 3


@njit(cache=True, inline="always")
def take3(T, k, dtype):
    """:func:`take1` for a 3-D array."""
    return carray(as_ptr(T[k], dtype), (T[k + 1], T[k + 2], T[k + 3])), k + 4


@njit(cache=True, inline="always")
def take4(T, k, dtype):
    """:func:`take1` for a 4-D array."""
    return carray(as_ptr(T[k], dtype), (T[k + 1], T[k + 2], T[k + 3], T[k + 4])), k + 5


@njit(cache=True, inline="always")
def take5(T, k, dtype):
    """:func:`take1` for a 5-D array."""
    return carray(as_ptr(T[k], dtype), (T[k + 1], T[k + 2], T[k + 3], T[k + 4], T[k + 5])), k + 6


@njit(cache=True, inline="always")
def take_float(T, k):
    """``(x, next entry)``: the float :func:`put_float` stored at ``T[k]``."""
    return carray(as_ptr(T.ctypes.data + 8 * k, np.float64), (1,))[0], k + 1
