"""Second-order derivatives of inverse dynamics: IDSVA-SO (Singh, Russell & Wensing, "On Second-Order Derivatives
of Rigid-Body Dynamics: Theory & Implementation", Alg. 1 of App. C).

Tensors (n, n, n), the convention of Pinocchio's ``d2tau_dqdv``: ``d2tau_dq2[i, j, k] = d/dq_k (dtau_i/dq_j)``,
``d2tau_dqd2[i, j, k] = d/dqd_k (dtau_i/dqd_j)``, ``d2tau_dqdqd[i, j, k] = d/dqd_k (dtau_i/dq_j)`` (q on axis 1, qd
on axis 2) and ``dM_dq[i, j, k] = dM_ij/dq_k``.

Alg. 1 runs on the core tree (:mod:`.core_tree`: joints with constant local motion subspaces; derivatives with
respect to configuration are the Lie derivatives ``L_k L_j tau`` of the paper, Eqs. 16-17) in the world frame
(:mod:`.second_order_walk`), its joints in chunks on redmax's threads; the model's own coordinates follow by the
chain rule, in place where core and model indices coincide (:mod:`.second_order_chain_in_place`), else into new
tensors (:mod:`.second_order_chain`).  Here: the call, its tensors and its threads.

Tensors.  Entries that are zero by the tree structure (DOF triples not on one root path, §IV-F, and ``dM_ij/dq_k``
for a joint k above both i and j) are never written.  A call without ``out=`` returns read-only views of one
(4, n, n, n) block: a new zeroed one, or the block of one of the model's two previous calls when the caller holds
no reference to it and has not made it writeable (its structural zeros are then still zero), so that a loop of
calls neither allocates nor zeroes 4 n^3 doubles.  ``out=`` tensors must hold zeros there (checked on a sample),
except where a chain rule follows: the general one writes every entry, and for the in-place one they are zeroed
first (:func:`.second_order_walk.zero_unwritten`), so that they may hold anything.
"""

from __future__ import annotations

import threading
from sys import getrefcount

import numpy as np
from numba import typeof

from redmax._jit import FAST, njit
from redmax._kernels.pool import call_chunk, pool_for, pool_run, run_chunks
from redmax._kernels.tables import alive
from redmax.derivatives.core_tree import core_structure
from redmax.derivatives.second_order_chain import (
    CHAIN_CHUNK,
    SUB_TABLE,
    TABLE,
    block_dofs,
    block_size,
    chain_second_order,
    put_chain,
)
from redmax.derivatives.second_order_chain_in_place import (
    IN_PLACE_CHUNK,
    ROW3_CHUNK,
    ROW_CHUNK,
    SLAB3_CHUNK,
    SLAB_CHUNK,
)
from redmax.derivatives.second_order_walk import (
    MIRROR_CHUNK,
    WALK_CHUNK,
    ZERO_CHUNK,
    plan,
    put_walk,
    setup,
    single_path,
    walk_serial,
)
from redmax.dynamics.rnea import check_inputs
from redmax.errors import ModelError
from redmax.model.layout import NO_FEXT

__all__ = ["rnea_second_order_derivatives"]

_F64 = np.dtype(np.float64)
NAMES = ("d2tau_dq2", "d2tau_dqd2", "d2tau_dqdqd", "dM_dq")
# the largest block (4 n^3 doubles, n <= 161: 128 MB) a model keeps (two) for its next calls; a fresh block of that
# size costs more in page faults than the walk of a sparse tree costs (binary tree of 127: 20-27 ms against 0.3 ms)
POOL_BYTES = 1 << 27
MIN_THREADED_DOFS = 12  # fewer core DOFs: one thread (too little work to share)
PROBES = 16  # entries per tensor of out= checked for zero
_CORE, _IN_PLACE, _GENERAL = 0, 1, 2  # how the model's coordinates follow from the core's


# ------------------------------------------------------------------------------------------------------------
# the compiled call


