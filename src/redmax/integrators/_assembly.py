"""Assembly of the linearly implicit Euler step's matrix ``A`` from 6x6 body-pair blocks, without forming J.

``A = M + J^T (h Dm - h^2 Km) J + h Dr - h^2 Kr`` (RedMax paper Eq. 2) in O(n d + sum over pairs of path
lengths): for joints i, j with j an ancestor of i, ``A_ij = S_i^T Y_ij S_j`` with ``Y_ij = sum_{a in sub(i),
b in sub(j)} B_ab``; the pairs with both bodies in sub(i) form a composite ``Q_i`` (body inertias, diagonal
blocks, and every pair block at its bodies' lowest common ancestor), the others enter as increments picked up while
walking from i to the root (a pair ``(a, b)`` with lowest common ancestor c adds ``B_ab^T S_i`` to the walk of each
joint i on the path from a to c, from c upward), and joints on the two sides of a pair couple through
``S_i^T B_ab S_j`` directly.  Two-point springs kept as pair records (``prec``) add their exact blocks here.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax._kernels.registers import get6
from redmax._kernels.workspace import work_offsets
from redmax.model.layout import offsets

__all__ = ["assemble_stage", "depths"]


@njit(cache=True)
def depths(Ii):
    """Depth of every body (roots 0)."""
    L = offsets(Ii)
    dep = np.zeros(L.nb, dtype=np.int64)
    for i in range(L.nb):
        p = Ii[L.o_par + i]
        dep[i] = 0 if p < 0 else dep[p] + 1
    return dep


@njit(cache=True)
def _sk(a0, a1, a2):
    """[a] as a row-major 9-tuple."""
    z = 0.0 * a0
    return (z, -a2, a1, a2, z, -a0, -a1, a0, z)


@njit(cache=True)
def _mm(A, B):
    """A B for row-major 9-tuples."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6], A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8], A[3] * B[0] + A[4] * B[3] + A[5] * B[6],
            A[3] * B[1] + A[4] * B[4] + A[5] * B[7], A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6], A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@njit(cache=True)
def _tr(A):
    return (A[0], A[3], A[6], A[1], A[4], A[7], A[2], A[5], A[8])


@njit(cache=True)
def _mv(A, v0, v1, v2):
    return (A[0] * v0 + A[1] * v1 + A[2] * v2, A[3] * v0 + A[4] * v1 + A[5] * v2, A[6] * v0 + A[7] * v1 + A[8] * v2)


@njit(cache=True)
def _cr(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True)
def _pair_value(pv, i, l, G, Dm, F0, F1, F2, hw):
    """The entry A_il of a pair law for path DOFs i and l (rows of pv: side, u (3), w (3), g (3), z (3)):
    ``-g_i.G g_l + hw (g_i.D z_l + g_l.D z_i + sum_k s_k (u_i^k.(F x w_l^k) + u_l^k.(F x w_i^k)))``."""
    gi = (pv[i, 7], pv[i, 8], pv[i, 9])
    gl = (pv[l, 7], pv[l, 8], pv[l, 9])
    zi = (pv[i, 10], pv[i, 11], pv[i, 12])
    zl = (pv[l, 10], pv[l, 11], pv[l, 12])
    Gg = _mv(G, gl[0], gl[1], gl[2])
    v = -(gi[0] * Gg[0] + gi[1] * Gg[1] + gi[2] * Gg[2])
    Dz = _mv(Dm, zl[0], zl[1], zl[2])
    acc = gi[0] * Dz[0] + gi[1] * Dz[1] + gi[2] * Dz[2]
    Dz = _mv(Dm, zi[0], zi[1], zi[2])
    acc += gl[0] * Dz[0] + gl[1] * Dz[1] + gl[2] * Dz[2]
    if pv[i, 0] == pv[l, 0]:  # both move the same point k: s_k (u_i.(F x w_l) + u_l.(F x w_i))
        sk = 1.0 if pv[i, 0] == 0.0 else -1.0
        c0, c1, c2 = _cr(F0, F1, F2, pv[l, 4], pv[l, 5], pv[l, 6])
        d0, d1, d2 = _cr(F0, F1, F2, pv[i, 4], pv[i, 5], pv[i, 6])
        acc += sk * (pv[i, 1] * c0 + pv[i, 2] * c1 + pv[i, 3] * c2 + pv[l, 1] * d0 + pv[l, 2] * d1 + pv[l, 3] * d2)
    return v + hw * acc


