"""Balafoutis-Patel recursive inverse dynamics and its partials (Guenter & Rose, MSR-TR-2000-80), and the
spacetime objective of Rose et al. (SIGGRAPH 96) with its exact gradient.

**Formulation** (the report's notation, §1): every link i has its own frame (redmax's joint frame, which moves
with the joint), ``A_i`` relates it to its parent's frame (``v^p = A_i v^i``), ``z_i`` is the joint axis in
frame i, ``s_{p,i}`` the origin of frame i in the parent frame, ``r_i`` the centre of mass, ``m_i`` the mass
and ``J_i = 1/2 tr(I_ci) 1 - I_ci`` Euler's inertia tensor about the centre of mass.  Cartesian tensors
instead of spatial vectors: the angular-acceleration tensor ``Omega_i = [omegadot_i] + [omega_i]^2`` gives
every point's acceleration, and ``M_ci = dual(Omega_i J_i - (Omega_i J_i)^T)`` is Euler's equation.  Forward:

    omega_i    = A_i^T omega_p + z_i qd_i
    omegadot_i = A_i^T omegadot_p + (A_i^T omega_p) x z_i qd_i + z_i qdd_i
    sdd_i      = A_i^T (sdd_p + Omega_p s_{p,i})
    rdd_i      = Omega_i r_i + sdd_i,   F_ci = m_i rdd_i,   M_ci = dual(Omega_i J_i - (Omega_i J_i)^T)

from a world "link" with ``omega = omegadot = 0`` and ``sdd = -g`` (the report writes ``A_0^T g`` with its y-up
``g``; with the gravity vector g itself the base must accelerate by ``-g``), and backward:

    f_i = F_ci + sum_c A_c f_c,   eta_i = r_i x F_ci + M_ci + sum_c (A_c eta_c + s_{i,c} x A_c f_c),
    tau_i = eta_i . z_i.

Prismatic joints (the Balafoutis-Patel book, not the report) keep ``omega_i = A_i^T omega_p``, add
``2 omega_i x z_i qd_i + z_i qdd_i`` to ``sdd_i`` with ``s_{p,i} = s0 + A_i z_i q_i``, and have ``tau_i = f_i . z_i``;
fixed joints carry their link rigidly.  Other joint kinds raise ModelError (use :func:`redmax.rnea_derivatives`).

**Partials** (report, "The recursive partials"): every line above is differentiated with respect to each
``q_j``, ``qd_j``, ``qdd_j`` and propagated by the same recursions, using ``dA_i^T/dq_i v = (A_i^T v) x z_i`` and
``dA_i/dq_i f = A_i (z_i x f)`` for revolute joints.  O(n^2) memory and time, scalar-generic (complex step).
"""

from __future__ import annotations

import numpy as np

from redmax._jit import njit
from redmax.errors import ModelError
from redmax.joints.simple import FIXED, PRISMATIC, REVOLUTE
from redmax.model.layout import offsets

__all__ = ["inverse_dynamics", "spacetime_objective", "trajectory_rates"]


