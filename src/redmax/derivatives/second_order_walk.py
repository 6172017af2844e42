"""IDSVA-SO, Alg. 1 of Singh, Russell & Wensing, "On Second-Order Derivatives of Rigid-Body Dynamics: Theory &
Implementation" (App. C), on the core tree of :mod:`.core_tree`, in the world frame.

The forward pass (lines 1-11) and the composite quantities of every body (:func:`setup`) come first; the
backward pass (lines 12-66) is then a walk per core joint (:func:`walk_joints`): for each DOF p of joint i, the
matrices A0-A7 (lines 15-24), for each DOF t of j = i and its ancestors the twelve vectors u (lines 29-36), and
for each DOF r of k = j and its ancestors the products of lines 42-66 (branch-induced sparsity, §IV-F: only
triples on one root path are visited, the other entries stay zero).  The walk for a set of joints writes only
the entries whose deepest index is a DOF of those joints, so the joints are cut into contiguous chunks of about
equal cost (:func:`plan`) that run on redmax's threads (:data:`WALK_CHUNK`, :mod:`redmax._kernels.pool`), each
entry computed by the same operations whatever the chunk or the thread: the tensors do not depend on the thread
count.  Of each pair of equal entries (the symmetries of ``d2tau_dqd2`` and ``dM_dq``, and of ``d2tau_dq2``
across joints) the walk stores one and the mirror copies it: on trees each chunk mirrors what it wrote, on
chains (where every triple is related) the mirror follows in chunks of first indices (:data:`MIRROR_CHUNK`).

Conventions of the tensors: :mod:`.rnea_second_order`.  The body Coriolis matrices ``B'`` are without the factor
1/2 (the paper's convention in Alg. 1), the composite net wrenches include gravity and the external wrenches.
Scalar-generic (complex step) when called on one thread (:func:`walk_serial`).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, U64, njit
from redmax._kernels.tables import chunk_function, put, table_of, take1, take1_ro, take2, take3
from redmax.derivatives.core_tree import FWD_BODY, add_composite, body_coriolis, core_offsets, forward_pass
from redmax.derivatives.second_order_blocks import (
    LANES,
    UT_ROWS,
    _bar,
    _brow,
    _dot,
    _inertia_matrix,
    _mtv,
    _mv,
    _products,
    _u_all,
    b_matrix,
)
from redmax.model.layout import offsets

__all__ = [
    "MIRROR_CHUNK",
    "TABLE",
    "WALK_CHUNK",
    "ZERO_CHUNK",
    "mirror_chain",
    "mirror_owned",
    "plan",
    "put_walk",
    "related_dofs",
    "setup",
    "single_path",
    "walk_joints",
    "walk_serial",
    "zero_unwritten",
]

TABLE = 64  # entries of the chunk tables of the walk and the mirror


@njit(inline="always", fastmath=FAST)
def setup(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent):
    """Lines 1-11 (the forward pass of :func:`.core_tree.forward_pass`) and the composite quantities of every
    body, summed from the leaves (its subtree's compact inertia I^C, net wrench f^C and Coriolis data B^C, in W
    in place): what the walk reads, so that the joints can then be walked in any order and on any thread.
    ``(W (FWD_BODY nb,), CD (ncd, FWD_DOF))``."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    W, CD = forward_pass(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent)
    for i in range(nb - 1, -1, -1):
        par = Ii[o_par + i]
        if par >= 0:
            add_composite(W, FWD_BODY * par, FWD_BODY * i)
    return W, CD