@njit(cache=True, nogil=True, fastmath=FAST)
def second_order(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, rel, cj, starts, mstarts, probes, d2q, d2v,
                 d2qv, dM, R2q, R2v, R2qv, RM, T, ctl, helpers, fns):
    """Alg. 1 into the core tensors ``d2q, d2v, d2qv, dM`` (ncd, ncd, ncd), then the chain rule into the results
    ``R2q, R2v, R2qv, RM`` (n, n, n; the core tensors themselves when the model's coordinates are the core's or
    align with them), float64.  ``rel, cj, starts, mstarts``: the plan (:func:`.second_order_walk.plan`);
    ``probes`` (4, p): flat indices of entries of the results that must hold zero (``out=``; -1 pads); ``T``
    (TABLE + SUB_TABLE + 1,) int64 scratch for the chunk tables; ``ctl``, ``helpers``: the pool
    (:func:`redmax._kernels.pool.pool_for`); ``fns``: the addresses of the walk, mirror and chain chunk functions,
    of the chain rule's own (slab, row) and of the zeroing before the walk, 0 where not used.  Returns -1, or k when
    ``R[k]`` has a non-zero entry at a probe (nothing computed).  Raises ValueError for bad inputs or a singular
    joint map."""
    for k in range(4):
        R = (R2q, R2v, R2qv, RM)[k].reshape(-1)
        for i in probes[k]:
            if i >= 0 and R[i] != 0.0:
                return k
    check_inputs(Ii, q, qd, qdd, jstate, f_body)
    nb = Ii[0]
    W, CD = setup(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent)
    chain = CI[2] != 1
    nf = CI[1] if chain else 0
    tau = np.zeros(nf)
    Tq = np.zeros((nf, nf))
    Tv = np.zeros((nf, nf))
    Mc = np.zeros((nf, nf))
    need = block_dofs(Ii, CI, tangent)
    owned = not single_path(CI)
    put_walk(T, CI, W, CD, starts, need, rel, cj, mstarts, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, nb, chain, owned)
    if fns[5] != 0:  # out= of the in-place chain rule: zeroed where the walk writes nothing
        pool_run(ctl, fns[5], T.ctypes.data, mstarts.shape[0] - 1, helpers)
    pool_run(ctl, fns[0], T.ctypes.data, starts.shape[0] - 1, helpers)
    if not owned:  # chains: the mirror after the walk
        pool_run(ctl, fns[1], T.ctypes.data, mstarts.shape[0] - 1, helpers)
    if chain:
        status = T[TABLE + SUB_TABLE:]
        status[0] = 0
        put_chain(T, Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, d2q, d2v, d2qv, dM, R2q, R2v, R2qv,
                  RM, ctl, helpers, 2 * (starts.shape[0] - 1), fns[3:5], T[TABLE:TABLE + SUB_TABLE],
                  status)  # (status: 1 if the chain rule failed)
        run_chunks(fns[2], T.ctypes.data, 1)
        if status[0] != 0:
            raise ValueError("singular joint map")
    return -1 + 0 * (alive(W) + alive(CD) + alive(tau) + alive(Tq) + alive(Tv) + alive(Mc) + alive(need))


# ------------------------------------------------------------------------------------------------------------
# per model and mode


