"""Second-order derivatives of inverse dynamics: IDSVA-SO (Singh, Russell & Wensing, Alg. 1).

Tensors (n, n, n), the convention of the issue and of Pinocchio's ``d2tau_dqdv``:
``d2tau_dq2[i, j, k] = d/dq_k (dtau_i/dq_j)``, ``d2tau_dqd2[i, j, k] = d/dqd_k (dtau_i/dqd_j)``,
``d2tau_dqdqd[i, j, k] = d/dqd_k (dtau_i/dq_j)`` (q on axis 1, qd on axis 2) and ``dM_dq[i, j, k] = dM_ij/dq_k``.

The kernel runs Alg. 1 on the core tree (``_core``: joints with constant local motion subspaces; derivatives
with respect to configuration are the Lie derivatives ``L_k L_j tau`` of the paper, Eq. 16-17), in the world
frame, with the body Coriolis matrices ``B'`` without the factor 1/2 (the paper's convention in Alg. 1), the
composite net wrenches including gravity and external wrenches, and the index order ``k <= j <= i`` of §IV-F:
three nested walks up the tree (core joints i, j from i to the root, k from j to the root), each of the 12
vectors ``u`` formed once per (i, p, j, t) and dotted with the four vectors ``s, psi_dot, psi_ddot,
psi_dot + s_dot`` of every DOF r of k.  Branch-induced sparsity is exploited: only ancestor triples are
visited, the other entries stay zero (the walk itself: :mod:`._so_alg1`; the one-thread and threaded drivers:
:mod:`._so_kernels`; here the thread plan, the lean call and the public call).  The model's own coordinates
follow by the chain rule (``_chain2``).  Scalar-generic.
"""

from __future__ import annotations

from sys import getrefcount

import numpy as np
from numba import get_num_threads, typeof, types

from redmax._jit import num_threads, threads_pay
from redmax._kernels.thread_guard import guarded, new_guard
from redmax.derivatives._second_order_drivers import (
    _core_plain,
    _so_thread,
    idsva_so,
    idsva_so_par,
    rnea_second_order_into,
    rnea_second_order_into_aligned,
    rnea_second_order_kernel,
    rnea_second_order_kernel_par,
    rnea_second_order_kernel_par_aligned,
    rnea_second_order_plain,
)
from redmax.derivatives._second_order_mirror import so_plan
from redmax.derivatives._second_order_tensors import (
    _NAMES,
    NO_RUNS,
    _first_nonzero,
    _into,
    _nonzero_out,
    core_tensors,
    fresh_tensors,
    zero_tensors,
)
from redmax.derivatives._second_order_write_pattern import probes_and_runs
from redmax.derivatives.core_tree import core_structure
from redmax.dynamics._single_call import entry_point, model_table, standard_packed
from redmax.errors import ModelError
from redmax.model.layout import NO_FEXT, initial_jstate

__all__ = ["core_tensors", "idsva_so", "idsva_so_par", "rnea_second_order_derivatives", "rnea_second_order_kernel",
           "rnea_second_order_kernel_par"]  # (the compiled drivers live in _so_kernels)

_F64 = np.dtype(np.float64)


POOL_BYTES = 1 << 25  # the largest block (4 n^3 doubles, n <= 100) the lean path keeps (two) for reuse: _lean_call
PAR_MIN_DOFS = 12  # fewer core DOFs: one thread (the work does not pay the start of a parallel region)


def _threads(CI) -> int:
    """The threads of the kernel's plan: Numba's thread count (``numba.set_num_threads``, ``NUMBA_NUM_THREADS``)
    from ``PAR_MIN_DOFS`` core DOFs on when its threading layer starts them cheaply
    (:func:`redmax._jit.threads_pay`), else 0 (one thread, whatever the count)."""
    return get_num_threads() if int(CI[1]) >= PAR_MIN_DOFS and threads_pay() else 0


