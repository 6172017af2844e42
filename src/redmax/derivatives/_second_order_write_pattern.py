"""Where the IDSVA-SO kernel writes (:mod:`.rnea_second_order`): the entries of the four tensors it
never writes (zero by the tree structure), found once per model, mode and thread plan by runs on NaN-filled
tensors, as the probes that ``out=`` checks and the runs that the kernel's threads zero in a fresh block."""

from __future__ import annotations

import numpy as np

from redmax.derivatives._second_order_mirror import _single_path
from redmax.derivatives._second_order_tensors import NO_RUNS, clean_runs, slab_bounds, unwritten_runs
from redmax.derivatives.core_tree import core_offsets
from redmax.model.layout import NO_FEXT, initial_jstate

__all__ = ["probes_and_runs"]


def _unwritten_masks(model, CI, tangent: bool, P, kernel) -> list:
    """Four (n, n, n) boolean masks of the entries ``kernel`` never writes (left NaN in NaN-filled tensors)."""
    Ii, Ff = model.packed
    n = int(CI[1])
    T = [np.full((n, n, n), np.nan) for _ in range(4)]
    rng = np.random.default_rng(0)
    x = [rng.standard_normal(model.ndof) * 0.1 for _ in range(3)]
    kernel(Ii, Ff, CI, *x, tangent, *P, *NO_RUNS, *T)
    return [np.isnan(t) for t in T]


def _owner(CI, nb: int, P):
    """(n,) the thread of the plan ``P`` that zeroes slab ``T[i]`` (:func:`slab_bounds`)."""
    owner = np.zeros(int(CI[1]), dtype=np.int64)
    bounds = slab_bounds(CI, nb, P[2], P[3])
    for c in range(P[2].shape[0] - 1):
        owner[bounds[c]:bounds[c + 1]] = c
    return owner


def probes_and_runs(model, CI, tangent: bool, P, kernel, part, touched=None) -> tuple:
    """``(i0, i1, i2, i3, zr, zs, zm, czr, czs, czm)`` for the thread plan ``P`` of ``kernel``
    (:func:`._second_order_drivers.rnea_second_order_plain`), whose thread c runs ``part``
    (:func:`._second_order_drivers._so_thread`) before the barrier: per tensor up to 16 flat indices
    (spread) of the entries the kernel never writes (zero by the tree structure), which ``out=`` checks, and the
    runs that the threads of the plan zero in fresh tensors (:func:`._second_order_tensors.unwritten_runs`;
    slab ``T[i]`` by the thread of :func:`._second_order_tensors.slab_bounds`, as ``_zero_slabs``).  The
    runs cover every entry never written and no entry that another thread writes before the barrier (``zm``: no
    mask).  ``czr, czs, czm``: with more than one thread, the masked runs of the never-written entries that the
    threads check (and zero if changed) in a recycled block (:func:`._second_order_tensors.clean_runs`), else
    empty; with ``touched`` (four (n, n, n) boolean masks: the entries a model whose coordinates differ from the
    core's in aligned blocks has non-zero in its results, where the chain rule may write what the kernel leaves),
    instead the runs (unmasked, as ``zr``) of the never-written entries among them, which are all a read-only
    recycled block needs zeroed: its other never-written entries hold the zeros of the call that wrote it.  Found
    by one run of the kernel on NaN-filled tensors and, with more than one thread, one of each thread's part alone
    (the entries it writes before the barrier)."""
    Ii, Ff = model.packed
    n = int(CI[1])
    rng = np.random.default_rng(0)
    x = [rng.standard_normal(model.ndof) * 0.1 for _ in range(3)]
    U = _unwritten_masks(model, CI, tangent, P, kernel)
    probes = [np.unique(np.flatnonzero(u)[np.linspace(0, max(int(u.sum()) - 1, 0), 16).astype(np.int64)])
              if u.any() else np.empty(0, np.int64) for u in U]
    nch = P[2].shape[0] - 1
    owner = _owner(CI, model.nb, P)
    foreign = None
    czr, czs, czm = NO_RUNS
    if nch > 1:  # what each thread writes before the barrier: its part alone on NaN-filled tensors
        czr, czs, czm = clean_runs(U, owner, nch)
        o_co = core_offsets(CI, model.nb)[7]
        nf = n if CI[2] != 1 else 0  # the first-order products the chain rule needs (as the kernel)
        written = []
        for c in range(nch):
            T = [np.full((n, n, n), np.nan) for _ in range(4)]
            fo = (np.zeros(nf), np.zeros((nf, nf)), np.zeros((nf, nf)), np.zeros((nf, nf)))
            part(Ii, Ff, CI, *x, initial_jstate(Ii), NO_FEXT, 1.0, tangent, CI[2] != 1, P[0], P[1], P[2], c, *NO_RUNS,
                 np.arange(CI[0]), not _single_path(CI), o_co, *T, *fo)
            written.append(np.flatnonzero(~np.isnan(np.stack(T))))
        foreign = [np.unique(np.concatenate([w for d, w in enumerate(written) if d != c])) for c in range(nch)]
        if touched is not None:
            S = [u & t for u, t in zip(U, touched, strict=True)]
            if any(s.any() for s in S):
                czr, czs = unwritten_runs(S, owner, nch, foreign)
            else:  # nothing to zero
                czr, czs = NO_RUNS[0], np.zeros(4 * nch + 1, dtype=np.int64)
            czm = NO_RUNS[2]
    return (*probes, *unwritten_runs(U, owner, nch, foreign), NO_RUNS[2], czr, czs, czm)