class _Record:
    """What the calls of one model and mode share: its packed arrays, core structure, plans, the addresses of the
    chunk functions it needs, the sample of ``out=`` entries that must be zero and the two recyclable blocks."""

    def __init__(self, model, tangent: bool):
        self.Ii, self.Ff = model.packed
        self.CI = core_structure(model, tangent)
        self.tangent = bool(tangent)
        self.n = model.ndof
        self.ncd = int(self.CI[1])
        self.nb = model.nb
        if self.CI[2] == 1:
            self.kind = _CORE
        elif self.CI[3] == 1 and self.ncd == self.n:
            self.kind = _IN_PLACE
        else:
            self.kind = _GENERAL
        self.js0 = np.array(model.jstate0, dtype=np.int64)  # writeable: one compiled type for every call
        self.plans: dict = {}
        self.fns: np.ndarray | None = None
        self.probes: np.ndarray | None = None
        self.blocks = [None, None]
        self.next = 0
        self.lock = threading.Lock()
        self.entry = None  # the compiled entry point of second_order for the lean call's argument types

    def plan(self, nchunks: int) -> tuple:
        P = self.plans.get(nchunks)
        if P is None:
            P = self.plans[nchunks] = plan(self.CI, self.nb, nchunks)
        return P

    def functions(self, model) -> np.ndarray:
        """The chunk functions' addresses (compiled on first use: only what this model needs)."""
        if self.fns is None:
            f = [WALK_CHUNK.address, 0 if not single_path(self.CI) else MIRROR_CHUNK.address, 0, 0, 0, 0]
            if self.kind == _IN_PLACE:
                three = block_size(model, self.CI, self.tangent) == 3
                f[2:5] = [IN_PLACE_CHUNK.address, (SLAB3_CHUNK if three else SLAB_CHUNK).address,
                          (ROW3_CHUNK if three else ROW_CHUNK).address]
            elif self.kind == _GENERAL:
                f[2] = CHAIN_CHUNK.address
            self.fns = np.array(f, dtype=np.int64)
            self.fns_out = self.fns.copy()
            if self.kind == _IN_PLACE:
                self.fns_out[5] = ZERO_CHUNK.address
        return self.fns

    def out_probes(self) -> np.ndarray:
        """(4, PROBES) flat indices of entries the results always hold zero (-1 pads): DOF triples not on one root
        path and ``dM_ij/dq_k`` with joint k above both i and j; none where a chain rule follows (the general one
        writes every entry; ``out=`` of the in-place one is zeroed where the walk writes nothing, as it may hold
        anything)."""
        if self.probes is None:
            P = np.full((4, PROBES), -1, dtype=np.int64)
            if self.kind == _CORE:
                rel, cj = self.plan(1)[:2]
                rel = rel.astype(bool)
                triple = rel[:, :, None] & rel[:, None, :] & rel[None, :, :]
                above = (cj[None, None, :] <= cj[:, None, None]) & (cj[None, None, :] <= cj[None, :, None])
                zero_dm = ~triple | above
                for k, mask in enumerate((~triple, ~triple, ~triple, zero_dm)):
                    idx = np.flatnonzero(mask)
                    if idx.size:
                        idx = np.unique(idx[np.linspace(0, idx.size - 1, PROBES).astype(np.int64)])
                        P[k, :idx.size] = idx
            self.probes = P
        return self.probes


def _record(model, tangent: bool) -> _Record:
    from redmax.dynamics._single_call import model_table

    table = model_table(model)
    key = ("second_order", bool(tangent))
    rec = table.get(key)
    if rec is None:
        rec = table[key] = _Record(model, tangent)
    return rec


def _threads(rec: _Record, threads, model) -> tuple:
    """``(ctl, helpers, nchunks)`` for a call on ``threads`` threads (None: :func:`redmax.get_num_threads`): one
    chunk on the calling thread for fewer than ``MIN_THREADED_DOFS`` core DOFs, else two chunks per thread."""
    ctl, helpers = pool_for(threads, f"{model.name}: rnea_second_order_derivatives: ")
    if helpers == 0 or rec.ncd < MIN_THREADED_DOFS:
        return ctl, 0, 1
    return ctl, helpers, min(int(rec.CI[0]), 2 * (helpers + 1))


def _refs(blocks: list, s: int) -> int:
    """``sys.getrefcount`` of ``blocks[s]`` as seen from here."""
    B = blocks[s]
    return getrefcount(B)


_SOLE = _refs([object()], 0)  # the same count for an object only the list holds (the interpreter's own rule)


def _take_block(rec: _Record, n: int) -> np.ndarray:
    """A (4, n, n, n) block zero wherever the walk writes nothing: one of the record's two when nothing else refers
    to it (no tensor, view or base array the caller kept) and it is still read-only (the caller never made it
    writeable, so its structural zeros are intact), else a new zeroed one."""
    with rec.lock:
        for s in (0, 1):
            if rec.blocks[s] is not None and _refs(rec.blocks, s) == _SOLE and not rec.blocks[s].flags.writeable:
                B = rec.blocks[s]
                rec.blocks[s] = None  # (taken: a concurrent call cannot take it too)
                B.flags.writeable = True  # (ours again while the kernel fills it: one compiled type for every call)
                return B
    return np.zeros((4, n, n, n))


def _give_back(rec: _Record, B: np.ndarray) -> None:
    """Keep the block ``B`` of a finished call (read-only now) for a later call: in a free slot, else in place of
    the one kept longer ago (blocks of up to ``POOL_BYTES``)."""
    B.flags.writeable = False
    if B.nbytes <= POOL_BYTES:
        with rec.lock:
            s = 0 if rec.blocks[0] is None else 1 if rec.blocks[1] is None else rec.next
            rec.blocks[s] = B
            rec.next = 1 - s


def _views(B) -> tuple:
    return B[0], B[1], B[2], B[3]


