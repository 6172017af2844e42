"""The *core* of a model for the derivative algorithms, and their shared world-frame forward pass.

Every joint is expanded into core joints with constant local motion subspaces (``joints.derivatives``), so
that the analytic derivative algorithms of Singh, Russell & Wensing (IDSVA, IDSVA-SO), derived for joints
whose configuration set is a subgroup of SE(3), apply to every joint kind; the model's own coordinates are
reached by the chain rule through ``nu = A(q) qd`` (``chain``).  Core joints of one body are separated by
massless frames, so they share the body's composite inertia.

``core_structure(model, tangent)`` packs the core tree into one int64 array ``CI``:
``[ncj, ncd, all_trivial, aligned, cj0 (nb+1), cd0 (nb+1), triv (nb), cpar (ncj), coff (ncj+1), cbody (ncj),
fast (nb)]``:
body i owns core joints ``cj0[i]:cj0[i+1]`` and core DOFs ``cd0[i]:cd0[i+1]``; ``triv[i]`` says its map is
the identity (its core DOFs are its own DOFs); core joint c has parent core joint ``cpar[c]`` (-1 at the
root), DOFs ``coff[c]:coff[c+1]`` and body ``cbody[c]``.  ``all_trivial`` means core DOF k is model DOF k;
``aligned`` that every body has as many core DOFs as DOFs (so core and model indices coincide and the chain
rule can work in place on the few non-trivial blocks).
``fast[i]`` selects closed forms for the common multi-DOF joints: 1 for a free joint in exponential
coordinates (translational then spherical), 2 for a spherical joint in exponential coordinates.

All spatial quantities of the forward pass are in the world frame (spatial vectors at the world origin,
angular first, as in ``_world``); ``x cross y`` is ``ad(x) y``, ``v cross* f = -ad(v)^T f``.
"""

from __future__ import annotations

import weakref

import numpy as np

from redmax._jit import FAST, njit
from redmax._kernels.dispatch import lean_gate
from redmax._kernels.registers import cross, get3, get6, get9, put6, rot, rot_mul
from redmax.dynamics._world_pass import generic_motion, generic_motion_gated, revolute_frame, simple_motion
from redmax.errors import ModelError
from redmax.joints.core_expansion import MAX_CORE, core_layout, joint_expansion_gated, so3_jr_jets, so3_jr_jets_gated
from redmax.joints.simple import FIXED, PRISMATIC, REVOLUTE
from redmax.model.layout import SIMPLE_MAX, offsets

__all__ = ["FWD_BODY", "FWD_DOF", "core_offsets", "core_structure", "forward_core", "forward_pass"]

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

FWD_BODY = 60  # per-body workspace: R (9), p (3), I (10), v (6), a (6), f (6), BX (9), Bl (3), spare (8)
FWD_DOF = 24  # per core DOF: s, psi_dot, psi_ddot, theta = psi_dot + s_dot (6 each)



@njit(inline="always")
def add_composite(W, wp, wb):
    """Sum the composite quantities of the body block at ``wb`` of the forward-pass workspace W (compact inertia
    I^C (10) at +12, net wrench f^C (6) at +34, Coriolis data of B'^C (12) at +40) into the block at ``wp``."""
    for k in range(10):
        W[wp + 12 + k] += W[wb + 12 + k]
    for k in range(6):
        W[wp + 34 + k] += W[wb + 34 + k]
    for k in range(12):
        W[wp + 40 + k] += W[wb + 40 + k]

def core_structure(model, tangent: bool = False) -> np.ndarray:
    """The core tree of ``model`` (see the module docstring), cached per model and mode."""
    per = _CACHE.setdefault(model, {})
    key = bool(tangent)
    if key not in per:
        if key:
            _check_tangent_armature(model)
        per[key] = _build(model, key)
    return per[key]


