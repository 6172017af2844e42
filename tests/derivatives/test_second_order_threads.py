"""IDSVA-SO in chunks on redmax's threads and into caller-owned tensors (``out=``): the plan covers every joint
and DOF once, the tensors do not depend on the chunks or the threads (bitwise: one compiled implementation), the
walk writes exactly the entries the tree structure allows, the in-place chain rule equals the general one, and
``out=`` and the recycled result blocks give what a fresh call returns, refusing arrays they would leave
inconsistent.  The threads compared here run explicit plans (several chunks on the calling thread, or a worker
allowed), so they test the chunking on one CPU too."""

import weakref

import numba
import numpy as np
import pytest

from derivative_models import charted as rm
from derivative_models import kinds_model, state
from redmax.derivatives import rnea_second_order as so
from redmax.derivatives.core_tree import core_structure
from redmax.derivatives.second_order_walk import mirror_chain, mirror_owned, plan, related_dofs, single_path
from redmax.errors import ModelError
from redmax.testing.models import random_model, random_state


def _scribble(res, value) -> None:
    """Fill the read-only result tensors ``res`` with ``value`` the one way NumPy allows: their block made
    writeable again through ``.base``, then each tensor."""
    for x in res:
        x.base.flags.writeable = True
        x.flags.writeable = True
        x[...] = value


def _same(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-14 * max(np.abs(b).max(), 1.0))


def _bits(a, b):
    return a.shape == b.shape and np.array_equal(np.asarray(a).view(np.uint64), np.asarray(b).view(np.uint64))


def _setup(seed, n, topology, floating):
    rng = np.random.default_rng(seed)
    m = kinds_model(rng, n, topology, floating)
    q, qd, qdd, _, fext = state(rng, m)
    return m, q, qd, qdd, np.ascontiguousarray(fext, dtype=float)


def _aligned(seed, n, topology, floating):
    """A random model of every multi-DOF joint kind in its own coordinates (aligned blocks) and a state."""
    rng = np.random.default_rng(seed)
    m = random_model(rng, n=n, topology=topology, joints="multi", floating=floating)
    q, qd = random_state(rng, m)[:2]
    CI = core_structure(m, False)
    assert CI[2] != 1 and CI[3] == 1, "a model whose coordinates differ from the core's, in aligned blocks"
    return m, q, qd, rng.normal(size=m.ndof)


def _structural_zeros(m, tangent):
    """Boolean (n, n, n) masks of d2q/d2v/d2qv and of dM where the walk writes nothing: DOF triples not on one
    root path, and for dM also k's core joint above (or the same as) those of both i and j."""
    CI = core_structure(m, tangent)
    rel, cj = plan(CI, m.nb, 1)[:2]
    rel = rel.astype(bool)
    triple = rel[:, :, None] & rel[:, None, :] & rel[None, :, :]
    above = (cj[None, None, :] <= cj[:, None, None]) & (cj[None, None, :] <= cj[None, :, None])
    return ~triple, ~triple | above


@pytest.mark.parametrize("topology,floating,tangent", [("chain", True, False), ("random", True, True),
                                                       ("random", False, False)])
@pytest.mark.parametrize("nch", [2, 3])
def test_chunked_walk_equals_one_chunk(topology, floating, tangent, nch):
    """The plan's chunks partition the core joints and the mirror's first indices (every chunk has work on a model
    of 24 joints), and a walk in 2 or 3 chunks, on the calling thread or with a worker allowed, gives the
    one-chunk tensors bitwise, on models of every joint kind with external wrenches (in the model's own
    coordinates these pass the chain rule: the first-order quantities the chunks form are compared through it)."""
    m, q, qd, qdd, fb = _setup(40 + nch, 24, topology, floating)  # (explicit plans: the initial charts, q0's)
    CI = core_structure(m, tangent)
    starts, mstarts = plan(CI, m.nb, nch)[2:]
    assert starts[0] == 0 and starts[-1] == CI[0] and np.all(np.diff(starts) >= 0) and starts.size == nch + 1
    assert mstarts[0] == 0 and mstarts[-1] == CI[1] and np.all(np.diff(mstarts) >= 0) and mstarts.size == nch + 1
    assert np.all(np.diff(starts) > 0), "every chunk gets work on a model of 24 joints"
    one = so.run_plan(m, tangent, q, qd, qdd, 1, f_ext=fb)
    assert np.count_nonzero(one[0]) > 0
    for helpers in (0, 1):
        got = so.run_plan(m, tangent, q, qd, qdd, nch, helpers, f_ext=fb)
        assert all(_bits(a, b) for a, b in zip(got, one, strict=True)), helpers