def _check_out(model, out, n: int) -> tuple:
    return check_out_tensors(model, out, n, "rnea_second_order_derivatives", NAMES)


def check_out_tensors(model, out, n: int, fn: str, names: tuple) -> tuple:
    """The caller's ``out`` of the second-order function ``fn``: four float64, C-contiguous, writeable (n, n, n)
    arrays, no two sharing memory (the kernels would write one tensor over another); a ModelError naming the first
    that is not (``names``: the four tensors')."""
    from redmax.dynamics import _out

    if not (isinstance(out, tuple | list) and len(out) == 4):
        raise ModelError(f"{model.name}: {fn}: out must be a tuple of four arrays ({', '.join(names)}), got "
                         f"{type(out).__name__}")
    shape = (n, n, n)
    for k, o in enumerate(out):
        if not (type(o) is np.ndarray and o.shape == shape and o.dtype == _F64 and o.flags.c_contiguous
                and o.flags.writeable):
            _out(model, o, shape, f"{fn}: out[{k}] ({names[k]})")  # raises if invalid
    for a in range(3):
        for b in range(a + 1, 4):
            if np.may_share_memory(out[a], out[b]):
                raise ModelError(f"{model.name}: {fn}: out[{a}] ({names[a]}) and out[{b}] ({names[b]}) share "
                                 "memory; pass four separate arrays")
    return tuple(out)


def _nonzero_out(model, k: int) -> ModelError:
    return ModelError(f"{model.name}: rnea_second_order_derivatives: out[{k}] ({NAMES[k]}) has non-zero entries "
                      "where the tree structure makes the derivatives zero; those entries are not written: pass "
                      "zeroed arrays (np.zeros) or the unmodified results of a previous call")


_NO_PROBES = np.full((4, 0), -1, dtype=np.int64)


def _run(model, rec: _Record, q, qd, qdd, js, fb, g, out, threads, checked: bool, plan_=None):
    """The float64 call (module docstring for the tensors); None on the lean path when the kernel rejects the
    inputs (the caller then takes the checked path, which names the problem).  ``plan_``: ``(ctl, helpers,
    nchunks)`` instead of the plan for ``threads`` (:func:`run_plan`)."""
    ctl, helpers, nchunks = _threads(rec, threads, model) if plan_ is None else plan_
    rel, cj, starts, mstarts = rec.plan(nchunks)
    fns = rec.functions(model)
    n, ncd = rec.n, rec.ncd
    block = None
    if out is None:
        block = _take_block(rec, n)
        res = _views(block)
        probes = _NO_PROBES
    else:
        res = out
        probes = rec.out_probes()
        fns = rec.fns_out
    core = res if rec.kind != _GENERAL else _views(np.zeros((4, ncd, ncd, ncd)))
    T = np.empty(TABLE + SUB_TABLE + 1, dtype=np.int64)
    args = (rec.Ii, rec.Ff, rec.CI, q, qd, qdd, js, fb, g, rec.tangent, rel, cj, starts, mstarts, probes, *core, *res,
            T, ctl, helpers, fns)
    if checked:
        from redmax.derivatives.rnea_first_order import run_checked

        k = run_checked(model, second_order, *args)
    else:
        if rec.entry is None:  # (every lean call has these argument types: the dispatcher's match skipped)
            from redmax.dynamics._single_call import entry_point

            rec.entry = entry_point(second_order, tuple(typeof(a) for a in args))
        try:
            k = rec.entry(*args)
        except (ValueError, ZeroDivisionError):
            return None
    if k >= 0:
        raise _nonzero_out(model, k)
    if block is not None:
        for r in res:
            r.flags.writeable = False
        _give_back(rec, block)
    return tuple(res)


