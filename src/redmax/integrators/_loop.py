"""The compiled linearly implicit Euler loop: every step of ``simulate(integrator="euler")`` in one Numba call.

Per step k (t_{k+1} = t0 + (k+1) h, inputs at t_{k+1}; reference-scenes.md):

1. re-parameterise the joints that need it (exponential coordinates, Euler charts);
2. kinematics, forces (f, f + D V, blocks ``h D - h^2 K``), bias and right-hand side, assembly
   (:mod:`redmax.integrators._stages`), optionally the exact velocity derivative of the quadratic
   velocity terms (``coriolis="implicit"``);
3. solve (Cholesky or LU), ``q1 = q0 + h qd1``; record q, qd, the chart words and the energies.

Energies of a sample come from the evaluation at the start of the next step when re-parameterisation changed
nothing (the common case), else from a separate evaluation at the stored state; the last sample is evaluated
after the loop.  A step that goes non-finite or singular stops the loop and reports what failed (see
:data:`STATUS`); nothing allocates per step.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from redmax.dynamics._packed import offsets
from redmax.forces._compiled import eval_forces
from redmax.integrators._stages import (
    assemble_stage,
    depths,
    kinematics_stage,
    rhs_stage,
    work_offsets,
)
from redmax.integrators._velocity import bias_velocity_jacobian
from redmax.joints.dispatch import joint_reparam
from redmax.solvers._dense import solve_stage

__all__ = ["STATUS", "euler_loop", "sample_energies"]

# status codes returned by euler_loop (with the step index and an index into the failing quantity)
OK = 0
NONFINITE_FORCE = 1  # a force wrench or generalized force (index: body * 6 + component, or n*6... see below)
NONFINITE_BLOCK = 2  # a stiffness/damping block (index: block)
NONFINITE_RHS = 3  # the right-hand side (index: DOF)
NONFINITE_MATRIX = 4  # the step matrix (index: row)
SINGULAR = 5  # the step matrix is singular (index: -1)
NONFINITE_STATE = 6  # the new state (index: DOF)
NONFINITE_INPUT = 7  # an input torque (index: DOF)
STATUS = {NONFINITE_FORCE: "force", NONFINITE_BLOCK: "stiffness/damping block", NONFINITE_RHS: "right-hand side",
          NONFINITE_MATRIX: "step matrix", SINGULAR: "singular step matrix", NONFINITE_STATE: "new state",
          NONFINITE_INPUT: "input torque"}
NKEYS = 5  # kinetic, gravity, joint_springs, springs, applied


@njit(cache=True)
def kinetic_gravity(Ii, Ff, W, gscale):
    """(kinetic, gravity) energies from the kinematics stage: ``1/2 sum V.I V`` and ``-sum g . (m c)``."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    L = offsets(Ii)
    T = 0.0
    G = 0.0
    g0 = gscale * Ff[L.f_g]
    g1 = gscale * Ff[L.f_g + 1]
    g2 = gscale * Ff[L.f_g + 2]
    for i in range(nb):
        c = W[o.wI + 10 * i:o.wI + 10 * i + 10]
        v = W[o.wV + 6 * i:o.wV + 6 * i + 6]
        w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
        m, h0, h1, h2 = c[0], c[1], c[2], c[3]
        # I [w; u] = [Io w + h x u; m u - h x w]
        n0 = c[4] * w0 + c[5] * w1 + c[6] * w2 + h1 * u2 - h2 * u1
        n1 = c[5] * w0 + c[7] * w1 + c[8] * w2 + h2 * u0 - h0 * u2
        n2 = c[6] * w0 + c[8] * w1 + c[9] * w2 + h0 * u1 - h1 * u0
        f0 = m * u0 - (h1 * w2 - h2 * w1)
        f1 = m * u1 - (h2 * w0 - h0 * w2)
        f2 = m * u2 - (h0 * w1 - h1 * w0)
        T += 0.5 * (w0 * n0 + w1 * n1 + w2 * n2 + u0 * f0 + u1 * f1 + u2 * f2)
        G -= g0 * h0 + g1 * h1 + g2 * h2
    return T, G


