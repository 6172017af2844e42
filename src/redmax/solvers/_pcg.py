"""Compiled kernels of the preconditioned conjugate gradient solve of the Euler step (RedMax paper §3, Alg. 1;
Sueda's notes Alg. 10; Saad 2003, Alg. 9.1).

The step matrix (paper Eq. 2, :mod:`redmax.integrators.step`) is never formed:

    A x = J^T (I J x + sum_blocks B_ac (J x)_c) + (h Dr - h^2 Kr) x,

with the bodies' world inertias ``I`` and the maximal blocks ``B = h D - h^2 K`` of the forces (world coordinates,
one 6x6 block per body pair), ``J x`` and ``J^T y`` by one pass each over the tree: O(n + blocks)
(:func:`apply_A`).

The preconditioner P is A without the blocks that join two different bodies (the projected block-Jacobi
preconditioner of paper Eq. 3): ``P = J^T blkdiag(I_i + B_ii) J + R`` with R the joint blocks of the reduced
terms.  In world coordinates the articulated-body recursion solves ``P z = r`` exactly in O(n) (no adjoint
transforms: every twist and wrench is in the world frame): :func:`precondition_setup` forms, leaves first,
``Mh_i = I_i + B_ii + sum_children Pi_c``, ``U_i = Mh_i S_i``, ``Psi_i = (S_i^T U_i + R_i)^-1``, ``Pi_i = Mh_i -
U_i Psi_i U_i^T``; :func:`precondition_apply` runs the backward pass ``beta_i = Bh_i + U_i Psi_i (r_i - S_i^T
Bh_i)`` (``Bh_i`` the sum of the children's beta) and the forward pass ``z_i = Psi_i (r_i - U_i^T a_parent -
S_i^T Bh_i)``, ``a_i = a_parent + S_i z_i``.  When no block joins two moving bodies, P = A and PCG converges in
one iteration.

:func:`pcg` is Saad's Alg. 9.1 as the paper's code runs it (spec: the warm start is given, the residual is measured
against the warm start's, ``r^T r < tol^2 r_0^T r_0``).  Everything here is O(n + blocks) memory: no n x n array.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax._kernels.workspace import work_offsets
from redmax.integrators._stages import J_world, JT_world, inertia_world
from redmax.model.layout import offsets
from redmax.solvers._kkt import schur_solve

__all__ = ["apply_A", "pcg", "pcg_projected", "pcg_rows", "precondition_apply", "precondition_setup", "world_inertias"]


@njit(cache=True)
def apply_A(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, x, V, F, Y, out):
    """``out = A x`` (n,) matrix-free, O(n + blocks).

    Args:
        Ii: packed model integers.  W: the step's workspace (world frames, S, inertias).  bpair (m, 2), bB (m, 6, 6):
            the maximal blocks ``B_ac`` (``F_a += B_ac V_c``), the first ``nblk`` used.  rdiag (n,): the diagonal of
            ``h Dr - h^2 Kr``; rb_dofs, rb_off, rb_val: its other blocks (block k: DOFs ``rb_dofs[rb_off[k]:rb_off[k +
            1]]``, values row-major from ``rb_val`` at the matching square offset, see :func:`pack_blocks`).
        x (n,): the vector.  V, F, Y (nb, 6): scratch.  out (n,): the product.
    """
    J_world(Ii, W, x, V)
    inertia_world(Ii, W, V, F)
    for k in range(nblk):
        a = bpair[k, 0]
        c = bpair[k, 1]
        for r in range(6):
            s = 0.0
            for j in range(6):
                s += bB[k, r, j] * V[c, j]
            F[a, r] += s
    JT_world(Ii, W, F, Y, out)
    n = x.shape[0]
    for d in range(n):
        out[d] += rdiag[d] * x[d]
    vo = 0
    for k in range(rb_off.shape[0] - 1):
        lo = rb_off[k]
        m = rb_off[k + 1] - lo
        for r in range(m):
            s = 0.0
            for j in range(m):
                s += rb_val[vo + r * m + j] * x[rb_dofs[lo + j]]
            out[rb_dofs[lo + r]] += s
        vo += m * m


@njit(cache=True)
def _small_inverse(D, m, out, A):
    """``out[:m, :m] = D[:m, :m]^-1`` by Gauss-Jordan with partial pivoting (m <= 6; A (6, 12): scratch); returns
    the smallest absolute pivot (0.0 when singular)."""
    if m == 1:
        if not abs(D[0, 0]) > 0.0:
            return 0.0
        out[0, 0] = 1.0 / D[0, 0]
        return abs(D[0, 0])
    for r in range(m):
        for c in range(m):
            A[r, c] = D[r, c]
            A[r, m + c] = 1.0 if r == c else 0.0
    piv_min = np.inf
    for c in range(m):
        p = c
        for r in range(c + 1, m):
            if abs(A[r, c]) > abs(A[p, c]):
                p = r
        if not abs(A[p, c]) > 0.0:
            return 0.0
        piv_min = min(piv_min, abs(A[p, c]))
        if p != c:
            for j in range(2 * m):
                A[c, j], A[p, j] = A[p, j], A[c, j]
        inv = 1.0 / A[c, c]
        for j in range(2 * m):
            A[c, j] *= inv
        for r in range(m):
            if r != c:
                f = A[r, c]
                if f != 0.0:
                    for j in range(2 * m):
                        A[r, j] -= f * A[c, j]
    for r in range(m):
        for c in range(m):
            out[r, c] = A[r, m + c]
    return piv_min


@njit(cache=True)
def world_inertias(Ii, W, out):
    """``out`` (nb, 6, 6): each body's world spatial inertia ``[[Io, [h]], [-[h], m 1]]`` (about the world origin,
    angular first) from its compact form (m, h, Io) in the step's workspace W."""
    nb = Ii[0]
    o = work_offsets(nb, Ii[1])
    for i in range(nb):
        c = W[o.wI + 10 * i:o.wI + 10 * i + 10]
        m_, h0, h1, h2 = c[0], c[1], c[2], c[3]
        M = out[i]
        M[0, 0], M[0, 1], M[0, 2] = c[4], c[5], c[6]
        M[1, 0], M[1, 1], M[1, 2] = c[5], c[7], c[8]
        M[2, 0], M[2, 1], M[2, 2] = c[6], c[8], c[9]
        M[0, 3], M[0, 4], M[0, 5] = 0.0, -h2, h1
        M[1, 3], M[1, 4], M[1, 5] = h2, 0.0, -h0
        M[2, 3], M[2, 4], M[2, 5] = -h1, h0, 0.0
        M[3, 0], M[3, 1], M[3, 2] = 0.0, h2, -h1
        M[4, 0], M[4, 1], M[4, 2] = -h2, 0.0, h0
        M[5, 0], M[5, 1], M[5, 2] = h1, -h0, 0.0
        for r in range(3, 6):
            for k in range(3, 6):
                M[r, k] = m_ if r == k else 0.0