@njit(cache=True)
def _assemble_pairs(Ii, W, ppair, prec, npair, symmetric, dep, inc_d, inc_c, inc_u, head, nxt, ninc, pv, pd, A):
    """Pair laws (two points, ``F_1 = -F_0(x_1 - x_0, xd_1 - xd_0)``) in their symmetrised RedMax form, added to
    the assembly without 6x6 blocks.  With point velocity columns ``u_i^k = S_w,i`` applied at x_k, angular
    columns ``w_i^k`` (zero when DOF i does not move point k), ``g_i = u_i^1 - u_i^0``,
    ``z_i = xd_1 x w_i^1 - xd_0 x w_i^0``, ``G = wK sym(K) - cD D`` and ``hw = wK / 2``:

        A_il += -g_i.G g_l + hw (g_i.D z_l + g_l.D z_i + u_i^0.(F x w_l^0) - u_i^1.(F x w_l^1) + (i <-> l)).

    DOFs above the lowest common ancestor c move both points alike (``g = w x d``, ``z = dv x w``): their block is
    ``w_i^T Q w_l`` with ``Q = [d] G [d] + hw ([d] D [dv] + [dv] D^T [d] - [d][F] - [F][d])``, added to the composite
    of c; a DOF i below c couples to them through a 6-vector increment picked up at c; DOFs below c couple to each
    other directly.  Returns the new increment count."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    o_par = L.o_par
    o_idx = L.o_idx
    for t in range(npair):
        a = ppair[t, 0]
        b = ppair[t, 1]
        r = prec[t]
        x0, x1, x2 = r[0], r[1], r[2]
        y0, y1, y2 = r[3], r[4], r[5]
        F0, F1, F2 = r[12], r[13], r[14]
        G = (r[15], r[16], r[17], r[18], r[19], r[20], r[21], r[22], r[23])
        Dm = (r[24], r[25], r[26], r[27], r[28], r[29], r[30], r[31], r[32])
        hw = 0.5 * r[33]
        d0, d1, d2 = y0 - x0, y1 - x1, y2 - x2
        v0, v1, v2 = r[9] - r[6], r[10] - r[7], r[11] - r[8]
        # lowest common ancestor (-1: none)
        p = a
        q = b
        if p >= 0 and q >= 0:
            while dep[p] > dep[q]:
                p = Ii[o_par + p]
            while dep[q] > dep[p]:
                q = Ii[o_par + q]
            while p != q and p >= 0 and q >= 0:
                p = Ii[o_par + p]
                q = Ii[o_par + q]
            c = p if p == q else -1
        else:
            c = -1
        if c >= 0 and r[34] == 1.0:  # isotropic point spring: Q = -cD kd [d][d] = cD kd (|d|^2 1 - d d^T)
            ckd = r[35]
            if ckd != 0.0:
                dd = d0 * d0 + d1 * d1 + d2 * d2
                Qc = W[o.wQ + 36 * c:o.wQ + 36 * c + 36]
                Qc[0] += ckd * (dd - d0 * d0)
                Qc[1] -= ckd * d0 * d1
                Qc[2] -= ckd * d0 * d2
                Qc[6] -= ckd * d1 * d0
                Qc[7] += ckd * (dd - d1 * d1)
                Qc[8] -= ckd * d1 * d2
                Qc[12] -= ckd * d2 * d0
                Qc[13] -= ckd * d2 * d1
                Qc[14] += ckd * (dd - d2 * d2)
        elif c >= 0:
            Sd = _sk(d0, d1, d2)
            Sv = _sk(v0, v1, v2)
            SF = _sk(F0, F1, F2)
            Q1 = _mm(_mm(Sd, G), Sd)
            Q2 = _mm(_mm(Sd, Dm), Sv)
            Q3 = _mm(_mm(Sv, _tr(Dm)), Sd)
            Q4 = _mm(Sd, SF)
            Q5 = _mm(SF, Sd)
            Qc = W[o.wQ + 36 * c:o.wQ + 36 * c + 36]
            for rr in range(3):
                for cc in range(3):
                    k = 3 * rr + cc
                    Qc[6 * rr + cc] += Q1[k] + hw * (Q2[k] + Q3[k] - Q4[k] - Q5[k])
        # path DOFs below c on both sides: side, u, w, g, z
        npd = 0
        for side in range(2):
            i = a if side == 0 else b
            px = r[0:3] if side == 0 else r[3:6]
            pxd = r[6:9] if side == 0 else r[9:12]
            sg = -1.0 if side == 0 else 1.0
            while i != c and i >= 0:
                for dof in range(Ii[o_idx + i], Ii[o_idx + i + 1]):
                    s0, s1, s2, s3, s4, s5 = W[o.wS + 6 * dof], W[o.wS + 6 * dof + 1], W[o.wS + 6 * dof + 2], \
                        W[o.wS + 6 * dof + 3], W[o.wS + 6 * dof + 4], W[o.wS + 6 * dof + 5]
                    c0, c1, c2 = _cr(s0, s1, s2, px[0], px[1], px[2])
                    u0, u1, u2 = c0 + s3, c1 + s4, c2 + s5
                    z0, z1, z2 = _cr(pxd[0], pxd[1], pxd[2], s0, s1, s2)
                    pd[npd] = dof
                    row = pv[npd]
                    row[0] = side
                    row[1] = u0
                    row[2] = u1
                    row[3] = u2
                    row[4] = s0
                    row[5] = s1
                    row[6] = s2
                    row[7] = sg * u0
                    row[8] = sg * u1
                    row[9] = sg * u2
                    row[10] = sg * z0
                    row[11] = sg * z1
                    row[12] = sg * z2
                    npd += 1
                i = Ii[o_par + i]
        # path x path entries
        for m in range(npd):
            for m2 in range(m + 1):
                val = _pair_value(pv, m, m2, G, Dm, F0, F1, F2, hw)
                i = pd[m]
                l = pd[m2]
                if symmetric:
                    if i >= l:
                        A[i, l] += val
                    else:
                        A[l, i] += val
                else:
                    A[i, l] += val
                    if i != l:
                        A[l, i] += val
        if c < 0:
            continue
        # path x common: increment [e; f] for each path DOF, picked up at c
        for m in range(npd):
            g0, g1, g2 = pv[m, 7], pv[m, 8], pv[m, 9]
            zz0, zz1, zz2 = pv[m, 10], pv[m, 11], pv[m, 12]
            Gg = _mv(_tr(G), g0, g1, g2)
            e0, e1, e2 = _cr(d0, d1, d2, Gg[0], Gg[1], Gg[2])
            e0, e1, e2 = -e0, -e1, -e2
            Dg = _mv(_tr(Dm), g0, g1, g2)
            a0, a1, a2 = _cr(Dg[0], Dg[1], Dg[2], v0, v1, v2)
            Dz = _mv(Dm, zz0, zz1, zz2)
            b0, b1, b2 = _cr(d0, d1, d2, Dz[0], Dz[1], Dz[2])
            gF0, gF1, gF2 = _cr(g0, g1, g2, F0, F1, F2)
            e0 += hw * (a0 + b0 - gF0)
            e1 += hw * (a1 + b1 - gF1)
            e2 += hw * (a2 + b2 - gF2)
            w0, w1, w2 = pv[m, 4], pv[m, 5], pv[m, 6]
            aw0, aw1, aw2 = _cr(F0, F1, F2, w0, w1, w2)
            if pv[m, 0] == 0.0:
                sk = 1.0
                xs0, xs1, xs2 = r[0], r[1], r[2]
            else:
                sk = -1.0
                xs0, xs1, xs2 = r[3], r[4], r[5]
            xa0, xa1, xa2 = _cr(xs0, xs1, xs2, aw0, aw1, aw2)
            e0 += hw * sk * xa0
            e1 += hw * sk * xa1
            e2 += hw * sk * xa2
            dof = pd[m]
            for col in range(1 if symmetric else 2):
                u = inc_u[ninc]
                u[0] = e0
                u[1] = e1
                u[2] = e2
                u[3] = hw * sk * aw0
                u[4] = hw * sk * aw1
                u[5] = hw * sk * aw2
                inc_d[ninc] = dof
                inc_c[ninc] = c
                nxt[ninc] = head[col * n + dof]
                head[col * n + dof] = ninc
                ninc += 1
    return ninc


@njit(cache=True, fastmath=FAST)
def assemble_stage(Ii, W, bpair, bB, nblk, rdiag, symmetric, dep, inc_d, inc_c, inc_u, head, nxt, A, ppair, prec,
                   npair, pv, pd):
    """Assemble ``A = M + sum_blocks J^T B J + diag(rdiag)`` (n, n) (see the module docstring).

    Args:
        W: the workspace after :func:`kinematics_stage` (its Q region is overwritten).
        bpair (cap, 2), bB (cap, 6, 6): the first ``nblk`` body-pair blocks ``B_ab`` (world).
        rdiag: (n,) reduced diagonal.  symmetric: the blocks come in transposed pairs (``B_ba = B_ab^T``)
            and A is symmetric: only the lower triangle is computed, then mirrored.
        dep: body depths.  inc_d, inc_c (cap2,), inc_u (cap2, 6), head (2n,), nxt (cap2,): increment scratch,
            ``cap2`` at least twice the number of (pair, path joint DOF) incidences.
        ppair (capP, 2), prec (capP, PAIR_FLOATS), npair: pair-law records (``redmax.forces._compiled``), assembled by
            :func:`_assemble_pairs`; pv (n, 13), pd (n,) their scratch.
    """
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    o_par = L.o_par
    o_idx = L.o_idx
    # Q_i = body inertia (6x6 from the compact form)
    for i in range(nb):
        Q = W[o.wQ + 36 * i:o.wQ + 36 * i + 36]
        c = W[o.wI + 10 * i:o.wI + 10 * i + 10]
        m, h0, h1, h2 = c[0], c[1], c[2], c[3]
        Q[0] = c[4]
        Q[1] = c[5]
        Q[2] = c[6]
        Q[6] = c[5]
        Q[7] = c[7]
        Q[8] = c[8]
        Q[12] = c[6]
        Q[13] = c[8]
        Q[14] = c[9]
        # [[I, [h]], [[h]^T, m 1]]
        Q[3] = 0.0
        Q[4] = -h2
        Q[5] = h1
        Q[9] = h2
        Q[10] = 0.0
        Q[11] = -h0
        Q[15] = -h1
        Q[16] = h0
        Q[17] = 0.0
        Q[18] = 0.0
        Q[19] = h2
        Q[20] = -h1
        Q[24] = -h2
        Q[25] = 0.0
        Q[26] = h0
        Q[30] = h1
        Q[31] = -h0
        Q[32] = 0.0
        Q[21] = m
        Q[22] = 0.0
        Q[23] = 0.0
        Q[27] = 0.0
        Q[28] = m
        Q[29] = 0.0
        Q[33] = 0.0
        Q[34] = 0.0
        Q[35] = m
    for d in range(2 * n):
        head[d] = -1
    ninc = 0
    for k in range(n):
        for l in range(n):
            A[k, l] = 0.0
    for t in range(nblk):
        a = bpair[t, 0]
        b = bpair[t, 1]
        B = bB[t]
        # lowest common ancestor c (-1: the world)
        x = a
        y = b
        while dep[x] > dep[y]:
            x = Ii[o_par + x]
        while dep[y] > dep[x]:
            y = Ii[o_par + y]
        while x != y and x >= 0 and y >= 0:
            x = Ii[o_par + x]
            y = Ii[o_par + y]
        c = x if x == y else -1
        if c >= 0:
            Q = W[o.wQ + 36 * c:o.wQ + 36 * c + 36]
            for r in range(6):
                for s in range(6):
                    Q[6 * r + s] += B[r, s]
        if a == b:
            continue
        # rows: the path a -> c (exclusive): increments B^T S_d for the walk of d, picked up at c
        i = a
        while i != c:
            for d in range(Ii[o_idx + i], Ii[o_idx + i + 1]):
                s0, s1, s2, s3, s4, s5 = get6(W, o.wS + 6 * d)
                for r in range(6):
                    inc_u[ninc, r] = B[0, r] * s0 + B[1, r] * s1 + B[2, r] * s2 + B[3, r] * s3 + B[4, r] * s4 + \
                        B[5, r] * s5
                inc_d[ninc] = d
                inc_c[ninc] = c
                nxt[ninc] = head[d]
                head[d] = ninc
                ninc += 1
                # cross terms with the path b -> c (exclusive): S_d^T B S_e
                j = b
                while j != c:
                    for e in range(Ii[o_idx + j], Ii[o_idx + j + 1]):
                        g0, g1, g2, g3, g4, g5 = get6(W, o.wS + 6 * e)
                        u = inc_u[ninc - 1]
                        A[d, e] += u[0] * g0 + u[1] * g1 + u[2] * g2 + u[3] * g3 + u[4] * g4 + u[5] * g5
                    j = Ii[o_par + j]
            i = Ii[o_par + i]
        if not symmetric:
            # columns: the path b -> c (exclusive): increments B S_e for the column walk of e
            j = b
            while j != c:
                for e in range(Ii[o_idx + j], Ii[o_idx + j + 1]):
                    s0, s1, s2, s3, s4, s5 = get6(W, o.wS + 6 * e)
                    for r in range(6):
                        inc_u[ninc, r] = B[r, 0] * s0 + B[r, 1] * s1 + B[r, 2] * s2 + B[r, 3] * s3 + \
                            B[r, 4] * s4 + B[r, 5] * s5
                    inc_d[ninc] = e
                    inc_c[ninc] = c
                    nxt[ninc] = head[n + e]
                    head[n + e] = ninc
                    ninc += 1
                j = Ii[o_par + j]
    ninc = _assemble_pairs(Ii, W, ppair, prec, npair, symmetric, dep, inc_d, inc_c, inc_u, head, nxt, ninc, pv, pd, A)
    # composites
    for i in range(nb - 1, 0, -1):
        par = Ii[o_par + i]
        if par >= 0:
            for k in range(36):
                W[o.wQ + 36 * par + k] += W[o.wQ + 36 * i + k]
    # walks: row d of joint i against each ancestor joint j (and, unsymmetric, column d)
    for i in range(nb):
        Q = W[o.wQ + 36 * i:o.wQ + 36 * i + 36]
        for d in range(Ii[o_idx + i], Ii[o_idx + i + 1]):
            s0, s1, s2, s3, s4, s5 = get6(W, o.wS + 6 * d)
            # F = Q^T S_d
            F0 = Q[0] * s0 + Q[6] * s1 + Q[12] * s2 + Q[18] * s3 + Q[24] * s4 + Q[30] * s5
            F1 = Q[1] * s0 + Q[7] * s1 + Q[13] * s2 + Q[19] * s3 + Q[25] * s4 + Q[31] * s5
            F2 = Q[2] * s0 + Q[8] * s1 + Q[14] * s2 + Q[20] * s3 + Q[26] * s4 + Q[32] * s5
            F3 = Q[3] * s0 + Q[9] * s1 + Q[15] * s2 + Q[21] * s3 + Q[27] * s4 + Q[33] * s5
            F4 = Q[4] * s0 + Q[10] * s1 + Q[16] * s2 + Q[22] * s3 + Q[28] * s4 + Q[34] * s5
            F5 = Q[5] * s0 + Q[11] * s1 + Q[17] * s2 + Q[23] * s3 + Q[29] * s4 + Q[35] * s5
            # within the joint
            for e in range(Ii[o_idx + i], d + 1):
                g0, g1, g2, g3, g4, g5 = get6(W, o.wS + 6 * e)
                A[d, e] += F0 * g0 + F1 * g1 + F2 * g2 + F3 * g3 + F4 * g4 + F5 * g5
            if not symmetric:
                G0 = Q[0] * s0 + Q[1] * s1 + Q[2] * s2 + Q[3] * s3 + Q[4] * s4 + Q[5] * s5
                G1 = Q[6] * s0 + Q[7] * s1 + Q[8] * s2 + Q[9] * s3 + Q[10] * s4 + Q[11] * s5
                G2 = Q[12] * s0 + Q[13] * s1 + Q[14] * s2 + Q[15] * s3 + Q[16] * s4 + Q[17] * s5
                G3 = Q[18] * s0 + Q[19] * s1 + Q[20] * s2 + Q[21] * s3 + Q[22] * s4 + Q[23] * s5
                G4 = Q[24] * s0 + Q[25] * s1 + Q[26] * s2 + Q[27] * s3 + Q[28] * s4 + Q[29] * s5
                G5 = Q[30] * s0 + Q[31] * s1 + Q[32] * s2 + Q[33] * s3 + Q[34] * s4 + Q[35] * s5
                for e in range(Ii[o_idx + i], d):
                    g0, g1, g2, g3, g4, g5 = get6(W, o.wS + 6 * e)
                    A[e, d] += G0 * g0 + G1 * g1 + G2 * g2 + G3 * g3 + G4 * g4 + G5 * g5
            j = Ii[o_par + i]
            while j >= 0:
                t = head[d]
                while t >= 0:
                    if inc_c[t] == j:
                        F0 += inc_u[t, 0]
                        F1 += inc_u[t, 1]
                        F2 += inc_u[t, 2]
                        F3 += inc_u[t, 3]
                        F4 += inc_u[t, 4]
                        F5 += inc_u[t, 5]
                    t = nxt[t]
                if not symmetric:
                    t = head[n + d]
                    while t >= 0:
                        if inc_c[t] == j:
                            G0 += inc_u[t, 0]
                            G1 += inc_u[t, 1]
                            G2 += inc_u[t, 2]
                            G3 += inc_u[t, 3]
                            G4 += inc_u[t, 4]
                            G5 += inc_u[t, 5]
                        t = nxt[t]
                for e in range(Ii[o_idx + j], Ii[o_idx + j + 1]):
                    g0, g1, g2, g3, g4, g5 = get6(W, o.wS + 6 * e)
                    A[d, e] += F0 * g0 + F1 * g1 + F2 * g2 + F3 * g3 + F4 * g4 + F5 * g5
                    if not symmetric:
                        A[e, d] += G0 * g0 + G1 * g1 + G2 * g2 + G3 * g3 + G4 * g4 + G5 * g5
                j = Ii[o_par + j]
    for d in range(n):
        A[d, d] += rdiag[d]
    if symmetric:
        for d in range(n):
            for e in range(d):
                A[e, d] = A[d, e]
