"""Symmetric halves and thread plans of IDSVA-SO (:mod:`.rnea_second_order`): the kernel stores one
entry of each equal pair and :func:`_mirror` copies it; :func:`so_plan` splits the per-joint work and the mirror
into contiguous ranges of about equal cost for :func:`._second_order_drivers.idsva_so_par`."""

from __future__ import annotations

import numpy as np

from redmax._jit import FAST, U64, njit
from redmax.derivatives.core_tree import core_offsets
from redmax.derivatives.second_order_chain import related_dofs


@njit(cache=True)
def so_plan(CI, nb, nch):
    """``(rel, cj, starts, mstarts)`` for :func:`idsva_so_par`: the related-DOF mask, the core joint of every core DOF,
    the bounds (nch + 1,) of the threads' contiguous core-joint ranges, balanced by the estimated work of a joint
    with d DOFs and P DOFs on its root path, ~ d (P^2 / 2 + 8 P) (the pairs (t, r) of the triple loop and the
    vectors u), and those of the first-index ranges of the mirror after the threads meet (chains only; ~ b + n
    copies per related pair (a, b)).  Contiguous ranges, not dealt items: the threads then write distinct cache
    lines (entries ``[t, r, p]`` of neighbouring p share one)."""
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    rel, cj = _mirror_maps(CI, nb)
    cost = np.empty(ncj)
    for j in range(ncj):
        P = 0
        a = j
        while a >= 0:
            P += CI[o_co + a + 1] - CI[o_co + a]
            a = CI[o_cp + a]
        cost[j] = (CI[o_co + j + 1] - CI[o_co + j]) * (0.5 * P * P + 8.0 * P)
    mcost = np.zeros(ncd)
    for a in range(ncd):
        for b in range(ncd):
            if rel[a, b]:
                mcost[a] += b + (ncd if b < a else 0)
    return rel, cj, _split(cost, nch), _split(mcost, nch)


@njit(cache=True)
def _split(cost, nch):
    """Bounds (nch + 1,) of ``nch`` contiguous index ranges of about equal total ``cost``.  Contiguous ranges,
    not dealt ones: the threads then write distinct cache lines of the tensors (entries ``[t, r, p]`` of
    neighbouring p share a line)."""
    m = cost.shape[0]
    total = 0.0
    for j in range(m):
        total += cost[j]
    starts = np.empty(nch + 1, dtype=np.int64)
    starts[0] = 0
    acc = 0.0
    c = 1
    for j in range(m):
        while c < nch and acc >= total * c / nch:
            starts[c] = j
            c += 1
        acc += cost[j]
    while c <= nch:
        starts[c] = m
        c += 1
    return starts


@njit(cache=True, fastmath=FAST)
def _mirror(CI, nb, d2q, d2v, dM):
    """The symmetric halves :func:`idsva_so` leaves out: ``d2v[a, c, b] = d2v[a, b, c]`` and ``d2q[a, c, b] =
    d2q[a, b, c]`` for c < b (for d2q only across core joints: within a spherical or free joint the Lie
    derivatives do not commute), ``dM[b, a, :] = dM[a, b, :]`` for b < a; related pairs only.  Core DOFs are
    numbered parents first, so the kernel's writes of a symmetric pair with distinct joints are the ones whose
    later index is the deeper DOF; writing only those keeps the stores of the triple loop off the stride-n^2
    and stride-n paths that leave the cache for n of ~100.  (One thread, and chains on threads; on trees the
    threads write dM's mirror as they go, ``mirror_dm`` of :func:`._second_order_walk._so_joints`.)"""
    rel, cj = _mirror_maps(CI, nb)
    if _single_path(CI):
        _mirror_chain(cj, 0, rel.shape[0], d2q, d2v, dM)
    else:
        _mirror_part(rel, cj, 0, rel.shape[0], d2q, d2v, dM)


@njit(cache=True)
def _mirror_maps(CI, nb):
    """The related-pair mask (:func:`related_dofs`) and the core joint of every core DOF."""
    ncj, ncd, alltr, o_cj, o_cd, o_tr, o_cp, o_co, o_cb = core_offsets(CI, nb)
    rel = related_dofs(CI, nb)
    cj = np.empty(ncd, dtype=np.int64)
    for j in range(ncj):
        for d in range(CI[o_co + j], CI[o_co + j + 1]):
            cj[d] = j
    return rel, cj


