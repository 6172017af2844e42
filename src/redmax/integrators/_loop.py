"""The compiled linearly implicit Euler loop: every step of ``simulate(integrator="euler")`` in one Numba call.

Per step k (t_{k+1} = t0 + (k+1) h, inputs at t_{k+1}, the end of the step):

1. re-parameterise the joints that need it (exponential coordinates, Euler charts);
2. kinematics, the forces' (f, K, D) and the step's ``f + D V`` and blocks ``h D - h^2 K``
   (:mod:`redmax.integrators._linearize`), bias and right-hand side, assembly
   (:mod:`redmax.integrators._stages`), optionally the exact velocity derivative of the quadratic
   velocity terms (``coriolis="implicit"``);
3. solve (Cholesky or LU), ``q1 = q0 + h qd1``; record q, qd, the chart words and the energies.

Energies of a sample come from the evaluation at the start of the next step when re-parameterisation changed
nothing (the common case), else from a separate evaluation at the stored state; the last sample is evaluated
after the loop.  A step that goes non-finite or singular stops the loop and reports what failed (see
:data:`STATUS`); nothing allocates per step.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import carray

from redmax._jit import njit
from redmax._kernels.borrow import borrowed, data_ptr
from redmax._kernels.dispatch import lean_gate
from redmax._kernels.workspace import work_offsets
from redmax.forces._compiled import NE, PAIR_FLOATS
from redmax.forces.registry import eval_forces_gated
from redmax.integrators._assembly import assemble_stage, depths
from redmax.integrators._constrained import (
    CALL_TABLE,
    REACT,
    VIOL,
    call_final,
    call_reactions,
    call_rows,
    call_solve,
    fill_call_table,
    view_of,
)
from redmax.integrators._energies import energies_at, kinetic_gravity, sample_energies
from redmax.integrators._linearize import linearize_forces
from redmax.integrators._stages import kinematics_stage, rhs_stage
from redmax.integrators._velocity import bias_velocity_jacobian
from redmax.joints.dispatch import joint_reparam
from redmax.model.layout import offsets
from redmax.solvers._dense import solve_stage
from redmax.solvers._pair_blocks import pair_blocks
from redmax.solvers._pcg import pcg as pcg_solve
from redmax.solvers._pcg import pcg_projected, pcg_rows, precondition_setup

__all__ = ["STATUS", "energies_at", "euler_loop"]

# status codes returned by euler_loop (with the step index and an index into the failing quantity)
OK = 0
NONFINITE_FORCE = 1  # a force wrench or generalized force (index: body * 6 + component, or n*6... see below)
NONFINITE_BLOCK = 2  # a stiffness/damping block (index: block)
NONFINITE_RHS = 3  # the right-hand side (index: DOF)
NONFINITE_MATRIX = 4  # the step matrix (index: row)
SINGULAR = 5  # the step matrix is singular (index: -1)
NONFINITE_STATE = 6  # the new state (index: DOF)
NONFINITE_INPUT = 7  # an input torque (index: DOF)
NOT_CONVERGED = 8  # the PCG solve did not meet its tolerance (index: iterations)
STATUS = {NONFINITE_FORCE: "force", NONFINITE_BLOCK: "stiffness/damping block", NONFINITE_RHS: "right-hand side",
          NONFINITE_MATRIX: "step matrix", SINGULAR: "singular step matrix", NONFINITE_STATE: "new state",
          NONFINITE_INPUT: "input torque", NOT_CONVERGED: "PCG solve"}
NKEYS = 5  # kinetic, gravity, joint_springs, springs, applied


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


class Views(NamedTuple):
    """Views of the step's float and int workspaces (one allocation each, :func:`carve`)."""

    W: np.ndarray  # kinematics workspace (see _stages.WorkLayout)
    fw: np.ndarray  # (nb, 6) applied wrenches
    fw_rhs: np.ndarray  # (nb, 6) f + D V
    bB: np.ndarray  # (cap, 6, 6) blocks h D - h^2 K
    bK: np.ndarray  # (cap, 6, 6) the forces' stiffness blocks
    bD: np.ndarray  # (cap, 6, 6) the forces' damping blocks
    fr: np.ndarray  # (n,)
    fr_rhs: np.ndarray  # (n,)
    rK: np.ndarray  # (n,) the reduced forces' stiffness diagonal
    rD: np.ndarray  # (n,) the reduced forces' damping diagonal
    rdiag: np.ndarray  # (n,) h rD - h^2 rK
    E: np.ndarray  # (5,) energies
    Y: np.ndarray  # (nb, 6) scratch
    Acc: np.ndarray  # (nb, 6) scratch
    b: np.ndarray  # (n,) right-hand side
    A: np.ndarray  # (n, n) step matrix
    x: np.ndarray  # (n,) solution
    Cv: np.ndarray  # (n, n) dc/dqd
    inc_u: np.ndarray  # (ic, 6)
    q_pre: np.ndarray  # (n,)
    qd_pre: np.ndarray  # (n,)
    scr: np.ndarray  # force scratch (ForceProgram.nscratch)
    prec: np.ndarray  # (capP, PAIR_FLOATS) pair-law records
    pv: np.ndarray  # (n, 13) pair scratch
    bpair: np.ndarray  # (cap, 2) int
    ppair: np.ndarray  # (capP, 2) int
    pd: np.ndarray  # (n,) int
    perm: np.ndarray  # (n,) int
    dep: np.ndarray  # (nb,) int
    inc_d: np.ndarray  # (ic,) int
    inc_c: np.ndarray  # (ic,) int
    head: np.ndarray  # (2n,) int
    nxt: np.ndarray  # (ic,) int
    js_pre: np.ndarray  # (nb,) int