@njit(cache=True, fastmath=FAST)
def walk_joints(CI, nb, W, CD, lo, hi, want_fo, need, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, mirror_dm):
    """Lines 12-66 for the core joints ``lo <= i < hi``: the DOFs p of each joint against the DOFs t, r on its
    path to the root, writing only the entries whose deepest index is a DOF of these joints (so that walks of
    disjoint joint ranges write disjoint entries).  With ``want_fo`` also tau_c and the entries ``[p, t]``,
    ``[t, p]`` of T_q, T_v, M_c (the first-order quantities the chain rule to the model's coordinates reads) for
    the pairs with ``need[p]`` or ``need[t]`` (``need`` (ncd,) uint8: :func:`.second_order_chain.block_dofs`),
    the others left as they are (zero).

    ``mirror_dm``: also store the symmetric half of dM as each entry is written (``dM[b, a, k] = dM[a, b, k]`` for
    b < a), so that a chunk of a tree mirrors dM without reading what another wrote.

    Per core joint the DOFs on its path are gathered component-major, root first (``PV`` (24, P): s, psi_dot,
    psi_ddot, theta of every DOF), so that the 13 distinct dot products of the innermost loop (lines 42-66) run
    over contiguous rows for all DOFs r of all k at once (:func:`.second_order_blocks._products`), and the twelve
    vectors u of every path position are formed in one pass per component
    (:func:`.second_order_blocks._u_all`).  The columns of a joint are the same on every path through it, so a
    joint gathers only the columns that the joints walked before it left to another joint."""
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    dt = W.dtype
    Q2 = d2q.reshape(-1)
    V2 = d2v.reshape(-1)
    QV = d2qv.reshape(-1)
    DM = dM.reshape(-1)
    n1 = ncd
    n2 = ncd * ncd
    L = ncd + LANES  # (spare columns: _products, _u_all)
    S = np.empty(360 + 13 * L, dtype=dt)  # one block for the scratch arrays (views below)
    IC = S[0:36].reshape((6, 6))
    BC = S[36:72].reshape((6, 6))
    A1 = S[72:108].reshape((6, 6))
    A3 = S[108:144].reshape((6, 6))
    A3[:, 3:] = 0.0  # (its columns 3-5 are zero and never formed: _u_all reads only its columns 0-2)
    G = S[144:180].reshape((6, 6))  # rows of s x* I^C
    BCt = S[180:216].reshape((6, 6))
    T1 = S[216:252].reshape((6, 6))
    tmp = S[252:264]  # X (9) and l (3) of B(I^C, psi_dot_p)
    XLs = S[264:276]  # X (9) and l (3) of B(I^C, s_p)
    Fb = S[276:300].reshape((4, 6))  # the wrenches f of the xbar* matrices A0, A4, A5, A7
    x6 = S[300:306]
    y6 = S[306:312]
    V = S[312:336].reshape((4, 6))  # DOF p: s, psi_dot, psi_ddot, theta
    Vt = S[336:360].reshape((4, 6))  # DOF t
    E = S[360:360 + 13 * L].reshape((13, L))  # the 13 distinct products per DOF r of the path
    Zb = np.zeros((UT_ROWS + 24) * L, dtype=dt)
    UT = Zb[0:UT_ROWS * L].reshape((UT_ROWS, L))  # the u vectors of every path position (_u_all)
    PV = Zb[UT_ROWS * L:].reshape((24, L))  # path data, component-major
    Iw = np.empty((4, max(ncd, 1)), dtype=np.int64)
    path = Iw[0]
    pjoint = Iw[1]
    jstart = Iw[2]
    jend = Iw[3]
    pjoint[:] = -1  # (no column gathered yet)
    for ci in range(lo, hi):
        i = CI[o_cb + ci]
        wb = FWD_BODY * i
        Ic = W[wb + 12:wb + 22]
        fC = W[wb + 34:wb + 40]
        _inertia_matrix(Ic, IC)
        b_matrix(W, wb + 40, BC)  # B'(I^C, v) of the subtree
        # the path of core joint ci, root first: the DOFs of core joint a in the columns b0 <= k < e, b0 the
        # number of DOFs of a's ancestors, at every path through a; columns that hold a's already (pjoint[k] == a,
        # from a previous joint of these) are kept, so that a joint after its parent gathers its own DOFs only
        P = 0
        a = ci
        while a >= 0:
            P += CI[o_co + a + 1] - CI[o_co + a]
            a = CI[o_cp + a]
        e = P
        a = ci
        while a >= 0:
            d0 = CI[o_co + a]
            b0 = e - (CI[o_co + a + 1] - d0)
            for k in range(b0, e):
                if pjoint[k] != a:
                    path[k] = d0 + k - b0
                    pjoint[k] = a
                    jstart[k] = b0
                    jend[k] = e
                    for c in range(24):
                        PV[c, k] = CD[d0 + k - b0, c]
            e = b0
            a = CI[o_cp + a]
        for pp in range(P - (CI[o_co + ci + 1] - CI[o_co + ci]), P):
            p = path[pp]
            for k in range(6):
                V[0, k] = PV[k, pp]
                V[1, k] = PV[6 + k, pp]
                V[2, k] = PV[12 + k, pp]
                V[3, k] = PV[18 + k, pp]
            sp = V[0]
            pd = V[1]
            pdd = V[2]
            th = V[3]
            w0, w1, w2, u0, u1, u2 = sp[0], sp[1], sp[2], sp[3], sp[4], sp[5]
            if want_fo:
                tau[p] = (sp[0] * fC[0] + sp[1] * fC[1] + sp[2] * fC[2] + sp[3] * fC[3] + sp[4] * fC[4]
                          + sp[5] * fC[5])
            body_coriolis(Ic, w0, w1, w2, u0, u1, u2, XLs, 0)  # B(I^C, s_p) (line 15) as its X and l
            body_coriolis(Ic, pd[0], pd[1], pd[2], pd[3], pd[4], pd[5], tmp, 0)  # B(I^C, psi_dot_p)  (line 16)
            _mv(IC, sp, x6)
            for r in range(6):
                Fb[0, r] = x6[r]  # A0 = (I s) xbar*  (line 17)
            # G: rows of s x* I^C (s x* = -(s x)^T, I^C symmetric)
            for r in range(6):  # A1 = s x* I - I (s x) = G + G^T  (line 18); A6 = s x* I + A0 = A0 + G^T (line 23,
                # formed in _u_all)
                G[r, 0], G[r, 1], G[r, 2], G[r, 3], G[r, 4], G[r, 5] = _bar(w0, w1, w2, u0, u1, u2, IC, r)
            for r in range(6):
                for c in range(6):
                    A1[r, c] = G[r, c] + G[c, r]
            # A3 = B(I, psi) + s x* B - B (s x) = B(I, psi) + K + H  (line 20).  Its columns 3-5 are zero, as those
            # of every B' = [[X, 0], [-2 [l], 0]]: s x* B keeps B's zero columns, and so does B (s x), since the
            # top-right block of s x is zero.  Only columns 0-2 are formed (and read: _u_all).
            for r in range(6):
                T1[r, 0], T1[r, 1], T1[r, 2], _, _, _ = _bar(w0, w1, w2, u0, u1, u2, BC, r)
                for c in range(3):
                    BCt[c, r] = BC[r, c]
            for r in range(6):
                x0, x1, x2, _, _, _ = _brow(tmp, r, 1.0)
                A3[r, 0] = x0 + T1[r, 0]
                A3[r, 1] = x1 + T1[r, 1]
                A3[r, 2] = x2 + T1[r, 2]
            for c in range(3):
                k0, k1, k2, k3, k4, k5 = _bar(w0, w1, w2, u0, u1, u2, BCt, c)
                A3[0, c] += k0
                A3[1, c] += k1
                A3[2, c] += k2
                A3[3, c] += k3
                A3[4, c] += k4
                A3[5, c] += k5
            _mtv(BC, sp, x6)
            for r in range(6):
                Fb[1, r] = x6[r]  # A4 = (B^T s) xbar*  (line 21)
            _mv(BC, pd, x6)  # line 22: A5 = (B psi_dot + I psi_ddot + s x* f) xbar*
            _mv(IC, pdd, y6)
            for r in range(6):
                x6[r] += y6[r]
            x6[0] += w1 * fC[2] - w2 * fC[1] + u1 * fC[5] - u2 * fC[4]
            x6[1] += w2 * fC[0] - w0 * fC[2] + u2 * fC[3] - u0 * fC[5]
            x6[2] += w0 * fC[1] - w1 * fC[0] + u0 * fC[4] - u1 * fC[3]
            x6[3] += w1 * fC[5] - w2 * fC[4]
            x6[4] += w2 * fC[3] - w0 * fC[5]
            x6[5] += w0 * fC[4] - w1 * fC[3]
            for r in range(6):
                Fb[2, r] = x6[r]
            _mv(BC, sp, x6)  # line 24: A7 = (B s + I (psi_dot + s_dot)) xbar*
            _mv(IC, th, y6)
            for r in range(6):
                Fb[3, r] = x6[r] + y6[r]
            if want_fo:  # y1 = I s, y2 = B^T s, w1 = I psi_ddot + B psi_dot + s x* f, w2 = B s + I theta
                _mv(IC, sp, T1[0])
                _mtv(BC, sp, T1[1])
                _mv(BC, pd, T1[2])
                _mv(IC, pdd, T1[3])
                for r in range(6):
                    T1[2, r] += T1[3, r]
                T1[2, 0] += w1 * fC[2] - w2 * fC[1] + u1 * fC[5] - u2 * fC[4]
                T1[2, 1] += w2 * fC[0] - w0 * fC[2] + u2 * fC[3] - u0 * fC[5]
                T1[2, 2] += w0 * fC[1] - w1 * fC[0] + u0 * fC[4] - u1 * fC[3]
                T1[2, 3] += w1 * fC[5] - w2 * fC[4]
                T1[2, 4] += w2 * fC[3] - w0 * fC[5]
                T1[2, 5] += w0 * fC[4] - w1 * fC[3]
                _mv(BC, sp, T1[3])
                _mv(IC, th, T1[4])
                for r in range(6):
                    T1[3, r] += T1[4, r]
            _u_all(A1, A3, G, XLs, Fb, PV, P, UT)
            for pt in range(P):
                t = path[pt]
                jnei = pjoint[pt] != ci
                if want_fo and (need[p] or need[t]):
                    for k in range(6):
                        Vt[0, k] = PV[k, pt]
                        Vt[1, k] = PV[6 + k, pt]
                        Vt[2, k] = PV[12 + k, pt]
                        Vt[3, k] = PV[18 + k, pt]
                    Tq[p, t] = _dot(T1, 0, Vt, 2) + _dot(T1, 1, Vt, 1)
                    Tv[p, t] = _dot(T1, 1, Vt, 0) + _dot(T1, 0, Vt, 3)
                    mm = _dot(T1, 0, Vt, 0)
                    Mc[p, t] = mm
                    Mc[t, p] = mm
                    if jnei:
                        Tq[t, p] = _dot(T1, 2, Vt, 0)
                        Tv[t, p] = _dot(T1, 3, Vt, 0)
                js = jstart[pt]
                je = jend[pt]
                _products(UT, pt, PV, E, js, je, jnei)
                b_pt = p * n2 + t * n1  # [p, t, :]
                b_tp = t * n2 + p * n1  # [t, p, :]
                for pr in range(je):  # r: t's joint and its ancestors
                    rr = path[pr]
                    p1 = E[0, pr]
                    Q2[b_pt + rr] = E[1, pr]  # d2q[p, t, r]
                    QV[p * n2 + rr * n1 + t] = -p1  # d2qv[p, r, t]
                    if jnei:
                        Q2[b_tp + rr] = E[2, pr]  # d2q[t, p, r] (= d2q[t, r, p]: _mirror)
                        QV[b_tp + rr] = E[3, pr]  # d2qv[t, p, r]
                        QV[t * n2 + rr * n1 + p] = p1  # d2qv[t, r, p]
                        V2[b_tp + rr] = E[4, pr]  # d2v[t, p, r] (= d2v[t, r, p])
                        if not mirror_dm:
                            DM[t * n2 + rr * n1 + p] = E[5, pr]  # dM[t, r, p] (= dM[r, t, p])
                        elif rr < t:
                            DM[t * n2 + rr * n1 + p] = E[5, pr]
                            DM[rr * n2 + t * n1 + p] = E[5, pr]
                        elif rr == t:
                            DM[t * n2 + rr * n1 + p] = E[5, pr]
                    if pr < js:  # k != j
                        Q2[rr * n2 + p * n1 + t] = E[6, pr]  # d2q[r, p, t] (= d2q[r, t, p])
                        V2[b_pt + rr] = -E[4, pr]  # d2v[p, t, r] (= d2v[p, r, t])
                        QV[b_pt + rr] = E[7, pr]  # d2qv[p, t, r]
                        QV[rr * n2 + t * n1 + p] = E[8, pr]  # d2qv[r, t, p]
                        DM[p * n2 + rr * n1 + t] = E[9, pr]  # dM[p, r, t] (= dM[r, p, t])
                        if mirror_dm:  # (r < p: r is above t's joint)
                            DM[rr * n2 + p * n1 + t] = E[9, pr]
                        if jnei:
                            QV[rr * n2 + p * n1 + t] = E[10, pr]  # d2qv[r, p, t]
                            V2[rr * n2 + p * n1 + t] = E[11, pr]  # d2v[r, p, t] (= d2v[r, t, p])
                        else:
                            V2[rr * n2 + t * n1 + p] = E[12, pr]  # d2v[r, t, p]
                    else:
                        V2[b_pt + rr] = -E[5, pr]  # d2v[p, t, r] (u2 . s_r = u12 . s_r)