def _check_tangent_armature(model) -> None:
    """ModelError naming the joint when an armature sits on the DOFs of a spherical or free joint: the armature
    is diagonal in the model's rates, ``diag(a)``, but ``T^-T diag(a) T^-1`` in body twists, with q-dependent
    terms the tangent derivatives do not carry."""
    a = getattr(model, "armature", None)
    if a is None or not np.any(np.asarray(a) != 0.0):
        return
    from redmax.dynamics.tangent import tangent_blocks

    Ii, Ff = model.packed
    q0 = np.ascontiguousarray(model.q0, dtype=np.float64)
    k, starts, sizes, _, _ = tangent_blocks(Ii, Ff, q0, np.zeros_like(q0), np.ascontiguousarray(model.jstate0))
    idx = np.asarray(model.idx)
    for b in range(k):
        lo, hi = int(starts[b]), int(starts[b] + sizes[b])
        if np.any(np.asarray(a)[lo:hi] != 0.0):
            body = int(np.searchsorted(idx, lo, side="right") - 1)
            raise ModelError(f"{model.name}: joint '{model.joint_names[body]}' has an armature on the DOFs of its "
                             "spherical or free joint; tangent=True takes body-twist rates, in which that armature "
                             "is not diagonal, and is not supported for it: use tangent=False")


def _build(model, tangent: bool) -> np.ndarray:
    nb = model.nb
    sizes = np.zeros(MAX_CORE, dtype=np.int64)
    cj0 = [0]
    cd0 = [0]
    triv = []
    cpar, coff, cbody, fast = [], [0], [], []
    last = np.full(nb, -1, dtype=np.int64)  # last core joint of body i or of its nearest ancestor with one
    for i in range(nb):
        p = model.jparam[model.jp_off[i]:model.jp_off[i + 1]]
        nc, t = core_layout(int(model.jtype[i]), p, int(model.jstate0[i]), tangent, sizes)
        par = int(model.parent[i])
        up = int(last[par]) if par >= 0 else -1
        for c in range(nc):
            cpar.append(up)
            up = len(cpar) - 1
            coff.append(coff[-1] + int(sizes[c]))
            cbody.append(i)
        last[i] = up
        m = int(sum(sizes[:nc]))
        t = bool(t) and m == model.idx[i + 1] - model.idx[i]
        cj0.append(len(cpar))
        cd0.append(cd0[-1] + m)
        triv.append(1 if t else 0)
        fast.append(_fast_kind(model.joints[i], int(model.jtype[i]), p))
    ncj, ncd = len(cpar), cd0[-1]
    all_triv = int(all(triv) and ncd == model.ndof)
    aligned = int(all(cd0[i] == model.idx[i] for i in range(nb + 1)))
    CI = np.concatenate([[ncj, ncd, all_triv, aligned], cj0, cd0, triv, cpar, coff, cbody, fast]).astype(np.int64)
    CI.setflags(write=False)
    return CI


def _fast_kind(joint, code, p) -> int:
    """1: free joint in exponential coordinates, 2: spherical joint in exponential coordinates, else 0."""
    from redmax.joints.composite import _layout
    from redmax.joints.primitive import COMPOSITE
    from redmax.joints.simple import TRANSLATIONAL
    from redmax.joints.spherical_exp import SPHERICAL_EXP

    if code == SPHERICAL_EXP:
        return 2
    if code == COMPOSITE:
        sub = _layout(p)[0]
        if len(sub) == 2 and sub[0] == TRANSLATIONAL and sub[1] == SPHERICAL_EXP:
            return 1
    return 0


@njit(cache=True)
def fast_offset(CI, nb):
    """Offset of the ``fast`` array in CI."""
    return 7 + 3 * nb + 3 * CI[0]


@njit(cache=True)
def core_offsets(CI, nb):
    """(ncj, ncd, all_trivial, o_cj0, o_cd0, o_triv, o_cpar, o_coff, o_cbody) for the CI layout."""
    ncj = CI[0]
    o_cj = 4
    o_cd = o_cj + nb + 1
    o_tr = o_cd + nb + 1
    o_cp = o_tr + nb
    o_co = o_cp + ncj
    o_cb = o_co + ncj + 1
    return ncj, CI[1], CI[2], o_cj, o_cd, o_tr, o_cp, o_co, o_cb


@njit(inline="always")
def cross6(x0, x1, x2, x3, x4, x5, y0, y1, y2, y3, y4, y5):
    """ad(x) y as a 6-tuple."""
    return (x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0,
            x1 * y5 - x2 * y4 + x4 * y2 - x5 * y1, x2 * y3 - x0 * y5 + x5 * y0 - x3 * y2,
            x0 * y4 - x1 * y3 + x3 * y1 - x4 * y0)


