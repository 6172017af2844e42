"""Borrowed array views for compiled loops: the same memory, no reference counting.

Numba keeps a reference count on every array it passes between compiled functions; a function that it cannot
prove safe increments the counts of all its array arguments on entry and decrements them on exit (two atomic
operations per array per call).  The step passes ~80 arrays through its stages every step, which costs about
a microsecond.  :func:`borrowed` makes a view with no memory-info pointer (``numba.carray`` over the same data),
for which those updates are skipped.  The owning array must stay alive while the view is in use, and a view does
not keep it alive: Numba releases an array allocated inside a compiled function right after its last named use,
even while views of it are still read (the memory is then handed to the next allocation).  So only borrow arrays
owned by a caller (arguments), as the compiled loops do with their workspaces.
"""

from __future__ import annotations

from numba import carray, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic

from redmax._jit import njit

__all__ = ["borrowed", "data_ptr", "read_only"]


@intrinsic
def data_ptr(typingctx, arr, off):
    """Pointer to element ``off`` of a contiguous array's data."""
    sig = types.CPointer(arr.dtype)(arr, types.intp)

    def codegen(context, builder, signature, args):
        a = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.gep(a.data, [args[1]])

    return sig, codegen


@intrinsic
def _with_mutability_of(typingctx, like, view):
    """``view`` typed read-only when ``like`` is (the same array struct: only the Numba type differs)."""
    ret = view if like.mutable else view.copy(readonly=True)
    sig = ret(like, view)

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, signature.return_type, args[1])

    return sig, codegen


@intrinsic
def read_only(typingctx, arr):
    """``arr`` typed read-only (the same array struct).  Kernels shared between the public calls, which pass the
    model's frozen chart words, and the compiled loops, which own writeable ones, are called with one type and
    compiled once."""
    ret = arr if not arr.mutable else arr.copy(readonly=True)
    sig = ret(arr)

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, signature.return_type, args[0])

    return sig, codegen


@njit(cache=True, inline="always")
def borrowed(arr):
    """A view of the C-contiguous ``arr`` (same shape) without reference counting, read-only when ``arr`` is (so
    that the kernels below see the model's frozen arrays with one type, whether called from Python or from a
    compiled loop, and are compiled once)."""
    return _with_mutability_of(arr, carray(data_ptr(arr, 0), arr.shape))
