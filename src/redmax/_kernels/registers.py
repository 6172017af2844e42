"""Tiny register helpers for the per-body kernels: load and store short runs of the flat workspace.

Each helper takes a view with literal indices (Numba wraps negative indices, and only a literal index lets
LLVM drop that check; see ``sym6``).  They are small compiled functions that LLVM inlines into their callers,
so the values stay in registers as if written out by hand; they are not inlined at Numba's IR level
(``inline="always"``), which would re-type them at every call site and cost compile time.  The arithmetic
helpers take the recursive kernels' floating-point freedoms (``FAST``).  ``R`` is a rotation as a 9-tuple,
row-major.
"""

from __future__ import annotations

from redmax._jit import FAST, njit


@njit(cache=True)
def get3(W, o):
    """(W[o], W[o+1], W[o+2])."""
    v = W[o:o + 3]
    return v[0], v[1], v[2]


@njit(cache=True)
def get6(W, o):
    """W[o:o+6] as a 6-tuple."""
    v = W[o:o + 6]
    return v[0], v[1], v[2], v[3], v[4], v[5]


@njit(cache=True)
def get9(W, o):
    """W[o:o+9] as a 9-tuple (a row-major rotation)."""
    v = W[o:o + 9]
    return v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]


@njit(cache=True)
def put3(W, o, x0, x1, x2):
    """W[o:o+3] = (x0, x1, x2)."""
    v = W[o:o + 3]
    v[0] = x0
    v[1] = x1
    v[2] = x2


@njit(cache=True)
def put6(W, o, x0, x1, x2, x3, x4, x5):
    """W[o:o+6] = (x0, ..., x5)."""
    v = W[o:o + 6]
    v[0] = x0
    v[1] = x1
    v[2] = x2
    v[3] = x3
    v[4] = x4
    v[5] = x5


@njit(cache=True)
def put9(W, o, R):
    """W[o:o+9] = the 9-tuple R."""
    v = W[o:o + 9]
    v[0] = R[0]
    v[1] = R[1]
    v[2] = R[2]
    v[3] = R[3]
    v[4] = R[4]
    v[5] = R[5]
    v[6] = R[6]
    v[7] = R[7]
    v[8] = R[8]


@njit(cache=True, fastmath=FAST)
def rot(R, x0, x1, x2):
    """R x for the 9-tuple R."""
    return (R[0] * x0 + R[1] * x1 + R[2] * x2, R[3] * x0 + R[4] * x1 + R[5] * x2,
            R[6] * x0 + R[7] * x1 + R[8] * x2)


@njit(cache=True, fastmath=FAST)
def rot_t(R, x0, x1, x2):
    """R^T x for the 9-tuple R."""
    return (R[0] * x0 + R[3] * x1 + R[6] * x2, R[1] * x0 + R[4] * x1 + R[7] * x2,
            R[2] * x0 + R[5] * x1 + R[8] * x2)


@njit(cache=True, fastmath=FAST)
def cross(a0, a1, a2, b0, b1, b2):
    """a x b."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, fastmath=FAST)
def rot_mul(A, B):
    """A B for 9-tuples (row-major rotations)."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6], A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[3] + A[5] * B[6], A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
            A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6], A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@njit(cache=True)
def col6(X, c):
    """Column c of a (6, n) array as a 6-tuple (c unsigned, see ``_packed.U64``)."""
    return X[0, c], X[1, c], X[2, c], X[3, c], X[4, c], X[5, c]


@njit(cache=True, fastmath=FAST)
def dot6(W, x, y):
    """W[x:x+6] . W[y:y+6]."""
    a0, a1, a2, a3, a4, a5 = get6(W, x)
    b0, b1, b2, b3, b4, b5 = get6(W, y)
    return a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3 + a4 * b4 + a5 * b5
