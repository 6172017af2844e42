"""World-frame helpers for CRBA and M^-1: joint frames, S in world coordinates, body inertias in world.

Expressing every motion and force in the world frame makes the propagation operators identities, so
composite and articulated inertias are plain sums (Featherstone 2008, §6.3 and §7.3; the world-frame
form Pinocchio uses).  Twists here are spatial velocities at the world origin, angular first.
"""

from __future__ import annotations

from numba import njit

from redmax.dynamics._packed import SIMPLE_MAX, generic_motion, offsets, simple_motion


@njit(cache=True)
def world_pass(Ii, Ff, q, jstate, W, wR, wp, wSw, wI, scratch):
    """For every joint: world frame (R_wj -> W[wR+9i], p_wj -> W[wp+3i]), world S columns
    (W[wSw+6d]) and the body's spatial inertia about the world origin in world axes (W[wI+36i]).

    ``scratch`` must hold 18 + 6*6 entries after it (local R, p, S and Sdot qd of one joint).
    """
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    lr = scratch
    lp = scratch + 9
    lsd = scratch + 12
    ls = scratch + 18
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        typ = Ii[o_typ + i]
        if typ <= SIMPLE_MAX:
            simple_motion(Ii, Ff, i, typ, q, W, lr, lp, ls, lsd)
        else:
            generic_motion(Ii, Ff, i, typ, q, q, jstate, W, lr, lp, ls, lsd)  # qd unused for R, p, S
        r = wR + 9 * i
        pp = wp + 3 * i
        par = Ii[o_par + i]
        if par >= 0:
            pr = wR + 9 * par
            ppp = wp + 3 * par
            for k in range(3):
                for l in range(3):
                    W[r + 3 * k + l] = (W[pr + 3 * k] * W[lr + l] + W[pr + 3 * k + 1] * W[lr + 3 + l]
                                        + W[pr + 3 * k + 2] * W[lr + 6 + l])
                W[pp + k] = (W[pr + 3 * k] * W[lp] + W[pr + 3 * k + 1] * W[lp + 1] + W[pr + 3 * k + 2] * W[lp + 2]
                             + W[ppp + k])
        else:
            for k in range(9):
                W[r + k] = W[lr + k]
            for k in range(3):
                W[pp + k] = W[lp + k]
        # S in world: [R s_w; p x (R s_w) + R s_v]
        for d in range(a, b):
            src = ls + 6 * (d - a)
            dst = wSw + 6 * d
            for k in range(3):
                W[dst + k] = W[r + 3 * k] * W[src] + W[r + 3 * k + 1] * W[src + 1] + W[r + 3 * k + 2] * W[src + 2]
                W[dst + 3 + k] = (W[r + 3 * k] * W[src + 3] + W[r + 3 * k + 1] * W[src + 4]
                                  + W[r + 3 * k + 2] * W[src + 5])
            w0 = W[dst]
            w1 = W[dst + 1]
            w2 = W[dst + 2]
            W[dst + 3] += W[pp + 1] * w2 - W[pp + 2] * w1
            W[dst + 4] += W[pp + 2] * w0 - W[pp] * w2
            W[dst + 5] += W[pp] * w1 - W[pp + 1] * w0
        # body inertia about the world origin: m, c_w = R c + p, I_cw = R Ic R^T
        m = Ff[f_m + i]
        c0 = W[pp]
        c1 = W[pp + 1]
        c2 = W[pp + 2]
        cc = f_c + 3 * i
        for k in range(3):
            ck = W[r + 3 * k] * Ff[cc] + W[r + 3 * k + 1] * Ff[cc + 1] + W[r + 3 * k + 2] * Ff[cc + 2]
            if k == 0:
                c0 += ck
            elif k == 1:
                c1 += ck
            else:
                c2 += ck
        I0 = wI + 36 * i
        Ic = f_I + 9 * i
        for k in range(3):
            for l in range(3):
                s = 0.0
                for u in range(3):
                    t = 0.0
                    for v in range(3):
                        t += Ff[Ic + 3 * u + v] * W[r + 3 * l + v]
                    s += W[r + 3 * k + u] * t
                W[I0 + 6 * k + l] = s
        # + m [c]^T [c] = m (|c|^2 I - c c^T); off blocks m [c] (upper right) and -m [c] (lower left)
        cn = c0 * c0 + c1 * c1 + c2 * c2
        cv0 = c0
        cv1 = c1
        cv2 = c2
        for k in range(3):
            ck = cv0 if k == 0 else (cv1 if k == 1 else cv2)
            for l in range(3):
                cl = cv0 if l == 0 else (cv1 if l == 1 else cv2)
                W[I0 + 6 * k + l] += m * ((cn if k == l else 0.0) - ck * cl)
                W[I0 + 6 * (3 + k) + 3 + l] = m if k == l else 0.0
        W[I0 + 3] = 0.0
        W[I0 + 10] = 0.0
        W[I0 + 17] = 0.0
        W[I0 + 4] = -m * c2
        W[I0 + 5] = m * c1
        W[I0 + 9] = m * c2
        W[I0 + 11] = -m * c0
        W[I0 + 15] = -m * c1
        W[I0 + 16] = m * c0
        for k in range(3):
            for l in range(3):
                W[I0 + 6 * (3 + k) + l] = -W[I0 + 6 * k + 3 + l]