@njit(cache=True)
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def _link_frames(Ii, Ff, q):
    """Per link: A (nb, 3, 3) = R_pj, s (nb, 3) = p_pj, z (nb, 3) joint axis (zero for fixed joints)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    dt = q.dtype
    A = np.zeros((nb, 3, 3), dtype=dt)
    s = np.zeros((nb, 3), dtype=dt)
    z = np.zeros((nb, 3), dtype=dt)
    for i in range(nb):
        typ = Ii[o_typ + i]
        jo = f_jp + Ii[o_jp + i]
        R0 = Ff[f_R + 9 * i:f_R + 9 * i + 9]
        p0 = Ff[f_p + 3 * i:f_p + 3 * i + 3]
        Q = np.eye(3, dtype=dt)
        if typ == REVOLUTE:
            a0, a1, a2 = Ff[jo], Ff[jo + 1], Ff[jo + 2]
            th = q[Ii[o_idx + i]]
            c = np.cos(th)
            sn = np.sin(th)
            t = 1.0 - c
            Q[0, 0] = c + a0 * a0 * t
            Q[0, 1] = a0 * a1 * t - a2 * sn
            Q[0, 2] = a0 * a2 * t + a1 * sn
            Q[1, 0] = a1 * a0 * t + a2 * sn
            Q[1, 1] = c + a1 * a1 * t
            Q[1, 2] = a1 * a2 * t - a0 * sn
            Q[2, 0] = a2 * a0 * t - a1 * sn
            Q[2, 1] = a2 * a1 * t + a0 * sn
            Q[2, 2] = c + a2 * a2 * t
            z[i, 0], z[i, 1], z[i, 2] = a0, a1, a2
        elif typ == PRISMATIC:
            z[i, 0], z[i, 1], z[i, 2] = Ff[jo], Ff[jo + 1], Ff[jo + 2]
        for r in range(3):
            for k in range(3):
                A[i, r, k] = R0[3 * r] * Q[0, k] + R0[3 * r + 1] * Q[1, k] + R0[3 * r + 2] * Q[2, k]
            s[i, r] = p0[r]
        if typ == PRISMATIC:
            d = q[Ii[o_idx + i]]
            for r in range(3):
                s[i, r] += (R0[3 * r] * z[i, 0] + R0[3 * r + 1] * z[i, 1] + R0[3 * r + 2] * z[i, 2]) * d
    return A, s, z


@njit(cache=True)
def bp_kernel(Ii, Ff, q, qd, qdd, gscale):
    """(tau (n,), dtau (n, 3n)) with ``dtau[:, x]`` the partial along variable x = (q_j, qd_j, qdd_j)
    (columns j, n + j, 2n + j).  Revolute, prismatic and fixed joints only (checked by the caller)."""
    nb, n, o_par, o_typ, o_idx, o_jp, f_R, f_p, f_M, f_A, f_m, f_c, f_I, f_g, f_jp = offsets(Ii)
    dt = q.dtype
    nx = 3 * n
    A, s, z = _link_frames(Ii, Ff, q)
    w = np.zeros((nb, 3), dtype=dt)
    wd = np.zeros((nb, 3), dtype=dt)
    Om = np.zeros((nb, 3, 3), dtype=dt)
    sdd = np.zeros((nb, 3), dtype=dt)
    F = np.zeros((nb, 3), dtype=dt)
    Mc = np.zeros((nb, 3), dtype=dt)
    dw = np.zeros((nb, nx, 3), dtype=dt)
    dwd = np.zeros((nb, nx, 3), dtype=dt)
    dOm = np.zeros((nb, nx, 3, 3), dtype=dt)
    dsdd = np.zeros((nb, nx, 3), dtype=dt)
    dF = np.zeros((nb, nx, 3), dtype=dt)
    dMc = np.zeros((nb, nx, 3), dtype=dt)
    J = np.zeros((nb, 3, 3), dtype=dt)
    t1 = np.zeros(3, dtype=dt)
    t2 = np.zeros(3, dtype=dt)
    wp = np.zeros(3, dtype=dt)
    wdp = np.zeros(3, dtype=dt)
    sp = np.zeros(3, dtype=dt)
    Omp = np.zeros((3, 3), dtype=dt)
    AtW = np.zeros(3, dtype=dt)  # A^T omega_p
    AtWd = np.zeros(3, dtype=dt)
    u = np.zeros(3, dtype=dt)  # sdd_p + Omega_p s
    AtU = np.zeros(3, dtype=dt)
    dAtW = np.zeros(3, dtype=dt)
    dAtWd = np.zeros(3, dtype=dt)
    du = np.zeros(3, dtype=dt)
    dAtU = np.zeros(3, dtype=dt)
    zero = np.zeros(1, dtype=dt)[0]
    # anc[i, j]: DOF j belongs to body i or to one of its ancestors (the forward partials vanish otherwise)
    anc = np.zeros((nb, n), dtype=np.bool_)
    for i in range(nb):
        b = i
        while b >= 0:
            for d in range(Ii[o_idx + b], Ii[o_idx + b + 1]):
                anc[i, d] = True
            b = Ii[o_par + b]
    for i in range(nb):
        Ic = Ff[f_I + 9 * i:f_I + 9 * i + 9]
        tr = 0.5 * (Ic[0] + Ic[4] + Ic[8])
        for r in range(3):
            for k in range(3):
                J[i, r, k] = (tr if r == k else 0.0) - Ic[3 * r + k]
    for i in range(nb):
        par = Ii[o_par + i]
        typ = Ii[o_typ + i]
        a = Ii[o_idx + i]
        Ai = A[i]
        zi = z[i]
        if par >= 0:
            for k in range(3):
                wp[k] = w[par, k]
                wdp[k] = wd[par, k]
                sp[k] = sdd[par, k]
                for l in range(3):
                    Omp[k, l] = Om[par, k, l]
        else:
            for k in range(3):
                wp[k] = 0.0
                wdp[k] = 0.0
                sp[k] = -gscale * Ff[f_g + k]
                for l in range(3):
                    Omp[k, l] = 0.0
        # values
        for k in range(3):
            u[k] = sp[k] + Omp[k, 0] * s[i, 0] + Omp[k, 1] * s[i, 1] + Omp[k, 2] * s[i, 2]
        for k in range(3):
            AtW[k] = Ai[0, k] * wp[0] + Ai[1, k] * wp[1] + Ai[2, k] * wp[2]
            AtWd[k] = Ai[0, k] * wdp[0] + Ai[1, k] * wdp[1] + Ai[2, k] * wdp[2]
            AtU[k] = Ai[0, k] * u[0] + Ai[1, k] * u[1] + Ai[2, k] * u[2]
        rev = typ == REVOLUTE
        pri = typ == PRISMATIC
        vd = zero
        va = zero
        if rev or pri:
            vd = qd[a]
            va = qdd[a]
        _cross(AtW, zi, t1)  # (A^T omega_p) x z
        for k in range(3):
            w[i, k] = AtW[k] + (zi[k] * vd if rev else 0.0)
            wd[i, k] = AtWd[k] + (t1[k] * vd + zi[k] * va if rev else 0.0)
            sdd[i, k] = AtU[k]
        if pri:
            _cross(w[i], zi, t2)
            for k in range(3):
                sdd[i, k] += 2.0 * t2[k] * vd + zi[k] * va
        _omega(w[i], wd[i], Om[i])
        _body_terms(Ff, f_m, f_c, i, Om[i], sdd[i], J[i], F[i], Mc[i])
        # partials
        for x in range(nx):
            jx = x % n
            if not anc[i, jx]:
                continue
            kind = x // n  # 0: q, 1: qd, 2: qdd
            own = (rev or pri) and jx == a
            has_parent = par >= 0
            for k in range(3):  # d(A^T omega_p), d(A^T omegadot_p), d(sdd_p + Omega_p s)
                dAtW[k] = zero
                dAtWd[k] = zero
                du[k] = zero
            if has_parent:
                for k in range(3):
                    du[k] = dsdd[par, x, k]
                    for l in range(3):
                        du[k] += dOm[par, x, k, l] * s[i, l]
                for k in range(3):
                    dAtW[k] = Ai[0, k] * dw[par, x, 0] + Ai[1, k] * dw[par, x, 1] + Ai[2, k] * dw[par, x, 2]
                    dAtWd[k] = Ai[0, k] * dwd[par, x, 0] + Ai[1, k] * dwd[par, x, 1] + Ai[2, k] * dwd[par, x, 2]
            if pri and own and kind == 0:  # ds/dq = A z
                for k in range(3):
                    for l in range(3):
                        du[k] += Omp[k, l] * (Ai[l, 0] * zi[0] + Ai[l, 1] * zi[1] + Ai[l, 2] * zi[2])
            for k in range(3):
                dAtU[k] = Ai[0, k] * du[0] + Ai[1, k] * du[1] + Ai[2, k] * du[2]
            if rev and own and kind == 0:  # dA^T/dq v = (A^T v) x z
                _cross(AtW, zi, t2)
                for k in range(3):
                    dAtW[k] += t2[k]
                _cross(AtWd, zi, t2)
                for k in range(3):
                    dAtWd[k] += t2[k]
                _cross(AtU, zi, t2)
                for k in range(3):
                    dAtU[k] += t2[k]
            for k in range(3):
                dw[i, x, k] = dAtW[k]
                dwd[i, x, k] = dAtWd[k]
                dsdd[i, x, k] = dAtU[k]
            if rev:
                _cross(dAtW, zi, t2)  # d((A^T omega_p) x z) qd
                for k in range(3):
                    dwd[i, x, k] += t2[k] * vd
                if own and kind == 1:
                    for k in range(3):
                        dw[i, x, k] += zi[k]
                        dwd[i, x, k] += t1[k]
                if own and kind == 2:
                    for k in range(3):
                        dwd[i, x, k] += zi[k]
            if pri:
                _cross(dw[i, x], zi, t2)
                for k in range(3):
                    dsdd[i, x, k] += 2.0 * t2[k] * vd
                if own and kind == 1:
                    _cross(w[i], zi, t2)
                    for k in range(3):
                        dsdd[i, x, k] += 2.0 * t2[k]
                if own and kind == 2:
                    for k in range(3):
                        dsdd[i, x, k] += zi[k]
            _domega(w[i], dw[i, x], dwd[i, x], dOm[i, x])
            _body_terms(Ff, f_m, f_c, i, dOm[i, x], dsdd[i, x], J[i], dF[i, x], dMc[i, x])
    # backward
    f = np.zeros((nb, 3), dtype=dt)
    eta = np.zeros((nb, 3), dtype=dt)
    df = np.zeros((nb, nx, 3), dtype=dt)
    deta = np.zeros((nb, nx, 3), dtype=dt)
    tau = np.zeros(n, dtype=dt)
    dtau = np.zeros((n, nx), dtype=dt)
    for i in range(nb):
        r = Ff[f_c + 3 * i:f_c + 3 * i + 3]
        _cross(r, F[i], t1)
        for k in range(3):
            f[i, k] = F[i, k]
            eta[i, k] = t1[k] + Mc[i, k]
        for x in range(nx):
            _cross(r, dF[i, x], t1)
            for k in range(3):
                df[i, x, k] = dF[i, x, k]
                deta[i, x, k] = t1[k] + dMc[i, x, k]
    Af = np.zeros(3, dtype=dt)
    Ae = np.zeros(3, dtype=dt)
    for i in range(nb - 1, -1, -1):
        typ = Ii[o_typ + i]
        a = Ii[o_idx + i]
        zi = z[i]
        if typ == REVOLUTE:
            tau[a] = eta[i, 0] * zi[0] + eta[i, 1] * zi[1] + eta[i, 2] * zi[2]
            for x in range(nx):
                dtau[a, x] = deta[i, x, 0] * zi[0] + deta[i, x, 1] * zi[1] + deta[i, x, 2] * zi[2]
        elif typ == PRISMATIC:
            tau[a] = f[i, 0] * zi[0] + f[i, 1] * zi[1] + f[i, 2] * zi[2]
            for x in range(nx):
                dtau[a, x] = df[i, x, 0] * zi[0] + df[i, x, 1] * zi[1] + df[i, x, 2] * zi[2]
        par = Ii[o_par + i]
        if par < 0:
            continue
        Ai = A[i]
        si = s[i]
        for k in range(3):
            Af[k] = Ai[k, 0] * f[i, 0] + Ai[k, 1] * f[i, 1] + Ai[k, 2] * f[i, 2]
            Ae[k] = Ai[k, 0] * eta[i, 0] + Ai[k, 1] * eta[i, 1] + Ai[k, 2] * eta[i, 2]
        _cross(si, Af, t1)
        for k in range(3):
            f[par, k] += Af[k]
            eta[par, k] += Ae[k] + t1[k]
        zf = np.zeros(3, dtype=dt)  # A (z x f), A (z x eta): dA/dq of a revolute joint
        ze = np.zeros(3, dtype=dt)
        if typ == REVOLUTE:
            _cross(zi, f[i], t1)
            _cross(zi, eta[i], t2)
            for k in range(3):
                zf[k] = Ai[k, 0] * t1[0] + Ai[k, 1] * t1[1] + Ai[k, 2] * t1[2]
                ze[k] = Ai[k, 0] * t2[0] + Ai[k, 1] * t2[1] + Ai[k, 2] * t2[2]
        Az = np.zeros(3, dtype=dt)
        for k in range(3):
            Az[k] = Ai[k, 0] * zi[0] + Ai[k, 1] * zi[1] + Ai[k, 2] * zi[2]
        dAf = np.zeros(3, dtype=dt)
        dAe = np.zeros(3, dtype=dt)
        for x in range(nx):
            for k in range(3):
                dAf[k] = Ai[k, 0] * df[i, x, 0] + Ai[k, 1] * df[i, x, 1] + Ai[k, 2] * df[i, x, 2]
                dAe[k] = Ai[k, 0] * deta[i, x, 0] + Ai[k, 1] * deta[i, x, 1] + Ai[k, 2] * deta[i, x, 2]
            if x == a and typ == REVOLUTE:
                for k in range(3):
                    dAf[k] += zf[k]
                    dAe[k] += ze[k]
            _cross(si, dAf, t1)
            for k in range(3):
                df[par, x, k] += dAf[k]
                deta[par, x, k] += dAe[k] + t1[k]
            if x == a and typ == PRISMATIC:  # ds/dq x A f
                _cross(Az, Af, t2)
                for k in range(3):
                    deta[par, x, k] += t2[k]
    return tau, dtau


@njit(cache=True)
def _omega(w, wd, Om):
    """Omega = [wd] + [w][w] (angular-acceleration tensor)."""
    W = np.zeros((3, 3), dtype=w.dtype)
    _skew(w, W)
    _skew(wd, Om)
    for r in range(3):
        for k in range(3):
            Om[r, k] += W[r, 0] * W[0, k] + W[r, 1] * W[1, k] + W[r, 2] * W[2, k]


@njit(cache=True)
def _domega(w, dw, dwd, dOm):
    """dOmega = [dwd] + [dw][w] + [w][dw]."""
    W = np.zeros((3, 3), dtype=w.dtype)
    D = np.zeros((3, 3), dtype=w.dtype)
    _skew(w, W)
    _skew(dw, D)
    _skew(dwd, dOm)
    for r in range(3):
        for k in range(3):
            dOm[r, k] += (D[r, 0] * W[0, k] + D[r, 1] * W[1, k] + D[r, 2] * W[2, k]
                          + W[r, 0] * D[0, k] + W[r, 1] * D[1, k] + W[r, 2] * D[2, k])


@njit(cache=True)
def _skew(v, S):
    S[0, 0] = 0.0
    S[1, 1] = 0.0
    S[2, 2] = 0.0
    S[0, 1] = -v[2]
    S[0, 2] = v[1]
    S[1, 0] = v[2]
    S[1, 2] = -v[0]
    S[2, 0] = -v[1]
    S[2, 1] = v[0]


@njit(cache=True)
def _body_terms(Ff, f_m, f_c, i, Om, sdd, J, F, M):
    """F = m (Omega r + sdd), M = dual(Omega J - (Omega J)^T) (linear in Omega and sdd: also for partials)."""
    m = Ff[f_m + i]
    r = Ff[f_c + 3 * i:f_c + 3 * i + 3]
    for k in range(3):
        F[k] = m * (Om[k, 0] * r[0] + Om[k, 1] * r[1] + Om[k, 2] * r[2] + sdd[k])
    OJ = np.zeros((3, 3), dtype=Om.dtype)
    for a in range(3):
        for b in range(3):
            OJ[a, b] = Om[a, 0] * J[0, b] + Om[a, 1] * J[1, b] + Om[a, 2] * J[2, b]
    M[0] = OJ[2, 1] - OJ[1, 2]
    M[1] = OJ[0, 2] - OJ[2, 0]
    M[2] = OJ[1, 0] - OJ[0, 1]


def _check_joints(model):
    for i, code in enumerate(model.jtype):
        if code not in (REVOLUTE, PRISMATIC, FIXED):
            raise ModelError(f"{model.name}: joint '{model.joint_names[i]}' ({model.joints[i].kind}): the "
                             "Balafoutis-Patel formulation covers revolute, prismatic and fixed joints; use "
                             "redmax.rnea_derivatives for the other joint kinds")


def inverse_dynamics(model, q, qd, qdd, gravity: bool = True):
    """Balafoutis-Patel inverse dynamics with its analytic partials (module docstring).

    Args:
        q, qd, qdd: (ndof,) joint angles (or slides), rates and accelerations (real or complex).
        gravity: include the model's gravity.
    Returns:
        ``(tau, dtau_dq, dtau_dqd, dtau_dqdd)``: torques (ndof,) and the three (ndof, ndof) partials
        (``dtau_dqdd`` is the joint-space inertia M).
    """
    from redmax.dynamics import _arrays

    _check_joints(model)
    q, qd, qdd = _arrays(model, q, qd, qdd)
    Ii, Ff = model.packed
    tau, d = bp_kernel(Ii, Ff, q, qd, qdd, 1.0 if gravity else 0.0)
    n = model.ndof
    return tau, d[:, :n], d[:, n:2 * n], d[:, 2 * n:]


def trajectory_rates(path, h: float, rest: bool = True):
    """Rates and accelerations of a sampled trajectory ``path`` (N+1, n) at its samples by central differences
    ``qd_k = (q_{k+1} - q_{k-1}) / 2h``, ``qdd_k = (q_{k+1} - 2 q_k + q_{k-1}) / h^2``; at the two ends the
    trajectory is at rest (``rest=True``: ghost samples ``q_{-1} = q_0``, ``q_{N+1} = q_N``) or continued
    linearly (``q_{-1} = 2 q_0 - q_1``).  Returns (qd, qdd), each (N+1, n)."""
    P = np.asarray(path)
    if rest:
        G = np.concatenate([P[:1], P, P[-1:]])
    else:
        G = np.concatenate([2 * P[:1] - P[1:2], P, 2 * P[-1:] - P[-2:-1]])
    return (G[2:] - G[:-2]) / (2 * h), (G[2:] - 2 * G[1:-1] + G[:-2]) / (h * h)


def spacetime_objective(model, path, h: float, rest: bool = True, gravity: bool = True):
    """The spacetime objective ``P = integral sum_i tau_i^2 dt`` of a sampled trajectory and its exact gradient.

    The trajectory ``path`` (N+1, n) is sampled every ``h``; rates and accelerations are central differences
    (:func:`trajectory_rates`), the torques come from :func:`inverse_dynamics` at every sample and the integral
    is the trapezoid rule ``P = h (tau_0^2 / 2 + tau_1^2 + ... + tau_N^2 / 2)``.  The gradient is the exact
    derivative of this discrete P: ``dP/dq_m = sum_k 2 h w_k tau_k^T (dtau_k/dq_k delta_km + dtau_k/dqd_k
    dqd_k/dq_m + dtau_k/dqdd_k dqdd_k/dq_m)`` through the difference stencils (the report's Eq. for dP/dtheta).

    Returns:
        ``(P, grad)`` with grad (N+1, n); to keep the end poses fixed, optimise only ``path[1:-1]``.
    """
    P = np.asarray(path)
    P = P.astype(np.result_type(P, np.float64))
    N1, n = P.shape
    if n != model.ndof or N1 < 2:
        raise ModelError(f"{model.name}: path must have shape (N+1, {model.ndof}) with N >= 1, got {P.shape}")
    if not (np.isfinite(h) and h > 0):
        raise ModelError(f"{model.name}: h must be positive and finite, got {h}")
    qd, qdd = trajectory_rates(P, h, rest)
    w = np.full(N1, h)
    w[0] = w[-1] = 0.5 * h
    total = 0.0 * P[0, 0]
    g_tau = np.zeros((N1, n), dtype=P.dtype)  # dP/dq_k through tau_k(q_k) directly
    g_qd = np.zeros((N1, n), dtype=P.dtype)  # dP/dqd_k
    g_qdd = np.zeros((N1, n), dtype=P.dtype)
    for k in range(N1):
        tau, dq, dqd, dqdd = inverse_dynamics(model, P[k], qd[k], qdd[k], gravity)
        total += w[k] * (tau @ tau)
        c = 2.0 * w[k] * tau
        g_tau[k] = c @ dq
        g_qd[k] = c @ dqd
        g_qdd[k] = c @ dqdd
    grad = g_tau - 2.0 * g_qdd / (h * h)
    # qd_k = (q_{k+1} - q_{k-1}) / 2h, qdd_k = (q_{k+1} - 2 q_k + q_{k-1}) / h^2 on the ghosted sequence
    grad[:-1] += g_qd[1:] * (-1.0 / (2 * h)) + g_qdd[1:] / (h * h)  # q_k appears as q_{(k+1)-1}
    grad[1:] += g_qd[:-1] / (2 * h) + g_qdd[:-1] / (h * h)  # q_k appears as q_{(k-1)+1}
    # ghost samples: q_{-1} and q_{N+1} depend on q_0, q_1 (and q_N, q_{N-1})
    if rest:  # q_{-1} = q_0: it enters qd_0 and qdd_0 with the stencil weights of q_{-1}
        grad[0] += -g_qd[0] / (2 * h) + g_qdd[0] / (h * h)
        grad[-1] += g_qd[-1] / (2 * h) + g_qdd[-1] / (h * h)
    else:  # q_{-1} = 2 q_0 - q_1
        e0 = -g_qd[0] / (2 * h) + g_qdd[0] / (h * h)
        grad[0] += 2 * e0
        grad[1] -= e0
        e1 = g_qd[-1] / (2 * h) + g_qdd[-1] / (h * h)
        grad[-1] += 2 * e1
        grad[-2] -= e1
    return total, grad