def run_plan(model, tangent: bool, q, qd, qdd, nchunks: int, helpers: int = 0, f_ext=None, out=None,
             general: bool = False, zero: bool = True) -> tuple:
    """The tensors of a float64 call (gravity, the initial charts) on an explicit plan, for the tests: ``nchunks``
    chunks of the walk (and ``2 nchunks`` of the in-place chain rule's slabs and rows) on the calling thread and
    at most ``helpers`` workers, into ``out`` (default new zeroed arrays, not checked); with ``general`` the
    general chain rule (new arrays) instead of the in-place one; without ``zero`` no zeroing of ``out`` before the
    walk (for the in-place chain rule)."""
    rec = _record(model, tangent)
    ctl = pool_for(helpers + 1)[0]
    n, ncd = rec.n, rec.ncd
    rel, cj, starts, mstarts = rec.plan(nchunks)
    fns = rec.functions(model).copy()
    res = tuple(np.zeros((n, n, n)) for _ in range(4)) if out is None else out
    core = res
    if general and rec.kind != _CORE:
        fns[2:] = [CHAIN_CHUNK.address, 0, 0, 0]
        core = tuple(np.zeros((ncd, ncd, ncd)) for _ in range(4))
    elif rec.kind == _GENERAL:
        core = tuple(np.zeros((ncd, ncd, ncd)) for _ in range(4))
    elif zero and rec.kind == _IN_PLACE:
        fns[5] = ZERO_CHUNK.address
    fb = NO_FEXT if f_ext is None else np.array(f_ext, dtype=float)
    fb.flags.writeable = False  # (the type of every call)
    args = (rec.Ii, rec.Ff, rec.CI, np.array(q, dtype=float), np.array(qd, dtype=float), np.array(qdd, dtype=float),
            rec.js0, fb, 1.0, rec.tangent, rel, cj, starts, mstarts, _NO_PROBES, *core, *res,
            np.empty(TABLE + SUB_TABLE + 1, dtype=np.int64), ctl, helpers, fns)
    assert second_order(*args) == -1
    return res


def run_one_chunk(model, tangent: bool, q, qd, qdd, nchunks: int, c: int, core) -> None:
    """Chunk ``c`` of the walk on a plan of ``nchunks`` alone (with, on trees, its mirror), into the four core
    tensors ``core`` (float64, gravity, no wrenches, the initial charts): the tests' handle on one chunk."""
    rec = _record(model, tangent)
    _one_chunk(rec.Ii, rec.Ff, rec.CI, np.array(q, dtype=float), np.array(qd, dtype=float),
               np.array(qdd, dtype=float), rec.js0, NO_FEXT, 1.0, rec.tangent, *rec.plan(nchunks), *core,
               np.empty(TABLE + SUB_TABLE + 1, dtype=np.int64), WALK_CHUNK.address, c)


@njit(cache=True, fastmath=FAST)
def _one_chunk(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, rel, cj, starts, mstarts, d2q, d2v, d2qv,
               dM, T, fn, c):
    W, CD = setup(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent)
    chain = CI[2] != 1
    nf = CI[1] if chain else 0
    tau = np.zeros(nf)
    Tq = np.zeros((nf, nf))
    Tv = np.zeros((nf, nf))
    Mc = np.zeros((nf, nf))
    need = block_dofs(Ii, CI, tangent)
    put_walk(T, CI, W, CD, starts, need, rel, cj, mstarts, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc, Ii[0], chain,
             not single_path(CI))
    call_chunk(fn, T.ctypes.data, c)
    return alive(W) + alive(CD) + alive(tau) + alive(Tq) + alive(Tv) + alive(Mc) + alive(need)


def _complex_call(model, rec: _Record, q, qd, qdd, js, fb, g):
    """Any other scalar type (complex step): Alg. 1 on the calling thread, the general chain rule; new arrays."""
    from redmax.derivatives.rnea_first_order import run_checked
    from redmax.derivatives.second_order_walk import related_dofs

    CI, Ii, Ff = rec.CI, rec.Ii, rec.Ff
    ncd, n, dt = rec.ncd, rec.n, q.dtype
    core = tuple(np.zeros((ncd, ncd, ncd), dtype=dt) for _ in range(4))
    rel = related_dofs(CI, rec.nb)
    cj = rec.plan(1)[1]
    chain = CI[2] != 1
    run_checked(model, check_inputs, Ii, q, qd, qdd, js, fb)
    fo = run_checked(model, walk_serial, Ii, Ff, CI, q, qd, qdd, js, fb, g, rec.tangent, chain,
                     np.ones(ncd, dtype=np.uint8), rel, cj, *core)
    if not chain:
        res = core
    else:
        res = tuple(np.zeros((n, n, n), dtype=dt) for _ in range(4))
        run_checked(model, chain_second_order, Ii, Ff, CI, q, qd, qdd, js, rec.tangent, *fo, *core, *res)
    for r in res:
        r.flags.writeable = False
    return res


