"""Compiled equality-constrained solve of the step (RedMax paper Eq. 4, notes Eq. 1.88) by the Schur complement.

    [ A  G^T ] [ x   ]   [ b ]
    [ G   0  ] [ lam ] = [ r ]      (A n x n, G m x n, m << n)

With ``x_u = A^-1 b`` and ``Y = A^-1 G^T``: ``S lam = G x_u - r`` with ``S = G Y`` (m x m), then ``x = x_u - Y lam``.
For a symmetric positive definite A (Cholesky ``A = L L^T``) the forward solves ``Z = L^-1 G^T`` give the
symmetric ``S = Z^T Z`` and ``x = x_u - L^-T (Z lam)``: m forward substitutions and one backward substitution on
top of the step's own factorisation, O(m n^2 + m^2 n).  Otherwise LU with partial pivoting (the pivots kept) and
m + 1 solves.  ``S`` is solved by Gaussian elimination with complete pivoting; pivots below ``tol`` times the
largest diagonal entry mark redundant rows (for example the out-of-plane row of a ball-socket loop on a planar
mechanism), whose multipliers are set to zero.

Hyper-reduced coordinates (notes §2.6) enter as a constant map ``x_full = T x``: :func:`compress` forms
``T^T A T``, ``T^T b`` and ``G T`` for a T with one non-zero per row (coordinate c -> DOF ``rmap[c]`` with factor
``tc[c]``), :func:`expand` maps back.
"""

from __future__ import annotations

from redmax._jit import njit
from redmax.solvers._dense import cholesky_solve

__all__ = ["compress", "expand", "kkt_stage", "lu_factor", "lu_resolve", "schur_solve"]

REDUNDANT_TOL = 1e-11  # relative pivot of S below which a row is taken as redundant


@njit(cache=True)
def lu_factor(A, piv):
    """In-place LU with partial pivoting: ``P A = L U`` (unit L below the diagonal), row swaps in ``piv``.
    Returns the smallest ratio of a pivot to its column's largest entry (0: singular)."""
    n = A.shape[0]
    worst = 1.0
    for k in range(n):
        p = k
        big = abs(A[k, k])
        for r in range(k + 1, n):
            v = abs(A[r, k])
            if v > big:
                big = v
                p = r
        piv[k] = p
        if not big > 0.0:
            return 0.0
        if p != k:
            for c in range(n):
                tmp = A[k, c]
                A[k, c] = A[p, c]
                A[p, c] = tmp
        scale = big
        for r in range(k + 1, n):
            scale = max(scale, abs(A[r, k]))
        if big / scale < worst:
            worst = big / scale
        inv = 1.0 / A[k, k]
        for r in range(k + 1, n):
            f = A[r, k] * inv
            A[r, k] = f
            if f != 0.0:
                for c in range(k + 1, n):
                    A[r, c] -= f * A[k, c]
    return worst


@njit(cache=True)
def lu_resolve(A, piv, b, x):
    """x = A^-1 b with the factors of :func:`lu_factor` (b and x may be the same array)."""
    n = A.shape[0]
    for k in range(n):
        x[k] = b[k]
    for k in range(n):
        p = piv[k]
        if p != k:
            tmp = x[k]
            x[k] = x[p]
            x[p] = tmp
    for k in range(n):
        s = x[k]
        for c in range(k):
            s -= A[k, c] * x[c]
        x[k] = s
    for k in range(n - 1, -1, -1):
        s = x[k]
        for c in range(k + 1, n):
            s -= A[k, c] * x[c]
        x[k] = s / A[k, k]


@njit(cache=True)
def _backward(L, y, n):
    """y = L^-T y."""
    for k in range(n - 1, -1, -1):
        s = y[k]
        for m in range(k + 1, n):
            s -= L[m, k] * y[m]
        y[k] = s / L[k, k]