@pytest.mark.parametrize("topology,floating,tangent", [("random", True, True), ("binary-dfs", False, False),
                                                       ("chain", True, True), ("chain", False, False)])
@pytest.mark.parametrize("nch", [1, 3])
def test_walk_writes_exactly_what_the_structure_allows(topology, floating, tangent, nch):
    """On tensors full of NaN (dM's structural zeros zeroed) the walk and its mirror, in one or three chunks,
    write every entry of a DOF triple on one root path (all of them on chains) and no other, and dM's other
    structural zeros stay untouched: the entries a fresh block needs zeroed, ``out=`` checks and
    :func:`zero_unwritten` zeroes are exactly those the walk leaves."""
    from redmax.derivatives.second_order_walk import zero_unwritten

    rng = np.random.default_rng(43)
    m = random_model(rng, n=17, topology=topology, joints="revolute", floating=floating)
    q, qd = random_state(rng, m)
    qdd = rng.normal(size=m.ndof)
    CI = core_structure(m, tangent)
    assert CI[2] == 1, "the core's coordinates are the model's (no chain rule follows)"
    n = m.ndof
    z3, zm = _structural_zeros(m, tangent)
    assert (topology == "chain") == (not z3.any())
    T = [np.full((n, n, n), np.nan) for _ in range(4)]
    so.run_plan(m, tangent, q, qd, qdd, nch, out=tuple(T))
    for k, t in enumerate(T):
        left = np.isnan(t)
        np.testing.assert_array_equal(left, zm if k == 3 else z3)
    ref = so.run_plan(m, tangent, q, qd, qdd, 1)
    for a, b in zip(T, ref, strict=True):
        np.testing.assert_array_equal(b[np.isnan(a)], 0.0)
        assert _bits(a[~np.isnan(a)], b[~np.isnan(a)])
    rel, cj = plan(CI, m.nb, 1)[:2]
    Z = [np.ones((n, n, n)) for _ in range(4)]
    zero_unwritten(rel, cj, 0, n, *Z)
    for k, t in enumerate(Z):
        np.testing.assert_array_equal(t == 0, zm if k == 3 else z3)


def test_public_results_do_not_depend_on_the_thread_count():
    """rnea_second_order_derivatives with threads=1 and threads=2, on the lean path (no wrenches) and the checked
    one (wrenches), gives the same bits."""
    m, q, qd, qdd, fb = _setup(17, 20, "random", True)
    js = m.jstate0 if m.chart_joints.size else None
    for kw in ({"tangent": True, "jstate": js}, {"f_ext": fb, "jstate": js}):
        one = [x.copy() for x in rm.rnea_second_order_derivatives(m, q, qd, qdd, threads=1, **kw)]
        two = rm.rnea_second_order_derivatives(m, q, qd, qdd, threads=2, **kw)
        assert all(_bits(a, b) for a, b in zip(one, two, strict=True))


@pytest.mark.parametrize("topology,floating,tangent", [("random", True, True), ("chain", False, False),
                                                       ("random", True, False)])