@njit(cache=True, inline="always")
def _capacities(nblocks, nincs, npairs, nmat):
    """(blocks, incidences, pair records) the workspace holds room for."""
    if nmat == 0:  # a matrix-free solve: no assembly (its pair records become blocks, solvers._pair_blocks)
        return max(nblocks, 1), 1, max(npairs, 1)
    return max(nblocks, 1), max(nincs, 1), max(npairs, 1)


@njit(cache=True)
def workspace_sizes(nb, n, nblocks, nincs, nscratch, npairs, nmat):
    """(float size, int size) of the step workspace; ``nmat``: the size of its dense matrices A and dc/dqd (n for
    the dense solve, 0 for a matrix-free one, which needs no assembly incidence lists)."""
    cap, ic, cp = _capacities(nblocks, nincs, npairs, nmat)
    nf = (work_offsets(nb, n).size + 24 * nb + 108 * cap + 10 * n + NE + 2 * nmat * nmat + 6 * ic + nscratch
          + PAIR_FLOATS * cp + 13 * n)
    ni = 2 * cap + n + nb + 3 * ic + 2 * n + nb + 2 * cp + n
    return nf, ni


@njit(cache=True)
def carve(Ii, nblocks, nincs, nscratch, npairs, nmat, WF, WI):
    """The :class:`Views` of workspaces of :func:`workspace_sizes` (no allocation; the body depths are filled by
    :func:`init_workspace`).  The views are borrowed (``redmax._kernels.borrow``): no reference counting as they pass
    through the stages; the caller keeps WF and WI alive."""
    nb = Ii[0]
    n = Ii[1]
    cap, ic, cp = _capacities(nblocks, nincs, npairs, nmat)
    sw = work_offsets(nb, n).size
    o = 0
    W = carray(data_ptr(WF, o), sw)
    o += sw
    fw = carray(data_ptr(WF, o), (nb, 6))
    o += 6 * nb
    fw_rhs = carray(data_ptr(WF, o), (nb, 6))
    o += 6 * nb
    bB = carray(data_ptr(WF, o), (cap, 6, 6))
    o += 36 * cap
    bK = carray(data_ptr(WF, o), (cap, 6, 6))
    o += 36 * cap
    bD = carray(data_ptr(WF, o), (cap, 6, 6))
    o += 36 * cap
    fr = carray(data_ptr(WF, o), n)
    o += n
    fr_rhs = carray(data_ptr(WF, o), n)
    o += n
    rK = carray(data_ptr(WF, o), n)
    o += n
    rD = carray(data_ptr(WF, o), n)
    o += n
    rdiag = carray(data_ptr(WF, o), n)
    o += n
    E = carray(data_ptr(WF, o), NE)
    o += NE
    Y = carray(data_ptr(WF, o), (nb, 6))
    o += 6 * nb
    Acc = carray(data_ptr(WF, o), (nb, 6))
    o += 6 * nb
    b = carray(data_ptr(WF, o), n)
    o += n
    A = carray(data_ptr(WF, o), (nmat, nmat))
    o += nmat * nmat
    x = carray(data_ptr(WF, o), n)
    o += n
    Cv = carray(data_ptr(WF, o), (nmat, nmat))
    o += nmat * nmat
    inc_u = carray(data_ptr(WF, o), (ic, 6))
    o += 6 * ic
    q_pre = carray(data_ptr(WF, o), n)
    o += n
    qd_pre = carray(data_ptr(WF, o), n)
    o += n
    scr = carray(data_ptr(WF, o), nscratch)
    o += nscratch
    prec = carray(data_ptr(WF, o), (cp, PAIR_FLOATS))
    o += PAIR_FLOATS * cp
    pv = carray(data_ptr(WF, o), (n, 13))
    p = 0
    bpair = carray(data_ptr(WI, p), (cap, 2))
    p += 2 * cap
    perm = carray(data_ptr(WI, p), n)
    p += n
    dep = carray(data_ptr(WI, p), nb)
    p += nb
    inc_d = carray(data_ptr(WI, p), ic)
    p += ic
    inc_c = carray(data_ptr(WI, p), ic)
    p += ic
    nxt = carray(data_ptr(WI, p), ic)
    p += ic
    head = carray(data_ptr(WI, p), 2 * n)
    p += 2 * n
    js_pre = carray(data_ptr(WI, p), nb)
    p += nb
    ppair = carray(data_ptr(WI, p), (cp, 2))
    p += 2 * cp
    pd = carray(data_ptr(WI, p), n)
    return Views(W, fw, fw_rhs, bB, bK, bD, fr, fr_rhs, rK, rD, rdiag, E, Y, Acc, b, A, x, Cv, inc_u, q_pre, qd_pre,
                 scr, prec, pv, bpair, ppair, pd, perm, dep, inc_d, inc_c, head, nxt, js_pre)