@njit(inline="always")
def crossf6(v0, v1, v2, v3, v4, v5, f0, f1, f2, f3, f4, f5):
    """v cross* f = [w x n + u x g; w x g] as a 6-tuple (v = [w; u], f = [n; g])."""
    return (v1 * f2 - v2 * f1 + v4 * f5 - v5 * f4, v2 * f0 - v0 * f2 + v5 * f3 - v3 * f5,
            v0 * f1 - v1 * f0 + v3 * f4 - v4 * f3, v1 * f5 - v2 * f4, v2 * f3 - v0 * f5, v0 * f4 - v1 * f3)


@njit(inline="always")
def inertia6(c, x0, x1, x2, x3, x4, x5):
    """M x for the compact inertia c (10,) = [m, h, J00, J01, J02, J11, J12, J22]: [J w + h x v; m v - h x w]."""
    m, h0, h1, h2 = c[0], c[1], c[2], c[3]
    a0, a1, a2 = cross(h0, h1, h2, x3, x4, x5)
    b0, b1, b2 = cross(h0, h1, h2, x0, x1, x2)
    return (c[4] * x0 + c[5] * x1 + c[6] * x2 + a0, c[5] * x0 + c[7] * x1 + c[8] * x2 + a1,
            c[6] * x0 + c[8] * x1 + c[9] * x2 + a2, m * x3 - b0, m * x4 - b1, m * x5 - b2)


@njit(cache=True, fastmath=FAST)
def body_coriolis(c, w0, w1, w2, u0, u1, u2, X, o):
    """Body Coriolis matrix without the 1/2 of Singh et al. Eq. 14, ``B'(I, v) = (v x*) I - I (v x) + (I v) xbar*``,
    for the compact inertia c and v = [w; u]: ``B' = [[X, 0], [-2 [l], 0]]`` with ``n = J w + h x u``,
    ``l = m u + w x h`` and ``X = [w] J - J [w] - ([u][h] + [h][u]) - [n]``; writes X (9, row-major) then l (3)
    to X[o:o+12]."""
    m, h0, h1, h2 = c[0], c[1], c[2], c[3]
    J00, J01, J02, J11, J12, J22 = c[4], c[5], c[6], c[7], c[8], c[9]
    n0 = J00 * w0 + J01 * w1 + J02 * w2 + h1 * u2 - h2 * u1
    n1 = J01 * w0 + J11 * w1 + J12 * w2 + h2 * u0 - h0 * u2
    n2 = J02 * w0 + J12 * w1 + J22 * w2 + h0 * u1 - h1 * u0
    l0 = m * u0 + w1 * h2 - w2 * h1
    l1 = m * u1 + w2 * h0 - w0 * h2
    l2 = m * u2 + w0 * h1 - w1 * h0
    # [w] J rows: w x (column k of J); J [w]: J times [w]
    Jm = ((J00, J01, J02), (J01, J11, J12), (J02, J12, J22))
    W = ((0.0 * w0, -w2, w1), (w2, 0.0 * w0, -w0), (-w1, w0, 0.0 * w0))
    hv = (h0, h1, h2)
    uv = (u0, u1, u2)
    uh = u0 * h0 + u1 * h1 + u2 * h2
    N = ((0.0 * n0, -n2, n1), (n2, 0.0 * n0, -n0), (-n1, n0, 0.0 * n0))
    out = X[o:o + 12]
    for r in range(3):
        for k in range(3):
            wj = W[r][0] * Jm[0][k] + W[r][1] * Jm[1][k] + W[r][2] * Jm[2][k]
            jw = Jm[r][0] * W[0][k] + Jm[r][1] * W[1][k] + Jm[r][2] * W[2][k]
            sym = hv[r] * uv[k] + uv[r] * hv[k] - (2.0 * uh if r == k else 0.0)
            out[3 * r + k] = wj - jw - sym - N[r][k]
    out[9] = l0
    out[10] = l1
    out[11] = l2


