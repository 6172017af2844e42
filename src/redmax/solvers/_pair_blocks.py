"""The 6x6 twist blocks of two-point pair laws from their compact records, for the matrix-free PCG step.

A pair law (a point spring or spring-damper between x0 on body a and x1 on body b, ``F_1 = -F_0``) is recorded by
the forces (:func:`redmax.forces._compiled._pair_record`) as the points, their velocities, ``F = F_0``,
``D = dF_0/dxd_1`` and the stiffness ``sym(dF_0/dx_1)``; the step
(:func:`redmax.integrators._linearize.linearize_forces`) adds its weights, ``G = wK sym(dF_0/dx_1) - cD D`` and
``wK``; the dense assembly adds its symmetrised
RedMax form (:mod:`redmax.integrators._assembly`) to A.  The same form is a 12 x 12 block on the twists
``[V_a; V_b]`` (world, at the origin), ``A += J^T B J``: with the point maps ``L_k = [-[x_k], I]`` (``u_k =
L_k V``), ``Omega = [I, 0]``, ``g = L_1 V_b - L_0 V_a``, ``z = [xd_1] omega_b - [xd_0] omega_a`` and ``hw = wK / 2``,

    B = -g^T G g + hw (g^T D z + z^T D^T g + u_0^T [F] omega_a + omega_a^T [F]^T u_0
                        - u_1^T [F] omega_b - omega_b^T [F]^T u_1)                    (as a bilinear form),

so that, with ``P(k, m) = L_k^T G L_m``, ``Q(k, m) = L_k^T D [xd_m] Omega`` and ``R(k) = L_k^T [F] Omega +
Omega^T [F]^T L_k``:

    B_aa = -P(0, 0) + hw (Q(0, 0) + Q(0, 0)^T + R(0)),   B_ab = P(0, 1) - hw (Q(0, 1) + Q(1, 0)^T),
    B_ba = P(1, 0) - hw (Q(1, 0) + Q(0, 1)^T),           B_bb = -P(1, 1) + hw (Q(1, 1) + Q(1, 1)^T - R(1)).

Written in closed form on 3 x 3 tuples (no allocation): one pair costs a few hundred flops, where the generic
block path of the forces evaluates and maps full point-law tensors.
"""

from __future__ import annotations

from redmax._jit import njit
from redmax.integrators._assembly import _mm, _sk, _tr

__all__ = ["pair_blocks"]


@njit(cache=True)
def _add(A, B):
    return (A[0] + B[0], A[1] + B[1], A[2] + B[2], A[3] + B[3], A[4] + B[4], A[5] + B[5], A[6] + B[6],
            A[7] + B[7], A[8] + B[8])


@njit(cache=True)
def _sub(A, B):
    return (A[0] - B[0], A[1] - B[1], A[2] - B[2], A[3] - B[3], A[4] - B[4], A[5] - B[5], A[6] - B[6],
            A[7] - B[7], A[8] - B[8])


@njit(cache=True)
def _sc(s, A):
    return (s * A[0], s * A[1], s * A[2], s * A[3], s * A[4], s * A[5], s * A[6], s * A[7], s * A[8])


@njit(cache=True)
def _put(bB, t, TL, TR, BL, BR):
    """bB[t] = [[TL, TR], [BL, BR]] (3 x 3 row-major tuples)."""
    for r in range(3):
        for c in range(3):
            bB[t, r, c] = TL[3 * r + c]
            bB[t, r, 3 + c] = TR[3 * r + c]
            bB[t, 3 + r, c] = BL[3 * r + c]
            bB[t, 3 + r, 3 + c] = BR[3 * r + c]


@njit(cache=True)
def _P(Xk, G, Xm):
    """L_k^T G L_m = [[-X_k G X_m, X_k G], [-G X_m, G]] as (TL, TR, BL, BR)."""
    XG = _mm(Xk, G)
    return _sc(-1.0, _mm(XG, Xm)), XG, _sc(-1.0, _mm(G, Xm)), G


@njit(cache=True)
def _Q(Xk, DXD):
    """L_k^T D [xd] Omega = [[X_k D [xd], 0], [D [xd], 0]] as (TL, BL) (the right column is zero)."""
    return _mm(Xk, DXD), DXD


@njit(cache=True)
def _diag(bpair, bB, t, k, X, G, DXD, SF, hw, sg):
    """Row t: ``B_kk = -P(k, k) + hw (Q(k, k) + Q(k, k)^T + sg R(k))`` on body k (sg = +1 for x0, -1 for x1)."""
    p = _P(X, G, X)
    q = _Q(X, DXD)
    XF = _mm(X, SF)
    TL = _add(_sc(-1.0, p[0]), _sc(hw, _add(_add(q[0], _tr(q[0])), _sc(sg, _add(XF, _tr(XF))))))
    TR = _add(_sc(-1.0, p[1]), _sc(hw, _add(_tr(q[1]), _sc(sg, _tr(SF)))))
    BL = _add(_sc(-1.0, p[2]), _sc(hw, _add(q[1], _sc(sg, SF))))
    bpair[t, 0] = k
    bpair[t, 1] = k
    _put(bB, t, TL, TR, BL, _sc(-1.0, p[3]))
    return t + 1


@njit(cache=True)
def _off(bpair, bB, t, k, m, p, qkm, qmk, hw):
    """Row t: ``B_km = P(k, m) - hw (Q(k, m) + Q(m, k)^T)`` (``p = P(k, m)``)."""
    TL = _sub(p[0], _sc(hw, _add(qkm[0], _tr(qmk[0]))))
    TR = _sub(p[1], _sc(hw, _tr(qmk[1])))
    BL = _sub(p[2], _sc(hw, qkm[1]))
    bpair[t, 0] = k
    bpair[t, 1] = m
    _put(bB, t, TL, TR, BL, p[3])
    return t + 1


@njit(cache=True)
def pair_blocks(ppair, prec, npair, bpair, bB, nblk):
    """Append the blocks ``B_aa, B_ab, B_ba, B_bb`` of the first ``npair`` pair records (those on a body; the world
    has none) to ``bpair``/``bB`` from row ``nblk``; returns the new block count."""
    for t in range(npair):
        a = ppair[t, 0]
        b = ppair[t, 1]
        r = prec[t]
        X0 = _sk(r[0], r[1], r[2])
        X1 = _sk(r[3], r[4], r[5])
        XD0 = _sk(r[6], r[7], r[8])
        XD1 = _sk(r[9], r[10], r[11])
        SF = _sk(r[12], r[13], r[14])
        G = (r[15], r[16], r[17], r[18], r[19], r[20], r[21], r[22], r[23])
        D = (r[24], r[25], r[26], r[27], r[28], r[29], r[30], r[31], r[32])
        hw = 0.5 * r[33]
        DXD0 = _mm(D, XD0)
        DXD1 = _mm(D, XD1)
        if a >= 0:
            nblk = _diag(bpair, bB, nblk, a, X0, G, DXD0, SF, hw, 1.0)
        if b >= 0:
            nblk = _diag(bpair, bB, nblk, b, X1, G, DXD1, SF, hw, -1.0)
        if a >= 0 and b >= 0:
            q01 = _Q(X0, DXD1)
            q10 = _Q(X1, DXD0)
            nblk = _off(bpair, bB, nblk, a, b, _P(X0, G, X1), q01, q10, hw)
            nblk = _off(bpair, bB, nblk, b, a, _P(X1, G, X0), q10, q01, hw)
    return nblk