def test_out_fills_the_callers_tensors(topology, floating, tangent):
    """out= returns the caller's four arrays holding what a fresh call returns; calling again with the results
    of the previous call (a DDP loop) gives the new state's tensors.  Where the model's coordinates need the
    chain rule (rotation vectors of free and spherical joints) every entry is written: arrays full of ones are
    overwritten."""
    rng = np.random.default_rng(23)
    m = kinds_model(rng, 16, topology, floating)
    n = m.ndof
    js = m.jstate0 if m.chart_joints.size else None
    states = [state(rng, m)[:3] for _ in range(2)]
    out = tuple(np.zeros((n, n, n)) for _ in range(4))
    for q, qd, qdd in states:
        fresh = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent, jstate=js)
        got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent, jstate=js, out=out)
        assert all(a is b for a, b in zip(got, out, strict=True))
        for a, b in zip(got, fresh, strict=True):
            np.testing.assert_array_equal(a, b)
    if not tangent and floating:  # rotation vectors: chain rule, every entry written
        ones = tuple(np.ones((n, n, n)) for _ in range(4))
        got = rm.rnea_second_order_derivatives(m, q, qd, qdd, jstate=js, out=ones)
        for a, b in zip(got, fresh, strict=True):
            np.testing.assert_array_equal(a, b)


def test_out_aligned_chain_rule_zeroes_before_the_walk():
    """A free base in rotation vectors whose core blocks align with the model's coordinates: out= is zeroed where
    the walk writes nothing (slab chunks) and then transformed in place.  Arrays full of ones or NaN come back
    equal to a fresh call, on one thread and on two."""
    rng = np.random.default_rng(31)
    m = random_model(rng, n=20, topology="random", joints="revolute", floating=True)
    CI = core_structure(m, False)
    assert CI[2] != 1 and CI[3] == 1 and int(CI[1]) == m.ndof  # the in-place chain rule
    n = m.ndof
    q, qd = random_state(rng, m)
    qdd = rng.normal(size=n)
    for threads in (1, 2):
        fresh = rm.rnea_second_order_derivatives(m, q, qd, qdd, threads=threads)
        for fill in (1.0, np.nan):
            full = tuple(np.full((n, n, n), fill) for _ in range(4))
            got = rm.rnea_second_order_derivatives(m, q, qd, qdd, out=full, threads=threads)
            assert all(a is b for a, b in zip(got, full, strict=True))
            for a, b in zip(got, fresh, strict=True):
                np.testing.assert_array_equal(a, b)