@njit(cache=True, fastmath=FAST)
def _walk_all(CI, nb, W, CD, want_fo, need, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, owned, rel, cj):
    """Every core joint on the calling thread, and the mirror (scalar-generic: the complex step's path)."""
    walk_joints(CI, nb, W, CD, 0, CI[0], want_fo, need, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, owned)
    if owned:
        mirror_owned(rel, cj, 0, CI[1], d2q, d2v)
    else:
        mirror_chain(cj, 0, CI[1], d2q, d2v, dM)


def walk_serial(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, want_fo, need, rel, cj, d2q, d2v, d2qv, dM):
    """Alg. 1 on the calling thread for any scalar type (complex step): the core tensors into ``d2q .. dM`` (zeros
    where the walk writes nothing) and ``(tau_c, T_q, T_v, M_c)``."""
    W, CD = setup(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent)
    nf = int(CI[1]) if want_fo else 0
    fo = (np.zeros(nf, dtype=q.dtype), *(np.zeros((nf, nf), dtype=q.dtype) for _ in range(3)))
    _walk_all(CI, int(Ii[0]), W, CD, want_fo, need, d2q, d2v, d2qv, dM, *fo, not single_path(CI), rel, cj)
    return fo


# ------------------------------------------------------------------------------------------------------------
# chunks