def rnea_second_order_derivatives(model, q, qd, qdd, f_ext=None, jstate=None, gravity: bool = True,
                                  tangent: bool = False, *, out=None, threads=None):
    """Second-order derivatives of inverse dynamics (IDSVA-SO; module docstring for the conventions).

    Args:
        q, qd, qdd: (ndof,) coordinates, rates and accelerations (real or complex).
        f_ext: optional (nb, 6) external wrenches (body frames, angular first, as :func:`redmax.rnea`).
        jstate: (nb,) chart words; default the model's initial charts.
        gravity: include the model's gravity.
        tangent: body-twist coordinates for spherical and free joints (see :func:`redmax.rnea_derivatives`).
        out: optional four float64 C-contiguous (ndof, ndof, ndof) arrays to fill and return (float64 inputs),
            as Pinocchio fills the tensors of its ``Data``: entries that are zero by the tree structure (DOF
            triples not on one root path: branch-induced sparsity) are not written, so pass zeroed arrays
            (``np.zeros``) or the unmodified results of a previous call on the same model; a non-zero value in
            such an entry raises ModelError (checked on a sample of them).  Saves allocating 4 n^3 doubles per
            call (e.g. in a DDP loop).
        threads: threads of the call (default None: :func:`redmax.get_num_threads`; 1: the calling thread only).
            The tensors do not depend on it.
    Returns:
        ``(d2tau_dq2, d2tau_dqd2, d2tau_dqdqd, dM_dq)``, each (ndof, ndof, ndof):
        ``d2tau_dq2[i, j, k] = d/dq_k (dtau_i/dq_j)``, ``d2tau_dqd2[i, j, k] = d/dqd_k (dtau_i/dqd_j)``,
        ``d2tau_dqdqd[i, j, k] = d/dqd_k (dtau_i/dq_j)``, ``dM_dq[i, j, k] = dM_ij/dq_k``.  In the model's own
        coordinates ``d2tau_dq2`` is symmetric in (j, k); with ``tangent=True`` the blocks of a spherical or
        free joint are not (rotations do not commute: Singh et al. §II).  Without ``out`` the four tensors are
        read-only views of one (4, ndof, ndof, ndof) block (``.copy()`` them to change them, or pass ``out``):
        the block of one of the model's two previous calls when the caller holds no reference to it (so a loop of
        calls allocates nothing), else a new one.
    """
    if (f_ext is None and jstate is None and gravity is True and (tangent is False or tangent is True)
            and type(q) is np.ndarray and type(qd) is np.ndarray and type(qdd) is np.ndarray
            and q.dtype == _F64 and qd.dtype == _F64 and qdd.dtype == _F64 and q.ndim == 1 and qd.ndim == 1
            and qdd.ndim == 1 and q.flags.carray and qd.flags.carray and qdd.flags.carray):
        rec = _record(model, tangent) if hasattr(model, "packed") and not model.chart_joints.size else None
        if rec is not None:
            if out is not None:
                out = _check_out(model, out, rec.n)
            res = _run(model, rec, q, qd, qdd, rec.js0, NO_FEXT, 1.0, out, threads, checked=False)
            if res is not None:
                return res
    from redmax.dynamics import _arrays, _fext, _gscale, _js, _model

    model = _model(model, "rnea_second_order_derivatives")
    if tangent is not True and tangent is not False:
        raise ModelError(f"{model.name}: rnea_second_order_derivatives: tangent must be True or False, got "
                         f"{tangent!r}")
    q, qd, qdd = _arrays(model, q, qd, qdd)
    g = _gscale(model, gravity)
    js = np.array(_js(model, jstate), dtype=np.int64)
    fb = _fext(model, f_ext, q.dtype)  # (read-only, as NO_FEXT: one compiled type)
    rec = _record(model, tangent)
    if q.dtype != _F64:
        if out is not None:
            raise ModelError(f"{model.name}: rnea_second_order_derivatives: out= takes float64 results only, got "
                             f"{q.dtype}")
        pool_for(threads, f"{model.name}: rnea_second_order_derivatives: ")  # (checks the argument)
        return _complex_call(model, rec, q, qd, qdd, js, fb, g)
    if out is not None:
        out = _check_out(model, out, rec.n)
    return _run(model, rec, q, qd, qdd, js, fb, g, out, threads, checked=True)