def plan(model, CI, tangent: bool) -> tuple:
    """The thread plan of :func:`so_plan` for ``model`` (cached per model, mode and thread count): the threads of
    :func:`_threads`, at least one.  Kept, as the probes and the lean path's record, in
    :func:`redmax.dynamics._single_call.model_table`."""
    nch = max(_threads(CI), 1)
    per = model_table(model)
    key = ("so_plan", bool(tangent), nch)
    if key not in per:
        per[key] = so_plan(CI, model.nb, nch)
    return per[key]



def _unwritten(model, CI, tangent: bool) -> tuple:
    """``(i0, i1, i2, i3, zr, zs, zm, czr, czs, czm)`` of :func:`._second_order_write_pattern.probes_and_runs` for
    this model, mode and Numba's thread plan (:func:`plan`), found once: the entries the kernel never writes, in
    the core tensors (for a model whose coordinates differ from the core's: before the chain rule, which reads
    some of them, :func:`_core_plain`; on threads its ``czr, czs, czm`` are the runs of those among them that
    the chain rule may write, :func:`_nonzero_results`)."""
    P = plan(model, CI, tangent)
    per = model_table(model)
    key = ("so_unwritten", bool(tangent), P[2].shape[0] - 1)
    if key not in per:
        kernel = rnea_second_order_plain if CI[2] == 1 else _core_plain
        touched = _nonzero_results(model, CI, tangent, P) if _aligned_par(CI, P) else None
        per[key] = probes_and_runs(model, CI, tangent, P, kernel, _so_thread, touched)
    return per[key]


def _nonzero_results(model, CI, tangent: bool, P) -> list:
    """Four (n, n, n) boolean masks of the entries that are non-zero in the results of a model whose coordinates
    differ from the core's in aligned blocks, at three random states (rotations of about 0.5 rad and, for the
    small-angle branches of the tangent maps, 1e-4 rad): every entry the chain rule can make non-zero (an entry
    that vanishes at a generic state vanishes at all, the results being analytic in the state).  Run by
    :func:`rnea_second_order_kernel_par_aligned` on the plan ``P``, as the lean path runs it."""
    Ii, Ff = model.packed
    n = int(CI[1])
    rng = np.random.default_rng(1)
    seen = [np.zeros((n, n, n), dtype=bool) for _ in range(4)]
    for scale in (0.5, 0.5, 1e-4):
        q, qd, qdd = (rng.standard_normal(model.ndof) * s for s in (scale, 1.0, 1.0))
        T = fresh_tensors(CI, model.nb, P)
        res = rnea_second_order_kernel_par_aligned(Ii, Ff, CI, q, qd, qdd, initial_jstate(Ii), NO_FEXT, 1.0,
                                                   tangent, *P, *T, *NO_RUNS)
        for m, r in zip(seen, res, strict=True):
            m |= r != 0
    return seen


_T3 = types.Array(types.float64, 3, "C")
_V1 = types.Array(types.float64, 1, "C")
_NONE = np.empty(0, dtype=np.int64)


