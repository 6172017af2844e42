"""Compiled dense factorisations for the step matrix: Cholesky and LU with partial pivoting, in place (loops for
small systems, LAPACK for large ones)."""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.solvers._lapack import lapack_cholesky_solve, lapack_lu_solve

__all__ = ["cholesky_solve", "lu_solve", "solve_stage"]


@njit(cache=True)
def cholesky_solve(A, b, x):
    """Solve A x = b for symmetric positive definite A (n, n) by Cholesky (lower triangle of A overwritten
    with L).  Returns the smallest relative pivot ``L_kk^2 / A_kk`` (<= 0: not positive definite; x is
    then not written)."""
    n = A.shape[0]
    piv = 1.0
    for k in range(n):
        akk = A[k, k]
        s = akk
        for m in range(k):
            s -= A[k, m] * A[k, m]
        if not s > 0.0:
            return s
        rel = s / akk if akk > 0.0 else 0.0
        if rel < piv:
            piv = rel
        lkk = np.sqrt(s)
        A[k, k] = lkk
        inv = 1.0 / lkk
        for r in range(k + 1, n):
            s = A[r, k]
            for m in range(k):
                s -= A[r, m] * A[k, m]
            A[r, k] = s * inv
    for k in range(n):
        s = b[k]
        for m in range(k):
            s -= A[k, m] * x[m]
        x[k] = s / A[k, k]
    for k in range(n - 1, -1, -1):
        s = x[k]
        for m in range(k + 1, n):
            s -= A[m, k] * x[m]
        x[k] = s / A[k, k]
    return piv


@njit(cache=True)
def lu_solve(A, b, x, perm):
    """Solve A x = b by LU with partial pivoting (A overwritten).  Returns the smallest ratio of a pivot to
    the largest entry of its column before elimination (0: singular; x then not written)."""
    n = A.shape[0]
    for k in range(n):
        perm[k] = k
        x[k] = b[k]
    piv = 1.0
    for k in range(n):
        p = k
        big = abs(A[k, k])
        for r in range(k + 1, n):
            v = abs(A[r, k])
            if v > big:
                big = v
                p = r
        if not big > 0.0:
            return 0.0
        scale = 0.0
        for r in range(k, n):
            scale = max(scale, abs(A[r, k]))
        if big / scale < piv:
            piv = big / scale
        if p != k:
            for c in range(n):
                tmp = A[k, c]
                A[k, c] = A[p, c]
                A[p, c] = tmp
            tmp = x[k]
            x[k] = x[p]
            x[p] = tmp
        inv = 1.0 / A[k, k]
        for r in range(k + 1, n):
            f = A[r, k] * inv
            A[r, k] = f
            if f != 0.0:
                for c in range(k + 1, n):
                    A[r, c] -= f * A[k, c]
            x[r] -= f * x[k]
    for k in range(n - 1, -1, -1):
        s = x[k]
        for c in range(k + 1, n):
            s -= A[k, c] * x[c]
        x[k] = s / A[k, k]
    return piv


LAPACK_MIN = 40  # from this size on LAPACK's blocked factorisations beat the loops here (benchmarks/step.py)


@njit(cache=True)
def solve_stage(A, b, x, symmetric, perm):
    """x = A^-1 b: Cholesky when ``symmetric`` (falls back to LU if A is not positive definite), else LU; LAPACK's
    ``dpotrf``/``dgetrf`` from ``LAPACK_MIN`` unknowns on.
    Returns (method, relative pivot): method 0 Cholesky, 1 LU; pivot 0 means singular."""
    n = A.shape[0]
    big = n >= LAPACK_MIN
    if symmetric:
        # both factorisations overwrite the diagonal and write x only on success: keep the diagonal in x for the
        # LU fallback of an indefinite A
        for k in range(n):
            x[k] = A[k, k]
        if big:
            # dpotrf ('L', column-major) overwrites the row-major upper triangle; the lower one keeps A
            piv = lapack_cholesky_solve(A, b, x, np.empty(n), np.empty(3, dtype=np.int32))
            if piv > 0.0:
                return 0, piv
            for k in range(n):
                for m in range(k + 1, n):
                    A[k, m] = A[m, k]
        else:
            # cholesky_solve overwrites the lower triangle; the upper one keeps A
            piv = cholesky_solve(A, b, x)
            if piv > 0.0:
                return 0, piv
            for k in range(n):
                for m in range(k):
                    A[k, m] = A[m, k]
        for k in range(n):
            A[k, k] = x[k]
    if big:
        return 1, lapack_lu_solve(A, b, x, np.empty(n, dtype=np.int32), np.empty(3, dtype=np.int32))
    return 1, lu_solve(A, b, x, perm)