def test_out_refuses_what_it_cannot_fill():
    """Wrong count, shape, dtype or layout, arrays sharing memory, a complex state, or non-zero values where the
    tree structure makes the derivatives zero (entries the kernel does not write): ModelError naming out and the
    tensor."""
    rng = np.random.default_rng(2)
    m = random_model(rng, n=14, topology="random", joints="revolute")
    q, qd = random_state(rng, m)
    qdd = rng.normal(size=m.ndof)
    n = m.ndof
    good = [np.zeros((n, n, n)) for _ in range(4)]
    with pytest.raises(ModelError, match="out must be a tuple of four"):
        rm.rnea_second_order_derivatives(m, q, qd, qdd, out=good[:3])
    with pytest.raises(ModelError, match=r"out\[1\] \(d2tau_dqd2\)"):
        rm.rnea_second_order_derivatives(m, q, qd, qdd, out=(good[0], np.zeros((n, n, n - 1)), good[2], good[3]))
    with pytest.raises(ModelError, match=r"out\[2\] \(d2tau_dqdqd\)"):
        rm.rnea_second_order_derivatives(m, q, qd, qdd, out=(good[0], good[1], np.zeros((n, n, n), np.float32),
                                                             good[3]))
    with pytest.raises(ModelError, match=r"out\[0\] \(d2tau_dq2\)"):
        rm.rnea_second_order_derivatives(m, q, qd, qdd, out=(np.zeros((n, n, n), order="F"), *good[1:]))
    with pytest.raises(ModelError, match="float64 results only"):
        rm.rnea_second_order_derivatives(m, q + 0j, qd, qdd, out=tuple(good))
    big = np.zeros((2 * n, n, n))  # two tensors in one array's memory: one would be written over the other
    with pytest.raises(ModelError, match=r"out\[1\] \(d2tau_dqd2\) and out\[3\] \(dM_dq\) share memory"):
        rm.rnea_second_order_derivatives(m, q, qd, qdd, out=(good[0], big[:n], good[2], big[n // 2:n // 2 + n]))
    stale = [g.copy() for g in good]
    stale[3][...] = 1.0
    with pytest.raises(ModelError, match=r"out\[3\] \(dM_dq\) has non-zero entries"):
        rm.rnea_second_order_derivatives(m, q, qd, qdd, out=tuple(stale))
    fb = np.zeros((m.nb, 6))
    with pytest.raises(ModelError, match=r"out\[3\] \(dM_dq\) has non-zero entries"):  # the checked path too
        rm.rnea_second_order_derivatives(m, q, qd, qdd, f_ext=fb, out=tuple(stale))


def test_out_and_inputs_the_lean_path_does_not_take():
    """out= on one thread and on two equals a fresh call; vectors the lean path does not take (strided,
    read-only, a subclass, a list) reach the checked path with the same tensors; read-only out and a NaN raise the
    checked path's ModelError."""
    rng = np.random.default_rng(31)
    m = random_model(rng, n=14, topology="random", joints="multi", floating=True)  # no Euler charts
    assert not m.chart_joints.size
    q, qd = random_state(rng, m)
    qdd = rng.normal(size=m.ndof)
    n = m.ndof
    fresh = [x.copy() for x in rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True)]
    for threads in (1, 2, 1):
        out = tuple(np.zeros((n, n, n)) for _ in range(4))
        got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True, out=out, threads=threads)
        assert all(a is b for a, b in zip(got, out, strict=True))
        assert all(_bits(a, b) for a, b in zip(got, fresh, strict=True))
    wide = np.zeros((3, n))
    wide[0] = q
    ro = q.copy()
    ro.flags.writeable = False

    class Sub(np.ndarray):
        pass

    for qq in (wide.T[:, 0], ro, q.view(Sub), list(q)):  # strided, read-only, subclass, list
        got = rm.rnea_second_order_derivatives(m, qq, qd, qdd, tangent=True)
        for a, b in zip(got, fresh, strict=True):
            _same(a, b)
            assert not a.flags.writeable and not a.base.flags.writeable
    frozen = [np.zeros((n, n, n)) for _ in range(4)]
    frozen[2].flags.writeable = False
    with pytest.raises(ModelError, match=r"out\[2\] \(d2tau_dqdqd\)"):
        rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True, out=tuple(frozen))
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(ModelError, match="q"):
        rm.rnea_second_order_derivatives(m, bad, qd, qdd, tangent=True, out=tuple(np.zeros((n, n, n))
                                                                                 for _ in range(4)))
    with pytest.raises(ModelError, match="q"):
        rm.rnea_second_order_derivatives(m, bad, qd, qdd, tangent=True)
    with pytest.raises(ModelError, match="q"):
        rm.rnea_second_order_derivatives(m, q[:-1], qd, qdd, tangent=True)


@pytest.mark.parametrize("topology,floating", [("random", True), ("random", False), ("chain", True)])
def test_in_place_chain_rule_equals_the_general_one(topology, floating):
    """The in-place chain rule of aligned models (spherical, universal, planar and free joints in their own
    coordinates) in slab and row chunks equals the general chain rule (``chain_second_order``, written
    independently) from the same core tensors, and does not depend on its chunks (bitwise)."""
    m, q, qd, qdd = _aligned(47, 16, topology, floating)
    core = so.run_plan(m, True, q, qd, qdd, 1)  # (only to show the chain rule changes something)
    one = so.run_plan(m, False, q, qd, qdd, 1)
    gen = so.run_plan(m, False, q, qd, qdd, 1, general=True)
    changed = 0
    for a, c, t in zip(one, gen, core, strict=True):
        np.testing.assert_allclose(a, c, rtol=0, atol=1e-12 * np.abs(c).max())
        changed += int(np.count_nonzero(a != t))
    assert changed > 0
    for nch in (2, 3):
        got = so.run_plan(m, False, q, qd, qdd, nch, helpers=1)
        assert all(_bits(a, b) for a, b in zip(got, one, strict=True))


