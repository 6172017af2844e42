"""The compiled drivers of IDSVA-SO (:mod:`.rnea_second_order`): one thread and threads, the chain
rule to the model's coordinates after them, and the lean call's entry kernels.  Scalar-generic where a complex
step reaches them (:func:`rnea_second_order_kernel`).  Apart from the Python layer so that the C entry points of
:mod:`._second_order_c_entry` can call them without an import cycle."""

from __future__ import annotations

import numpy as np
from numba import prange

from redmax._jit import FAST, njit
from redmax.derivatives._second_order_chain_inplace import chain_second_order_aligned, chain_second_order_aligned_par
from redmax.derivatives._second_order_mirror import _mirror, _mirror_chain, _mirror_owned, _single_path
from redmax.derivatives._second_order_tensors import _first_nonzero, zero_runs
from redmax.derivatives._second_order_walk import _so_joints, _so_setup
from redmax.derivatives.core_tree import core_offsets
from redmax.derivatives.second_order_chain import block_dofs, chain_second_order
from redmax.dynamics.rnea import check_inputs
from redmax.model.layout import NO_FEXT, initial_jstate

__all__ = ["idsva_so", "idsva_so_par", "rnea_second_order_into", "rnea_second_order_into_aligned",
           "rnea_second_order_kernel", "rnea_second_order_kernel_par", "rnea_second_order_kernel_par_aligned",
           "rnea_second_order_plain"]


@njit(cache=True, fastmath=FAST)
def idsva_so(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, want_fo, d2q, d2v, d2qv, dM):
    """Core second-order derivatives (Alg. 1) into the (ncd, ncd, ncd) tensors d2q, d2v, d2qv, dM (C order;
    only the entries of ancestor triples are written, the others keep their values: pass zeros or the outputs
    of a previous call on the same model), and, if ``want_fo``, the core first-order quantities
    (tau_c, T_q, T_v, M_c) for the chain rule: on aligned models only the rows and columns of T_q, T_v, M_c it
    reads (:func:`.second_order_chain.block_dofs`), the others zero.  Of each pair of equal entries
    (symmetry of d2v and dM, and of d2q across joints) the triple loop stores one and :func:`_mirror` copies it
    at the end.  One thread; the same work split over threads: :func:`idsva_so_par`."""
    nb = Ii[0]
    ncj = CI[0]
    W, CD = _so_setup(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent)
    nf = CI[1] if want_fo else 0
    tau = np.zeros(nf, dtype=q.dtype)
    Tq = np.zeros((nf, nf), dtype=q.dtype)
    Tv = np.zeros((nf, nf), dtype=q.dtype)
    Mc = np.zeros((nf, nf), dtype=q.dtype)
    _so_joints(CI, nb, W, CD, np.arange(ncj), 0, ncj, want_fo, block_dofs(Ii, CI, tangent), d2q, d2v, d2qv, dM, tau,
               Tq, Tv, Mc)
    _mirror(CI, nb, d2q, d2v, dM)
    return tau, Tq, Tv, Mc


@njit(cache=True, parallel="prange", fastmath=FAST)
def idsva_so_par(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, want_fo, rel, cj, starts, mstarts, zr,
                 zs, zm, d2q, d2v, d2qv, dM):
    """:func:`idsva_so` split over ``nch = len(starts) - 1`` threads (``prange``): thread c takes the core joints
    ``starts[c]:starts[c + 1]`` (contiguous, of about equal cost: :func:`so_plan`) and writes the entries whose
    deepest index is one of their DOFs (:func:`_so_joints`) and, on trees, the mirror of what it wrote (dM's as it
    writes it: ``mirror_dm``); on chains the mirror follows in a second parallel region, split by first index
    (``mstarts``).  On trees no thread reads or writes a cache line after another wrote it in the same call
    except at the edges of the threads' index ranges: when the host put the two threads on cores that share no
    cache, talos took 72 us a call with dM's mirror after the barrier and 66 us without (docs/derivatives.md,
    stop 43).  Every entry is computed by the same operations as in :func:`idsva_so` (equal to round-off:
    compiled apart, fastmath may contract them differently).  Each thread runs the forward pass (``_so_setup``)
    itself: it then reads its own copy from its own cache, which is cheaper than the calling thread's copy from
    the other core (talos 104.2 -> 103.2 us, binary tree of 63 89.9 -> 83.1 us, in one process).

    After its forward pass each thread c zeroes its runs (``zero_runs(zr, zs, zm, c, ...)``, from
    :func:`._second_order_write_pattern.probes_and_runs`: the entries no thread writes and, between them, entries
    that c writes later or the mirror writes after the barrier, never one that another thread writes before it, so
    no write races the zeroing; ``NO_RUNS`` for tensors that hold zeros there already), so that a fresh block needs
    no zeroing pass of its own.  Talos, public call without out=, in one process against the zeroing pass
    (``_zero_slabs``) before the kernel: 151.0-154.7 -> 142.7-147.3 us, out= unchanged; runs that also span
    entries their thread writes later (1118 runs instead of 4432), 138.3 -> 129.5 us (binary tree of 63: 250.8 ->
    231.7 us; chains unchanged).  Zeroing before the forward pass instead made the out= call, which zeroes nothing,
    about 5 us slower (measured, not explained)."""
    nb = Ii[0]
    nch = starts.shape[0] - 1
    ncd = CI[1]
    nf = ncd if want_fo else 0
    tau = np.zeros(nf, dtype=q.dtype)
    Tq = np.zeros((nf, nf), dtype=q.dtype)
    Tv = np.zeros((nf, nf), dtype=q.dtype)
    Mc = np.zeros((nf, nf), dtype=q.dtype)
    items = np.arange(CI[0])
    owned = not _single_path(CI)
    o_co = core_offsets(CI, nb)[7]
    for c in prange(nch):
        _so_thread(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, want_fo, rel, cj, starts, c, zr, zs, zm,
                   items, owned, o_co, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc)
    if not owned:  # chains: the mirror after the barrier (trees: _so_thread mirrors what it wrote)
        for c in prange(nch):
            _mirror_chain(cj, mstarts[c], mstarts[c + 1], d2q, d2v, dM)
    return tau, Tq, Tv, Mc