def _lean_record(model, tangent: bool):
    """Per model and mode (kept in :func:`redmax.dynamics._single_call.model_table`): ``(entry point of
    rnea_second_order_into, nch, Ii, Ff, CI, tangent, *plan, *probes, zr, zs, zm, shape, czr, czs, czm, pool,
    guard, cc)`` (``guard``: :func:`redmax._kernels.thread_guard.new_guard`; ``cc``: :func:`_c_tables`) for the lean
    calls (``nch``: the thread count the plan was made for, 0
    for a one-thread plan whatever the count; made again when Numba's thread count changed), or None where they
    do not apply (Euler charts, coordinates that differ from the core's other than in aligned blocks, packed
    arrays of another type).  For aligned blocks (:func:`rnea_second_order_into_aligned`) ``czr, czs, czm``
    are the runs of the never-written entries the chain rule may write (:func:`_nonzero_results`)."""
    table = model_table(model)
    key = ("rnea_second_order_into", tangent)
    rec = table.get(key, False)
    if rec is not False and (rec is None or not rec[1] or rec[1] == num_threads()):
        return rec
    rec = None
    Ii, Ff = model.packed
    CI = core_structure(model, tangent)
    aligned = CI[2] != 1 and CI[3] == 1 and int(CI[1]) == model.ndof  # in-place chain rule (_out_tensors)
    if not model.chart_joints.size and (CI[2] == 1 or aligned) and standard_packed(Ii, Ff):
        P = plan(model, CI, tangent)
        nch = _threads(CI)
        U = _unwritten(model, CI, tangent)
        args = (Ii, Ff, CI, tangent, *P, *U[:7])
        sig = (*(typeof(a) for a in args[:3]), _V1, _V1, _V1, *(typeof(a) for a in args[3:]), _T3, _T3, _T3, _T3)
        n = model.ndof
        czr, czs, czm = U[7:] if nch else NO_RUNS
        if aligned:  # czr: the never-written entries the chain rule may write (_nonzero_results)
            kern, name = rnea_second_order_into_aligned, "into_aligned"
        else:
            kern, name = rnea_second_order_into, "into"
        rec = (entry_point(kern, sig), nch, *args, (n, n, n), czr, czs, czm, [None, None, 0, False, False],
               new_guard(), _c_tables_or_none(name, n, args, (czr, czs, czm), aligned))
    table[key] = rec
    return rec


def _c_tables(name: str, n: int, args: tuple, cruns: tuple, aligned: bool):
    """``(Table, T_one, T_recycled, T_new, T_out)`` for the lean call through :mod:`redmax._ccall` (the entry
    point of :mod:`._second_order_c_entry` and its tables for a zeroed or clean recycled block, a recycled
    block the caller may have changed, a new block and ``out=``: the probes and runs :func:`_lean_call` passes in
    each case; the first three for the lean path's own read-only block), or None where that extension is not
    built or an array has another type than the entry point assumes."""
    from redmax.derivatives import _second_order_c_entry
    from redmax.dynamics import _single_call

    if not _single_call.USE_C:
        return None
    Ii, Ff, CI, tg, rel, cj, starts, mstarts, i0, i1, i2, i3, zr, zs, zm = args
    head = (Ii, Ff, CI, rel, cj, starts, mstarts)
    none = (_NONE,) * 4
    tabs = [_second_order_c_entry.table(n, (*head, *i, *r), tg, own) for i, r, own in (
        (none, NO_RUNS, True), (none, cruns, True), (none, (zr, zs, zm), True),
        ((none, (zr, zs, zm), False) if aligned else ((i0, i1, i2, i3), NO_RUNS, False)))]
    if any(t is None for t in tabs):
        return None
    return (_single_call._ccall.Table(_second_order_c_entry.address(name), _second_order_c_entry.VAR), *tabs)


def _c_tables_or_none(*args):
    """:func:`_c_tables`, or None (the dispatcher's entry point) where its entry point fails to compile."""
    try:
        return _c_tables(*args)
    except Exception:  # a Numba or C failure costs speed only: the dispatcher's entry point computes the same
        return None


def _refs(pool, k: int) -> int:
    """``sys.getrefcount`` of ``pool[k]`` as seen from here."""
    B = pool[k]
    return getrefcount(B)


_SOLE = _refs([object()], 0)  # the same count for an object only the list holds (the interpreter's own rule)