@pytest.mark.parametrize("tangent", [False, True])
def test_chain_mirror_equals_masked_mirror(tangent):
    """On a single path the mirror copies its slabs without the related-pair mask (``mirror_chain``): the same
    entries as the masked mirror of the walk's chunks on trees (``mirror_owned``), also for the d2q pairs within a
    multi-DOF joint, which stay unmirrored, and on any split of the first indices."""
    m, *_ = _setup(5, 12, "chain", True)
    CI = core_structure(m, tangent)
    assert single_path(CI)
    rel, cj = plan(CI, m.nb, 1)[:2]
    assert rel.all() and np.any(cj[1:] == cj[:-1])  # every pair related; some joint has several DOFs
    n = int(CI[1])
    T = np.random.default_rng(3).normal(size=(3, n, n, n))
    ref = T.copy()
    mirror_owned(rel, cj, 0, n, ref[0], ref[1])
    for a in range(n):  # dM: rows [b, a, :] = [a, b, :] for b < a (the walk's mirror_dm on trees)
        for b in range(a):
            ref[2][b, a, :] = ref[2][a, b, :]
    for cut in (0, n // 3, n):
        got = T.copy()
        mirror_chain(cj, 0, cut, got[0], got[1], got[2])
        mirror_chain(cj, cut, n, got[0], got[1], got[2])
        np.testing.assert_array_equal(got, ref)
    assert not np.array_equal(ref, T)  # the mirror changed something


def test_fresh_results_reuse_only_a_dropped_block():
    """Without out= the results are read-only and a call reuses the block of one of the model's two previous
    calls only when the caller holds no reference to it (no tensor, view or base array) and never made it
    writeable: results the caller keeps never change, a dropped result that the caller made writeable and changed
    is not reused (its structural zeros may be gone) and the results stay right, and ``b = f()`` in a loop
    alternates between two blocks."""
    import redmax

    rng = np.random.default_rng(11)
    m = random_model(rng, n=20, topology="random", joints="revolute", gravity=(0, 0, -9.81))
    q, qd, qdd = rng.normal(size=(3, m.ndof))
    ref = [r.copy() for r in redmax.rnea_second_order_derivatives(m, q, qd, qdd)]
    kept = redmax.rnea_second_order_derivatives(m, q, qd, qdd)
    view = redmax.rnea_second_order_derivatives(m, q, qd, qdd)[2][1:3]
    a = redmax.rnea_second_order_derivatives(m, q, qd, qdd)
    for res in (kept, a):
        for x, y in zip(res, ref, strict=True):
            np.testing.assert_array_equal(x, y)
            assert not x.flags.writeable
            with pytest.raises(ValueError, match="read-only"):
                x[0, 0, 0] = 1.0
            with pytest.raises(ValueError):
                x.flags.writeable = True  # its block is read-only too
    del res
    assert len({id(kept[0].base), id(view.base), id(a[0].base)}) == 3
    ida = id(a[0].base)
    _scribble(a, np.nan)  # changed everywhere, then dropped
    del a, x
    b = redmax.rnea_second_order_derivatives(m, q, qd, qdd)
    assert id(b[0].base) != ida, "a block the caller changed is not reused"
    for x, y in zip(b, ref, strict=True):
        np.testing.assert_array_equal(x, y)
        assert not x.flags.writeable and not x.base.flags.writeable  # read-only
    for x, y in zip(kept, ref, strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(view, ref[2][1:3])
    ids = []
    for _ in range(8):  # a loop that holds the last result while it calls: two blocks alternate
        b = redmax.rnea_second_order_derivatives(m, q, qd, qdd)
        ids.append(id(b[0].base))
        for x, y in zip(b, ref, strict=True):
            np.testing.assert_array_equal(x, y)
    assert len(set(ids[2:])) == 2 and ids[2] == ids[4], ids
    del b, x
    for _ in range(4):  # recycled blocks at new states: every written entry written again
        q, qd, qdd = rng.normal(size=(3, m.ndof))
        got = redmax.rnea_second_order_derivatives(m, q, qd, qdd)
        want = redmax.rnea_second_order_derivatives(m, q, qd, qdd, f_ext=np.zeros((m.nb, 6)))  # checked path
        for x, y in zip(got, want, strict=True):
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-12 * np.abs(y).max())
            np.testing.assert_array_equal(x == 0, y == 0)
        del got, x


def test_blocks_up_to_the_pool_bound_are_reused_and_larger_ones_are_not(monkeypatch):
    """A dropped result's block is reused when it holds at most ``POOL_BYTES`` (a fresh block of 4 n^3 doubles costs
    more in page faults than the walk of a sparse tree: 128 MB, n <= 161, by default), and is new at every call
    above it; the results are the same either way."""
    import redmax
    from redmax.derivatives import rnea_second_order as so

    assert so.POOL_BYTES >= 4 * 161 ** 3 * 8 and so.POOL_BYTES < 4 * 162 ** 3 * 8
    rng = np.random.default_rng(5)
    m = random_model(rng, n=15, topology="binary-dfs", joints="revolute", gravity=(0, 0, -9.81))
    q, qd, qdd = rng.normal(size=(3, m.ndof))
    nbytes = 4 * m.ndof ** 3 * 8
    ref = [r.copy() for r in redmax.rnea_second_order_derivatives(m, q, qd, qdd)]
    for bound, reused in ((nbytes - 1, False), (nbytes, True)):
        monkeypatch.setattr(so, "POOL_BYTES", bound)
        same = []
        for _ in range(3):
            r = redmax.rnea_second_order_derivatives(m, q, qd, qdd)
            block = weakref.ref(r[0].base)  # (dead once dropped, unless a model keeps it)
            for x, y in zip(r, ref, strict=True):
                np.testing.assert_array_equal(x, y)
            del r, x
            r = redmax.rnea_second_order_derivatives(m, q, qd, qdd)
            same.append(r[0].base is block())
            del r
        assert same == [reused] * 3, (bound, same)


def test_a_rejected_call_leaves_no_block_behind():
    """A call the kernel rejects (a NaN) raises the checked path's ModelError and keeps no block; the next calls
    are right."""
    m = random_model(np.random.default_rng(7), n=16, topology="random", joints="multi", floating=True)
    rng = np.random.default_rng(3)
    q, qd = random_state(rng, m)
    qdd = rng.normal(size=m.ndof)
    ref = [x.copy() for x in rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True)]
    nan = q.copy()
    nan[1] = np.nan
    for _ in range(3):
        with pytest.raises(ModelError, match="q"):
            rm.rnea_second_order_derivatives(m, nan, qd, qdd, tangent=True)
    got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True)
    assert all(_bits(a, b) for a, b in zip(got, ref, strict=True))