@njit(cache=True)
def precondition_setup(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, Mh, U, Psi):
    """The factors of the projected block-Jacobi preconditioner (module docstring), leaves first.

    Args:
        Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val: as :func:`apply_A` (reduced blocks that span two
            joints are left out: P keeps each joint's own block).
        Mh (nb, 6, 6): output, the articulated inertias ``I_i + B_ii + sum_children Pi_c`` (world).
        U (n, 6): output, ``Mh_i S_i`` per DOF (its column).  Psi (n, 6): output, row d holds the row of
            ``Psi_i`` of DOF d (columns 0..n_i-1).
    Returns:
        The joint index whose ``S^T Mh S + R`` is singular, or -1.
    """
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    world_inertias(Ii, W, Mh)
    for k in range(nblk):
        a = bpair[k, 0]
        if a == bpair[k, 1]:
            for r in range(6):
                for c in range(6):
                    Mh[a, r, c] += bB[k, r, c]
    nrb = rb_off.shape[0] - 1
    jof = np.full(n if nrb > 0 else 0, -1, dtype=np.int64)  # the joint (body) of each DOF (for reduced blocks)
    for i in range(nb if nrb > 0 else 0):
        for d in range(Ii[L.o_idx + i], Ii[L.o_idx + i + 1]):
            jof[d] = i
    D = np.zeros((6, 6))
    Dinv = np.zeros((6, 6))
    G = np.zeros((6, 12))
    P = np.zeros((6, 6))  # Psi U^T of the joint (m, 6)
    for i in range(nb - 1, -1, -1):
        d0 = Ii[L.o_idx + i]
        m = Ii[L.o_idx + i + 1] - d0
        par = Ii[L.o_par + i]
        if m == 1 and nrb == 0:  # one DOF (the common case): U = Mh S, Psi = 1 / (S.U + R), Pi = Mh - U Psi U^T
            s0 = 0.0
            for r in range(6):
                acc = 0.0
                for c in range(6):
                    acc += Mh[i, r, c] * W[o.wS + 6 * d0 + c]
                U[d0, r] = acc
                s0 += W[o.wS + 6 * d0 + r] * acc
            s0 += rdiag[d0]
            if not abs(s0) > 0.0:
                return i
            inv = 1.0 / s0
            Psi[d0, 0] = inv
            for b in range(1, 6):
                Psi[d0, b] = 0.0
            if par >= 0:
                for r in range(6):
                    ur = U[d0, r] * inv
                    for c in range(6):
                        Mh[par, r, c] += Mh[i, r, c] - ur * U[d0, c]
            continue
        if m > 0:
            for a in range(m):
                for r in range(6):
                    s = 0.0
                    for c in range(6):
                        s += Mh[i, r, c] * W[o.wS + 6 * (d0 + a) + c]
                    U[d0 + a, r] = s
            for a in range(m):
                for b in range(m):
                    s = 0.0
                    for r in range(6):
                        s += W[o.wS + 6 * (d0 + a) + r] * U[d0 + b, r]
                    D[a, b] = s
                D[a, a] += rdiag[d0 + a]
            vo = 0
            for k in range(nrb):  # the joint's own reduced blocks
                lo = rb_off[k]
                mk = rb_off[k + 1] - lo
                inside = True
                for j in range(mk):
                    if jof[rb_dofs[lo + j]] != i:
                        inside = False
                if inside:
                    for r in range(mk):
                        for j in range(mk):
                            D[rb_dofs[lo + r] - d0, rb_dofs[lo + j] - d0] += rb_val[vo + r * mk + j]
                vo += mk * mk
            if _small_inverse(D, m, Dinv, G) == 0.0:
                return i
            for a in range(m):
                for b in range(6):
                    Psi[d0 + a, b] = Dinv[a, b] if b < m else 0.0
        if par >= 0:
            for a in range(m):  # P = Psi U^T
                for c in range(6):
                    s = 0.0
                    for b in range(m):
                        s += Psi[d0 + a, b] * U[d0 + b, c]
                    P[a, c] = s
            for r in range(6):
                for c in range(6):
                    s = Mh[i, r, c]
                    for a in range(m):
                        s -= U[d0 + a, r] * P[a, c]
                    Mh[par, r, c] += s
    return -1