@njit(cache=True)
def init_workspace(Ii, nblocks, nincs, nscratch, npairs, nmat, WF, WI):
    """Fill the constant parts of a fresh workspace (the body depths)."""
    v = carve(Ii, nblocks, nincs, nscratch, npairs, nmat, WF, WI)
    d = depths(Ii)
    for i in range(Ii[0]):
        v.dep[i] = d[i]


@njit(cache=True, inline="always")
def _no_reparam(code, p, q, qd, js, margin):
    """A lean model's joints never re-parameterise (see :func:`redmax._kernels.dispatch.lean_gate`)."""
    return js, False


joint_reparam_gated = lean_gate(joint_reparam, "joint_reparam_gated", stub=_no_reparam, prepend=True)


@njit(cache=True, inline="always")
def reparam_all(Ii, Ff, reparam, q, qd, js):
    """Re-parameterise the joints listed in ``reparam`` in place; True if any changed."""
    L = offsets(Ii)
    changed = False
    for r in range(reparam.shape[0]):
        i = reparam[r]
        a = Ii[L.o_idx + i]
        e = Ii[L.o_idx + i + 1]
        jo = L.f_jp + Ii[L.o_jp + i]
        je = L.f_jp + Ii[L.o_jp + i + 1]
        new, ch = joint_reparam_gated(Ii, Ii[L.o_typ + i], Ff[jo:je], q[a:e], qd[a:e], js[i], 0.0)
        if ch:
            js[i] = new
            changed = True
    return changed


@njit(cache=True)
def _assemble(pcgw, Ii, W, v, nblk, symmetric, npair):
    """The dense step matrix into ``v.A`` (nothing for the matrix-free PCG solve: ``pcgw`` not None)."""
    if pcgw is None:
        assemble_stage(Ii, W, v.bpair, v.bB, nblk, v.rdiag, symmetric, v.dep, v.inc_d, v.inc_c, v.inc_u, v.head,
                       v.nxt, v.A, v.ppair, v.prec, npair, v.pv, v.pd)