@njit(cache=True)
def sample_energies(Ii, Ff, hdr, fi, ff, q, qd, js, W, fw, fw_rhs, bpair, bB, fr, fr_rhs, rdiag, E):
    """Energies (5,) at one state into E (kinematics and forces evaluated without blocks)."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    kinematics_stage(Ii, Ff, q, qd, js, W)
    for k in range(5):
        E[k] = 0.0
    for i in range(nb):
        for k in range(6):
            fw[i, k] = 0.0
            fw_rhs[i, k] = 0.0
    for a in range(n):
        fr[a] = 0.0
        fr_rhs[a] = 0.0
    Rw = W[o.wR:o.wR + 9 * nb].reshape((nb, 9))
    pw = W[o.wp:o.wp + 3 * nb].reshape((nb, 3))
    Vw = W[o.wV:o.wV + 6 * nb].reshape((nb, 6))
    eval_forces(hdr, fi, ff, Rw, pw, Vw, q, qd, 0.0, 0.0, False, fw, fw_rhs, bpair, bB, fr, fr_rhs, rdiag, E)
    T, G = kinetic_gravity(Ii, Ff, W, 1.0)
    E[0] = T
    E[1] += G


@njit(cache=True)
def _first_nonfinite_rows(X):
    for r in range(X.shape[0]):
        for c in range(X.shape[1]):
            if not np.isfinite(X[r, c]):
                return r
    return -1


@njit(cache=True)
def _first_nonfinite(x):
    for r in range(x.shape[0]):
        if not np.isfinite(x[r]):
            return r
    return -1


@njit(cache=True)
def euler_loop(Ii, Ff, hdr, fi, ff, nblocks, nincs, symmetric, coriolis_implicit, reparam, inp_t, inp_v,
               inp_per_step, q, qd, js, t0, h, k0, k1, Q_out, QD_out, JS_out, E_out):
    """Run steps ``k0 .. k1-1`` from (q, qd, js) (modified in place); sample k+1 goes to row k+1 of the outputs,
    the energies of sample k to ``E_out[k]`` (and, when ``k1`` is the last step, of sample k1 too).

    Args:
        hdr, fi, ff: the force program.  nblocks, nincs: its capacities.  symmetric: A is symmetric.
        coriolis_implicit: add ``h dc/dqd`` to A and ``h dc/dqd qd`` to b (MuJoCo's "implicit").
        reparam: (r,) indices of joints that may re-parameterise.
        inp_t, inp_v, inp_per_step: input table (see ``Inputs.table``); per-step rows are indexed by k.
        Q_out, QD_out (N+1, n), JS_out (N+1, nb), E_out (N+1, 5): outputs.
    Returns:
        (status, step, index): status 0 when every step succeeded.
    """
    nb = Ii[0]
    n = Ii[1]
    L = offsets(Ii)
    o = work_offsets(nb, n)
    W = np.zeros(o.size)
    cap = max(nblocks, 1)
    fw = np.zeros((nb, 6))
    fw_rhs = np.zeros((nb, 6))
    bpair = np.zeros((cap, 2), dtype=np.int64)
    bB = np.zeros((cap, 6, 6))
    fr = np.zeros(n)
    fr_rhs = np.zeros(n)
    rdiag = np.zeros(n)
    E = np.zeros(5)
    Y = np.zeros((nb, 6))
    Acc = np.zeros((nb, 6))
    b = np.zeros(n)
    A = np.zeros((n, n))
    x = np.zeros(n)
    perm = np.zeros(n, dtype=np.int64)
    tau = np.zeros(n)
    Cv = np.zeros((n, n))
    dep = depths(Ii)
    ic = max(nincs, 1)
    inc_d = np.zeros(ic, dtype=np.int64)
    inc_c = np.zeros(ic, dtype=np.int64)
    inc_u = np.zeros((ic, 6))
    head = np.zeros(2 * n, dtype=np.int64)
    nxt = np.zeros(ic, dtype=np.int64)
    q_pre = np.zeros(n)
    qd_pre = np.zeros(n)
    js_pre = np.zeros(nb, dtype=np.int64)
    Rw = W[o.wR:o.wR + 9 * nb].reshape((nb, 9))
    pw = W[o.wp:o.wp + 3 * nb].reshape((nb, 3))
    Vw = W[o.wV:o.wV + 6 * nb].reshape((nb, 6))
    ip = 0  # input table pointer
    cK = -h * h
    cD = h
    for k in range(k0, k1):
        t1 = t0 + (k + 1) * h
        # 1. re-parameterisation (energies of sample k are those of the stored, pre-re-parameterisation state)
        changed = False
        if reparam.shape[0] > 0:
            for m in range(n):
                q_pre[m] = q[m]
                qd_pre[m] = qd[m]
            for m in range(nb):
                js_pre[m] = js[m]
            for r in range(reparam.shape[0]):
                i = reparam[r]
                a = Ii[L.o_idx + i]
                e = Ii[L.o_idx + i + 1]
                jo = L.f_jp + Ii[L.o_jp + i]
                je = L.f_jp + Ii[L.o_jp + i + 1]
                new, ch = joint_reparam(Ii[L.o_typ + i], Ff[jo:je], q[a:e], qd[a:e], js[i], 0.0)
                if ch:
                    js[i] = new
                    changed = True
            if changed:
                sample_energies(Ii, Ff, hdr, fi, ff, q_pre, qd_pre, js_pre, W, fw, fw_rhs, bpair, bB, fr, fr_rhs,
                                rdiag, E)
                for m in range(5):
                    E_out[k, m] = E[m]
        # 2. kinematics, forces
        kinematics_stage(Ii, Ff, q, qd, js, W)
        for i in range(nb):
            for m in range(6):
                fw[i, m] = 0.0
                fw_rhs[i, m] = 0.0
        for m in range(n):
            fr[m] = 0.0
            fr_rhs[m] = 0.0
            rdiag[m] = 0.0
        for m in range(5):
            E[m] = 0.0
        nblk = eval_forces(hdr, fi, ff, Rw, pw, Vw, q, qd, cK, cD, True, fw, fw_rhs, bpair, bB, fr, fr_rhs, rdiag, E)
        if not changed:
            T, G = kinetic_gravity(Ii, Ff, W, 1.0)
            E_out[k, 0] = T
            E_out[k, 1] = E[1] + G
            for m in range(2, 5):
                E_out[k, m] = E[m]
        # inputs at t_{k+1}
        if inp_per_step:
            row = k
        else:
            while ip + 1 < inp_t.shape[0] and inp_t[ip + 1] <= t1:
                ip += 1
            row = ip
        for m in range(n):
            tau[m] = inp_v[row, m]
        bad = _first_nonfinite(tau)
        if bad >= 0:
            return NONFINITE_INPUT, k, bad
        bad = _first_nonfinite_rows(fw)
        if bad >= 0:
            return NONFINITE_FORCE, k, bad
        bad = _first_nonfinite(fr)
        if bad >= 0:
            return NONFINITE_FORCE, k, nb + bad
        # 3. right-hand side and matrix
        rhs_stage(Ii, Ff, qd, W, h, fw_rhs, fr_rhs, tau, 1.0, Y, Acc, b)
        assemble_stage(Ii, W, bpair, bB, nblk, rdiag, symmetric, dep, inc_d, inc_c, inc_u, head, nxt, A)
        if coriolis_implicit:
            bias_velocity_jacobian(Ii, Ff, W, q, qd, js, Cv)
            for r in range(n):
                s = 0.0
                for c in range(n):
                    A[r, c] += h * Cv[r, c]
                    s += Cv[r, c] * qd[c]
                b[r] += h * s
        # 4. solve
        _, piv = solve_stage(A, b, x, symmetric and not coriolis_implicit, perm)
        if not piv > 0.0:
            bad = _first_nonfinite(b)
            if bad >= 0:
                return NONFINITE_RHS, k, bad
            for t in range(nblk):
                for r in range(6):
                    for c in range(6):
                        if not np.isfinite(bB[t, r, c]):
                            return NONFINITE_BLOCK, k, t
            bad = _first_nonfinite_rows(A)
            if bad >= 0:
                return NONFINITE_MATRIX, k, bad
            return SINGULAR, k, -1
        for m in range(n):
            qd[m] = x[m]
            q[m] = q[m] + h * x[m]
        bad = _first_nonfinite(qd)
        if bad < 0:
            bad = _first_nonfinite(q)
        if bad >= 0:
            b2 = _first_nonfinite(b)
            if b2 >= 0:
                return NONFINITE_RHS, k, b2
            return NONFINITE_STATE, k, bad
        for m in range(n):
            Q_out[k + 1, m] = q[m]
            QD_out[k + 1, m] = qd[m]
        for m in range(nb):
            JS_out[k + 1, m] = js[m]
    if k1 == Q_out.shape[0] - 1:
        sample_energies(Ii, Ff, hdr, fi, ff, q, qd, js, W, fw, fw_rhs, bpair, bB, fr, fr_rhs, rdiag, E)
        for m in range(5):
            E_out[k1, m] = E[m]
    return OK, k1, -1