@njit(cache=True, fastmath=FAST)
def rot_exp(r0, r1, r2):
    """``exp([r]) = (1 - b x) 1 + a [r] + b r r^T`` (x = |r|^2, a = sin t/t, b = (1 - cos t)/x) as a 9-tuple."""
    x = r0 * r0 + r1 * r1 + r2 * r2
    if abs(x.real) < 0.25:
        a = 0.0 * x
        b = 0.0 * x
        fa = 1.0
        fb = 0.5
        xk = 1.0 + 0.0 * x
        for k in range(10):
            a += fa * xk
            b += fb * xk
            xk = xk * x
            fa = -fa / ((2 * k + 2) * (2 * k + 3))
            fb = -fb / ((2 * k + 3) * (2 * k + 4))
    else:
        t = np.sqrt(x)
        a = np.sin(t) / t
        b = (1.0 - np.cos(t)) / x
    d = 1.0 - b * x
    return (d + b * r0 * r0, -a * r2 + b * r0 * r1, a * r1 + b * r0 * r2,
            a * r2 + b * r1 * r0, d + b * r1 * r1, -a * r0 + b * r1 * r2,
            -a * r1 + b * r2 * r0, a * r0 + b * r2 * r1, d + b * r2 * r2)


@njit(cache=True, fastmath=FAST)
def _sph_rates(q, qd, qdd, a, tangent, nu, nud, o):
    """Core rates of a spherical joint in exponential coordinates at q[a:a+3]: ``nu = J_r qd``,
    ``nud = J_r qdd + (dJ_r qd) qd`` (or the rates themselves with ``tangent``), into nu[o:o+3]."""
    if tangent:
        for k in range(3):
            nu[o + k] = qd[a + k]
            nud[o + k] = qdd[a + k]
        return
    dt = q.dtype
    J = np.zeros((3, 3), dtype=dt)
    dJ = np.zeros((3, 3, 3), dtype=dt)
    so3_jr_jets(q[a:a + 3], J, dJ, np.zeros((0, 0, 0, 0), dtype=dt), np.zeros((0, 0, 0, 0, 0), dtype=dt), 1)
    for r in range(3):
        s1 = 0.0 * J[0, 0]
        s2 = 0.0 * J[0, 0]
        for e in range(3):
            s1 += J[r, e] * qd[a + e]
            jd = 0.0 * J[0, 0]
            for f in range(3):
                jd += dJ[r, e, f] * qd[a + f]
            s2 += J[r, e] * qdd[a + e] + jd * qd[a + e]
        nu[o + r] = s1
        nud[o + r] = s2