@njit(inline="always")
def _mirror_ab(rel, cj, a, b, d2q, d2v):
    """``d2v[a, c, b] = d2v[a, b, c]`` (and d2q, across joints) for the c < b related to a and b."""
    for c in range(U64(b)):
        if rel[b, c] == 0 or rel[a, c] == 0:
            continue
        d2v[a, c, b] = d2v[a, b, c]
        if cj[b] != cj[c]:
            d2q[a, c, b] = d2q[a, b, c]


@njit(cache=True, fastmath=FAST)
def _mirror_owned(rel, cj, dlo, dhi, d2q, d2v):
    """The d2v and d2q halves of :func:`_mirror` whose largest index p is in ``dlo <= p < dhi``: the entries
    the kernel's calls for the joints of these DOFs wrote (the deepest index of a related triple is its largest),
    so that a thread mirrors what it wrote while it is in its cache.  With c < b, the largest of (a, b, c) is a
    (with b <= a) or b (with a < b)."""
    for p in range(dlo, dhi):
        for b in range(U64(p + 1)):  # a = p
            if rel[p, b] != 0:
                _mirror_ab(rel, cj, p, b, d2q, d2v)
        for a in range(U64(p)):  # b = p > a
            if rel[a, p] != 0:
                _mirror_ab(rel, cj, a, p, d2q, d2v)


@njit(cache=True, fastmath=FAST)
def _mirror_part(rel, cj, lo, hi, d2q, d2v, dM, with_v=True):
    """:func:`_mirror` for the first indices lo <= a < hi (only the dM rows if not ``with_v``, the part a thread
    plan ran after the threads met on trees before stop 43; kept for tests and serial use): the entries it
    writes are ``[a, ., .]`` and the rows ``[b, a, :]`` with b < a, those it reads ``[a, ., .]``: parts with
    disjoint ranges touch disjoint entries."""
    ncd = rel.shape[0]
    nv = ncd if with_v else 0
    for a in range(lo, hi):
        for b in range(U64(nv)):
            if rel[a, b] != 0:
                _mirror_ab(rel, cj, a, b, d2q, d2v)
        for b in range(U64(a)):
            if rel[a, b] == 0:
                continue
            for c in range(U64(ncd)):
                dM[b, a, c] = dM[a, b, c]


@njit(cache=True, fastmath=FAST)
def _mirror_chain(cj, lo, hi, d2q, d2v, dM):
    """:func:`_mirror_part` for the first indices lo <= a < hi on a single path (:func:`_single_path`: every DOF
    pair related), without the mask: ``d2v[a, c, b] = d2v[a, b, c]`` for c < b, ``d2q[a, c, b] = d2q[a, b, c]``
    for c < o(b), the first DOF of b's joint (core DOFs of a joint are contiguous, so these are the c < b of
    other joints), ``dM[b, a, :] = dM[a, b, :]`` for b < a.  Each slab's transposes in a loop of their own, with
    no loads of the mask in the inner loop: chain of 100, one thread, the whole mirror 1.2-2.0 -> 0.8-1.7 ms
    (one process; noisy, as the 24 MB it moves compete for the L3; docs/derivatives.md for the public call)."""
    ncd = cj.shape[0]
    o = np.empty(ncd, dtype=np.int64)  # o[b]: first DOF of b's core joint
    for b in range(ncd):
        o[b] = b if b == 0 or cj[b - 1] != cj[b] else o[b - 1]
    for a in range(lo, hi):
        X = d2v[a]
        for b in range(ncd):
            for c in range(b):
                X[c, b] = X[b, c]
        Y = d2q[a]
        for b in range(ncd):
            for c in range(o[b]):
                Y[c, b] = Y[b, c]
        for b in range(U64(a)):
            for c in range(U64(ncd)):
                dM[b, a, c] = dM[a, b, c]


@njit(cache=True)
def _single_path(CI):
    """True when every core joint's parent is the previous core joint (a chain: all DOF triples related)."""
    ncj = CI[0]
    nb = (CI.shape[0] - 7 - 3 * ncj) // 4  # the layout of _core.core_structure: 7 + 4 nb + 3 ncj entries
    o_cp = core_offsets(CI, nb)[6]
    for j in range(ncj):
        if CI[o_cp + j] != j - 1:
            return False
    return True
