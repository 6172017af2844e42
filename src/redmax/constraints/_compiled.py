"""Compiled constraint rows (RedMax paper §4): every constraint type evaluated from the step's world-frame workspace.

A constraint program is three flat arrays built by :mod:`redmax.constraints.program`: ``hdr`` (nc, H) int64 with
one row per constraint ``[code, ci_off, ci_len, cf_off, cf_len, rows_cap, react_off, react_len]``, ``ci`` (int64)
and ``cf`` (float64) parameters.  :func:`eval_rows` writes the rows of all constraints in order:

* ``G`` (mcap, n): the row over the joint coordinates (``G q̇`` is the row's rate).  A maximal row is a world
  6-vector ``w`` per body (twist at the world origin, angular first, so ``w . V`` with ``V = [omega; v(origin)]``)
  mapped to coordinates as ``G[d] = S_w[d] . w`` over the body's ancestors' DOFs (= ``G_m J``, O(depth));
* ``g``: the position-level value (g for equalities, c for inequalities; feasible when ``c <= 0``);
* ``gd``: the explicit time term (``dg/dt = G q̇ + gd``);
* ``ga`` (mode 1): ``Ġ q̇ + gddot``, the velocity-product and explicit second-time-derivative terms of
  ``d²g/dt² = G q̈ + ga`` (acceleration-level Baumgarte);
* ``rkind``: 0 equality, 1 active inequality, 2 inactive inequality (present for the violation record only);
* ``WA`` (mcap, 6): the world 6-vector of the constraint's reported body (reactions of maximal rows).

Conventions: a point given in its body's joint frame ``x`` is at ``p = R_j x + p_j`` in the world and moves with
``pdot = v + omega x p``; ``n . pdot = w . V`` with ``w = [p x n; n]``.  The bias accelerations ``alpha_i``
(``J̇ q̇`` in world coordinates, gravity excluded) come from ``alpha_i = alpha_p + V_p x (S_i q̇_i) + Ṡ_i q̇_i``.
A body-frame twist is ``phi = Ad(E_wb)^-1 V`` and its derivative ``Ad(E_wb)^-1 V̇`` exactly, so body-twist rows
have no ``ẇ . V`` term.

Layout offsets of the workspace W (``redmax.integrators._stages.WorkLayout``) are passed in ``wo`` =
``(wR, wp, wS, wV, wSd)`` so that this module does not depend on the integrators.
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax._kernels.registers import cross, get9, rot, rot_mul, rot_t
from redmax.constraints._row_kernels import (
    INEQ_ACTIVE,
    INEQ_INACTIVE,
    _body_vector,
    _clear_row,
    _frame,
    _point,
    _point_rows,
    _pvel,
    _twist,
    alpha_pass,
    profile_eval,
    profile_len,
)

__all__ = ["C_CODES", "eval_rows", "reactions"]

C_LOOP = 1
C_POINT = 2
C_WELD = 3
C_UNIVERSAL = 4
C_RATIO = 5
C_LINEAR = 6
C_PJOINT = 7
C_PBODY = 8
C_PRATE = 9
C_LIMIT = 10
C_FLOOR = 11
C_COLLISION = 12
C_PPOINT = 13
C_CODES = {"loop": C_LOOP, "point": C_POINT, "weld": C_WELD, "universal": C_UNIVERSAL, "joint_ratio": C_RATIO,
           "linear": C_LINEAR, "prescribed_joint": C_PJOINT, "prescribed_body": C_PBODY,
           "prescribed_rate": C_PRATE, "limit": C_LIMIT, "floor": C_FLOOR, "self_collision": C_COLLISION,
           "prescribed_point": C_PPOINT}
H_CODE, H_CI, H_NCI, H_CF, H_NCF, H_ROWS, H_ROFF, H_NREACT = range(8)  # header columns
HDR = 8


# ------------------------------------------------------------------------------------------------
# Profiles
# ------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------
# All rows
# ------------------------------------------------------------------------------------------------


@njit(cache=True)
def eval_rows(hdr, ci, cf, Ii, W, wo, Ejb, q, qd, t, mode, G, g, gd, ga, rkind, WA, roff, alpha):
    """Evaluate the rows of every constraint (see the module docstring).

    Args:
        hdr, ci, cf: the constraint program.  Ii: the packed model.  W: the kinematics workspace (world frames,
            S_w, twists, Sdot qd).  wo: (wR, wp, wS, wV, wSd) offsets into W.  Ejb (nb, 12): body placements
            in their joint frames (R row-major, p).  q, qd (n,): coordinates and rates.  t: time of the targets.
        mode: 0 rows (G, g, gd), 1 rows and acceleration terms (ga), 2 values only (g, gd, rkind; G untouched),
            3 maximal rows: G (mcap, 6 nb) gets each row's world 6-vectors on the bodies' twists (``G_m`` with
            ``G = G_m J``; zero for rows on joint coordinates, which have no maximal form), as mode 0 otherwise.
        G (mcap, n), g, gd, ga (mcap,), rkind (mcap,) int64, WA (mcap, 6): outputs.  roff (nc+1,): first row of
            each constraint (output).  alpha (nb, 6): scratch (bias accelerations, filled here in mode 1).
    Returns:
        The number of rows m.
    """
    n = q.shape[0]
    wR, wp, wS, wV, wSd = wo[0], wo[1], wo[2], wo[3], wo[4]
    if mode == 1:
        alpha_pass(Ii, W, wS, wV, wSd, qd, alpha)
    row = 0
    nc = hdr.shape[0]
    for c in range(nc):
        roff[c] = row
        code = hdr[c, H_CODE]
        io = hdr[c, H_CI]
        fo = hdr[c, H_CF]
        nrows = hdr[c, H_ROWS]
        if code != C_COLLISION:
            for r in range(row, row + nrows):
                _clear_row(G, g, gd, ga, rkind, WA, r, n, mode)
        if code == C_POINT or code == C_LOOP or code == C_WELD or code == C_UNIVERSAL:
            A = ci[io]
            B = ci[io + 1]
            repA = A >= 0
            xa = cf[fo:fo + 3]
            xb = cf[fo + 3:fo + 6]
            if code == C_LOOP:
                d = ci[io + 2]
                if d >= 0:  # the axis of A's revolute joint
                    a0, a1, a2 = W[wS + 6 * d], W[wS + 6 * d + 1], W[wS + 6 * d + 2]
                else:  # an axis fixed in A's joint frame (a world axis when A is the world)
                    RA, _ = _frame(W, wR, wp, A)
                    a0, a1, a2 = rot(RA, cf[fo + 6], cf[fo + 7], cf[fo + 8])
                na = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
                a0 /= na
                a1 /= na
                a2 /= na
                # v1: the coordinate axis of the smallest |a_k| (first on ties)
                k = 0
                if abs(a1) < abs(a0):
                    k = 1
                if abs(a2) < abs(a0) and abs(a2) < abs(a1):
                    k = 2
                u0 = 1.0 if k == 0 else 0.0
                u1 = 1.0 if k == 1 else 0.0
                u2 = 1.0 if k == 2 else 0.0
                b0, b1, b2 = cross(a0, a1, a2, u0, u1, u2)
                nb_ = np.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
                b0 /= nb_
                b1 /= nb_
                b2 /= nb_
                u0, u1, u2 = cross(b0, b1, b2, a0, a1, a2)
                nu = np.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
                dirs = (u0 / nu, u1 / nu, u2 / nu, b0, b1, b2, 0.0, 0.0, 0.0)
                row = _point_rows(Ii, W, wo, G, g, gd, ga, WA, row, A, B, xa, xb, dirs, 2, mode, alpha, repA)
                continue
            dirs = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
            row = _point_rows(Ii, W, wo, G, g, gd, ga, WA, row, A, B, xa, xb, dirs, 3, mode, alpha, repA)
            if code == C_POINT:
                continue
            RA, _ = _frame(W, wR, wp, A)
            RB, _ = _frame(W, wR, wp, B)
            oa = _twist(W, wV, A)
            ob = _twist(W, wV, B)
            if code == C_UNIVERSAL:
                x0, x1, x2 = rot(RA, cf[fo + 6], cf[fo + 7], cf[fo + 8])
                y0, y1, y2 = rot(RB, cf[fo + 9], cf[fo + 10], cf[fo + 11])
                g[row] = x0 * y0 + x1 * y1 + x2 * y2
                c0, c1, c2 = cross(x0, x1, x2, y0, y1, y2)
                wv = (c0, c1, c2, 0.0, 0.0, 0.0)
                acc = _body_vector(Ii, W, wS, G, row, A, 1.0, wv, mode, alpha, WA, repA)
                acc += _body_vector(Ii, W, wS, G, row, B, -1.0, wv, mode, alpha, WA, not repA)
                if mode == 1:
                    xd0, xd1, xd2 = cross(oa[0], oa[1], oa[2], x0, x1, x2)
                    yd0, yd1, yd2 = cross(ob[0], ob[1], ob[2], y0, y1, y2)
                    e0, e1, e2 = cross(xd0, xd1, xd2, y0, y1, y2)
                    f0, f1, f2 = cross(x0, x1, x2, yd0, yd1, yd2)
                    acc += ((oa[0] - ob[0]) * (e0 + f0) + (oa[1] - ob[1]) * (e1 + f1)
                            + (oa[2] - ob[2]) * (e2 + f2))
                    ga[row] = acc
                row += 1
                continue
            # weld: E = R_A R0 R_B^T, g = vee(E - E^T)/2, gdot = M xi, M = (tr(E) 1 - E)/2, xi = w_A - E w_B
            R0 = get9(cf, fo + 6)
            E = rot_mul(rot_mul(RA, R0), (RB[0], RB[3], RB[6], RB[1], RB[4], RB[7], RB[2], RB[5], RB[8]))
            tr = E[0] + E[4] + E[8]
            M = (0.5 * (tr - E[0]), -0.5 * E[1], -0.5 * E[2], -0.5 * E[3], 0.5 * (tr - E[4]), -0.5 * E[5],
                 -0.5 * E[6], -0.5 * E[7], 0.5 * (tr - E[8]))
            ME = rot_mul(M, E)
            gv = (0.5 * (E[7] - E[5]), 0.5 * (E[2] - E[6]), 0.5 * (E[3] - E[1]))
            if mode == 1:
                # xi = omega_A - E omega_B; Edot = [xi] E; d/dt M = (tr(Edot) 1 - Edot)/2
                eb0, eb1, eb2 = rot(E, ob[0], ob[1], ob[2])
                xi0, xi1, xi2 = oa[0] - eb0, oa[1] - eb1, oa[2] - eb2
                S = (0.0, -xi2, xi1, xi2, 0.0, -xi0, -xi1, xi0, 0.0)
                Ed = rot_mul(S, E)
                trd = Ed[0] + Ed[4] + Ed[8]
                Md = (0.5 * (trd - Ed[0]), -0.5 * Ed[1], -0.5 * Ed[2], -0.5 * Ed[3], 0.5 * (trd - Ed[4]),
                      -0.5 * Ed[5], -0.5 * Ed[6], -0.5 * Ed[7], 0.5 * (trd - Ed[8]))
                m0, m1, m2 = rot(Md, xi0, xi1, xi2)
                z0, z1, z2 = rot(Ed, ob[0], ob[1], ob[2])
                n0, n1, n2 = rot(M, z0, z1, z2)
                vp = (m0 - n0, m1 - n1, m2 - n2)
            else:
                vp = (0.0, 0.0, 0.0)
            for k in range(3):
                g[row] = gv[k]
                wv = (M[3 * k], M[3 * k + 1], M[3 * k + 2], 0.0, 0.0, 0.0)
                acc = _body_vector(Ii, W, wS, G, row, A, 1.0, wv, mode, alpha, WA, repA)
                wv = (ME[3 * k], ME[3 * k + 1], ME[3 * k + 2], 0.0, 0.0, 0.0)
                acc += _body_vector(Ii, W, wS, G, row, B, -1.0, wv, mode, alpha, WA, not repA)
                if mode == 1:
                    ga[row] = acc + vp[k]
                row += 1
        elif code == C_RATIO:
            nd = ci[io]
            f = cf[fo]
            for k in range(nd):
                da = ci[io + 1 + k]
                db = ci[io + 1 + nd + k]
                g[row] = f * q[da] - q[db]
                if mode < 2:
                    G[row, da] += f
                    G[row, db] -= 1.0
                row += 1
        elif code == C_LINEAR:
            nt = ci[io]
            s = -cf[fo]
            for k in range(nt):
                d = ci[io + 1 + k]
                s += cf[fo + 1 + k] * q[d]
                if mode < 2:
                    G[row, d] += cf[fo + 1 + k]
            g[row] = s
            row += 1
        elif code == C_PJOINT:
            nd = ci[io]
            for k in range(nd):
                d = ci[io + 1 + k]
                x, xd, xdd = profile_eval(cf, fo, t, k)
                g[row] = x - q[d]
                gd[row] = xd
                ga[row] = xdd
                if mode < 2:
                    G[row, d] = -1.0
                row += 1
        elif code == C_PBODY:
            body = ci[io]
            ncomp = ci[io + 1]
            R, p = _frame(W, wR, wp, body)
            Rb = rot_mul(R, get9(Ejb[body], 0))
            c0, c1, c2 = rot(R, Ejb[body, 9], Ejb[body, 10], Ejb[body, 11])
            pb = (c0 + p[0], c1 + p[1], c2 + p[2])
            ww = _twist(W, wV, body)
            wb0, wb1, wb2 = rot_t(Rb, ww[0], ww[1], ww[2])  # body-frame angular velocity
            fr_ang = cf[fo] != 0.0
            fr_lin = cf[fo + 1] != 0.0
            oang = fo + 2
            olin = oang + profile_len(cf, oang)
            for k in range(ncomp):
                comp = ci[io + 2 + k]
                if comp < 3:
                    po = oang
                    world = fr_ang
                else:
                    po = olin
                    world = fr_lin
                j = comp % 3
                if world:  # target R^T x_w(t) with R at the start of the step
                    x0, xd0, _xa0 = profile_eval(cf, po, t, 0)
                    x1, xd1, _xa1 = profile_eval(cf, po, t, 1)
                    x2, xd2, _xa2 = profile_eval(cf, po, t, 2)
                    tx = rot_t(Rb, x0, x1, x2)
                    txd = rot_t(Rb, xd0, xd1, xd2)
                    e0, e1, e2 = cross(wb0, wb1, wb2, tx[0], tx[1], tx[2])
                    xt = tx[j]
                    xdd = txd[j] - (e0, e1, e2)[j]
                else:
                    xt, xdd, _ = profile_eval(cf, po, t, j)
                gd[row] = xt
                # G phi = -phi_comp, phi = Ad(E_wb)^-1 V: w = -[e_j^T R^T ; 0] or -[p x R e_j; R e_j]
                r0, r1, r2 = Rb[j], Rb[3 + j], Rb[6 + j]
                if comp < 3:
                    wv = (r0, r1, r2, 0.0, 0.0, 0.0)
                else:
                    c0, c1, c2 = cross(pb[0], pb[1], pb[2], r0, r1, r2)
                    wv = (c0, c1, c2, r0, r1, r2)
                acc = _body_vector(Ii, W, wS, G, row, body, -1.0, wv, mode, alpha, WA, True)
                if mode == 1:
                    ga[row] = acc + xdd
                row += 1
        elif code == C_PPOINT:  # g = p - p*(t) (world), gdot = -pdot*, ga = w-dot . V + w . alpha - pddot*
            body = ci[io]
            p0, p1, p2 = _point(W, wR, wp, body, cf[fo], cf[fo + 1], cf[fo + 2])
            v0, v1, v2 = _pvel(W, wV, body, p0, p1, p2)
            oa = _twist(W, wV, body)
            for k in range(3):
                x, xd, xdd = profile_eval(cf, fo + 3, t, k)
                g[row] = (p0, p1, p2)[k] - x
                gd[row] = -xd
                n0 = 1.0 if k == 0 else 0.0
                n1 = 1.0 if k == 1 else 0.0
                n2 = 1.0 if k == 2 else 0.0
                c0, c1, c2 = cross(p0, p1, p2, n0, n1, n2)
                wv = (c0, c1, c2, n0, n1, n2)
                acc = _body_vector(Ii, W, wS, G, row, body, 1.0, wv, mode, alpha, WA, True)
                if mode == 1:
                    d0, d1, d2 = cross(v0, v1, v2, n0, n1, n2)
                    ga[row] = acc + d0 * oa[0] + d1 * oa[1] + d2 * oa[2] - xdd
                row += 1
        elif code == C_PRATE:
            body = ci[io]
            par = ci[io + 1]
            d = ci[io + 2]
            prism = ci[io + 3] != 0
            if prism:
                a0, a1, a2 = W[wS + 6 * d + 3], W[wS + 6 * d + 4], W[wS + 6 * d + 5]
            else:
                a0, a1, a2 = W[wS + 6 * d], W[wS + 6 * d + 1], W[wS + 6 * d + 2]
            na = a0 * a0 + a1 * a1 + a2 * a2
            a0 /= na
            a1 /= na
            a2 /= na
            if prism:
                wv = (0.0, 0.0, 0.0, a0, a1, a2)
            else:
                wv = (a0, a1, a2, 0.0, 0.0, 0.0)
            x, xd, _ = profile_eval(cf, fo, t, 0)
            gd[row] = -x
            acc = _body_vector(Ii, W, wS, G, row, body, 1.0, wv, mode, alpha, WA, True)
            acc += _body_vector(Ii, W, wS, G, row, par, -1.0, wv, mode, alpha, WA, False)
            if mode == 1:
                vi = _twist(W, wV, body)
                vp_ = _twist(W, wV, par)
                if prism:  # a moves with the child: adot = omega_i x a, w-dot . (V_i - V_p)
                    e0, e1, e2 = cross(vi[0], vi[1], vi[2], a0, a1, a2)
                    acc += e0 * (vi[3] - vp_[3]) + e1 * (vi[4] - vp_[4]) + e2 * (vi[5] - vp_[5])
                ga[row] = acc - xd
            row += 1
        elif code == C_LIMIT:
            nd = ci[io]
            for k in range(nd):
                d = ci[io + 1 + k]
                lo = cf[fo + k]
                hi = cf[fo + nd + k]
                if np.isfinite(lo):
                    g[row] = lo - q[d]
                    rkind[row] = INEQ_ACTIVE if q[d] <= lo else INEQ_INACTIVE
                    if mode < 2:
                        G[row, d] = -1.0
                    row += 1
                if np.isfinite(hi):
                    g[row] = q[d] - hi
                    rkind[row] = INEQ_ACTIVE if q[d] >= hi else INEQ_INACTIVE
                    if mode < 2:
                        G[row, d] = 1.0
                    row += 1
        elif code == C_FLOOR:
            body = ci[io]
            ncorner = ci[io + 1]
            o0, o1, o2 = cf[fo], cf[fo + 1], cf[fo + 2]
            n0, n1, n2 = cf[fo + 3], cf[fo + 4], cf[fo + 5]
            rad = cf[fo + 6]
            npts = 1 if ncorner == 0 else ncorner
            for k in range(npts):
                if ncorner == 0:
                    x = cf[fo + 7:fo + 10]  # body centre in the joint frame
                else:
                    x = cf[fo + 10 + 3 * k:fo + 13 + 3 * k]
                c0, c1, c2 = _point(W, wR, wp, body, x[0], x[1], x[2])
                z = n0 * (c0 - o0) + n1 * (c1 - o1) + n2 * (c2 - o2)
                r = rad if ncorner == 0 else 0.0
                g[row] = r - z
                rkind[row] = INEQ_ACTIVE if z < r else INEQ_INACTIVE
                p0, p1, p2 = c0 - r * n0, c1 - r * n1, c2 - r * n2  # contact point
                e0, e1, e2 = cross(p0, p1, p2, n0, n1, n2)
                wv = (e0, e1, e2, n0, n1, n2)
                acc = _body_vector(Ii, W, wS, G, row, body, -1.0, wv, mode, alpha, WA, True)
                if mode == 1:  # p moves with the centre (n fixed): w-dot . V = -(cdot x n) . omega
                    oa = _twist(W, wV, body)
                    v0, v1, v2 = _pvel(W, wV, body, c0, c1, c2)
                    d0, d1, d2 = cross(v0, v1, v2, n0, n1, n2)
                    ga[row] = acc - (d0 * oa[0] + d1 * oa[1] + d2 * oa[2])
                row += 1
        else:
            row = collision_rows(Ii, W, wo, ci, cf, io, fo, nrows, G, g, gd, ga, rkind, WA, row, n, mode, alpha)
    roff[nc] = row
    return row


@njit(cache=True)
def collision_rows(Ii, W, wo, ci, cf, io, fo, cap, G, g, gd, ga, rkind, WA, row, n, mode, alpha):
    """Self-collision rows of a chain of spheres swept along a curve (see :class:`SelfCollision`): for every
    pair of sample points (i, j) on bodies at least ``skip`` apart whose gap ``d = |p_i - p_j| - r_i - r_j`` is
    below ``margin``, one inequality row ``c = -d``, ``C = -n . (pdot_i - pdot_j)`` with ``n`` from j to i
    (active when the gap is below the margin; the Baumgarte form ``n . (pdot_i - pdot_j) >= beta d`` then lets
    the gap close at most at rate ``beta d``).  At most ``cap`` rows, the closest pairs first.

    ``ci = [npts, skip, body[npts], order[npts]]`` and ``cf = [margin, (x (3), r) per point]`` (x in the
    body's joint frame)."""
    wR, wp, wS, _wV = wo[0], wo[1], wo[2], wo[3]
    npts = ci[io]
    skip = ci[io + 1]
    margin = cf[fo]
    P = np.empty((npts, 3))
    for k in range(npts):
        b = ci[io + 2 + k]
        x = cf[fo + 1 + 4 * k:fo + 4 + 4 * k]
        P[k, 0], P[k, 1], P[k, 2] = _point(W, wR, wp, b, x[0], x[1], x[2])
    # candidate pairs below the margin: keep the cap closest (simple insertion into a sorted list)
    ncand = 0
    cd = np.empty(cap)
    ck = np.empty((cap, 2), dtype=np.int64)
    for i in range(npts):
        ri = cf[fo + 4 + 4 * i]
        oi = ci[io + 2 + npts + i]
        for j in range(i + 1, npts):
            if ci[io + 2 + npts + j] - oi < skip:
                continue
            dx = P[i, 0] - P[j, 0]
            dy = P[i, 1] - P[j, 1]
            dz = P[i, 2] - P[j, 2]
            d = np.sqrt(dx * dx + dy * dy + dz * dz) - ri - cf[fo + 4 + 4 * j]
            if d >= margin:
                continue
            if ncand == cap and d >= cd[ncand - 1]:
                continue
            s = ncand if ncand < cap else cap - 1
            while s > 0 and cd[s - 1] > d:
                if s < cap:
                    cd[s] = cd[s - 1]
                    ck[s, 0] = ck[s - 1, 0]
                    ck[s, 1] = ck[s - 1, 1]
                s -= 1
            cd[s] = d
            ck[s, 0] = i
            ck[s, 1] = j
            if ncand < cap:
                ncand += 1
    for k in range(ncand):
        i = ck[k, 0]
        j = ck[k, 1]
        _clear_row(G, g, gd, ga, rkind, WA, row, n, mode)
        bi = ci[io + 2 + i]
        bj = ci[io + 2 + j]
        dx = P[i, 0] - P[j, 0]
        dy = P[i, 1] - P[j, 1]
        dz = P[i, 2] - P[j, 2]
        dn = np.sqrt(dx * dx + dy * dy + dz * dz)
        n0, n1, n2 = dx / dn, dy / dn, dz / dn
        g[row] = -cd[k]
        rkind[row] = INEQ_ACTIVE
        # contact points on the two surfaces, moving with their bodies
        ri = cf[fo + 4 + 4 * i]
        rj = cf[fo + 4 + 4 * j]
        a0, a1, a2 = P[i, 0] - ri * n0, P[i, 1] - ri * n1, P[i, 2] - ri * n2
        b0, b1, b2 = P[j, 0] + rj * n0, P[j, 1] + rj * n1, P[j, 2] + rj * n2
        e0, e1, e2 = cross(a0, a1, a2, n0, n1, n2)
        wv = (e0, e1, e2, n0, n1, n2)
        acc = _body_vector(Ii, W, wS, G, row, bi, -1.0, wv, mode, alpha, WA, True)
        e0, e1, e2 = cross(b0, b1, b2, n0, n1, n2)
        wv = (e0, e1, e2, n0, n1, n2)
        acc += _body_vector(Ii, W, wS, G, row, bj, 1.0, wv, mode, alpha, WA, False)
        if mode == 1:
            ga[row] = acc
        row += 1
    return row


@njit(cache=True)
def reactions(hdr, ci, W, wR, wp, Ejb, G, WA, roff, lam, h, out):
    """Reaction of every constraint from the multipliers ``lam`` of its rows (``Result.reactions``):
    reduced constraints ``-G_r^T lam / h`` on their listed DOFs, maximal constraints the wrench
    ``-G_m^T lam / h`` on their reported body (body frame at its centre of mass, angular first).  ``out``
    (total reaction size,) is written at each constraint's ``react_off``."""
    nc = hdr.shape[0]
    for c in range(nc):
        code = hdr[c, H_CODE]
        io = hdr[c, H_CI]
        ro = hdr[c, H_ROFF]
        nr = hdr[c, H_NREACT]
        for k in range(nr):
            out[ro + k] = 0.0
        r0 = roff[c]
        r1 = roff[c + 1]
        if code == C_RATIO or code == C_LINEAR or code == C_PJOINT or code == C_LIMIT:
            # listed DOFs: ratio [A dofs, B dofs], linear [dofs], prescribed/limit [dofs]
            if code == C_RATIO:
                nd = 2 * ci[io]
            else:
                nd = ci[io]
            for k in range(nd):
                d = ci[io + 1 + k]
                s = 0.0
                for r in range(r0, r1):
                    s += G[r, d] * lam[r]
                out[ro + k] = -s / h
            continue
        # maximal: the reported body (first non-world body)
        if code == C_PBODY or code == C_PRATE or code == C_FLOOR or code == C_COLLISION or code == C_PPOINT:
            body = ci[io]
            if code == C_COLLISION:
                body = -1
        else:
            body = ci[io] if ci[io] >= 0 else ci[io + 1]
        f0 = f1 = f2 = f3 = f4 = f5 = 0.0
        for r in range(r0, r1):
            f0 -= WA[r, 0] * lam[r] / h
            f1 -= WA[r, 1] * lam[r] / h
            f2 -= WA[r, 2] * lam[r] / h
            f3 -= WA[r, 3] * lam[r] / h
            f4 -= WA[r, 4] * lam[r] / h
            f5 -= WA[r, 5] * lam[r] / h
        if body < 0:  # world wrench at the origin (self-collision: the total over its rows)
            out[ro], out[ro + 1], out[ro + 2], out[ro + 3], out[ro + 4], out[ro + 5] = f0, f1, f2, f3, f4, f5
            continue
        R, p = _frame(W, wR, wp, body)
        Rb = rot_mul(R, get9(Ejb[body], 0))
        c0, c1, c2 = rot(R, Ejb[body, 9], Ejb[body, 10], Ejb[body, 11])
        p0, p1, p2 = c0 + p[0], c1 + p[1], c2 + p[2]
        # body frame: [R^T (tau - p x f); R^T f]
        x0, x1, x2 = cross(p0, p1, p2, f3, f4, f5)
        t0, t1, t2 = rot_t(Rb, f0 - x0, f1 - x1, f2 - x2)
        u0, u1, u2 = rot_t(Rb, f3, f4, f5)
        out[ro], out[ro + 1], out[ro + 2], out[ro + 3], out[ro + 4], out[ro + 5] = t0, t1, t2, u0, u1, u2