@pytest.mark.parametrize("threads", [1, 2])
def test_aligned_lean_path_equals_checked_path_and_recycles(threads):
    """A free base in rotation vectors (coordinates that differ from the core's in aligned blocks) takes the lean
    path too.  Its tensors equal those of the checked path (reached with zero external wrenches) bitwise (one
    compiled implementation), and its own first result exactly after the caller dropped results (the chain rule
    adds the terms of the map's derivative to entries the walk leaves: they are zeroed first); results the caller
    keeps never change; at states that change every such entry from call to call, recycled blocks give the
    checked path's results."""
    rng = np.random.default_rng(61)
    m = random_model(rng, n=20, topology="random", joints="multi", floating=True, gravity=(0, 0, -9.81))
    CI = core_structure(m, False)
    assert CI[2] != 1 and CI[3] == 1 and int(CI[1]) == m.ndof
    q, qd = random_state(rng, m)
    qdd = rng.normal(size=m.ndof)
    checked = rm.rnea_second_order_derivatives(m, q, qd, qdd, f_ext=np.zeros((m.nb, 6)), threads=threads)
    kept = rm.rnea_second_order_derivatives(m, q, qd, qdd, threads=threads)
    ref = [r.copy() for r in kept]
    assert all(_bits(a, b) for a, b in zip(kept, checked, strict=True))
    for _ in range(4):
        a = rm.rnea_second_order_derivatives(m, q, qd, qdd, threads=threads)
        assert all(_bits(x, y) for x, y in zip(a, ref, strict=True))
        del a
    for a, b in zip(kept, ref, strict=True):
        np.testing.assert_array_equal(a, b)
    ids = set()
    for _ in range(5):
        q, qd = random_state(rng, m)
        qdd = rng.normal(size=m.ndof)
        got = rm.rnea_second_order_derivatives(m, q, qd, qdd, threads=threads)
        ids.add(id(got[0].base))
        want = rm.rnea_second_order_derivatives(m, q, qd, qdd, f_ext=np.zeros((m.nb, 6)), threads=threads)
        assert all(_bits(x, y) for x, y in zip(got, want, strict=True))
        del got, want
    assert len(ids) <= 2, "the blocks are recycled"