@njit(cache=True, fastmath=FAST)
def _so_thread(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, want_fo, rel, cj, starts, c, zr, zs, zm,
               items, owned, o_co, d2q, d2v, d2qv, dM, tau, Tq, Tv, Mc):
    """Thread c's part of :func:`idsva_so_par` before the barrier: its forward pass, its runs ``zr, zs, zm``, its core
    joints ``starts[c]:starts[c + 1]`` and, on trees (``owned``), the mirror of the entries they wrote.
    Also run alone, on NaN-filled tensors, to find the entries each thread writes (``_so_probe``)."""
    W, CD = _so_setup(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent)
    if zr.shape[1]:  # (NO_RUNS: its zs is not the plan's)
        zero_runs(zr, zs, zm, c, d2q, d2v, d2qv, dM)
    _so_joints(CI, Ii[0], W, CD, items, starts[c], starts[c + 1], want_fo, block_dofs(Ii, CI, tangent), d2q, d2v,
               d2qv, dM, tau, Tq, Tv, Mc, owned)  # (trees: dM's mirror as it is written)
    if owned:  # trees: each thread mirrors the d2v, d2q entries it wrote
        _mirror_owned(rel, cj, CI[o_co + starts[c]], CI[o_co + starts[c + 1]], d2q, d2v)


@njit(cache=True, fastmath=FAST)
def _finish(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, d2q, d2v, d2qv, dM):
    """The model's coordinates from the core tensors (chain rule, :mod:`._chain2`)."""
    if CI[2] == 1:
        return d2q, d2v, d2qv, dM
    if CI[3] == 1:
        return chain_second_order_aligned(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, d2q, d2v,
                                          d2qv, dM)
    return chain_second_order(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, d2q, d2v, d2qv, dM)


@njit(cache=True, fastmath=FAST)
def rnea_second_order_kernel(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, d2q, d2v, d2qv, dM):
    """(d2tau_dq2, d2tau_dqd2, d2tau_dqdqd, dM_dq) (n, n, n) in the model's coordinates; d2q, d2v, d2qv, dM:
    (ncd, ncd, ncd) core tensors (:func:`core_tensors`), returned themselves when the model's coordinates are
    the core's or its blocks align with them.  One thread, scalar-generic (complex step)."""
    check_inputs(Ii, q, qd, qdd, jstate, f_body)
    tau, Tq, Tv, Mc = idsva_so(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, CI[2] != 1, d2q, d2v,
                               d2qv, dM)
    return _finish(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, d2q, d2v, d2qv, dM)


@njit(cache=True, fastmath=FAST)
def rnea_second_order_kernel_par(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, rel, cj, starts,
                                 mstarts, d2q, d2v, d2qv, dM, zr, zs, zm):
    """:func:`rnea_second_order_kernel` on threads (:func:`idsva_so_par` with the plan ``rel, cj, starts`` of
    :func:`so_plan` and the runs ``zr, zs, zm`` it zeroes or checks first; float64)."""
    check_inputs(Ii, q, qd, qdd, jstate, f_body)
    tau, Tq, Tv, Mc = idsva_so_par(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, CI[2] != 1, rel, cj,
                                   starts, mstarts, zr, zs, zm, d2q, d2v, d2qv, dM)
    return _finish(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, d2q, d2v, d2qv, dM)