@njit(cache=True, inline="always")
def put_walk(T, CI, W, CD, starts, need, rel, cj, mstarts, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, nb, want_fo, owned):
    """The table of :data:`WALK_CHUNK` and :data:`MIRROR_CHUNK` (:func:`_take_walk`)."""
    k = put(T, 0, CI)
    k = put(T, k, W)
    k = put(T, k, CD)
    k = put(T, k, starts)
    k = put(T, k, need)
    k = put(T, k, rel)
    k = put(T, k, cj)
    k = put(T, k, mstarts)
    k = put(T, k, d2q)
    k = put(T, k, d2v)
    k = put(T, k, d2qv)
    k = put(T, k, dM)
    k = put(T, k, tau)
    k = put(T, k, Tq)
    k = put(T, k, Tv)
    k = put(T, k, Mc)
    T[k] = nb
    T[k + 1] = 1 if want_fo else 0
    T[k + 2] = 1 if owned else 0


@njit(cache=True, inline="always")
def _take_walk(ctx):
    T = table_of(ctx, TABLE)
    CI, k = take1_ro(T, 0, np.int64)
    W, k = take1(T, k, np.float64)
    CD, k = take2(T, k, np.float64)
    starts, k = take1(T, k, np.int64)
    need, k = take1(T, k, np.uint8)
    rel, k = take2(T, k, np.uint8)
    cj, k = take1(T, k, np.int64)
    mstarts, k = take1(T, k, np.int64)
    d2q, k = take3(T, k, np.float64)
    d2v, k = take3(T, k, np.float64)
    d2qv, k = take3(T, k, np.float64)
    dM, k = take3(T, k, np.float64)
    tau, k = take1(T, k, np.float64)
    Tq, k = take2(T, k, np.float64)
    Tv, k = take2(T, k, np.float64)
    Mc, k = take2(T, k, np.float64)
    return (CI, W, CD, starts, need, rel, cj, mstarts, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, T[k], T[k + 1] != 0,
            T[k + 2] != 0)


