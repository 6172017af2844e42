"""LAPACK's Cholesky (``dpotrf``/``dpotrs``) and LU (``dgetrf``/``dgetrs``) callable from compiled code, in place.

The routines come from SciPy's ``cython_lapack`` (the LAPACK SciPy itself links).  Their addresses are registered
with LLVM under fixed symbol names when this module is imported, and the kernels declare them as external
functions, so compiled code calls them directly and still caches on disk (the address is resolved at load time).
Matrices are row-major here and column-major in LAPACK: for the symmetric Cholesky that is the same matrix; for LU
the kernels solve with the transpose (``trans = 'T'``), which is the row-major matrix.
"""

from __future__ import annotations

import llvmlite.binding as ll
import numpy as np
from numba import types
from numba.extending import get_cython_function_address

from redmax._jit import njit
from redmax._kernels.borrow import data_ptr

__all__ = ["lapack_cholesky_solve", "lapack_lu_solve"]

_d = types.CPointer(types.float64)
_i = types.CPointer(types.int32)
_c = types.CPointer(types.uint8)
for _name in ("dpotrf", "dpotrs", "dgetrf", "dgetrs"):
    ll.add_symbol(f"redmax_{_name}", get_cython_function_address("scipy.linalg.cython_lapack", _name))
_potrf = types.ExternalFunction("redmax_dpotrf", types.void(_c, _i, _d, _i, _i))
_potrs = types.ExternalFunction("redmax_dpotrs", types.void(_c, _i, _i, _d, _i, _d, _i, _i))
_getrf = types.ExternalFunction("redmax_dgetrf", types.void(_i, _i, _d, _i, _i, _i))
_getrs = types.ExternalFunction("redmax_dgetrs", types.void(_c, _i, _i, _d, _i, _i, _d, _i, _i))

_CH = np.array([ord("L"), ord("T")], dtype=np.uint8)  # uplo 'L', trans 'T'


@njit(cache=True)
def lapack_cholesky_solve(A, b, x, d, ints):
    """x = A^-1 b for symmetric positive definite A (n, n) by ``dpotrf``/``dpotrs`` (A overwritten by its factor).
    ``d`` (n,) float and ``ints`` (3,) int32 are scratch.  Returns the smallest relative pivot ``L_kk^2 / A_kk``
    (<= 0 when A is not positive definite; x is then not written)."""
    n = A.shape[0]
    for k in range(n):
        d[k] = A[k, k]
    ints[0] = n
    ints[1] = 1
    ints[2] = 0
    _potrf(data_ptr(_CH, 0), data_ptr(ints, 0), data_ptr(A, 0), data_ptr(ints, 0), data_ptr(ints, 2))
    if ints[2] != 0:
        return 0.0
    piv = 1.0
    for k in range(n):
        r = A[k, k] * A[k, k] / d[k] if d[k] > 0.0 else 0.0
        if r < piv:
            piv = r
    for k in range(n):
        x[k] = b[k]
    _potrs(data_ptr(_CH, 0), data_ptr(ints, 0), data_ptr(ints, 1), data_ptr(A, 0), data_ptr(ints, 0),
           data_ptr(x, 0), data_ptr(ints, 0), data_ptr(ints, 2))
    return piv


@njit(cache=True)
def lapack_lu_solve(A, b, x, ipiv, ints):
    """x = A^-1 b by ``dgetrf``/``dgetrs`` on the transpose (A row-major is A^T column-major), A overwritten.
    ``ipiv`` (n,) int32, ``ints`` (3,) int32 scratch.  Returns 1.0 (0.0 when A is exactly singular)."""
    n = A.shape[0]
    ints[0] = n
    ints[1] = 1
    ints[2] = 0
    _getrf(data_ptr(ints, 0), data_ptr(ints, 0), data_ptr(A, 0), data_ptr(ints, 0), data_ptr(ipiv, 0),
           data_ptr(ints, 2))
    if ints[2] != 0:
        return 0.0
    for k in range(n):
        x[k] = b[k]
    _getrs(data_ptr(_CH, 1), data_ptr(ints, 0), data_ptr(ints, 1), data_ptr(A, 0), data_ptr(ints, 0),
           data_ptr(ipiv, 0), data_ptr(x, 0), data_ptr(ints, 0), data_ptr(ints, 2))
    return 1.0