@pytest.mark.parametrize("topology,floating", [("random", True), ("chain", True)])
def test_aligned_chain_rule_touches_only_related_triples(topology, floating):
    """The walk and the in-place chain rule read and write only the entries of related index triples (every pair
    on one root path): with NaN in every other entry of the tensors (no zeroing before the walk) they give the
    result on zeroed ones there, and leave the NaN where they are; in one chunk and in three."""
    m, q, qd, qdd = _aligned(53, 16, topology, floating)
    CI = core_structure(m, False)
    rel = related_dofs(CI, m.nb).astype(bool)
    triple = rel[:, :, None] & rel[:, None, :] & rel[None, :, :]
    ref = so.run_plan(m, False, q, qd, qdd, 1)
    for nch in (1, 3):
        for mark in (np.nan, 3.0):  # NaN: never read; 3.0: never written
            dirty = tuple(np.where(triple, 0.0, mark) for _ in range(4))
            got = so.run_plan(m, False, q, qd, qdd, nch, out=dirty, zero=False)
            for a, b in zip(got, ref, strict=True):
                np.testing.assert_array_equal(a[~triple], mark, err_msg="an entry of an unrelated triple changed")
                np.testing.assert_array_equal(a[triple], b[triple])
                assert np.all(b[~triple] == 0)
    if topology == "random":
        assert (~triple).any()