@njit(cache=True)
def precondition_apply(Ii, W, U, Psi, r, Bh, Acc, z):
    """``z = P^-1 r`` (n,) in O(n) from the factors of :func:`precondition_setup`; Bh, Acc (nb, 6): scratch."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    u = np.empty(6)
    for i in range(nb):
        for k in range(6):
            Bh[i, k] = 0.0
    for i in range(nb - 1, -1, -1):  # backward: beta_i = Bh_i + U_i Psi_i (r_i - S_i^T Bh_i), into Bh of the parent
        d0 = Ii[L.o_idx + i]
        m = Ii[L.o_idx + i + 1] - d0
        par = Ii[L.o_par + i]
        for a in range(m):
            s = r[d0 + a]
            for k in range(6):
                s -= W[o.wS + 6 * (d0 + a) + k] * Bh[i, k]
            u[a] = s
            z[d0 + a] = s  # (kept: r_i - S_i^T Bh_i, read by the forward pass)
        if par >= 0:
            for k in range(6):
                Bh[par, k] += Bh[i, k]
            for a in range(m):
                w = 0.0
                for b in range(m):
                    w += Psi[d0 + a, b] * u[b]
                for k in range(6):
                    Bh[par, k] += U[d0 + a, k] * w
    for i in range(nb):  # forward: z_i = Psi_i (r_i - S_i^T Bh_i - U_i^T a_parent), a_i = a_parent + S_i z_i
        d0 = Ii[L.o_idx + i]
        m = Ii[L.o_idx + i + 1] - d0
        par = Ii[L.o_par + i]
        for k in range(6):
            Acc[i, k] = Acc[par, k] if par >= 0 else 0.0
        for a in range(m):
            s = z[d0 + a]
            if par >= 0:
                for k in range(6):
                    s -= U[d0 + a, k] * Acc[par, k]
            u[a] = s
        for a in range(m):
            w = 0.0
            for b in range(m):
                w += Psi[d0 + a, b] * u[b]
            z[d0 + a] = w
            for k in range(6):
                Acc[i, k] += W[o.wS + 6 * (d0 + a) + k] * w


@njit(cache=True, inline="always")
def _split(work, n, nb):
    """The scratch vectors of a solve, views of ``work`` (4 n + 24 nb,): ``(r, z, p, w, S)``, S (4, nb, 6)."""
    return (work[0:n], work[n:2 * n], work[2 * n:3 * n], work[3 * n:4 * n],
            work[4 * n:4 * n + 24 * nb].reshape((4, nb, 6)))


@njit(cache=True)
def pcg(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, U, Psi, b, x, tol, max_iter, work):
    """Preconditioned conjugate gradients on ``A x = b`` from the warm start in ``x`` (overwritten by the
    solution), Saad's Alg. 9.1: stop when ``r^T r < tol^2 r0^T r0`` (r0 the warm start's residual).

    Args:
        U, Psi: the preconditioner's factors (:func:`precondition_setup`).  work (4 n + 24 nb,): scratch.
        ``max_iter == 0``: no iteration, ``x = P^-1 b`` (the direct solve of ``solver="recursive"``, exact when
        no block joins two moving bodies, ``ForceProgram.coupling``).
    Returns:
        ``(iterations, converged, rr)``: the iteration count at exit (0 when the warm start solves the system),
        whether the rule was met, and the last ``r^T r``.
    """
    n = x.shape[0]
    r, z, p, w, S = _split(work, n, Ii[0])
    if max_iter == 0:
        precondition_apply(Ii, W, U, Psi, b, S[0], S[1], x)
        return 0, True, 0.0
    V, F, Y = S[0], S[1], S[2]
    apply_A(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, x, V, F, Y, w)
    rr = 0.0
    for d in range(n):
        r[d] = b[d] - w[d]
        rr += r[d] * r[d]
    rho0 = rr
    if rho0 == 0.0:
        return 0, True, rr
    precondition_apply(Ii, W, U, Psi, r, S[0], S[1], z)
    rz = 0.0
    for d in range(n):
        p[d] = z[d]
        rz += r[d] * z[d]
    for it in range(1, max_iter + 1):
        apply_A(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, p, V, F, Y, w)
        pw = 0.0
        for d in range(n):
            pw += p[d] * w[d]
        if pw == 0.0:  # (p = 0: the residual vanished)
            return it, True, rr
        alpha = rz / pw
        rr = 0.0
        for d in range(n):
            x[d] += alpha * p[d]
            r[d] -= alpha * w[d]
            rr += r[d] * r[d]
        if not rr >= 0.0:  # NaN: a non-finite system
            return it, False, rr
        if rr < tol * tol * rho0:
            return it, True, rr
        precondition_apply(Ii, W, U, Psi, r, S[0], S[1], z)
        rz1 = 0.0
        for d in range(n):
            rz1 += r[d] * z[d]
        beta = rz1 / rz
        rz = rz1
        for d in range(n):
            p[d] = z[d] + beta * p[d]
    return max_iter, False, rr


@njit(cache=True)
def pcg_rows(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, U, Psi, b, x, x0, tol, max_iter, work, G, r, m,
             lam, Y, S, srhs, ip, jp, stmp, its):
    """``A x + G^T lam = b``, ``G x = r`` (the first m rows of G) by the Schur complement with m + 1 PCG solves
    (RedMax paper Eq. 4 as its PCG code solves it): ``x_u = A^-1 b`` from the warm start ``x0``, ``Y_k = A^-1 G_k^T``
    from the previous step's ``Y_k``, ``(G Y^T) lam = G x_u - r`` by complete pivoting (redundant rows get 0,
    :func:`redmax.solvers._kkt.schur_solve`), ``x = x_u - Y^T lam``.

    Args:
        G (>= m, n), r (>= m,): the rows.  lam (>= m,): the multipliers (output).  Y (>= m, n): the solves
            (kept between steps as warm starts).  S (>= m, >= m), srhs, stmp, ip, jp (>= m,): scratch.
        its (>= m + 2,): the iterations of each solve (``its[0]`` b's, ``its[1 + k]`` row k's), ``its[-1]`` the
            number of solves.  Other arguments as :func:`pcg`.
    Returns:
        ``(converged, total iterations)``.
    """
    n = x.shape[0]
    for d in range(n):
        x[d] = x0[d]
    it, ok, _ = pcg(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, U, Psi, b, x, tol, max_iter, work)
    its[0] = it
    its[its.shape[0] - 1] = 1 + m
    total = it
    if not ok:
        return False, total
    for k in range(m):
        it, ok, _ = pcg(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, U, Psi, G[k], Y[k], tol, max_iter,
                        work)
        its[1 + k] = it
        total += it
        if not ok:
            return False, total
    if m == 0:
        return True, total
    for k in range(m):
        for l in range(k + 1):  # G A^-1 G^T, symmetric up to the solves' tolerance: its symmetric part
            s = 0.0
            for d in range(n):
                s += G[k, d] * Y[l, d] + G[l, d] * Y[k, d]
            S[k, l] = 0.5 * s
            S[l, k] = 0.5 * s
        s = -r[k]
        for d in range(n):
            s += G[k, d] * x[d]
        srhs[k] = s
    schur_solve(S, srhs, lam, m, ip, jp, stmp)
    for k in range(m):
        lk = lam[k]
        if lk != 0.0:
            for d in range(n):
                x[d] -= Y[k, d] * lk
    return True, total


@njit(cache=True)
def _row_multipliers(G, v, rhs, c, S0, S, t, mu, ip, jp, stmp, m):
    """``mu = (G P^-1 G^T)^-1 (G v - c rhs)`` (m,), ``S0`` holding ``G P^-1 G^T`` (copied into the scratch ``S``:
    the elimination overwrites it; redundant rows get 0, :func:`redmax.solvers._kkt.schur_solve`)."""
    n = v.shape[0]
    for k in range(m):
        s = -c * rhs[k] if c != 0.0 else 0.0
        for d in range(n):
            s += G[k, d] * v[d]
        t[k] = s
        for j in range(m):
            S[k, j] = S0[k, j]
    schur_solve(S, t, mu, m, ip, jp, stmp)


@njit(cache=True)
def _project(G, Z, S0, S, t, mu, ip, jp, stmp, m, z, r, lam):
    """Make ``z`` (= P^-1 r) tangent to the rows: ``mu = (G P^-1 G^T)^-1 G z``, ``z -= Z^T mu`` (so ``G z = 0``),
    ``r -= G^T mu`` (then still ``z = P^-1 r``) and ``lam += mu``."""
    n = z.shape[0]
    _row_multipliers(G, z, t, 0.0, S0, S, t, mu, ip, jp, stmp, m)
    for k in range(m):
        mk = mu[k]
        if mk != 0.0:
            lam[k] += mk
            for d in range(n):
                z[d] -= Z[k, d] * mk
                r[d] -= G[k, d] * mk


@njit(cache=True)
def _precondition_projected(Ii, W, U, Psi, G, Z, S0, S, t, mu, ip, jp, stmp, m, res, z, lam, Sc):
    """``z = P^-1 res`` made tangent to the rows (:func:`_project`, which updates ``res`` and ``lam``); returns
    ``(res^T res, res^T z)``."""
    precondition_apply(Ii, W, U, Psi, res, Sc[0], Sc[1], z)
    _project(G, Z, S0, S, t, mu, ip, jp, stmp, m, z, res, lam)
    rr = 0.0
    rz = 0.0
    for d in range(z.shape[0]):
        rr += res[d] * res[d]
        rz += res[d] * z[d]
    return rr, rz


@njit(cache=True)
def pcg_projected(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, U, Psi, b, x, x0, tol, max_iter, work,
                  G, r, m, lam, Z, S, srhs, ip, jp, stmp, its):
    """``A x + G^T lam = b``, ``G x = r`` (the first m rows of G) by one projected PCG solve: conjugate gradients
    on the rows' null space with the constraint preconditioner ``[[P, G^T], [G, 0]]`` (Gould, Hribar and Nocedal
    2001, Alg. II with the residual update), P the projected block-Jacobi preconditioner of :func:`pcg`.

    ``Z_k = P^-1 G_k^T`` (m exact O(n) recursions) and ``G Z^T`` (m x m) once per step; the start is the warm start
    ``x0`` moved onto ``G x = r`` in the P metric; every preconditioned residual is projected on ``G z = 0``
    (:func:`_project`), which removes from the residual its part that the multipliers take, so that the rule
    ``r^T r < tol^2 r0^T r0`` measures the KKT residual ``b - A x - G^T lam`` against ``r0 = b - A x_start`` (no
    multipliers: what the Schur complement's first solve starts from).  The iterations do not grow with the number
    of rows, unlike the Schur complement's m + 1 solves (:func:`pcg_rows`), and x meets the rows to rounding.

    Args:
        Z (>= m, n): scratch for the row solves.  S (>= 2 m, >= m): ``G Z^T`` in its first m rows, elimination
            scratch in the next m.  its (>= 2,): ``its[0]`` the iterations, ``its[-1]`` = 1 (one solve).  Other
            arguments as :func:`pcg_rows`.
    Returns:
        ``(converged, iterations)``.
    """
    n = x.shape[0]
    if m == 0:
        for d in range(n):
            x[d] = x0[d]
        it, ok, _ = pcg(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, U, Psi, b, x, tol, max_iter, work)
        its[0] = it
        its[its.shape[0] - 1] = 1
        return ok, it
    res, z, p, w, Sc = _split(work, n, Ii[0])
    V, F, Y = Sc[0], Sc[1], Sc[2]
    S0 = S[0:m]
    Sw = S[m:2 * m]
    mu = srhs
    for k in range(m):
        precondition_apply(Ii, W, U, Psi, G[k], Sc[0], Sc[1], Z[k])
        lam[k] = 0.0
    for k in range(m):
        for j in range(k + 1):  # G P^-1 G^T: its symmetric part
            s = 0.0
            for d in range(n):
                s += G[k, d] * Z[j, d] + G[j, d] * Z[k, d]
            S0[k, j] = 0.5 * s
            S0[j, k] = 0.5 * s
    # the start: x0 moved onto the rows, x = x0 - Z^T (G Z^T)^-1 (G x0 - r)
    t = np.empty(m)
    _row_multipliers(G, x0, r, 1.0, S0, Sw, t, mu, ip, jp, stmp, m)
    for d in range(n):
        x[d] = x0[d]
    for k in range(m):
        if mu[k] != 0.0:
            for d in range(n):
                x[d] -= Z[k, d] * mu[k]
    apply_A(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, x, V, F, Y, w)
    rho0 = 0.0  # the start's residual with no multipliers (as the Schur complement's first solve measures it)
    for d in range(n):
        res[d] = b[d] - w[d]
        rho0 += res[d] * res[d]
    rr, rz = _precondition_projected(Ii, W, U, Psi, G, Z, S0, Sw, t, mu, ip, jp, stmp, m, res, z, lam, Sc)
    for d in range(n):
        p[d] = z[d]
    its[its.shape[0] - 1] = 1
    its[0] = 0
    if not rr >= tol * tol * rho0:  # (the start solves it: the multipliers take the whole residual)
        return rr >= 0.0, 0
    for it in range(1, max_iter + 1):
        apply_A(Ii, W, bpair, bB, nblk, rdiag, rb_dofs, rb_off, rb_val, p, V, F, Y, w)
        pw = 0.0
        for d in range(n):
            pw += p[d] * w[d]
        its[0] = it
        if pw == 0.0:  # (p = 0: the projected residual vanished)
            return True, it
        alpha = rz / pw
        for d in range(n):
            x[d] += alpha * p[d]
            res[d] -= alpha * w[d]
        rr, rz1 = _precondition_projected(Ii, W, U, Psi, G, Z, S0, Sw, t, mu, ip, jp, stmp, m, res, z, lam, Sc)
        if not rr >= 0.0:  # NaN: a non-finite system
            return False, it
        if rr < tol * tol * rho0:
            return True, it
        beta = rz1 / rz
        rz = rz1
        for d in range(n):
            p[d] = z[d] + beta * p[d]
    return False, max_iter