@njit(cache=True)
def _solve(pcgw, Ii, v, nblk, sym, qd):
    """Solve the step into ``v.x``: ``(piv, iterations)``; piv <= 0 when singular, -2 when PCG did not converge.
    ``pcgw``: None (dense Cholesky or LU of ``v.A``), or PCG's workspace (``PCGSolver.compiled_workspace``: tol,
    max_iter, U, Psi, Mh, work, rb_dofs, rb_off, rb_val, then the row buffers of :func:`_solve_rows` and the
    iteration counts), warm-started from the step's starting velocity."""
    if pcgw is None:
        _, piv = solve_stage(v.A, v.b, v.x, sym, v.perm)
        return piv, 0
    tol, max_iter, U, Psi, Mh, work, rbd, rbo, rbv = pcgw[:9]
    its = pcgw[18]
    if precondition_setup(Ii, v.W, v.bpair, v.bB, nblk, v.rdiag, rbd, rbo, rbv, Mh, U, Psi) >= 0:
        return 0.0, 0
    for m in range(qd.shape[0]):
        v.x[m] = qd[m]
    it, ok, _ = pcg_solve(Ii, v.W, v.bpair, v.bB, nblk, v.rdiag, rbd, rbo, rbv, U, Psi, v.b, v.x, tol, max_iter, work)
    its[0] = it
    its[its.shape[0] - 1] = 1
    return (1.0 if ok else -2.0), it


@njit(cache=True)
def _solve_rows(pcgw, cfn, CT, Ii, v, nblk, qd, t0, t1, h):
    """The constrained step with PCG (no step matrix): the rows through the constraints' C function
    (``call_rows``), one row ``qd[dep] - coef qd[src] = 0`` per coupled coordinate, the Schur complement with one
    PCG solve per row (``pcgw[-1] == 0``, :func:`redmax.solvers._pcg.pcg_rows`) or one projected PCG solve
    (``1``, :func:`redmax.solvers._pcg.pcg_projected`), the reactions (``call_reactions``).  Returns ``(piv,
    iterations)`` as :func:`_solve`."""
    (tol, max_iter, U, Psi, Mh, work, rbd, rbo, rbv, G, r, lam, Y, S, srhs, ip, jp, stmp, its, cdep, csrc, ccoef,
     mode) = pcgw
    if precondition_setup(Ii, v.W, v.bpair, v.bB, nblk, v.rdiag, rbd, rbo, rbv, Mh, U, Psi) >= 0:
        return 0.0, 0
    m = call_rows(cfn, CT, t0, t1)
    for j in range(cdep.shape[0]):
        for d in range(G.shape[1]):
            G[m + j, d] = 0.0
        G[m + j, cdep[j]] = 1.0
        G[m + j, csrc[j]] -= ccoef[j]
        r[m + j] = 0.0
    if mode == 1:
        ok, total = pcg_projected(Ii, v.W, v.bpair, v.bB, nblk, v.rdiag, rbd, rbo, rbv, U, Psi, v.b, v.x, qd, tol,
                                  max_iter, work, G, r, m + cdep.shape[0], lam, Y, S, srhs, ip, jp, stmp, its)
    else:
        ok, total = pcg_rows(Ii, v.W, v.bpair, v.bB, nblk, v.rdiag, rbd, rbo, rbv, U, Psi, v.b, v.x, qd, tol,
                             max_iter, work, G, r, m + cdep.shape[0], lam, Y, S, srhs, ip, jp, stmp, its)
    if not ok:
        return -2.0, total
    call_reactions(cfn, CT, h)
    return 1.0, total