@chunk_function(fastmath=FAST)
def WALK_CHUNK(ctx, c):
    """Chunk c of the walk: core joints ``starts[c]:starts[c + 1]`` (:func:`walk_joints`) and, on trees, the
    mirror of the entries they wrote (:func:`mirror_owned`)."""
    CI, W, CD, starts, need, rel, cj, mstarts, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, nb, want_fo, owned = \
        _take_walk(ctx)
    walk_joints(CI, nb, W, CD, starts[c], starts[c + 1], want_fo, need, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, owned)
    if owned:
        o_co = core_offsets(CI, nb)[7]
        mirror_owned(rel, cj, CI[o_co + starts[c]], CI[o_co + starts[c + 1]], d2q, d2v)


@chunk_function(fastmath=FAST)
def ZERO_CHUNK(ctx, c):
    """Chunk c of zeroing the entries the walk never writes (:func:`zero_unwritten`), slabs ``mstarts[c]:mstarts[c +
    1]``: done before the walk on ``out=`` tensors that the in-place chain rule transforms (they may hold
    anything)."""
    CI, W, CD, starts, need, rel, cj, mstarts, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, nb, want_fo, owned = \
        _take_walk(ctx)
    zero_unwritten(rel, cj, mstarts[c], mstarts[c + 1], d2q, d2v, d2qv, dM)


