"""The compiled constrained solve of the Euler step: the hook ``step_core`` calls instead of the plain solve.

Per step (RedMax paper Eqs. 2 and 7), after the assembly of ``A qd1 = b`` in joint coordinates:

1. the violation of the sample (rows at ``t_k``, values only, when a target depends on time);
2. the rows at ``t_{k+1}`` (:func:`redmax.constraints._compiled.eval_rows`), ``r = -gdot - beta g``;
3. hyper-reduced coordinates: ``T^T A T``, ``T^T b``, ``G T`` (:func:`redmax.solvers._kkt.compress`);
4. the Schur-complement KKT solve on the step's Cholesky (or LU) factor (:func:`redmax.solvers._kkt.kkt_stage`),
   ``qd1 = T x``;
5. reactions ``-G^T lam / h`` (prescribed joints without their own reduced forces and torque).

Everything works on the preallocated :class:`ConsViews`; nothing allocates per step.  Only equality rows run
here (inequalities take the QP path in Python).

The compiled loops call this solve through the address of a C function (:func:`call_address`, compiled on the
first run of a constrained model), with the addresses of their arrays in a table (:func:`fill_call_table`): a loop
without constraints never compiles the constraint code.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import carray

from redmax._jit import njit
from redmax._kernels import tables
from redmax._kernels.borrow import data_ptr
from redmax._kernels.pool import call_chunk
from redmax.constraints._compiled import F_DRIVES, F_VARYING, H_CI, H_FLAGS, H_ROFF, HDR, eval_rows, reactions
from redmax.solvers._kkt import compress, expand, kkt_stage

__all__ = ["CALL_TABLE", "REACT", "VIOL", "ConsViews", "call_address", "call_reactions", "call_rows",
           "constrained_solve", "constraint_views", "coupling_rows", "fill_call_table", "final_violation",
           "make_views", "no_constraints", "pack_views", "unpack_views", "view_of"]


class ConsViews(NamedTuple):
    """The constraint program, the coupling map and the workspace of the compiled constrained solve."""

    active: bool  # constraints or couplings present
    coupled: bool
    tdep: bool  # some target depends on time
    beta: float
    hdr: np.ndarray  # (nc, HDR) int64
    ci: np.ndarray
    cf: np.ndarray
    Ejb: np.ndarray  # (nb, 12)
    wo: np.ndarray  # (5,) int64 workspace offsets (wR, wp, wS, wV, wSd)
    rmap: np.ndarray  # (n,) int64 coordinate -> DOF
    tc: np.ndarray  # (n,) coordinate factor
    indep: np.ndarray  # (n,) bool: the coordinate is a DOF itself
    viol_off: np.ndarray  # (nc+1,) int64
    G: np.ndarray  # (mcap, n)
    g: np.ndarray  # (mcap,)
    gd: np.ndarray
    ga: np.ndarray
    rk: np.ndarray  # (mcap,) int64
    WA: np.ndarray  # (mcap, 6)
    roff: np.ndarray  # (nc+1,) int64
    alpha: np.ndarray  # (nb, 6)
    lam: np.ndarray  # (mcap,)
    r: np.ndarray  # (mcap,)
    AR: np.ndarray  # (nr, nr)
    bR: np.ndarray  # (nr,)
    xR: np.ndarray  # (nr,)
    GR: np.ndarray  # (mcap, nr)
    Z: np.ndarray  # (mcap, nr)
    S: np.ndarray  # (mcap, mcap)
    y: np.ndarray  # (nr,)
    piv: np.ndarray  # (nr,) int64
    ip: np.ndarray  # (mcap,) int64
    jp: np.ndarray  # (mcap,) int64
    srhs: np.ndarray  # (mcap,)
    stmp: np.ndarray  # (mcap,)
    react: np.ndarray  # (nreact,)
    viol: np.ndarray  # (nviol,)


def make_views(prog, n: int, nb: int, wo, beta: float, dofs=None, matrix_free: bool = False) -> ConsViews:
    """Allocate the :class:`ConsViews` of a constraint program (``None``: no constraints) and a DOF layout.

    ``matrix_free``: for a solver that never forms the step matrix (PCG): the row buffers get room for one
    coupling row per dependent coordinate (:func:`coupling_rows`), and the dense scratch of the factorised solve
    (``AR``, ``GR``, ``Z``, ``S``) is left out."""
    coupled = dofs is not None and dofs.coupled
    if prog is None:
        hdr, ci, cf = np.zeros((0, HDR), np.int64), np.zeros(0, np.int64), np.zeros(0)
        Ejb, mcap, nreact, viol_off, tdep = np.zeros((nb, 12)), 1, 0, np.zeros(1, np.int64), False
    else:
        hdr, ci, cf, Ejb, mcap = prog.hdr, prog.ci, prog.cf, prog.Ejb, prog.mcap
        nreact, viol_off, tdep = prog.nreact, np.asarray(prog.viol_off, np.int64), prog.time_dependent
    if coupled:
        rmap = np.asarray(dofs.coord_dof, np.int64)
        tc = np.asarray(dofs.coord_coef, float)
        nr = int(dofs.ndof)
        indep = np.zeros(n, dtype=np.bool_)
        indep[np.asarray(dofs.dof_coord)] = True
    else:
        rmap, tc, nr, indep = np.arange(n, dtype=np.int64), np.ones(n), n, np.ones(n, dtype=np.bool_)
    nc = hdr.shape[0]
    mr = nr if coupled else 1
    mz, nz = mcap, nr  # the dense solve's scratch
    if matrix_free:
        mcap += n - nr
        mr = mz = nz = 1
    return ConsViews(
        bool(prog is not None or coupled), bool(coupled), bool(tdep), float(beta), np.ascontiguousarray(hdr),
        np.ascontiguousarray(ci), np.ascontiguousarray(cf), np.ascontiguousarray(Ejb), np.asarray(wo, np.int64),
        rmap, tc, indep, viol_off, np.zeros((mcap, n)), np.zeros(mcap), np.zeros(mcap), np.zeros(mcap),
        np.zeros(mcap, np.int64), np.zeros((mcap, 6)), np.zeros(nc + 1, np.int64), np.zeros((nb, 6)),
        np.zeros(mcap), np.zeros(mcap), np.zeros((mr, mr)), np.zeros(mr), np.zeros(mr), np.zeros((mz, nz)),
        np.zeros((mz, nz)), np.zeros((mz, mz)), np.zeros(nr), np.zeros(nr, np.int64), np.zeros(mcap, np.int64),
        np.zeros(mcap, np.int64), np.zeros(mcap), np.zeros(mcap), np.zeros(max(nreact, 1)),
        np.zeros(max(int(viol_off[-1]), 1)))


def constraint_views(model, beta: float, matrix_free: bool = False) -> ConsViews:
    """The :class:`ConsViews` of a model's equality constraints and couplings (the inactive views without any;
    ``matrix_free``: see :func:`make_views`).  Raises SimulationError for inequality constraints (they need the
    QP, in Python)."""
    from redmax._kernels.workspace import work_offsets
    from redmax.errors import SimulationError

    full = model.coordinate_model
    n, nb = full.ndof, full.nb
    if not model.constraints and model.uncoupled is None:
        return no_constraints(n, nb)
    prog = None
    if model.constraints:
        from redmax.constraints.program import program_for

        prog = program_for(full)
        if prog.has_inequality:
            raise SimulationError(f"{model.name}: inequality constraints need the QP step (simulate or euler_step), "
                                  "not the compiled stepper")
    o = work_offsets(nb, n)
    return make_views(prog, n, nb, (o.wR, o.wp, o.wS, o.wV, o.wSd), beta, model.dofs, matrix_free)


def coupling_rows(dofs):
    """``(dep, src, coef)`` int64/int64/float64 arrays: the couplings of a DOF layout as velocity rows in joint
    coordinates, ``qd[dep] - coef qd[src] = 0`` (``src`` the coordinate of the DOF that ``dep`` follows), so that a
    solver without the reduced matrix ``T^T A T`` (PCG) solves a coupled model by the Schur complement instead
    (the same solution: minimising ``1/2 x^T A x - b^T x`` over the range of T).  Empty arrays for ``None`` or an
    uncoupled layout."""
    if dofs is None or not dofs.coupled:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    cd = np.asarray(dofs.coord_dof, np.int64)
    dof_coord = np.asarray(dofs.dof_coord, np.int64)
    dep = np.setdiff1d(np.arange(cd.size), dof_coord).astype(np.int64)
    return dep, dof_coord[cd[dep]].astype(np.int64), np.asarray(dofs.coord_coef, float)[dep].copy()


def no_constraints(n: int, nb: int) -> ConsViews:
    """The inactive :class:`ConsViews` (the plain solve)."""
    return make_views(None, n, nb, np.zeros(5, np.int64), 0.0)


def pack_views(cv: ConsViews) -> tuple[ConsViews, np.ndarray, np.ndarray, np.ndarray]:
    """``(cv', CI, CF, CB)``: the same views in three flat buffers (int64, float64, bool) that
    :func:`unpack_views` turns back into a :class:`ConsViews` inside compiled code, and ``cv'`` whose arrays are
    views of those buffers (so Python reads what the kernels write).

    Why: a call from Python types every argument, and typing a 37-field named tuple costs more per call than a whole
    step of a 10-link chain, three flat arrays a small fraction of that.  ``CI`` starts with the three flags, then
    ``(offset, d0, d1)`` per array field (``d1 = -1`` for 1-D), in field order; ``CF[0]`` is ``beta``."""
    names = ConsViews._fields[4:]
    arrs = [np.ascontiguousarray(getattr(cv, k)) for k in names]
    head = 3 + 3 * len(names)
    sizes = {np.int64: head, np.float64: 1, np.bool_: 0}
    table = np.zeros(head, np.int64)
    table[:3] = (cv.active, cv.coupled, cv.tdep)
    for k, a in enumerate(arrs):
        kind = a.dtype.type
        table[3 + 3 * k:6 + 3 * k] = (sizes[kind], a.shape[0], a.shape[1] if a.ndim == 2 else -1)
        sizes[kind] += a.size
    CI = np.zeros(max(sizes[np.int64], 1), np.int64)
    CF = np.zeros(max(sizes[np.float64], 1))
    CB = np.zeros(max(sizes[np.bool_], 1), np.bool_)
    CI[:head] = table
    CF[0] = cv.beta
    buf = {np.int64: CI, np.float64: CF, np.bool_: CB}
    views = []
    for k, a in enumerate(arrs):
        o = int(table[3 + 3 * k])
        v = buf[a.dtype.type][o:o + a.size].reshape(a.shape)
        v[...] = a
        views.append(v)
    return ConsViews(cv.active, cv.coupled, cv.tdep, cv.beta, *views), CI, CF, CB


@njit(cache=True)
def _i1(CI, k):
    e = 3 + 3 * k
    return carray(data_ptr(CI, CI[e]), CI[e + 1])


@njit(cache=True)
def _i2(CI, k):
    e = 3 + 3 * k
    return carray(data_ptr(CI, CI[e]), (CI[e + 1], CI[e + 2]))


@njit(cache=True)
def _f1(CI, CF, k):
    e = 3 + 3 * k
    return carray(data_ptr(CF, CI[e]), CI[e + 1])


@njit(cache=True)
def _f2(CI, CF, k):
    e = 3 + 3 * k
    return carray(data_ptr(CF, CI[e]), (CI[e + 1], CI[e + 2]))


REACT, VIOL = 31, 32  # the fields react and viol in pack_views' buffers (array fields from beta on)


@njit(cache=True, inline="always")
def view_of(CI, CF, k):
    """Array field ``k`` (float64, 1-D) of :func:`pack_views`' buffers: ``REACT`` or ``VIOL``."""
    return _f1(CI, CF, k)


@njit(cache=True, inline="always")
def unpack_views(CI, CF, CB):
    """The :class:`ConsViews` of buffers from :func:`pack_views` (borrowed views: the caller keeps the buffers
    alive)."""
    e = 3 + 3 * 7
    indep = carray(data_ptr(CB, CI[e]), CI[e + 1])
    return ConsViews(CI[0] != 0, CI[1] != 0, CI[2] != 0, CF[0], _i2(CI, 0), _i1(CI, 1), _f1(CI, CF, 2),
                     _f2(CI, CF, 3), _i1(CI, 4), _i1(CI, 5), _f1(CI, CF, 6), indep, _i1(CI, 8), _f2(CI, CF, 9),
                     _f1(CI, CF, 10), _f1(CI, CF, 11), _f1(CI, CF, 12), _i1(CI, 13), _f2(CI, CF, 14), _i1(CI, 15),
                     _f2(CI, CF, 16), _f1(CI, CF, 17), _f1(CI, CF, 18), _f2(CI, CF, 19), _f1(CI, CF, 20),
                     _f1(CI, CF, 21), _f2(CI, CF, 22), _f2(CI, CF, 23), _f2(CI, CF, 24), _f1(CI, CF, 25),
                     _i1(CI, 26), _i1(CI, 27), _i1(CI, 28), _f1(CI, CF, 29), _f1(CI, CF, 30), _f1(CI, CF, 31),
                     _f1(CI, CF, 32))


@njit(cache=True)
def _violation(cv, m):
    """The violation columns from the current rows: g (equalities), max(c, 0) (inequalities); one column, the
    largest, for a varying row set."""
    nc = cv.hdr.shape[0]
    for c in range(nc):
        o = cv.viol_off[c]
        ncol = cv.viol_off[c + 1] - o
        r0 = cv.roff[c]
        r1 = cv.roff[c + 1]
        if cv.hdr[c, H_FLAGS] & F_VARYING:
            v = 0.0
            for r in range(r0, r1):
                v = max(v, cv.g[r])
            cv.viol[o] = v
            continue
        for k in range(ncol):
            r = r0 + k
            if r < r1:
                cv.viol[o + k] = cv.g[r] if cv.rk[r] == 0 else max(cv.g[r], 0.0)


@njit(cache=True, inline="always")
def rows_stage(Ii, W, cv, q, qd, t0, t1):
    """Steps 1-2 of the module docstring: the violation at ``t0`` into ``cv.viol``, the rows at ``t1`` into
    ``cv.G`` and their right-hand sides ``r = -gdot - beta g`` into ``cv.r``.  Returns the row count m."""
    m = 0
    if cv.hdr.shape[0] > 0:
        if cv.tdep:
            m = eval_rows(cv.hdr, cv.ci, cv.cf, Ii, W, cv.wo, cv.Ejb, q, qd, t0, 2, cv.G, cv.g, cv.gd, cv.ga, cv.rk,
                          cv.WA, cv.roff, cv.alpha)
            _violation(cv, m)
        m = eval_rows(cv.hdr, cv.ci, cv.cf, Ii, W, cv.wo, cv.Ejb, q, qd, t1, 0, cv.G, cv.g, cv.gd, cv.ga, cv.rk,
                      cv.WA, cv.roff, cv.alpha)
        if not cv.tdep:
            _violation(cv, m)
        for k in range(m):
            cv.r[k] = -cv.gd[k] - cv.beta * cv.g[k]
    return m


@njit(cache=True, inline="always")
def reactions_stage(Ii, W, cv, x, h, rdiag, fr_rhs, tau):
    """Step 5 of the module docstring from the multipliers in ``cv.lam`` and the solution ``x`` (joint
    coordinates): ``cv.react``."""
    if cv.hdr.shape[0] == 0:
        return
    reactions(cv.hdr, cv.ci, W, cv.wo[0], cv.wo[1], cv.Ejb, cv.G, cv.WA, cv.roff, cv.lam, h, cv.react)
    for c in range(cv.hdr.shape[0]):  # prescribed joints: without their own reduced forces and torque
        if not cv.hdr[c, H_FLAGS] & F_DRIVES:
            continue
        io = cv.hdr[c, H_CI]
        ro = cv.hdr[c, H_ROFF]
        for j in range(cv.ci[io]):
            d = cv.ci[io + 1 + j]
            if cv.indep[d]:
                cv.react[ro + j] += -rdiag[d] * x[d] / h + fr_rhs[d] + tau[d]


@njit(cache=True, inline="always")
def constrained_solve(Ii, W, cv, A, b, x, symmetric, q, qd, t0, t1, h, rdiag, fr_rhs, tau, perm):
    """Steps 1-5 of the module docstring; ``x`` gets ``qd1`` (joint coordinates), ``cv.react`` the reactions and
    ``cv.viol`` the violation at ``t0``.  Returns the relative pivot of the step matrix (<= 0: singular)."""
    m = rows_stage(Ii, W, cv, q, qd, t0, t1)
    if cv.coupled:
        compress(A, b, cv.G, m, cv.rmap, cv.tc, cv.AR, cv.bR, cv.GR)
        _, piv, _ = kkt_stage(cv.AR, cv.bR, cv.xR, symmetric, cv.GR, cv.r, m, cv.lam, cv.Z, cv.S, cv.y, cv.piv, cv.ip,
                              cv.jp, cv.srhs, cv.stmp)
        if not piv > 0.0:
            return piv
        expand(cv.xR, cv.rmap, cv.tc, x)
    else:
        _, piv, _ = kkt_stage(A, b, x, symmetric, cv.G, cv.r, m, cv.lam, cv.Z, cv.S, cv.y, perm, cv.ip, cv.jp,
                              cv.srhs, cv.stmp)
        if not piv > 0.0:
            return piv
    reactions_stage(Ii, W, cv, x, h, rdiag, fr_rhs, tau)
    return piv


@njit(cache=True)
def final_violation(Ii, W, cv, q, qd, t):
    """The violation at the last sample (its kinematics in W)."""
    if cv.hdr.shape[0] == 0:
        return
    m = eval_rows(cv.hdr, cv.ci, cv.cf, Ii, W, cv.wo, cv.Ejb, q, qd, t, 2, cv.G, cv.g, cv.gd, cv.ga, cv.rk, cv.WA,
                  cv.roff, cv.alpha)
    _violation(cv, m)


# the call table of the C function (int64 entries): the arrays of fill_call_table as (address, shape...), then
# the step's numbers and the result
_T_SYM, _T_T0, _T_T1, _T_H, _T_PIV, _T_M = 29, 30, 31, 32, 33, 34
CALL_TABLE = 35  # entries
# what a call does: the step's solve; the violation at the last sample; for a solver that does not factorise A
# (PCG), the rows of the step alone, then the reactions from the multipliers it found
OP_SOLVE, OP_FINAL, OP_ROWS, OP_REACT = 0, 1, 2, 3


@njit(cache=True, inline="always")
def fill_call_table(T, Ii, W, CI, CF, CB, A, b, x, q, qd, rdiag, fr_rhs, tau, perm):
    """Write the arrays of a loop's constrained solve into the table ``T`` (``CALL_TABLE`` int64 entries), once
    per loop: the arrays keep their addresses while the loop runs.  ``CI, CF, CB``: buffers of
    :func:`pack_views`."""
    k = tables.put(T, 0, Ii)
    k = tables.put(T, k, W)
    k = tables.put(T, k, CI)
    k = tables.put(T, k, CF)
    k = tables.put(T, k, CB)
    k = tables.put(T, k, A)
    k = tables.put(T, k, b)
    k = tables.put(T, k, x)
    k = tables.put(T, k, q)
    k = tables.put(T, k, qd)
    k = tables.put(T, k, rdiag)
    k = tables.put(T, k, fr_rhs)
    k = tables.put(T, k, tau)
    tables.put(T, k, perm)


@njit(cache=True, inline="always")
def call_solve(fn, T, symmetric, t0, t1, h):
    """The constrained solve of one step through the C function at ``fn`` (table ``T`` filled by
    :func:`fill_call_table`): the relative pivot of :func:`constrained_solve`."""
    T[_T_SYM] = 1 if symmetric else 0
    tables.put_float(T, _T_T0, t0)
    tables.put_float(T, _T_T1, t1)
    tables.put_float(T, _T_H, h)
    call_chunk(fn, T.ctypes.data, OP_SOLVE)
    return tables.take_float(T, _T_PIV)[0]


@njit(cache=True, inline="always")
def call_final(fn, T, t):
    """:func:`final_violation` at time ``t`` through the C function at ``fn``."""
    tables.put_float(T, _T_T1, t)
    call_chunk(fn, T.ctypes.data, OP_FINAL)


@njit(cache=True, inline="always")
def call_rows(fn, T, t0, t1):
    """:func:`rows_stage` through the C function at ``fn``: the row count m (rows and right-hand sides in the
    views of :func:`pack_views`)."""
    tables.put_float(T, _T_T0, t0)
    tables.put_float(T, _T_T1, t1)
    call_chunk(fn, T.ctypes.data, OP_ROWS)
    return T[_T_M]


@njit(cache=True, inline="always")
def call_reactions(fn, T, h):
    """:func:`reactions_stage` through the C function at ``fn`` (multipliers in the views' ``lam``, the solution in
    the table's ``x``)."""
    tables.put_float(T, _T_H, h)
    call_chunk(fn, T.ctypes.data, OP_REACT)


@tables.chunk_function
def _call(ctx, op):
    """The C function of the loops: ``op`` is OP_SOLVE or OP_FINAL, the arrays and numbers are in the table at
    ``ctx``."""
    T = tables.table_of(ctx, CALL_TABLE)
    Ii, k = tables.take1_ro(T, 0, np.int64)
    W, k = tables.take1(T, k, np.float64)
    CI, k = tables.take1(T, k, np.int64)
    CF, k = tables.take1(T, k, np.float64)
    CB, k = tables.take1(T, k, np.bool_)
    A, k = tables.take2(T, k, np.float64)
    b, k = tables.take1(T, k, np.float64)
    x, k = tables.take1(T, k, np.float64)
    q, k = tables.take1(T, k, np.float64)
    qd, k = tables.take1(T, k, np.float64)
    rdiag, k = tables.take1(T, k, np.float64)
    fr_rhs, k = tables.take1(T, k, np.float64)
    tau, k = tables.take1(T, k, np.float64)
    perm, k = tables.take1(T, k, np.int64)
    cv = unpack_views(CI, CF, CB)
    t1 = tables.take_float(T, _T_T1)[0]
    if op == OP_FINAL:
        final_violation(Ii, W, cv, q, qd, t1)
        return
    if op == OP_ROWS:
        T[_T_M] = rows_stage(Ii, W, cv, q, qd, tables.take_float(T, _T_T0)[0], t1)
        return
    if op == OP_REACT:
        reactions_stage(Ii, W, cv, x, tables.take_float(T, _T_H)[0], rdiag, fr_rhs, tau)
        return
    piv = constrained_solve(Ii, W, cv, A, b, x, T[_T_SYM] != 0, q, qd, tables.take_float(T, _T_T0)[0], t1,
                            tables.take_float(T, _T_H)[0], rdiag, fr_rhs, tau, perm)
    tables.put_float(T, _T_PIV, piv)


def call_address(active: bool) -> int:
    """The address of the loops' constrained solve (compiled, or loaded from the cache, on the first call with
    ``active``); 0 without constraints (the plain solve)."""
    return _call.address if active else 0