@njit(cache=True, inline="always")
def step_core(Ii, Ff, hdr, fi, ff, symmetric, coriolis_implicit, v, q, qd, js, tau, h, cfn, CT, t0, t1, pcgw):
    """One step from the re-parameterised (q, qd, js) with input torques tau, in place; ``v.E`` holds the forces'
    energies at the start state afterwards.  ``cfn``: 0, or the address of the constrained solve (constraints and
    couplings, :func:`redmax.integrators._constrained.call_address`) with its table ``CT``, which then replaces
    the plain solve (t0, t1: the step's start and end times).  ``pcgw``: None (dense solve), or the PCG workspace
    (:func:`_solve`; the two-point springs' pair-law records then become blocks).  Returns (status,
    index); on success the index is the PCG iteration count (0 for the dense solve)."""
    nb = Ii[0]
    n = Ii[1]
    o = work_offsets(nb, n)
    W = v.W
    Rw = W[o.wR:o.wR + 9 * nb].reshape((nb, 9))
    pw = W[o.wp:o.wp + 3 * nb].reshape((nb, 3))
    Vw = W[o.wV:o.wV + 6 * nb].reshape((nb, 6))
    kinematics_stage(Ii, Ff, q, qd, js, W)
    v.fw[:, :] = 0.0
    v.fr[:] = 0.0
    v.rK[:] = 0.0
    v.rD[:] = 0.0
    v.E[:] = 0.0
    nblk, npair = eval_forces_gated(hdr, fi, ff, Rw, pw, Vw, q, qd, True, v.fw, v.bpair, v.bK, v.bD, v.fr, v.rK,
                                    v.rD, v.E, v.scr, v.ppair, v.prec, True)
    linearize_forces(-h * h, h, nblk, npair, v.bpair, v.bK, v.bD, v.bB, v.rK, v.rD, v.rdiag, v.fw, v.fw_rhs, v.fr,
                     v.fr_rhs, Vw, qd, v.ppair, v.prec)
    if pcgw is not None:  # matrix-free: the two-point springs' records as twist blocks, in closed form
        nblk = pair_blocks(v.ppair, v.prec, npair, v.bpair, v.bB, nblk)
        npair = 0
    bad = _first_nonfinite(tau)
    if bad >= 0:
        return NONFINITE_INPUT, bad
    bad = _first_nonfinite_rows(v.fw)
    if bad >= 0:
        return NONFINITE_FORCE, bad
    bad = _first_nonfinite(v.fr)
    if bad >= 0:
        return NONFINITE_FORCE, nb + bad
    rhs_stage(Ii, Ff, qd, W, h, v.fw_rhs, v.fr_rhs, tau, 1.0, v.Y, v.Acc, v.b)
    _assemble(pcgw, Ii, W, v, nblk, symmetric, npair)
    sym = symmetric
    if coriolis_implicit is not None:  # None (the compiled loop's "explicit"): this code is not even compiled
        if coriolis_implicit:
            sym = False
            bias_velocity_jacobian(Ii, Ff, W, q, qd, js, v.Cv)
            for r in range(n):
                s = 0.0
                for c in range(n):
                    v.A[r, c] += h * v.Cv[r, c]
                    s += v.Cv[r, c] * qd[c]
                v.b[r] += h * s
    iters = 0
    if cfn != 0 and pcgw is not None:  # constraints and couplings by PCG solves (no step matrix)
        piv, iters = _solve_rows(pcgw, cfn, CT, Ii, v, nblk, qd, t0, t1, h)
    elif cfn != 0:  # constraints and hyper-reduced coordinates replace the plain solve (integrators/_constrained.py)
        piv = call_solve(cfn, CT, sym, t0, t1, h)
    else:
        piv, iters = _solve(pcgw, Ii, v, nblk, sym, qd)
    if not piv > 0.0:
        bad = _first_nonfinite(v.b)
        if bad >= 0:
            return NONFINITE_RHS, bad
        if piv == -2.0:
            return NOT_CONVERGED, iters
        for t in range(nblk):
            for r in range(6):
                for c in range(6):
                    if not np.isfinite(v.bB[t, r, c]):
                        return NONFINITE_BLOCK, t
        bad = _first_nonfinite_rows(v.A)
        if bad >= 0:
            return NONFINITE_MATRIX, bad
        return SINGULAR, -1
    for m in range(n):
        qd[m] = v.x[m]
        q[m] = q[m] + h * v.x[m]
    bad = _first_nonfinite(qd)
    if bad < 0:
        bad = _first_nonfinite(q)
    if bad >= 0:
        b2 = _first_nonfinite(v.b)
        if b2 >= 0:
            return NONFINITE_RHS, b2
        return NONFINITE_STATE, bad
    return OK, iters