@njit(cache=True)
def zero_unwritten(rel, cj, lo, hi, d2q, d2v, d2qv, dM):
    """Zero, in the slabs ``lo <= i < hi``, the entries the walk never writes: those of DOF triples not on one root
    path (§IV-F) and ``dM[i, j, k]`` with k's core joint above (or the same as) those of both i and j (``M_ij``
    does not change when the whole subtree above i and j moves)."""
    n = rel.shape[0]
    for i in range(lo, hi):
        for j in range(n):
            if rel[i, j] == 0:
                for k in range(n):
                    d2q[i, j, k] = 0.0
                    d2v[i, j, k] = 0.0
                    d2qv[i, j, k] = 0.0
                    dM[i, j, k] = 0.0
                continue
            low = min(cj[i], cj[j])
            for k in range(n):
                if rel[i, k] == 0 or rel[j, k] == 0:
                    d2q[i, j, k] = 0.0
                    d2v[i, j, k] = 0.0
                    d2qv[i, j, k] = 0.0
                    dM[i, j, k] = 0.0
                elif cj[k] <= low:
                    dM[i, j, k] = 0.0


@chunk_function(fastmath=FAST)
def MIRROR_CHUNK(ctx, c):
    """Chunk c of the mirror of a chain: first indices ``mstarts[c]:mstarts[c + 1]`` (:func:`mirror_chain`)."""
    CI, W, CD, starts, need, rel, cj, mstarts, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, nb, want_fo, owned = \
        _take_walk(ctx)
    mirror_chain(cj, mstarts[c], mstarts[c + 1], d2q, d2v, dM)


# ------------------------------------------------------------------------------------------------------------
# the mirror and the plan


@njit(cache=True)
def related_dofs(CI, nb):
    """(ncd, ncd) uint8 mask of the core DOF pairs on one root path (the same core joint, or one joint an ancestor
    of the other).  Branch-induced sparsity (§IV-F): an entry ``[i, j, k]`` of a second-order tensor of inverse
    dynamics can be non-zero only if the three pairs (i, j), (i, k), (j, k) are related."""
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    rel = np.zeros((ncd, ncd), dtype=np.uint8)
    for c in range(ncj):
        a = c
        while a >= 0:
            for d in range(CI[o_co + c], CI[o_co + c + 1]):
                for e in range(CI[o_co + a], CI[o_co + a + 1]):
                    rel[d, e] = 1
                    rel[e, d] = 1
            a = CI[o_cp + a]
    return rel


@njit(cache=True)
def single_path(CI):
    """True when every core joint's parent is the previous core joint (a chain: all DOF triples related)."""
    ncj = CI[0]
    nb = (CI.shape[0] - 7 - 3 * ncj) // 4  # the layout of core_tree.core_structure: 7 + 4 nb + 3 ncj entries
    o_cp = core_offsets(CI, nb)[6]
    for j in range(ncj):
        if CI[o_cp + j] != j - 1:
            return False
    return True