def _lean_call(model, q, qd, qdd, tangent: bool, out):
    """The four tensors from the lean path, or None when the call does not fit it (the caller takes the checked
    path, which also names any problem): float64 C-contiguous vectors, and ``out`` None or four writeable
    C-contiguous float64 (n, n, n) arrays.  Through :mod:`redmax._ccall` where it is built (``cc``: the
    entry point of :mod:`._second_order_c_entry` and its tables; about 2 us less than the dispatcher's entry
    point ``ep`` on talos), else through ``ep``.

    Without ``out`` the tensors are read-only views of a block, the lean path's own: one of the two previous
    calls' (kept in the record's ``pool`` slots, up to ``POOL_BYTES`` each; two, so that ``res = f(...)`` in a
    loop, which holds the last result during the call, finds the one before) when nothing else refers to it, else
    a new uninitialised one, whose unwritten entries the threads zero (the runs ``zr, zs, zm``), which replaces
    the older slot.  A recycled block is read-only since the call that wrote it, so its unwritten entries hold
    that call's zeros: nothing to zero or check (talos, tangent: 69-71 -> 57-59 us per call, the check of its
    1.75 MB gone).  A block the caller made writeable again (``.base.flags.writeable = True``, the one way
    NumPy allows) is checked as before: its unwritten entries read and zeroed where changed (``czr, czs, czm``
    of :func:`_unwritten`).  Aligned blocks (:func:`rnea_second_order_into_aligned`): ``out`` and a block made
    writeable are zeroed as a new block, where the kernel leaves them (so ``out`` may hold anything, as on the
    checked path, which zeroes it whole) (talos in exponential coordinates, whole call without out=: 183-188 ->
    166-174 us in alternating processes, from the dispatcher's argument matching and the separate zeroing
    call); in a read-only recycled block only the never-written entries the chain rule may have written
    (``czr, czs, czm``: :func:`_nonzero_results`) are zeroed, the others holding the zeros of its last call.

    A threaded plan runs on the calling thread alone for a while after a call whose threads were held up by
    another spinning thread pool (:mod:`redmax._kernels.thread_guard`: NumPy's OpenBLAS between the calls, 50 us ->
    4 ms on talos); the tensors are bitwise the same either way."""
    rec = _lean_record(model, tangent)
    if rec is None:
        return None
    (ep, nch, Ii, Ff, CI, tg, rel, cj, starts, mstarts, i0, i1, i2, i3, zr, zs, zm, shape, czr, czs, czm, pool,
     guard, cc) = rec
    slot = -1  # the pool slot of the block filled here
    if out is None:
        if starts.shape[0] == 2:  # one thread: calloc's zeroing beats the runs' (talos, 1.75 MB: 40 against 56 us)
            B = np.zeros((4, *shape))
            B.flags.writeable = False
            zr, zs, zm = NO_RUNS
            tab = 1
        else:
            B = None
            for slot in (0, 1):
                if pool[slot] is not None and _refs(pool, slot) == _SOLE:  # an earlier call's, the caller dropped it
                    B = pool[slot]
                    break
            if B is None:
                B = np.empty((4, *shape))
                B.flags.writeable = False
                if B.nbytes <= POOL_BYTES:
                    slot = pool[2]
                    pool[slot] = B
                    pool[2] = 1 - slot
                tab = 3
            elif B.flags.writeable or not pool[3 + slot]:  # changed by the caller, or its call did not finish
                B.flags.writeable = False
                if CI[2] == 1:  # its unwritten entries checked (and zeroed where changed)
                    zr, zs, zm = czr, czs, czm
                    tab = 2
                else:  # aligned blocks: zeroed as a new block
                    tab = 3
            elif CI[2] == 1:  # read-only since the call that wrote it: its unwritten entries hold its zeros
                zr, zs, zm = NO_RUNS
                tab = 1
            else:  # aligned blocks: only the unwritten entries the chain rule may have written are zeroed
                zr, zs, zm = czr, czs, czm
                tab = 2
            if slot >= 0:
                pool[3 + slot] = False  # clean again only once this call has filled it
        out = (B[0], B[1], B[2], B[3])
        i0 = i1 = i2 = i3 = _NONE
    else:
        if type(out) not in (tuple, list) or len(out) != 4:
            return None
        tab = 4
        if cc is None:
            for o in out:
                if not (type(o) is np.ndarray and o.shape == shape and o.dtype == _F64 and o.flags.carray):
                    return None
            if CI[2] == 1:
                zr, zs, zm = NO_RUNS
            else:  # aligned blocks: the caller's tensors are zeroed where the kernel leaves them, as a new block
                i0 = i1 = i2 = i3 = _NONE
    run = (cc, tab, ep, Ii, Ff, CI, tg, rel, cj, starts, mstarts, i0, i1, i2, i3, zr, zs, zm)
    k = guarded(guard, nch, 1, _run, run, q, qd, qdd, out)  # (held up lately: on this thread alone, _held_up)
    if k is NotImplemented or k == -2:  # the checked path names the problem (the block stays not clean)
        return None
    if k >= 0:  # a probe of the caller's out= hit (confirmed here: nothing else returns k >= 0)
        if tab == 4 and CI[2] == 1 and _first_nonzero(*out, i0, i1, i2, i3) >= 0:
            raise _nonzero_out(model, k)
        return None
    if slot >= 0:
        pool[3 + slot] = True
    return tuple(out)