@njit(cache=True, fastmath=FAST)
def rnea_second_order_kernel_par_aligned(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, rel, cj, starts,
                                         mstarts, d2q, d2v, d2qv, dM, zr, zs, zm):
    """:func:`rnea_second_order_kernel_par` for a model whose coordinates differ from the core's in aligned blocks
    (``CI[2] != 1``, ``CI[3] == 1``: free joints in exponential coordinates, spherical, universal, planar): the
    in-place chain rule on the threads too (:func:`chain_second_order_aligned_par`).  A function of its own: as a
    branch of :func:`rnea_second_order_kernel_par` it slowed the models without blocks (chain of 36: 340 against
    250 us, in alternating processes)."""
    check_inputs(Ii, q, qd, qdd, jstate, f_body)
    tau, Tq, Tv, Mc = idsva_so_par(Ii, Ff, CI, q, qd, qdd, jstate, f_body, gscale, tangent, True, rel, cj, starts,
                                   mstarts, zr, zs, zm, d2q, d2v, d2qv, dM)
    return chain_second_order_aligned_par(Ii, Ff, CI, q, qd, qdd, jstate, tangent, tau, Tq, Tv, Mc, d2q, d2v, d2qv,
                                          dM)


@njit(cache=True, fastmath=FAST)
def rnea_second_order_plain(Ii, Ff, CI, q, qd, qdd, tangent, rel, cj, starts, mstarts, zr, zs, zm, d2q, d2v,
                            d2qv, dM):
    """:func:`rnea_second_order_kernel_par` with gravity, no external wrenches, the initial charts (the
    per-call fast path), zeroing (or checking) the runs ``zr, zs, zm`` first."""
    if starts.shape[0] == 2:  # one thread: no parallel region
        if zr.shape[1]:
            zero_runs(zr, zs, zm, 0, d2q, d2v, d2qv, dM)
        return rnea_second_order_kernel(Ii, Ff, CI, q, qd, qdd, initial_jstate(Ii), NO_FEXT, 1.0, tangent, d2q, d2v,
                                        d2qv, dM)
    return rnea_second_order_kernel_par(Ii, Ff, CI, q, qd, qdd, initial_jstate(Ii), NO_FEXT, 1.0, tangent, rel, cj,
                                        starts, mstarts, d2q, d2v, d2qv, dM, zr, zs, zm)


@njit(cache=True, fastmath=FAST)
def _core_plain(Ii, Ff, CI, q, qd, qdd, tangent, rel, cj, starts, mstarts, zr, zs, zm, d2q, d2v, d2qv, dM):
    """:func:`rnea_second_order_plain` without the chain rule: the core tensors alone (where
    :func:`._second_order_write_pattern.probes_and_runs` finds the entries the kernel leaves, for a model whose
    coordinates differ from the core's)."""
    if starts.shape[0] == 2:
        idsva_so(Ii, Ff, CI, q, qd, qdd, initial_jstate(Ii), NO_FEXT, 1.0, tangent, CI[2] != 1, d2q, d2v, d2qv, dM)
    else:
        idsva_so_par(Ii, Ff, CI, q, qd, qdd, initial_jstate(Ii), NO_FEXT, 1.0, tangent, CI[2] != 1, rel, cj, starts,
                     mstarts, zr, zs, zm, d2q, d2v, d2qv, dM)
    return d2q, d2v, d2qv, dM


@njit(cache=True, fastmath=FAST)
def rnea_second_order_into(Ii, Ff, CI, q, qd, qdd, tangent, rel, cj, starts, mstarts, i0, i1, i2, i3, zr, zs, zm,
                           d2q, d2v, d2qv, dM):
    """The lean call of a model whose coordinates are the core's (``CI[2] == 1``) in one compiled call: k >= 0
    when ``out[k]`` has a non-zero entry at one of its probes ``ik`` (:func:`_unwritten`; nothing computed), else
    -1 with the four tensors filled in place (:func:`rnea_second_order_plain` with the plan ``rel, cj, starts,
    mstarts``, zeroing or checking the runs ``zr, zs, zm`` first).  ``out=`` passes the probes and no runs, a fresh
    or recycled block no probes and the runs."""
    k = _first_nonzero(d2q, d2v, d2qv, dM, i0, i1, i2, i3)
    if k >= 0:
        return k
    rnea_second_order_plain(Ii, Ff, CI, q, qd, qdd, tangent, rel, cj, starts, mstarts, zr, zs, zm, d2q, d2v, d2qv,
                            dM)
    return -1


@njit(cache=True, fastmath=FAST)
def rnea_second_order_into_aligned(Ii, Ff, CI, q, qd, qdd, tangent, rel, cj, starts, mstarts, i0, i1, i2, i3, zr, zs,
                                   zm, d2q, d2v, d2qv, dM):
    """:func:`rnea_second_order_into` for a model whose coordinates differ from the core's in aligned blocks
    (``CI[3] == 1``): the threads zero the runs ``zr, zs, zm`` (of :func:`_unwritten`: the entries the kernel
    never writes in a new block or ``out``, as the chain rule reads some of them and writes some; in a read-only
    recycled block those of them the chain rule may have written), then
    :func:`rnea_second_order_kernel_par_aligned`; -1.  The probes ``i0..i3`` are not read: the
    caller's ``out`` is zeroed there too (as the checked path zeroes it)."""
    rnea_second_order_kernel_par_aligned(Ii, Ff, CI, q, qd, qdd, initial_jstate(Ii), NO_FEXT, 1.0, tangent, rel, cj,
                                         starts, mstarts, d2q, d2v, d2qv, dM, zr, zs, zm)
    return -1