@njit(cache=True)
def plan(CI, nb, nchunks):
    """``(rel, cj, starts, mstarts)``: the related-DOF mask (:func:`related_dofs`), the core joint of every core
    DOF, the bounds (nchunks + 1,) of the walk's chunks of core joints, balanced by the estimated work of a joint
    with d DOFs and P DOFs on its root path, ~ d (P^2 / 2 + 8 P) (the pairs (t, r) of the triple loop and the
    vectors u), and those of the mirror's chunks of first indices on chains (~ b + n copies per related pair
    (a, b)).  Contiguous ranges, so that the chunks write distinct cache lines (entries ``[t, r, p]`` of
    neighbouring p share one)."""
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    rel = related_dofs(CI, nb)
    cj = np.empty(ncd, dtype=np.int64)
    for j in range(ncj):
        for d in range(CI[o_co + j], CI[o_co + j + 1]):
            cj[d] = j
    cost = np.empty(ncj)
    for j in range(ncj):
        P = 0
        a = j
        while a >= 0:
            P += CI[o_co + a + 1] - CI[o_co + a]
            a = CI[o_cp + a]
        cost[j] = (CI[o_co + j + 1] - CI[o_co + j]) * (0.5 * P * P + 8.0 * P)
    mcost = np.zeros(ncd)
    for a in range(ncd):
        for b in range(ncd):
            if rel[a, b]:
                mcost[a] += b + (ncd if b < a else 0)
    return rel, cj, _split(cost, nchunks), _split(mcost, nchunks)


@njit(cache=True)
def _split(cost, nchunks):
    """Bounds (nchunks + 1,) of ``nchunks`` contiguous index ranges of about equal total ``cost``."""
    m = cost.shape[0]
    total = 0.0
    for j in range(m):
        total += cost[j]
    starts = np.empty(nchunks + 1, dtype=np.int64)
    starts[0] = 0
    acc = 0.0
    c = 1
    for j in range(m):
        while c < nchunks and acc >= total * c / nchunks:
            starts[c] = j
            c += 1
        acc += cost[j]
    while c <= nchunks:
        starts[c] = m
        c += 1
    return starts


@njit(cache=True)
def _mirror_ab(rel, cj, a, b, d2q, d2v):
    """``d2v[a, c, b] = d2v[a, b, c]`` (and d2q, across joints) for the c < b related to a and b."""
    for c in range(U64(b)):
        if rel[b, c] == 0 or rel[a, c] == 0:
            continue
        d2v[a, c, b] = d2v[a, b, c]
        if cj[b] != cj[c]:
            d2q[a, c, b] = d2q[a, b, c]


@njit(cache=True, fastmath=FAST)
def mirror_owned(rel, cj, dlo, dhi, d2q, d2v):
    """The halves of d2v and d2q the walk leaves (``[a, c, b]`` from ``[a, b, c]`` for c < b; for d2q only
    across core joints: within a spherical or free joint the Lie derivatives do not commute), for the entries
    whose largest index p is in ``dlo <= p < dhi``: those the walk of the joints of these DOFs wrote (the deepest
    index of a related triple is its largest, core DOFs being numbered parents first).  With c < b, the largest of
    (a, b, c) is a (with b <= a) or b (with a < b)."""
    for p in range(dlo, dhi):
        for b in range(U64(p + 1)):  # a = p
            if rel[p, b] != 0:
                _mirror_ab(rel, cj, p, b, d2q, d2v)
        for a in range(U64(p)):  # b = p > a
            if rel[a, p] != 0:
                _mirror_ab(rel, cj, a, p, d2q, d2v)


@njit(cache=True, fastmath=FAST)
def mirror_chain(cj, lo, hi, d2q, d2v, dM):
    """The mirror of a chain (every DOF pair related) for the first indices ``lo <= a < hi``: ``d2v[a, c, b] =
    d2v[a, b, c]`` for c < b, ``d2q[a, c, b] = d2q[a, b, c]`` for c < o(b), the first DOF of b's joint (core DOFs
    of a joint are contiguous, so these are the c < b of other joints), ``dM[b, a, :] = dM[a, b, :]`` for b < a.
    It writes the entries ``[a, ., .]`` and the rows ``[b, a, :]`` (b < a) and reads ``[a, ., .]``: chunks of
    disjoint first indices touch disjoint entries.  Each slab's transposes in a loop of their own, with no mask to
    load in the inner loop."""
    ncd = cj.shape[0]
    o = np.empty(ncd, dtype=np.int64)  # o[b]: first DOF of b's core joint
    for b in range(ncd):
        o[b] = b if b == 0 or cj[b - 1] != cj[b] else o[b - 1]
    for a in range(lo, hi):
        X = d2v[a]
        for b in range(ncd):
            for c in range(b):
                X[c, b] = X[b, c]
        Y = d2q[a]
        for b in range(ncd):
            for c in range(o[b]):
                Y[c, b] = Y[b, c]
        for b in range(U64(a)):
            for c in range(U64(ncd)):
                dM[b, a, c] = dM[a, b, c]