def _run(run: tuple, q, qd, qdd, out):
    """One lean call's kernel: -1 (filled), k >= 0 (a probe of ``out`` hit), or NotImplemented or -2 (the
    checked path takes it).  Through C where it is built (it checks the arrays, NotImplemented for others, and
    passes their addresses), else through the dispatcher's entry point ``ep``."""
    cc, tab, ep, Ii, Ff, CI, tg, rel, cj, starts, mstarts, i0, i1, i2, i3, zr, zs, zm = run
    if cc is not None:
        return cc[0](cc[tab], q, qd, qdd, out[0], out[1], out[2], out[3])
    for v in (q, qd, qdd):
        if not (type(v) is np.ndarray and v.dtype == _F64 and v.ndim == 1 and v.flags.c_contiguous):
            return NotImplemented
    try:  # (the entry point does not look at the WRITEABLE flag of the lean path's own block)
        return ep(Ii, Ff, CI, q, qd, qdd, tg, rel, cj, starts, mstarts, i0, i1, i2, i3, zr, zs, zm, *out)
    except (ValueError, ZeroDivisionError):
        return -2  # rejected by the kernel (size, NaN, singular)


def _out_tensors(model, CI, tangent: bool, out) -> list:
    """The caller's ``out`` (four float64 (n, n, n) arrays), checked; the tensors the kernel fills in place
    when the model's coordinates are the core's or align with them, else fresh core tensors (the result is copied
    into ``out``)."""
    from redmax.dynamics import _out

    n = model.ndof
    if not (isinstance(out, tuple | list) and len(out) == 4):
        raise ModelError(f"{model.name}: rnea_second_order_derivatives: out must be a tuple of four arrays "
                         f"(d2tau_dq2, d2tau_dqd2, d2tau_dqdqd, dM_dq), got {type(out).__name__}")
    shape = (n, n, n)
    outs = list(out)
    for k, o in enumerate(outs):  # the common case checked without building the messages
        if not (type(o) is np.ndarray and o.shape == shape and o.dtype == _F64 and o.flags.c_contiguous
                and o.flags.writeable):
            _out(model, o, shape, f"rnea_second_order_derivatives: out[{k}] ({_NAMES[k]})")  # raises if invalid
    if CI[2] != 1:
        if CI[3] != 1 or int(CI[1]) != n:  # the general chain rule allocates its results: copied into out
            return core_tensors(CI, _F64)
        # aligned blocks: transformed in place, also entries the kernel leaves, which must start at zero (as the
        # tensors of core_tensors: on chains the kernel writes every entry of the first three), zeroed as
        # fresh_tensors zeroes its block: on threads, each slab by the thread that writes it
        zero_tensors(CI, model.nb, plan(model, CI, tangent), outs)
        return outs
    k = _first_nonzero(*outs, *_unwritten(model, CI, tangent)[:4])
    if k >= 0:
        raise _nonzero_out(model, k)
    return outs


def _result(res, out):
    """:func:`._second_order_tensors._into`, with the base array of read-only results made read-only too (as
    the lean path's block: NumPy lets no view of a read-only array become writeable)."""
    res = _into(res, out)
    if out is None:
        for r in res:
            if type(r.base) is np.ndarray:
                r.base.flags.writeable = False
    return res


def _aligned_par(CI, P) -> bool:
    """A thread plan of more than one thread for a model whose coordinates differ from the core's in aligned
    blocks (:func:`rnea_second_order_kernel_par_aligned`)."""
    return P[2].shape[0] > 2 and CI[2] != 1 and CI[3] == 1