@njit(cache=True, nogil=True)  # rollouts run it on several Python threads at once
def euler_loop(Ii, Ff, hdr, fi, ff, nblocks, nincs, nscratch, npairs, symmetric, coriolis_implicit, reparam, inp_t,
               inp_v, inp_per_step, q, qd, js, t0, h, k0, k1, Q_out, QD_out, JS_out, E_out, cfn, CI, CF, CB, V_out,
               RE_out, WF, WI, pcgw, IT_out):
    """Run steps ``k0 .. k1-1`` from (q, qd, js) (modified in place); sample k+1 goes to row k+1 of the outputs,
    the energies of sample k to ``E_out[k]`` (and, when ``k1`` is the last step, of sample k1 too).

    Args:
        hdr, fi, ff: the force program.  nblocks, nincs, nscratch, npairs: its capacities.  symmetric: A is
            symmetric.
        coriolis_implicit: True to add ``h dc/dqd`` to A and ``h dc/dqd qd`` to b (MuJoCo's "implicit"); None for
            the explicit reference scheme (then the velocity Jacobian's code is left out of the compiled loop).
        reparam: (r,) indices of joints that may re-parameterise.
        inp_t, inp_v, inp_per_step: input table (see ``Inputs.table``); per-step rows are indexed by k.
        Q_out, QD_out (N+1, n), JS_out (N+1, nb), E_out (N+1, NE): outputs.
        cfn, CI, CF, CB: the constraints: 0 without, else the address of their solve
            (``_constrained.call_address``) and their buffers (``_constrained.pack_views``); then V_out
            (N+1, nviol) gets the constraint violation of each sample and RE_out (N+1, nreact) the reactions of
            the step ending at it.
        WF, WI: workspaces of :func:`workspace_sizes`, filled by :func:`init_workspace`.  They are owned by the
            caller on purpose: the step works on borrowed views of them, which do not keep them alive (a workspace
            allocated here would be released by Numba after its last named use, under the views).
        pcgw: None for the dense solve (the PCG code is then not compiled), or the PCG workspace (:func:`_solve`);
            then the workspaces hold no n x n matrix (``nmat`` 0) and row k of IT_out (N, s) gets the iterations
            of step k's solves (``PCGSolver.compiled_workspace``).
    Returns:
        (status, step, index): status 0 when every step succeeded.
    """
    nb = Ii[0]
    n = Ii[1]
    v = carve(Ii, nblocks, nincs, nscratch, npairs, n if pcgw is None else 0, WF, WI)
    # borrowed views of the inputs: no reference counting through the stages (see redmax._kernels.borrow)
    Ii = borrowed(Ii)
    Ff = borrowed(Ff)
    hdr = borrowed(hdr)
    fi = borrowed(fi)
    ff = borrowed(ff)
    q = borrowed(q)
    qd = borrowed(qd)
    js = borrowed(js)
    tau = np.zeros(n)
    CT = np.zeros(CALL_TABLE, np.int64)
    if cfn != 0:
        fill_call_table(CT, Ii, v.W, CI, CF, CB, v.A, v.b, v.x, q, qd, v.rdiag, v.fr_rhs, tau, v.perm)
    ip = 0  # input table pointer
    for k in range(k0, k1):
        t1 = t0 + (k + 1) * h
        # re-parameterisation (energies of sample k are those of the stored, pre-re-parameterisation state)
        changed = False
        if reparam.shape[0] > 0:
            for m in range(n):  # (element loops: no shape-checking slice assignment to compile)
                v.q_pre[m] = q[m]
                v.qd_pre[m] = qd[m]
            for m in range(nb):
                v.js_pre[m] = js[m]
            changed = reparam_all(Ii, Ff, reparam, q, qd, js)
            if changed:
                sample_energies(Ii, Ff, hdr, fi, ff, v.q_pre, v.qd_pre, v.js_pre, v.W, v.fw, v.bpair, v.bK, v.bD,
                                v.fr, v.rK, v.rD, v.E, v.scr)
                for m in range(NE):
                    E_out[k, m] = v.E[m]
        # inputs at t_{k+1}
        if inp_per_step:
            row = k
        else:
            while ip + 1 < inp_t.shape[0] and inp_t[ip + 1] <= t1:
                ip += 1
            row = ip
        for m in range(n):
            tau[m] = inp_v[row, m]
        status, idx = step_core(Ii, Ff, hdr, fi, ff, symmetric, coriolis_implicit, v, q, qd, js, tau, h, cfn, CT,
                                t0 + k * h, t1, pcgw)
        if not changed:  # the step evaluated the start state: its kinematics are still in W, its forces in E
            T, G = kinetic_gravity(Ii, Ff, v.W, 1.0)
            E_out[k, 0] = T
            E_out[k, 1] = v.E[1] + G
            for m in range(2, NE):
                E_out[k, m] = v.E[m]
        if status != OK:
            return status, k, idx
        if pcgw is not None:
            its = pcgw[18]
            for m in range(its.shape[0]):
                IT_out[k, m] = its[m]
        for m in range(n):
            Q_out[k + 1, m] = q[m]
            QD_out[k + 1, m] = qd[m]
        for m in range(nb):
            JS_out[k + 1, m] = js[m]
        if cfn != 0:  # constraints: violation of sample k, reactions of the step to k + 1
            viol = view_of(CI, CF, VIOL)
            react = view_of(CI, CF, REACT)
            for m in range(V_out.shape[1]):
                V_out[k, m] = viol[m]
            for m in range(RE_out.shape[1]):
                RE_out[k + 1, m] = react[m]
    if k1 == Q_out.shape[0] - 1:
        sample_energies(Ii, Ff, hdr, fi, ff, q, qd, js, v.W, v.fw, v.bpair, v.bK, v.bD, v.fr, v.rK, v.rD, v.E,
                        v.scr)
        for m in range(NE):
            E_out[k1, m] = v.E[m]
        if cfn != 0:  # constraints: violation of the last sample
            call_final(cfn, CT, t0 + k1 * h)
            viol = view_of(CI, CF, VIOL)
            for m in range(V_out.shape[1]):
                V_out[k1, m] = viol[m]
    return OK, k1, -1


