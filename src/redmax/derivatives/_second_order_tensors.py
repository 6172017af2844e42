"""The tensors of :func:`redmax.rnea_second_order_derivatives`: fresh ones (one block, zeroed by the threads that
write them, in full or only the entries the kernel never writes), the check of a caller's ``out=`` tensors, and
copying results into them."""

from __future__ import annotations

import numpy as np
from numba import prange

from redmax._jit import njit
from redmax.derivatives._second_order_mirror import _single_path
from redmax.derivatives.core_tree import core_offsets
from redmax.errors import ModelError

__all__ = ["NO_RUNS", "clean_runs", "core_tensors", "fresh_tensors", "slab_bounds", "unwritten_runs", "zero_runs",
           "zero_tensors"]

_F64 = np.dtype(np.float64)
NO_RUNS = (np.zeros((2, 0), dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros((0, 0), dtype=np.int8))
# (zr, zs, zm): nothing to zero, no mask


def core_tensors(CI, dtype):
    """Four (ncd, ncd, ncd) tensors for :func:`._second_order_drivers.idsva_so` (d2q, d2v, d2qv, dM):
    views of one NumPy block, zeroed on
    trees (the entries of unrelated triples are never written); on chains, where every triple is related, d2q,
    d2v and d2qv uninitialised (the kernel and its mirror write each of their entries: tested with
    NaN-filled tensors) and dM zeroed (``dM_ij/dq_k`` with k at or above the shallower of i, j is zero and not
    written).

    One block, not four arrays: glibc serves an allocation above its (adaptive) mmap threshold with fresh pages,
    which fault in one by one when written, and gives heap memory back to the system once more than twice the
    largest freed mapping lies free at the top.  Four separate tensors exceed that together, so every call
    faulted its pages in again (talos, 4 x 439 kB: about 100 us of a 250 us call); a single block stays below
    it and is reused.  A compiled ``np.zeros`` would write every byte first, where NumPy maps fresh pages lazily
    (n = 100, 4 x 8 MB: 13 ms of a 21 ms call)."""
    ncd = int(CI[1])
    if _single_path(CI):
        B = np.empty((4, ncd, ncd, ncd), dtype=dtype)
        B[3] = 0.0
    else:
        B = np.zeros((4, ncd, ncd, ncd), dtype=dtype)
    return [B[0], B[1], B[2], B[3]]


@njit(cache=True)
def slab_bounds(CI, nb, starts, mstarts):
    """(nch + 1,) bounds of the first indices i whose slabs ``T[i]`` thread c zeroes, ``bounds[c]:bounds[c + 1]``: the
    slabs it writes most, so that it finds them in its own cache rather than in the core of the thread that zeroed
    them.  On trees the DOFs of its core joints ``starts[c]:starts[c + 1]`` (entries are written by the thread of
    their deepest DOF, for d2q, d2v, d2qv mostly the first index); on chains the first-index ranges ``mstarts`` of
    the mirror, which copies the rows of dM (the kernel writes every entry of the other three tensors)."""
    if _single_path(CI):
        return mstarts.copy()
    o_co = core_offsets(CI, nb)[7]
    bounds = np.empty_like(starts)
    for c in range(starts.shape[0]):
        bounds[c] = CI[o_co + starts[c]]
    return bounds


@njit(cache=True, parallel="prange")
def _zero_slabs(CI, nb, starts, mstarts, d2q, d2v, d2qv, dM):
    """Zero the core tensors of :func:`fresh_tensors` slab by slab (``T[i]``, first index i) on the threads of the
    plan, thread c the slabs of :func:`slab_bounds`: on trees in all four tensors, on chains only dM."""
    bounds = slab_bounds(CI, nb, starts, mstarts)
    chain = _single_path(CI)
    for c in prange(starts.shape[0] - 1):
        for i in range(bounds[c], bounds[c + 1]):
            dM[i, :, :] = 0.0
            if not chain:
                d2q[i, :, :] = 0.0
                d2v[i, :, :] = 0.0
                d2qv[i, :, :] = 0.0


def fresh_tensors(CI, nb: int, P) -> list:
    """:func:`core_tensors` for a float64 call on the thread plan ``P``
    (:func:`.rnea_second_order.plan`): with more than one thread an uninitialised block that
    :func:`_zero_slabs` zeroes in parallel, each slab by the thread that writes it (talos, two threads: zeroing
    and kernel 142 us, against 219 us after NumPy's zeroing on the calling thread)."""
    if P[2].shape[0] <= 2:
        return core_tensors(CI, _F64)
    ncd = int(CI[1])
    B = np.empty((4, ncd, ncd, ncd))
    T = [B[0], B[1], B[2], B[3]]
    zero_tensors(CI, nb, P, T)
    return T


def zero_tensors(CI, nb: int, P, T) -> None:
    """Zero the entries of the four core tensors ``T`` that the kernel may leave (all of them on trees, dM on
    chains): on the threads of the plan ``P`` by :func:`_zero_slabs`, or on the calling thread for a one-thread
    plan."""
    if P[2].shape[0] > 2:
        _zero_slabs(CI, nb, P[2], P[3], *T)
    else:
        for o in T[3:] if _single_path(CI) else T:
            o.fill(0.0)


def unwritten_runs(unwritten, owner, nch: int, foreign=None) -> tuple:
    """``(zr, zs)``: runs for :func:`zero_runs` that cover the entries the kernel never writes.

    ``unwritten``: four (n, n, n) boolean masks (True where a run of the kernel on NaN-filled tensors left NaN);
    ``owner``: (n,) the thread, 0 <= owner < nch, that zeroes slab ``T[i]`` (first index i; :func:`slab_bounds`);
    ``foreign``: None, or per thread c the sorted flat indices into the (4, n, n, n) block of the entries the other
    threads write before the barrier (while c zeroes).  A run spans the unwritten entries of one slab (``T[i]``,
    flat) from the first to the last that no foreign entry separates: it also zeroes entries its own thread writes
    later (or the mirror, after the barrier), so that a slab takes few long runs rather than many short ones
    (talos, two threads: 1118 runs of 204103 entries against 4432 of 179892, 9 us less per fresh call); with
    ``foreign`` None, one run per slab and tensor (one thread).  ``zr`` (2, R) int64 holds per run its flat start
    in its tensor and its length; ordered by thread, then tensor (d2q, d2v, d2qv, dM), then start: those of thread
    c in tensor t are ``zr[:, zs[4 c + t]:zs[4 c + t + 1]]`` (``zs`` (4 nch + 1,))."""
    n = owner.shape[0]
    must = np.stack([np.asarray(u, dtype=bool).reshape(n, n * n) for u in unwritten]).reshape(4 * n, n * n)
    rows, cols = np.nonzero(must)  # row-major: rows (t, i) ascending, then cols
    seg = np.zeros(rows.shape[0], dtype=np.int64)
    if foreign is not None:  # seg: how many foreign entries precede the entry (a change within a row: a gap)
        flat = rows * (n * n) + cols
        mine = owner[rows % n]
        for c in range(nch):
            sel = mine == c
            seg[sel] = np.searchsorted(foreign[c], flat[sel])
    new = np.ones(rows.shape[0], dtype=bool)
    new[1:] = (rows[1:] != rows[:-1]) | (seg[1:] != seg[:-1])
    first = np.flatnonzero(new)
    last = np.append(first[1:], rows.shape[0]) - 1
    rs = rows[first]
    key = owner[rs % n] * 4 + rs // n
    order = np.argsort(key, kind="stable")
    zr = np.stack([(rs % n) * (n * n) + cols[first], cols[last] + 1 - cols[first]])[:, order].astype(np.int64)
    zs = np.searchsorted(key[order], np.arange(4 * nch + 1)).astype(np.int64)
    return np.ascontiguousarray(zr), zs


@njit(cache=True)
def _zero_flat(zr, lo, hi, F, M):
    """Zero the runs ``zr[:, lo:hi]`` of the flat tensor F; a run of negative length -L (:func:`clean_runs`) is
    checked under the mask M (int8, F's length: -1 at the entries to check, 0 at the others): the run's bits
    AND-ed with the mask and OR-ed, in SIMD, and, if one is set, only the masked entries zeroed (the others may be
    another thread's to write)."""
    Fb = F.view(np.int64)
    for r in range(lo, hi):
        a = zr[0, r]
        L = zr[1, r]
        if L > 0:
            F[a:a + L] = 0.0
        else:
            x = Fb[a:a - L]
            m = M[a:a - L]
            acc = 0
            for j in range(x.shape[0]):  # (from 0: no wraparound test, so the loop vectorises)
                acc |= x[j] & np.int64(m[j])
            if acc != 0:
                for j in range(x.shape[0]):
                    if m[j]:
                        x[j] = 0


@njit(cache=True)
def _check_shared(lo, hi, m3, m1, d2q, d2v, d2qv, dM):
    """The check of :func:`zero_runs` over the flat entries ``lo:hi`` of the four tensors in one SIMD loop, for
    masks shared by d2q, d2v and d2qv (``m3``) and dM's own (``m1``): the bits of each entry AND-ed with its mask
    and OR-ed; if one is set, each tensor's masked entries in the range zeroed."""
    x0 = d2q.reshape(-1).view(np.int64)[lo:hi]
    x1 = d2v.reshape(-1).view(np.int64)[lo:hi]
    x2 = d2qv.reshape(-1).view(np.int64)[lo:hi]
    x3 = dM.reshape(-1).view(np.int64)[lo:hi]
    a = m3[lo:hi]
    b = m1[lo:hi]
    acc = 0
    for j in range(x0.shape[0]):  # (from 0: no wraparound test, so the loop vectorises)
        acc |= ((x0[j] | x1[j] | x2[j]) & np.int64(a[j])) | (x3[j] & np.int64(b[j]))
    if acc != 0:
        for j in range(x0.shape[0]):
            if a[j]:
                x0[j] = 0
                x1[j] = 0
                x2[j] = 0
            if b[j]:
                x3[j] = 0


@njit(cache=True)
def zero_runs(zr, zs, zm, c, d2q, d2v, d2qv, dM):
    """Zero thread c's runs of :func:`unwritten_runs` in the four tensors, or check those of :func:`clean_runs`
    with their masks ``zm`` ((4, n^3) int8, one per tensor; (2, n^3), the mask d2q, d2v and d2qv share and dM's:
    one loop over the span of thread c's runs, :func:`_check_shared`; or (0, 0): none) (one flat view per tensor:
    a tuple of the four, indexed per run, took twice as long, talos 114 against 56 us on one thread)."""
    b = 4 * c
    if zm.shape[0] == 2:
        lo = zm.shape[1]
        hi = 0
        for r in range(zs[b], zs[b + 4]):
            lo = min(lo, zr[0, r])
            hi = max(hi, zr[0, r] - zr[1, r])
        if lo < hi:
            _check_shared(lo, hi, zm[0], zm[1], d2q, d2v, d2qv, dM)
        return
    e = zm.reshape(-1)[:0]
    masked = zm.shape[0] > 0
    _zero_flat(zr, zs[b], zs[b + 1], d2q.reshape(-1), zm[0] if masked else e)
    _zero_flat(zr, zs[b + 1], zs[b + 2], d2v.reshape(-1), zm[1] if masked else e)
    _zero_flat(zr, zs[b + 2], zs[b + 3], d2qv.reshape(-1), zm[2] if masked else e)
    _zero_flat(zr, zs[b + 3], zs[b + 4], dM.reshape(-1), zm[3] if masked else e)


def clean_runs(unwritten, owner, nch: int) -> tuple:
    """``(zr, zs, zm)`` for :func:`zero_runs` on a block whose entries that the kernel never writes are zero
    already unless the caller changed them (a recycled block of a previous call: ``rnea_second_order``'s lean
    path): per thread c and tensor one run of negated length over its slabs (``owner``, as
    :func:`unwritten_runs`), from the first to the last never-written entry, and ``zm`` (4, n^3) int8, -1 at the
    never-written entries and 0 at the others, so that :func:`zero_runs` reads the run's entries under the mask
    and zeroes only the masked ones, only if one is not +0.0.  One masked run per thread and tensor, not one run
    per stretch of never-written entries (talos, two threads: 4432 runs of 2 to 40 entries, whose loop overhead
    was as large as their reads): talos, the check of thread 0 alone 18.9 -> 13.6 us, of thread 1 13.7 -> 10.3
    us.  When d2q, d2v and d2qv have the same never-written entries, and some (IDSVA-SO writes the three for the
    same triples; talos and the random trees of the tests; on chains only dM has such entries, and reading the
    other three would be 24 MB at n = 100), ``zm`` is (2, n^3), their mask and dM's, and each thread
    checks the four tensors in one loop (:func:`_check_shared`): talos, the kernel 95.0-96.3 -> 92.1-93.7 us in
    one process (its check on thread 0 13.6-13.7 -> 11.9-12.0 us)."""
    n = owner.shape[0]
    nn = n * n
    zm = -np.stack([np.asarray(u, dtype=bool).reshape(-1) for u in unwritten]).astype(np.int8)
    starts, lengths, counts = [], [], np.zeros(4 * nch, dtype=np.int64)
    for c in range(nch):
        slabs = np.flatnonzero(owner == c)
        if not slabs.size:
            continue
        lo, hi = slabs[0] * nn, (slabs[-1] + 1) * nn
        for t in range(4):
            idx = np.flatnonzero(zm[t, lo:hi])
            if idx.size:
                starts.append(lo + idx[0])
                lengths.append(-(idx[-1] + 1 - idx[0]))
                counts[4 * c + t] = 1
    zr = np.array([starts, lengths], dtype=np.int64).reshape(2, -1)
    zs = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    if zm[0].any() and (zm[0] == zm[1]).all() and (zm[0] == zm[2]).all():  # (chains: only dM has such entries)
        zm = np.ascontiguousarray(zm[[0, 3]])
    return np.ascontiguousarray(zr), zs, zm


_NAMES = ("d2tau_dq2", "d2tau_dqd2", "d2tau_dqdqd", "dM_dq")


@njit(cache=True)
def _first_nonzero(o0, o1, o2, o3, i0, i1, i2, i3):
    """The first k with a non-zero ``out[k].flat[ik]``, else -1."""
    for k, (o, idx) in enumerate(((o0, i0), (o1, i1), (o2, i2), (o3, i3))):
        f = o.reshape(-1)
        for i in idx:
            if f[i] != 0.0:
                return k
    return -1


def _nonzero_out(model, k: int) -> ModelError:
    return ModelError(f"{model.name}: rnea_second_order_derivatives: out[{k}] ({_NAMES[k]}) has non-zero entries "
                      "where the tree structure makes the derivatives zero; those entries are not written: pass "
                      "zeroed arrays (np.zeros) or the unmodified results of a previous call")


def _into(res, out):
    """The four result tensors ``res``: read-only without ``out`` (as the lean path's), else copied into ``out``
    (unless they are ``out``'s arrays) and ``out``'s returned."""
    if out is None:
        for r in res:
            r.flags.writeable = False
        return res
    if res[0] is out[0]:
        return res
    for o, r in zip(out, res, strict=True):
        o[...] = r
    return tuple(out)