def rnea_second_order_derivatives(model, q, qd, qdd, f_ext=None, jstate=None, gravity: bool = True,
                                  tangent: bool = False, *, out=None):
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
    Returns:
        ``(d2tau_dq2, d2tau_dqd2, d2tau_dqdqd, dM_dq)``, each (ndof, ndof, ndof):
        ``d2tau_dq2[i, j, k] = d/dq_k (dtau_i/dq_j)``, ``d2tau_dqd2[i, j, k] = d/dqd_k (dtau_i/dqd_j)``,
        ``d2tau_dqdqd[i, j, k] = d/dqd_k (dtau_i/dq_j)``, ``dM_dq[i, j, k] = dM_ij/dq_k``.  In the model's own
        coordinates ``d2tau_dq2`` is symmetric in (j, k); with ``tangent=True`` the blocks of a spherical or
        free joint are not (rotations do not commute: Singh et al. §II).  Without ``out`` the four tensors are
        read-only (``.copy()`` them to change them, or pass ``out``) and may be views of one (4, ndof, ndof,
        ndof) block: on the lean path (float64 vectors, gravity, no wrenches, the core's coordinates or aligned
        blocks such as a free base in exponential coordinates, threads) the block of an earlier call once the
        caller holds no reference to it (so a loop of calls allocates nothing and the block stays in the
        cache), else a new one.
    """
    if f_ext is None and jstate is None and gravity is True and (tangent is False or tangent is True) \
            and not model.chart_joints.size:
        res = _lean_call(model, q, qd, qdd, tangent, out)  # one compiled call, no dispatcher match
        if res is not None:
            return res
        try:
            if (q.dtype == _F64 and qd.dtype == _F64 and qdd.dtype == _F64
                    and q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1
                    and q.flags.carray and qd.flags.carray and qdd.flags.carray):  # one compiled type (_arrays)
                Ii, Ff = model.packed
                CI = core_structure(model, tangent)
                P = plan(model, CI, tangent)
                T = fresh_tensors(CI, model.nb, P) if out is None else _out_tensors(model, CI, tangent, out)
                if _aligned_par(CI, P):
                    res = rnea_second_order_kernel_par_aligned(Ii, Ff, CI, q, qd, qdd, initial_jstate(Ii), NO_FEXT,
                                                               1.0, tangent, *P, *T, *NO_RUNS)
                else:
                    res = rnea_second_order_plain(Ii, Ff, CI, q, qd, qdd, tangent, *P, *NO_RUNS, *T)
                return _result(res, out)
        except ModelError:
            raise
        except (AttributeError, ValueError, ZeroDivisionError):
            pass
    from redmax.derivatives.rnea_first_order import run_checked
    from redmax.dynamics import _arrays, _fext, _js

    Ii, Ff = model.packed
    q, qd, qdd = _arrays(model, q, qd, qdd)
    CI = core_structure(model, tangent)
    args = (Ii, Ff, CI, q, qd, qdd, _js(model, jstate), _fext(model, f_ext, q.dtype), 1.0 if gravity else 0.0,
            bool(tangent))
    if q.dtype == _F64:
        P = plan(model, CI, bool(tangent))
        T = fresh_tensors(CI, model.nb, P) if out is None else _out_tensors(model, CI, bool(tangent), out)
        if P[2].shape[0] > 2:
            kern = rnea_second_order_kernel_par_aligned if _aligned_par(CI, P) else rnea_second_order_kernel_par
            return _result(run_checked(model, kern, *args, *P, *T, *NO_RUNS), out)
        return _result(run_checked(model, rnea_second_order_kernel, *args, *T), out)
    if out is not None:
        raise ModelError(f"{model.name}: rnea_second_order_derivatives: out= takes float64 results only, got "
                         f"{q.dtype}")
    return _result(run_checked(model, rnea_second_order_kernel, *args, *core_tensors(CI, q.dtype)), None)