@njit(cache=True, fastmath=FAST)
def forward_core(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, W, CD, nu, nud):
    """World-frame forward pass over the core tree (Singh et al. Alg. 1, lines 2-11).

    Per body i (``W[FWD_BODY i:]``): joint frame R (9), p (3), compact inertia about the world origin (10),
    velocity v (6), acceleration a (6), net wrench ``f = I a + v x* I v - f_ext`` (6), ``B'(I, v)`` as X (9)
    and l (3).  Per core DOF d (``CD[d]``): world twist s, ``psi_dot = v_pre x s``, ``psi_ddot = a_pre x s +
    v_pre x psi_dot`` and ``theta = psi_dot + v_post x s`` (v_pre, a_pre: the velocity and acceleration before
    the DOF's core joint; v_post after it).  ``nu``, ``nud`` (ncd,): core rates ``A qd`` and accelerations
    ``A qdd + Adot qd``.  ``f_body`` (nb, 6) body-frame wrenches or (0, 6); gravity scaled by ``gscale``.
    """
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    o_fk = fast_offset(CI, nb)
    dt = q.dtype
    scratch = np.zeros(54, dtype=dt)
    zero = scratch[0]
    has_f = f_body.shape[0] != 0
    for i in range(nb):
        a = Ii[o_idx + i]
        b = Ii[o_idx + i + 1]
        nj = b - a
        typ = Ii[o_typ + i]
        wb = FWD_BODY * i
        c0 = CI[o_cd + i]
        c1 = CI[o_cd + i + 1]
        fk = CI[o_fk + i]
        if typ == REVOLUTE:
            L00, L01, L02, L10, L11, L12, L20, L21, L22, l0, l1, l2, ax, ay, az = revolute_frame(Ii, Ff, i, q)
            L = (L00, L01, L02, L10, L11, L12, L20, L21, L22)
        elif fk != 0:  # exponential coordinates in closed form: E_pj = E_pj0 [exp([r]), x] (x = 0 if spherical)
            ra = a + 3 if fk == 1 else a
            Rr = rot_exp(q[ra], q[ra + 1], q[ra + 2])
            R0 = get9(Ff, f_R + 9 * i)
            L = rot_mul(R0, Rr)
            l0, l1, l2 = get3(Ff, f_p + 3 * i)
            if fk == 1:
                x0, x1, x2 = rot(R0, q[a], q[a + 1], q[a + 2])
                l0 += x0
                l1 += x1
                l2 += x2
            ax = ay = az = zero
        else:
            if typ <= SIMPLE_MAX:
                simple_motion(Ii, Ff, i, typ, q, scratch, 0, 9, 18, 12)
            elif nj <= 6:
                generic_motion_gated(Ii, Ff, i, typ, q, qd, jstate, scratch, 0, 9, 18, 12)
            else:
                _generic_frame_gated(Ii, Ff, i, typ, q, qd, jstate, scratch)
            L = get9(scratch, 0)
            l0, l1, l2 = get3(scratch, 9)
            ax = ay = az = zero
        par = Ii[o_par + i]
        if par >= 0:
            Ap = get9(W, FWD_BODY * par)
            R = rot_mul(Ap, L)
            u0, u1, u2 = rot(Ap, l0, l1, l2)
            q0, q1, q2 = get3(W, FWD_BODY * par + 9)
            P0, P1, P2 = u0 + q0, u1 + q1, u2 + q2
            vp = get6(W, FWD_BODY * par + 22)
            ap = get6(W, FWD_BODY * par + 28)
        else:
            Ap = L
            R = L
            P0, P1, P2 = l0, l1, l2
            vp = (zero, zero, zero, zero, zero, zero)
            ap = (zero, zero, zero, -gscale * Ff[f_g], -gscale * Ff[f_g + 1], -gscale * Ff[f_g + 2])
        o = W[wb:wb + 12]
        for k in range(9):
            o[k] = R[k]
        o[9] = P0
        o[10] = P1
        o[11] = P2
        # compact inertia about the world origin (see _world.world_pass)
        _inertia_world(Ii, Ff, i, R, P0, P1, P2, W, wb + 12)
        # core twists in world and core rates
        if typ == REVOLUTE:
            w0, w1, w2 = rot(R, ax, ay, az)
            v0, v1, v2 = cross(P0, P1, P2, w0, w1, w2)
            put6(CD[c0], 0, w0, w1, w2, v0, v1, v2)
            nu[c0] = qd[a]
            nud[c0] = qdd[a]
        elif typ == PRISMATIC:
            jo = f_jp + Ii[o_jp + i]
            v0, v1, v2 = rot(R, Ff[jo], Ff[jo + 1], Ff[jo + 2])
            put6(CD[c0], 0, zero, zero, zero, v0, v1, v2)
            nu[c0] = qd[a]
            nud[c0] = qdd[a]
        elif fk != 0:
            if fk == 1 and not tangent:  # translational DOFs: [0; R_w R_r^T e_k] = [0; (R_wp R0) e_k]
                Rp = rot_mul(Ap, get9(Ff, f_R + 9 * i)) if par >= 0 else get9(Ff, f_R + 9 * i)
                for k in range(3):
                    put6(CD[c0 + k], 0, zero, zero, zero, Rp[k], Rp[3 + k], Rp[6 + k])
                    nu[c0 + k] = qd[a + k]
                    nud[c0 + k] = qdd[a + k]
                o3 = c0 + 3
                _sph_rates_gated(Ii, q, qd, qdd, a + 3, False, nu, nud, o3)
            elif fk == 1:  # free core joint: angular DOFs [R e_k; p x R e_k], linear [0; R e_k]
                o3 = c0
                for k in range(3):
                    put6(CD[c0 + 3 + k], 0, zero, zero, zero, R[k], R[3 + k], R[6 + k])
                for k in range(6):
                    nu[c0 + k] = qd[a + k]
                    nud[c0 + k] = qdd[a + k]
            else:
                o3 = c0
                _sph_rates_gated(Ii, q, qd, qdd, a, tangent, nu, nud, o3)
            for k in range(3):
                w0, w1, w2 = R[k], R[3 + k], R[6 + k]
                v0, v1, v2 = cross(P0, P1, P2, w0, w1, w2)
                put6(CD[o3 + k], 0, w0, w1, w2, v0, v1, v2)
        elif typ != FIXED:
            m = c1 - c0
            triv = CI[o_tr + i] == 1
            p = Ff[f_jp + Ii[o_jp + i]:f_jp + Ii[o_jp + i + 1]]
            Sv = np.zeros((6, m), dtype=dt)
            Am = np.zeros((m, nj), dtype=dt)
            if triv:
                joint_expansion_gated(Ii, typ, p, q[a:b], jstate[i], tangent, 0, Sv, Am, np.zeros((0, 0, 0), dtype=dt),
                                      np.zeros((0, 0, 0, 0), dtype=dt), np.zeros((0, 0, 0, 0, 0), dtype=dt))
                for k in range(m):
                    nu[c0 + k] = qd[a + k]
                    nud[c0 + k] = qdd[a + k]
            else:
                dA = np.zeros((m, nj, nj), dtype=dt)
                joint_expansion_gated(Ii, typ, p, q[a:b], jstate[i], tangent, 1, Sv, Am, dA,
                                      np.zeros((0, 0, 0, 0), dtype=dt), np.zeros((0, 0, 0, 0, 0), dtype=dt))
                for k in range(m):
                    s1 = zero
                    s2 = zero
                    for e in range(nj):
                        s1 += Am[k, e] * qd[a + e]
                        ad_ = zero
                        for f in range(nj):
                            ad_ += dA[k, e, f] * qd[a + f]
                        s2 += Am[k, e] * qdd[a + e] + ad_ * qd[a + e]
                    nu[c0 + k] = s1
                    nud[c0 + k] = s2
            for k in range(m):
                x0, x1, x2 = rot(R, Sv[0, k], Sv[1, k], Sv[2, k])
                y0, y1, y2 = rot(R, Sv[3, k], Sv[4, k], Sv[5, k])
                z0, z1, z2 = cross(P0, P1, P2, x0, x1, x2)
                put6(CD[c0 + k], 0, x0, x1, x2, y0 + z0, y1 + z1, y2 + z2)
        # chain of core joints: psi_dot, psi_ddot, theta
        V0, V1, V2, V3, V4, V5 = vp
        A0, A1, A2, A3, A4, A5 = ap
        for cj in range(CI[o_cj + i], CI[o_cj + i + 1]):
            d0 = CI[o_co + cj]
            d1 = CI[o_co + cj + 1]
            g0 = g1 = g2 = g3 = g4 = g5 = zero
            e0 = e1 = e2 = e3 = e4 = e5 = zero
            for d in range(d0, d1):
                row = CD[d]
                s0, s1, s2, s3, s4, s5 = get6(row, 0)
                p0, p1, p2, p3, p4, p5 = cross6(V0, V1, V2, V3, V4, V5, s0, s1, s2, s3, s4, s5)
                t0, t1, t2, t3, t4, t5 = cross6(A0, A1, A2, A3, A4, A5, s0, s1, s2, s3, s4, s5)
                r0, r1, r2, r3, r4, r5 = cross6(V0, V1, V2, V3, V4, V5, p0, p1, p2, p3, p4, p5)
                put6(row, 6, p0, p1, p2, p3, p4, p5)
                put6(row, 12, t0 + r0, t1 + r1, t2 + r2, t3 + r3, t4 + r4, t5 + r5)
                x = nu[d]
                y = nud[d]
                g0 += s0 * x
                g1 += s1 * x
                g2 += s2 * x
                g3 += s3 * x
                g4 += s4 * x
                g5 += s5 * x
                e0 += s0 * y
                e1 += s1 * y
                e2 += s2 * y
                e3 += s3 * y
                e4 += s4 * y
                e5 += s5 * y
            V0 += g0
            V1 += g1
            V2 += g2
            V3 += g3
            V4 += g4
            V5 += g5
            k0, k1, k2, k3, k4, k5 = cross6(V0, V1, V2, V3, V4, V5, g0, g1, g2, g3, g4, g5)
            A0 += e0 + k0
            A1 += e1 + k1
            A2 += e2 + k2
            A3 += e3 + k3
            A4 += e4 + k4
            A5 += e5 + k5
            for d in range(d0, d1):
                row = CD[d]
                s0, s1, s2, s3, s4, s5 = get6(row, 0)
                p0, p1, p2, p3, p4, p5 = get6(row, 6)
                x0, x1, x2, x3, x4, x5 = cross6(V0, V1, V2, V3, V4, V5, s0, s1, s2, s3, s4, s5)
                put6(row, 18, p0 + x0, p1 + x1, p2 + x2, p3 + x3, p4 + x4, p5 + x5)
        put6(W, wb + 22, V0, V1, V2, V3, V4, V5)
        put6(W, wb + 28, A0, A1, A2, A3, A4, A5)
        Ic = W[wb + 12:wb + 22]
        h0, h1, h2, h3, h4, h5 = inertia6(Ic, V0, V1, V2, V3, V4, V5)
        m0, m1, m2, m3, m4, m5 = inertia6(Ic, A0, A1, A2, A3, A4, A5)
        c0_, c1_, c2_, c3_, c4_, c5_ = crossf6(V0, V1, V2, V3, V4, V5, h0, h1, h2, h3, h4, h5)
        F0, F1, F2, F3, F4, F5 = m0 + c0_, m1 + c1_, m2 + c2_, m3 + c3_, m4 + c4_, m5 + c5_
        if has_f:  # joint-frame wrench Ad_bj^T f_body, then to world: [R n + p x R f; R f]
            Ab = f_A + 36 * i
            fj = np.zeros(6, dtype=dt)
            for k in range(6):
                s1 = zero
                for l in range(6):
                    s1 += Ff[Ab + 6 * l + k] * f_body[i, l]
                fj[k] = s1
            Rf0, Rf1, Rf2 = rot(R, fj[3], fj[4], fj[5])
            Rn0, Rn1, Rn2 = rot(R, fj[0], fj[1], fj[2])
            z0, z1, z2 = cross(P0, P1, P2, Rf0, Rf1, Rf2)
            F0 -= Rn0 + z0
            F1 -= Rn1 + z1
            F2 -= Rn2 + z2
            F3 -= Rf0
            F4 -= Rf1
            F5 -= Rf2
        put6(W, wb + 34, F0, F1, F2, F3, F4, F5)
        body_coriolis(Ic, V0, V1, V2, V3, V4, V5, W, wb + 40)