@njit(cache=True)
def unpack_program(PI):
    """(hdr, fi, symmetric, coriolis_implicit, nblocks, nincs, nscratch, npairs, reparam) of a packed step program
    (see ``redmax.simulator``): ``PI = [nf, symmetric, coriolis, nblocks, nincs, nscratch, npairs, nrep,
    reparam..., hdr (8 nf), fi...]``."""
    nf = PI[0]
    nrep = PI[7]
    reparam = PI[8:8 + nrep]
    o = 8 + nrep
    hdr = PI[o:o + 8 * nf].reshape((nf, 8))
    fi = PI[o + 8 * nf:]
    return hdr, fi, PI[1] != 0, PI[2] != 0, PI[3], PI[4], PI[5], PI[6], reparam


@njit(cache=True)
def sim_step(Ii, Ff, PI, ff, WF, WI, X, js, tau, cfn, CT, CI, CF, CB, pcgw):
    """One step of a Simulator: ``X = [q (n), qd (n), t, h]`` and js updated in place; ``cfn, CI, CF, CB`` the
    constraints (see :func:`euler_loop`), ``CT`` the table of their solve (``CALL_TABLE`` int64), ``pcgw`` None
    (dense solve) or the PCG workspace (then ``WF`` holds no n x n matrix).  Returns (status, index)."""
    n = Ii[1]
    hdr, fi, symmetric, coriolis, nblocks, nincs, nscratch, npairs, reparam = unpack_program(PI)
    v = carve(Ii, nblocks, nincs, nscratch, npairs, n if pcgw is None else 0, WF, WI)
    Ii = borrowed(Ii)
    Ff = borrowed(Ff)
    hdr = borrowed(hdr)
    fi = borrowed(fi)
    ff = borrowed(ff)
    js = borrowed(js)
    tau = borrowed(tau)
    q = carray(data_ptr(X, 0), n)
    qd = carray(data_ptr(X, n), n)
    h = X[2 * n + 1]
    if cfn != 0:
        fill_call_table(CT, Ii, v.W, CI, CF, CB, v.A, v.b, v.x, q, qd, v.rdiag, v.fr_rhs, tau, v.perm)
    if reparam.shape[0] > 0:
        reparam_all(Ii, Ff, reparam, q, qd, js)
    status, idx = step_core(Ii, Ff, hdr, fi, ff, symmetric, coriolis, v, q, qd, js, tau, h, cfn, CT, X[2 * n],
                            X[2 * n] + h, pcgw)
    if status == OK:
        X[2 * n] = X[2 * n] + h
    return status, idx
