"""Alg. 1 of Singh, Russell & Wensing (IDSVA-SO) on the core tree, split in two so that the work can be shared
between threads: the forward pass with the composite quantities of every body (:func:`_so_setup`), then the
per-joint triple walk (:func:`_so_joints`) over any set of core joints, which writes only the entries whose
deepest index is a DOF of those joints.  Driven by :mod:`.rnea_second_order` (one thread and
threads); conventions of the tensors there.  Scalar-generic."""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, njit
from redmax.derivatives._second_order_blocks import (
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
from redmax.derivatives.core_tree import FWD_BODY, add_composite, body_coriolis, core_offsets, forward_pass
from redmax.model.layout import offsets


@njit(cache=True, fastmath=FAST)
def _so_setup(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent):
    """The forward pass (``forward_core``) and the composite quantities of every body (its subtree's compact
    inertia I^C, net wrench f^C and Coriolis data B^C, summed into W in place): what the per-joint work of Alg. 1
    reads, so that the joints can then be processed in any order (or in parallel)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    W, CD = forward_pass(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent)
    for i in range(nb - 1, -1, -1):
        par = Ii[o_par + i]
        if par >= 0:
            add_composite(W, FWD_BODY * par, FWD_BODY * i)
    return W, CD


@njit(cache=True, fastmath=FAST)
def _so_joints(CI, nb, W, CD, items, lo, hi, want_fo, need, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, mirror_dm=False):
    """Alg. 1 for the core joints ``items[lo:hi]`` (lines 13-66: the DOFs p of each joint against the DOFs t, r
    on its path to the root), writing only entries whose deepest index is a DOF of these joints: calls on
    disjoint joint sets write disjoint entries.  With ``want_fo`` also tau_c and the entries ``[p, t]``, ``[t,
    p]`` of T_q, T_v, M_c for the pairs with ``need[p]`` or ``need[t]`` (``need`` (ncd,) uint8:
    :func:`.second_order_chain.block_dofs`), the others left as they are (zero).  Talos in exponential
    coordinates: only the pairs with a DOF of the free base's rotation, 111 of the 369.

    ``mirror_dm``: also store the symmetric half of dM as each entry is written (``dM[b, a, k] = dM[a, b, k]`` for b
    < a; the kernel's own entries with b > a, within one joint, are not stored: the copy supplies them), which is
    what :func:`._second_order_mirror._mirror` does afterwards, with the same values: the thread that writes an
    entry then writes its mirror, and the threads of :func:`._second_order_drivers.idsva_so_par` need no second
    parallel region on trees (no thread reads what another wrote; talos, two threads: docs/derivatives.md, stop 43).

    Per core joint the DOFs on its path are gathered component-major, root first (``PV`` (24, P): s, psi_dot,
    psi_ddot, theta of every DOF), so that the 13 distinct dot products of the innermost loop (lines 42-66) run
    over contiguous rows for all DOFs r of all k at once.  The columns of a joint are the same on every path through
    it, so a joint gathers only the columns that the joints processed before it left to another joint (its own,
    when it follows its parent or a sibling's subtree).  Talos, all joints on one thread,
    in one process: 81-84 -> 71-77 us for this order and one pass per component of the u vectors
    (:func:`_u_all`), the scratch arrays in two blocks, and the matrices A0, A6 and B(I^C, psi_dot) read through
    their structure."""
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
    for it in range(lo, hi):
        ci = items[it]
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