@njit(inline="always", fastmath=FAST)
def forward_pass(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent):
    """:func:`forward_core` into fresh buffers of ``q``'s dtype: ``(W (FWD_BODY nb,), CD (ncd, FWD_DOF))`` (the core
    rates and accelerations it also forms are dropped).  Inlined into its callers (a thin wrapper compiled as a
    function of its own would be optimised once more with everything below it)."""
    ncd = CI[1]
    dt = q.dtype
    W = np.empty(FWD_BODY * Ii[0], dtype=dt)
    CD = np.empty((ncd, FWD_DOF), dtype=dt)
    nu = np.empty(ncd, dtype=dt)
    nud = np.empty(ncd, dtype=dt)
    forward_core(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, W, CD, nu, nud)
    return W, CD


@njit(cache=True, fastmath=FAST)
def _generic_frame(Ii, Ff, i, typ, q, qd, jstate, scratch):
    """Joint frame (R, p) in its parent frame for joints with more than 6 DOFs (long composites), whose S
    columns do not fit the scratch area of :func:`generic_motion`."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    a = Ii[o_idx + i]
    b = Ii[o_idx + i + 1]
    big = np.zeros(18 + 6 * (b - a), dtype=scratch.dtype)
    generic_motion(Ii, Ff, i, typ, q, qd, jstate, big, 0, 9, 18, 12)
    for k in range(12):
        scratch[k] = big[k]


_generic_frame_gated = lean_gate(_generic_frame, "_generic_frame_gated")
_sph_rates_gated = lean_gate(_sph_rates, "_sph_rates_gated", prepend=True)  # (both: lean models skip them)


@njit(cache=True, fastmath=FAST)
def _inertia_world(Ii, Ff, i, R, P0, P1, P2, W, o):
    """Compact inertia of body i about the world origin into W[o:o+10] (``_world`` layout):
    ``c_w = R c + p``, ``I = R Ic R^T + m (|c_w|^2 1 - c_w c_w^T)``."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    m = Ff[f_m + i]
    k0, k1, k2 = get3(Ff, f_c + 3 * i)
    c0, c1, c2 = rot(R, k0, k1, k2)
    c0 += P0
    c1 += P1
    c2 += P2
    J00, J01, J02, _, J11, J12, _, _, J22 = get9(Ff, f_I + 9 * i)
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = R
    t00 = J00 * R00 + J01 * R01 + J02 * R02
    t01 = J00 * R10 + J01 * R11 + J02 * R12
    t02 = J00 * R20 + J01 * R21 + J02 * R22
    t10 = J01 * R00 + J11 * R01 + J12 * R02
    t11 = J01 * R10 + J11 * R11 + J12 * R12
    t12 = J01 * R20 + J11 * R21 + J12 * R22
    t20 = J02 * R00 + J12 * R01 + J22 * R02
    t21 = J02 * R10 + J12 * R11 + J22 * R12
    t22 = J02 * R20 + J12 * R21 + J22 * R22
    cn = c0 * c0 + c1 * c1 + c2 * c2
    w = W[o:o + 10]
    w[0] = m
    w[1] = m * c0
    w[2] = m * c1
    w[3] = m * c2
    w[4] = R00 * t00 + R01 * t10 + R02 * t20 + m * (cn - c0 * c0)
    w[5] = R00 * t01 + R01 * t11 + R02 * t21 - m * c0 * c1
    w[6] = R00 * t02 + R01 * t12 + R02 * t22 - m * c0 * c2
    w[7] = R10 * t01 + R11 * t11 + R12 * t21 + m * (cn - c1 * c1)
    w[8] = R10 * t02 + R11 * t12 + R12 * t22 - m * c1 * c2
    w[9] = R20 * t02 + R21 * t12 + R22 * t22 + m * (cn - c2 * c2)