@pytest.mark.parametrize("topology,floating", [("random", True), ("chain", True), ("random", False)])
def test_first_order_products_only_where_the_chain_rule_reads_them(topology, floating):
    """On aligned models the walk forms the first-order products of the chain rule (T_q, T_v, M_c) only in the
    rows and columns of the block DOFs (``block_dofs``): there they equal the products of every DOF pair, elsewhere
    they stay zero, and the tensors and tau_c do not change; the general chain rule then gives the same result
    from either (the in-place one reads only those: :func:`test_in_place_chain_rule_equals_the_general_one`)."""
    from redmax.derivatives.second_order_chain import block_dofs, chain_second_order
    from redmax.derivatives.second_order_walk import walk_serial
    from redmax.model.layout import initial_jstate

    m, q, qd, qdd = _aligned(61, 14, topology, floating)
    Ii, Ff = m.packed
    CI = core_structure(m, False)
    n = m.ndof
    js = np.array(initial_jstate(Ii))
    need = block_dofs(Ii, CI, False)
    assert 0 < need.sum() < n
    fb = np.zeros((m.nb, 6))
    rel, cj = plan(CI, m.nb, 1)[:2]
    runs = {}
    for name, nd in (("all", np.ones(n, dtype=np.uint8)), ("blocks", need)):
        T = [np.zeros((n, n, n)) for _ in range(4)]
        FO = walk_serial(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, False, True, nd, rel, cj, *T)
        runs[name] = (T, FO)
    (Ta, FOa), (Tb, FOb) = runs["all"], runs["blocks"]
    for a, b in zip(Ta, Tb, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(FOa[0], FOb[0])
    read = (need[:, None] | need[None, :]).astype(bool)
    for a, b in zip(FOa[1:], FOb[1:], strict=True):
        np.testing.assert_array_equal(b[read], a[read])
        assert np.all(b[~read] == 0)
        assert np.count_nonzero(a[~read]) > 0  # products the restriction skips
    ra = [np.zeros((n, n, n)) for _ in range(4)]
    rb = [np.zeros((n, n, n)) for _ in range(4)]
    chain_second_order(Ii, Ff, CI, q, qd, qdd, js, False, *FOa, *[t.copy() for t in Ta], *ra)
    chain_second_order(Ii, Ff, CI, q, qd, qdd, js, False, *FOb, *[t.copy() for t in Tb], *rb)
    for a, b in zip(ra, rb, strict=True):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-13 * np.abs(a).max())


@pytest.mark.parametrize("tangent", [False, True])
@pytest.mark.parametrize("nch", [2, 3])
def test_tree_chunks_write_both_halves_of_dM(tangent, nch):
    """On trees each chunk of the walk writes dM in symmetric pairs (``dM[b, a, k]`` with ``dM[a, b, k]``, equal
    bitwise): no chunk reads what another wrote, and no second pass is needed.  The written entries of the chunks
    partition those of the whole walk."""
    m, q, qd, qdd, _ = _setup(61 + nch, 22, "random", True)
    CI = core_structure(m, tangent)
    assert not single_path(CI)
    n = int(CI[1])  # (core tensors: in the model's coordinates a chain rule would follow)
    seen = np.zeros((n, n, n), dtype=np.int64)
    for c in range(nch):
        T = [np.full((n, n, n), np.nan) for _ in range(4)]
        so.run_one_chunk(m, tangent, q, qd, qdd, nch, c, T)
        w = ~np.isnan(T[3])
        assert w.any()
        np.testing.assert_array_equal(w, w.transpose(1, 0, 2))
        np.testing.assert_array_equal(T[3][w].view(np.int64), T[3].transpose(1, 0, 2)[w].view(np.int64))
        seen += w
    whole = np.zeros((n, n, n), dtype=np.int64)
    for c in range(nch):  # (the chunks alone, in the other order: each writes the same entries)
        T = [np.full((n, n, n), np.nan) for _ in range(4)]
        so.run_one_chunk(m, tangent, q, qd, qdd, nch, nch - 1 - c, T)
        whole += ~np.isnan(T[3])
    assert seen.max() == 1
    np.testing.assert_array_equal(seen, whole)
    T = [np.full((n, n, n), np.nan) for _ in range(4)]
    so.run_one_chunk(m, tangent, q, qd, qdd, 1, 0, T)  # the whole walk in one chunk
    np.testing.assert_array_equal(seen == 1, ~np.isnan(T[3]))


def test_numba_thread_count_is_not_used_or_changed():
    """redmax's threads are its own: Numba's thread count neither limits a call nor is changed by one."""
    m, q, qd, qdd, _ = _setup(17, 20, "random", True)
    js = m.jstate0 if m.chart_joints.size else None
    before = numba.get_num_threads()
    ref = [x.copy() for x in rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True, jstate=js, threads=2)]
    try:
        numba.set_num_threads(1)
        got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True, jstate=js, threads=2)
        assert numba.get_num_threads() == 1
        assert all(_bits(a, b) for a, b in zip(got, ref, strict=True))
    finally:
        numba.set_num_threads(before)