@njit(cache=True)
def schur_solve(S, rhs, lam, m, ip, jp, tmp):
    """Solve ``S lam = rhs`` (m x m, S overwritten) by complete pivoting; a pivot below ``REDUNDANT_TOL`` times
    the largest diagonal entry ends the elimination and the remaining multipliers are 0.  Returns the number of
    independent rows."""
    dmax = 0.0
    for k in range(m):
        dmax = max(dmax, abs(S[k, k]))
        ip[k] = k
        jp[k] = k
        lam[k] = rhs[k]
    rank = 0
    for k in range(m):
        big = 0.0
        pr = k
        pc = k
        for r in range(k, m):
            for c in range(k, m):
                v = abs(S[r, c])
                if v > big:
                    big = v
                    pr = r
                    pc = c
        if not big > REDUNDANT_TOL * dmax:
            break
        if pr != k:
            for c in range(m):
                sw = S[k, c]
                S[k, c] = S[pr, c]
                S[pr, c] = sw
            sw = lam[k]
            lam[k] = lam[pr]
            lam[pr] = sw
        if pc != k:
            for r in range(m):
                sw = S[r, k]
                S[r, k] = S[r, pc]
                S[r, pc] = sw
            t2 = jp[k]
            jp[k] = jp[pc]
            jp[pc] = t2
        inv = 1.0 / S[k, k]
        for r in range(k + 1, m):
            f = S[r, k] * inv
            if f != 0.0:
                for c in range(k + 1, m):
                    S[r, c] -= f * S[k, c]
                lam[r] -= f * lam[k]
        rank += 1
    # back substitution on the independent block, zero for the rest (in pivoted column order)
    for k in range(rank, m):
        lam[k] = 0.0
    for k in range(rank - 1, -1, -1):
        s = lam[k]
        for c in range(k + 1, rank):
            s -= S[k, c] * lam[c]
        lam[k] = s / S[k, k]
    # undo the column permutation: lam[k] belongs to column jp[k]
    for k in range(m):
        tmp[jp[k]] = lam[k]
    for k in range(m):
        lam[k] = tmp[k]
    return rank


@njit(cache=True)
def kkt_stage(A, b, x, symmetric, G, r, m, lam, Z, S, y, piv, ip, jp, rhs, tmp):
    """Solve the KKT system of the module docstring in place (A is factorised, G kept).

    Args:
        A (n, n), b (n,): the step.  x (n,): the solution.  symmetric: A is symmetric positive definite
            (Cholesky; falls back to LU).  G (>= m, n), r (>= m,): the first m rows and their right-hand sides.
        lam (>= m,): the multipliers (output).  Z (>= m, n), S (>= m, >= m), y (n,), piv (n,), ip, jp, rhs, tmp
            (>= m,): scratch.
    Returns:
        (method, pivot, rank): method 0 Cholesky, 1 LU; pivot <= 0 when A is singular (x, lam not written).
    """
    n = A.shape[0]
    chol = False
    if symmetric:
        # keep the strict upper triangle (untouched by the Cholesky) for an LU fallback
        pv = cholesky_solve(A, b, x)
        if pv > 0.0:
            chol = True
        else:
            for k in range(n):
                for c in range(k + 1):
                    A[k, c] = A[c, k]
    if not chol:
        pv = lu_factor(A, piv)
        if not pv > 0.0:
            return 1, pv, 0
        lu_resolve(A, piv, b, x)
    if m == 0:
        return 0 if chol else 1, pv, 0
    if chol:
        # Z = G L^-T: the m forward substitutions in one pass over L (the rows interleave; same operations)
        for c in range(n):
            d = A[c, c]
            for k in range(m):
                s = G[k, c]
                for j in range(c):
                    s -= A[c, j] * Z[k, j]
                Z[k, c] = s / d
        for k in range(m):
            for l in range(k + 1):
                s = 0.0
                for c in range(n):
                    s += Z[k, c] * Z[l, c]
                S[k, l] = s
                S[l, k] = s
    else:
        for k in range(m):
            for c in range(n):
                y[c] = G[k, c]
            lu_resolve(A, piv, y, Z[k])  # Z[k] = A^-1 G_k^T
        for k in range(m):
            for l in range(m):
                s = 0.0
                for c in range(n):
                    s += G[k, c] * Z[l, c]
                S[k, l] = s
    for k in range(m):
        s = -r[k]
        for c in range(n):
            s += G[k, c] * x[c]
        rhs[k] = s
    rank = schur_solve(S, rhs, lam, m, ip, jp, tmp)
    for c in range(n):
        s = 0.0
        for k in range(m):
            s += Z[k, c] * lam[k]
        y[c] = s
    if chol:
        _backward(A, y, n)
    for c in range(n):
        x[c] -= y[c]
    return 0 if chol else 1, pv, rank


@njit(cache=True)
def compress(A, b, G, m, rmap, tc, AR, bR, GR):
    """``AR = T^T A T``, ``bR = T^T b``, ``GR = G T`` (first m rows) for the one-non-zero-per-row map
    ``T[c, rmap[c]] = tc[c]``."""
    n = A.shape[0]
    nr = AR.shape[0]
    for i in range(nr):
        bR[i] = 0.0
        for j in range(nr):
            AR[i, j] = 0.0
    for c in range(n):
        i = rmap[c]
        fc = tc[c]
        bR[i] += fc * b[c]
        for d in range(n):
            AR[i, rmap[d]] += fc * tc[d] * A[c, d]
    for k in range(m):
        for i in range(nr):
            GR[k, i] = 0.0
        for c in range(n):
            GR[k, rmap[c]] += G[k, c] * tc[c]


@njit(cache=True)
def expand(xR, rmap, tc, x):
    """x = T xR."""
    for c in range(x.shape[0]):
        x[c] = tc[c] * xR[rmap[c]]