@njit(cache=True)
def body_map(Ii, Ff, CI, i, q, jstate, tangent, order):
    """Map jets of body i's joint (``joints.derivatives``) up to ``order`` (0..3): (A (m, n), dA, d2A, d3A) with
    m core DOFs (the jets above ``order`` are empty)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    a = Ii[o_idx + i]
    b = Ii[o_idx + i + 1]
    nj = b - a
    m = CI[o_cd + i + 1] - CI[o_cd + i]
    dt = q.dtype
    Sv = np.zeros((6, m), dtype=dt)
    Am = np.zeros((m, nj), dtype=dt)
    k1 = nj if order >= 1 else 0
    k2 = nj if order >= 2 else 0
    k3 = nj if order >= 3 else 0
    dA = np.zeros((m if order >= 1 else 0, k1, k1), dtype=dt)
    d2A = np.zeros((m if order >= 2 else 0, k2, k2, k2), dtype=dt)
    d3A = np.zeros((m if order >= 3 else 0, k3, k3, k3, k3), dtype=dt)
    fk = CI[fast_offset(CI, nb) + i]
    if fk != 0 and not tangent:  # J_r block (after the identity of the translation for a free joint)
        o = 3 if fk == 1 else 0
        for k in range(o):
            Am[k, k] = 1.0
        # (into C-contiguous blocks, then copied: so3_jr_jets is compiled for such arrays only, as every other
        # caller passes them)
        c1, c2, c3 = (3 if order >= 1 else 0), (3 if order >= 2 else 0), (3 if order >= 3 else 0)
        J = np.zeros((3, 3), dtype=dt)
        J1 = np.zeros((c1, c1, c1), dtype=dt)
        J2 = np.zeros((c2, c2, c2, c2), dtype=dt)
        J3 = np.zeros((c3, c3, c3, c3, c3), dtype=dt)
        so3_jr_jets_gated(Ii, q[a + o:b], J, J1, J2, J3, order)
        Am[o:, o:] = J
        if order >= 1:
            dA[o:, o:, o:] = J1
        if order >= 2:
            d2A[o:, o:, o:, o:] = J2
        if order >= 3:
            d3A[o:, o:, o:, o:, o:] = J3
        return Am, dA, d2A, d3A
    p = Ff[f_jp + Ii[o_jp + i]:f_jp + Ii[o_jp + i + 1]]
    joint_expansion_gated(Ii, Ii[o_typ + i], p, q[a:b], jstate[i], tangent, order, Sv, Am, dA, d2A, d3A)
    return Am, dA, d2A, d3A
