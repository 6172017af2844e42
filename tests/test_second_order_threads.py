"""IDSVA-SO on threads and into caller-owned tensors (``out=``): the threaded kernel writes the serial kernel's
tensors (each entry is computed by the same operations, only the thread differs; equal to round-off, as the two
are compiled apart and fastmath lets LLVM contract them differently), the thread plan covers every joint and DOF
once, and ``out=`` fills the caller's arrays with what a fresh call returns, refusing arrays it would leave
inconsistent."""


import numba
import numpy as np
import pytest

from derivative_models import charted as rm
from derivative_models import kinds_model, state
from redmax.derivatives._second_order_mirror import so_plan
from redmax.derivatives._second_order_tensors import NO_RUNS
from redmax.derivatives.core_tree import core_structure
from redmax.derivatives.rnea_second_order import (
    core_tensors,
    idsva_so,
    idsva_so_par,
    rnea_second_order_kernel,
    rnea_second_order_kernel_par,
)
from redmax.errors import ModelError
from redmax.model.layout import initial_jstate
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


def _setup(seed, n, topology, floating, tangent):
    rng = np.random.default_rng(seed)
    m = kinds_model(rng, n, topology, floating)
    q, qd, qdd, _, fext = state(rng, m)
    Ii, Ff = m.packed
    CI = core_structure(m, tangent)
    return m, Ii, Ff, CI, q, qd, qdd, initial_jstate(Ii), np.ascontiguousarray(fext, dtype=float)


def _aligned_setup(seed, n, topology, floating):
    """A random model of every multi-DOF joint kind in its own coordinates (aligned blocks), a state and its
    packed arrays: ``m, Ii, Ff, CI, q, qd, qdd, js, ncd``."""
    rng = np.random.default_rng(seed)
    m = random_model(rng, n=n, topology=topology, joints="multi", floating=floating)
    q, qd = random_state(rng, m)[:2]
    qdd = rng.normal(size=m.ndof)
    Ii, Ff = m.packed
    CI = core_structure(m, False)
    assert CI[2] != 1 and CI[3] == 1, "a model whose coordinates differ from the core's, in aligned blocks"
    return m, Ii, Ff, CI, q, qd, qdd, initial_jstate(Ii), int(CI[1])


@pytest.mark.parametrize("topology,floating,tangent", [("chain", True, False), ("random", True, True),
                                                       ("random", False, False)])
@pytest.mark.parametrize("nch", [2, 3])
def test_threaded_kernel_equals_the_serial_one(topology, floating, tangent, nch):
    """idsva_so_par with 2 and 3 threads' plans equals idsva_so to round-off (tensors and the first-order quantities
    of the chain rule), on models of every joint kind with external wrenches; the plan's ranges partition the
    core joints and the mirror's first indices."""
    m, Ii, Ff, CI, q, qd, qdd, js, fb = _setup(40 + nch, 24, topology, floating, tangent)
    rel, cj, starts, mstarts = so_plan(CI, m.nb, nch)
    assert starts[0] == 0 and starts[-1] == CI[0] and np.all(np.diff(starts) >= 0) and starts.size == nch + 1
    assert mstarts[0] == 0 and mstarts[-1] == CI[1] and np.all(np.diff(mstarts) >= 0) and mstarts.size == nch + 1
    assert np.all(np.diff(starts) > 0), "every thread gets work on a model of 24 joints"
    ser = [np.zeros_like(t) for t in core_tensors(CI, np.float64)]
    par = [np.zeros_like(t) for t in core_tensors(CI, np.float64)]
    fo_s = idsva_so(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, tangent, True, *ser)
    fo_p = idsva_so_par(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, tangent, True, rel, cj, starts, mstarts, *NO_RUNS,
                        *par)
    assert np.count_nonzero(ser[0]) > 0
    for a, b in zip(ser + list(fo_s), par + list(fo_p), strict=True):
        _same(b, a)


@pytest.mark.parametrize("tangent", [False, True])
def test_threaded_chain_kernel_writes_every_entry(tangent):
    """The chain fast path allocates d2q, d2v, d2qv uninitialised: with threads too every entry is written
    (NaN-filled tensors give the zero-filled result)."""
    m, Ii, Ff, CI, q, qd, qdd, js, fb = _setup(9, 18, "chain", True, tangent)
    P = so_plan(CI, m.nb, 2)
    ref = rnea_second_order_kernel(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, tangent,
                                   *[np.zeros_like(t) for t in core_tensors(CI, np.float64)])
    nan = [np.full_like(t, np.nan) for t in core_tensors(CI, np.float64)]
    got = rnea_second_order_kernel_par(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, tangent, *P, *nan[:3],
                                       np.zeros_like(nan[3]), *NO_RUNS)
    for a, b in zip(got, ref, strict=True):
        assert np.isfinite(a).all()
        _same(a, b)


def test_public_results_do_not_depend_on_the_thread_count():
    """rnea_second_order_derivatives with Numba's thread count at 1 (the serial kernel) and at 2 (the threaded
    one) returns the same tensors, on the fast path (no wrenches) and the checked one (wrenches), to round-off:
    the two kernels are compiled apart, and fastmath lets LLVM contract their operations differently."""
    m, _, _, _, q, qd, qdd, _, fb = _setup(17, 20, "random", True, True)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = [rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True),
               rm.rnea_second_order_derivatives(m, q, qd, qdd, f_ext=fb)]
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = [rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True),
               rm.rnea_second_order_derivatives(m, q, qd, qdd, f_ext=fb)]
    finally:
        numba.set_num_threads(before)
    for r1, r2 in zip(one, two, strict=True):
        for a, b in zip(r1, r2, strict=True):
            _same(b, a)


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
    states = [state(rng, m)[:3] for _ in range(2)]
    out = tuple(np.zeros((n, n, n)) for _ in range(4))
    for q, qd, qdd in states:
        fresh = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent)
        got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent, out=out)
        assert all(a is b for a, b in zip(got, out, strict=True))
        for a, b in zip(got, fresh, strict=True):
            np.testing.assert_array_equal(a, b)
    if not tangent and floating:  # rotation vectors: chain rule, result copied into out
        ones = tuple(np.ones((n, n, n)) for _ in range(4))
        got = rm.rnea_second_order_derivatives(m, q, qd, qdd, out=ones)
        for a, b in zip(got, fresh, strict=True):
            np.testing.assert_array_equal(a, b)


def test_out_aligned_chain_rule_zeroes_on_the_threads():
    """A free base in rotation vectors whose core blocks align with the model's coordinates: out= is zeroed slab
    by slab on the plan's threads (as the fresh tensors) and then transformed in place.  Arrays full of ones come
    back equal to a fresh call, on one thread and on two."""
    rng = np.random.default_rng(31)
    m = random_model(rng, n=20, topology="random", joints="revolute", floating=True)
    CI = core_structure(m, False)
    assert CI[2] != 1 and CI[3] == 1 and int(CI[1]) == m.ndof  # the aligned chain rule
    n = m.ndof
    q, qd = random_state(rng, m)
    qdd = rng.normal(size=n)
    before = numba.get_num_threads()
    try:
        for nch in (1, 2):
            numba.set_num_threads(nch)
            fresh = rm.rnea_second_order_derivatives(m, q, qd, qdd)
            ones = tuple(np.ones((n, n, n)) for _ in range(4))
            got = rm.rnea_second_order_derivatives(m, q, qd, qdd, out=ones)
            assert all(a is b for a, b in zip(got, ones, strict=True))
            for a, b in zip(got, fresh, strict=True):
                np.testing.assert_array_equal(a, b)
    finally:
        numba.set_num_threads(before)


def test_out_refuses_what_it_cannot_fill():
    """Wrong count, shape, dtype or layout, a complex state, or non-zero values where the tree structure makes
    the derivatives zero (entries the kernel does not write): ModelError naming out and the tensor."""
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
    stale = [g.copy() for g in good]
    stale[3][...] = 1.0
    with pytest.raises(ModelError, match=r"out\[3\] \(dM_dq\) has non-zero entries"):
        rm.rnea_second_order_derivatives(m, q, qd, qdd, out=tuple(stale))
    fb = np.zeros((m.nb, 6))
    with pytest.raises(ModelError, match=r"out\[3\] \(dM_dq\) has non-zero entries"):  # the checked path too
        rm.rnea_second_order_derivatives(m, q, qd, qdd, f_ext=fb, out=tuple(stale))


def test_out_lean_path_replans_and_falls_back():
    """The lean out= path (one compiled call through a cached entry point) re-plans when Numba's thread count
    changes, and leaves every call it does not fit -- strided or read-only vectors, read-only tensors, a NaN --
    to the checked path: same tensors as a fresh call, or the checked path's ModelError."""
    from redmax.derivatives import rnea_second_order as so
    from redmax.dynamics._single_call import model_table

    rng = np.random.default_rng(31)
    m = random_model(rng, n=14, topology="random", joints="multi", floating=True)  # no Euler charts
    assert not m.chart_joints.size
    q, qd = random_state(rng, m)
    qdd = rng.normal(size=m.ndof)
    n = m.ndof
    fresh = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True)
    before = numba.get_num_threads()
    try:
        for nt in (1, min(2, numba.config.NUMBA_NUM_THREADS), 1):
            numba.set_num_threads(nt)
            out = tuple(np.zeros((n, n, n)) for _ in range(4))
            got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True, out=out)
            assert all(a is b for a, b in zip(got, out, strict=True))
            for a, b in zip(got, fresh, strict=True):
                _same(a, b)
            rec = model_table(m)[("rnea_second_order_into", True)]
            assert rec is not None and rec[1] == (nt if int(core_structure(m, True)[1]) >= so.PAR_MIN_DOFS else 0)
    finally:
        numba.set_num_threads(before)
    wide = np.zeros((3, n))
    wide[0] = q
    ro = q.copy()
    ro.flags.writeable = False
    for qq in (wide.T[:, 0], ro):  # strided, read-only
        out = tuple(np.zeros((n, n, n)) for _ in range(4))
        got = rm.rnea_second_order_derivatives(m, qq, qd, qdd, tangent=True, out=out)
        for a, b in zip(got, fresh, strict=True):
            _same(a, b)
    frozen = [np.zeros((n, n, n)) for _ in range(4)]
    frozen[2].flags.writeable = False
    with pytest.raises(ModelError, match=r"out\[2\] \(d2tau_dqdqd\)"):
        rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True, out=tuple(frozen))
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(ModelError, match="q"):
        rm.rnea_second_order_derivatives(m, bad, qd, qdd, tangent=True, out=tuple(np.zeros((n, n, n))
                                                                                 for _ in range(4)))


@pytest.mark.parametrize("topology,floating,tangent,nch", [("random", True, True, 2), ("binary-dfs", False, False, 3),
                                                           ("chain", False, False, 2), ("chain", True, True, 3)])
def test_fresh_tensors_zero_what_the_kernel_leaves(topology, floating, tangent, nch):
    """fresh_tensors' parallel zeroing (slabs by the thread that writes them): on trees every entry of the four
    tensors, on chains every entry of dM (the kernel writes all of d2q, d2v, d2qv); the threaded kernel on
    NaN-filled memory zeroed that way gives the serial kernel's tensors."""
    from redmax.derivatives._second_order_tensors import _zero_slabs

    m, Ii, Ff, CI, q, qd, qdd, js, fb = _setup(41, 17, topology, floating, tangent)
    P = so_plan(CI, m.nb, nch)
    ncd = int(CI[1])
    B = np.full((4, ncd, ncd, ncd), np.nan)
    T = [B[0], B[1], B[2], B[3]]
    _zero_slabs(CI, m.nb, P[2], P[3], *T)
    chain = topology == "chain"
    for k, t in enumerate(T):
        if chain and k < 3:
            assert np.isnan(t).all()
        else:
            assert not t.any() and not np.isnan(t).any()
    ref = rnea_second_order_kernel(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, tangent,
                                   *[np.zeros_like(t) for t in core_tensors(CI, np.float64)])
    got = rnea_second_order_kernel_par(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, tangent, *P, *T, *NO_RUNS)
    for a, b in zip(got, ref, strict=True):
        assert np.isfinite(a).all()
        _same(a, b)


@pytest.mark.parametrize("topology,floating,tangent", [("random", True, True), ("binary-dfs", False, False),
                                                       ("chain", True, True)])
def test_fresh_call_zeroes_what_no_thread_writes(topology, floating, tangent):
    """Without out= the lean call hands the kernel an uninitialised block and the runs of ``_unwritten``, which its
    threads zero: the runs cover every entry a run on NaN-filled tensors leaves NaN (and entries between them that
    are written later), the kernel on NaN-filled tensors with the runs gives the result on zeroed ones, and so does
    the public call; at one and at two threads."""
    from redmax.derivatives import rnea_second_order as so
    from redmax.derivatives._second_order_tensors import zero_runs

    m, Ii, Ff, CI, q, qd, qdd, js, _ = _setup(43, 17, topology, floating, tangent)
    n = int(CI[1])
    ref = rnea_second_order_kernel(Ii, Ff, CI, q, qd, qdd, js, np.zeros((m.nb, 6)), 1.0, tangent,
                                   *[np.zeros((n, n, n)) for _ in range(4)])
    before = numba.get_num_threads()
    try:
        for nt in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(nt)
            P = so.plan(m, CI, tangent)
            zr, zs, zm = so._unwritten(m, CI, tangent)[4:7]
            assert zm.size == 0  # a fresh block's runs are zeroed whole
            nch = P[2].size - 1
            assert zs.size == 4 * nch + 1 and zs[0] == 0 and zs[-1] == zr.shape[1] and np.all(np.diff(zs) >= 0)
            nan = [np.full((n, n, n), np.nan) for _ in range(4)]
            so.rnea_second_order_plain(Ii, Ff, CI, q, qd, qdd, tangent, *P, *NO_RUNS, *nan)
            ones = [np.ones((n, n, n)) for _ in range(4)]
            for c in range(nch):
                zero_runs(zr, zs, zm, c, *ones)
            for a, b in zip(nan, ones, strict=True):
                assert not (np.isnan(a) & (b != 0)).any(), "an entry no thread writes is left to chance"
            assert sum(np.isnan(a).sum() for a in nan) > 0
            T = [np.full((n, n, n), np.nan) for _ in range(4)]
            got = so.rnea_second_order_plain(Ii, Ff, CI, q, qd, qdd, tangent, *P, zr, zs, zm, *T)
            for a, b in zip(got, ref, strict=True):
                assert np.isfinite(a).all()
                _same(a, b)
            for a, b in zip(rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent), ref, strict=True):
                _same(a, b)
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("topology,floating,tangent", [("random", True, True), ("binary-dfs", False, False),
                                                       ("chain", True, True)])
@pytest.mark.parametrize("nch", [2, 3])
def test_zero_runs_never_clobber_another_threads_writes(topology, floating, tangent, nch):
    """The runs of ``probes_and_runs`` span written entries too; they must not span one that another thread writes
    before the barrier.  The threads' parts run one after another, in every order, on NaN-filled tensors (so a run
    that zeroes an entry another thread wrote first leaves it zero, and one that misses an unwritten entry leaves
    NaN), then, on chains, the mirror (on trees the parts alone): each order gives the serial kernel's tensors.
    Each run lies in one of its thread's slabs, and there are at most as many runs as stretches of unwritten
    entries."""
    import itertools

    from redmax.derivatives import rnea_second_order as so
    from redmax.derivatives._second_order_mirror import _mirror_part, _single_path
    from redmax.derivatives._second_order_tensors import slab_bounds
    from redmax.derivatives._second_order_write_pattern import probes_and_runs
    from redmax.derivatives.core_tree import core_offsets
    from redmax.model.layout import NO_FEXT

    m, Ii, Ff, CI, q, qd, qdd, js, _ = _setup(44 + nch, 19, topology, floating, tangent)
    n = int(CI[1])
    fo = CI[2] != 1  # the kernel also forms the first-order products of the chain rule (the model's coordinates)
    ref = [np.zeros((n, n, n)) for _ in range(4)]  # core tensors, before the chain rule
    idsva_so(Ii, Ff, CI, q, qd, qdd, js, NO_FEXT, 1.0, tangent, fo, *ref)
    P = so_plan(CI, m.nb, nch)
    zr, zs, zm = probes_and_runs(m, CI, tangent, P, so.rnea_second_order_plain, so._so_thread)[4:7]
    owned = not _single_path(CI)
    o_co = core_offsets(CI, m.nb)[7]
    nf = n if fo else 0
    for order in itertools.permutations(range(nch)):
        T = [np.full((n, n, n), np.nan) for _ in range(4)]
        FO = (np.zeros(nf), np.zeros((nf, nf)), np.zeros((nf, nf)), np.zeros((nf, nf)))
        for c in order:
            so._so_thread(Ii, Ff, CI, q, qd, qdd, js, NO_FEXT, 1.0, tangent, fo, P[0], P[1], P[2], c, zr, zs, zm,
                          np.arange(CI[0]), owned, o_co, *T, *FO)
        if not owned:  # chains: the mirror after the barrier (on trees each part mirrors what it writes)
            for c in range(nch):
                _mirror_part(P[0], P[1], P[3][c], P[3][c + 1], T[0], T[1], T[3])
        for a, b in zip(T, ref, strict=True):
            assert np.isfinite(a).all(), order
            _same(a, b)
    nan = [np.full((n, n, n), np.nan) for _ in range(4)]
    so.rnea_second_order_plain(Ii, Ff, CI, q, qd, qdd, tangent, *P, *NO_RUNS, *nan)
    rows = np.stack([np.isnan(a).reshape(n, n * n) for a in nan]).reshape(4 * n, n * n).astype(np.int8)
    stretches = int((np.diff(rows, axis=1, prepend=0) == 1).sum())
    assert 0 < zr.shape[1] <= stretches
    bounds = slab_bounds(CI, m.nb, P[2], P[3])
    for c in range(nch):  # thread c's runs lie in its slabs, each inside one slab
        for t in range(4):
            s0, ln = zr[:, zs[4 * c + t]:zs[4 * c + t + 1]]
            assert np.all((s0 // (n * n) >= bounds[c]) & (s0 // (n * n) < bounds[c + 1]))
            assert np.all(ln > 0) and np.all(s0 // (n * n) == (s0 + ln - 1) // (n * n))


@pytest.mark.parametrize("topology,floating", [("random", True), ("random", False), ("chain", True)])
def test_aligned_chain_rule_on_threads(topology, floating):
    """The in-place chain rule of aligned models (spherical, universal, planar and free joints in their own
    coordinates) on Numba's threads, slab by slab then row by row, gives the one-thread version's tensors (to
    round-off: in a cold compile, 2e-15 relative differences were seen in CI; loaded from the cache, bitwise) and
    those of the general chain rule (``chain_second_order``, written independently), from the same core tensors."""
    from redmax.derivatives._second_order_chain_inplace import (
        chain_second_order_aligned,
        chain_second_order_aligned_par,
    )
    from redmax.derivatives.second_order_chain import chain_second_order

    m, Ii, Ff, CI, q, qd, qdd, js, n = _aligned_setup(47, 16, topology, floating)
    core = [np.zeros((n, n, n)) for _ in range(4)]
    fo = idsva_so(Ii, Ff, CI, q, qd, qdd, js, np.zeros((m.nb, 6)), 1.0, False, True, *core)
    ser = chain_second_order_aligned(Ii, Ff, CI, q, qd, qdd, js, False, *fo, *[t.copy() for t in core])
    par = chain_second_order_aligned_par(Ii, Ff, CI, q, qd, qdd, js, False, *fo, *[t.copy() for t in core])
    gen = chain_second_order(Ii, Ff, CI, q, qd, qdd, js, False, *fo, *[t.copy() for t in core])
    changed = 0
    for a, b, c, t in zip(par, ser, gen, core, strict=True):
        # the same arithmetic; compiled apart (inlined into the threads' loop or not) it may round differently
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-14 * np.abs(b).max())
        np.testing.assert_array_equal(a == 0, b == 0)
        np.testing.assert_allclose(a, c, rtol=0, atol=1e-12 * np.abs(c).max())
        changed += int(np.count_nonzero(a != t))
    assert changed > 0


@pytest.mark.parametrize("tangent", [False, True])
def test_chain_mirror_equals_masked_mirror(tangent):
    """On a single path the mirror copies its slabs without the related-pair mask (``_mirror_chain``): the same
    entries as the masked mirror (``_mirror_part``), also for the d2q pairs within a multi-DOF joint, which stay
    unmirrored, and on any split of the first indices."""
    from redmax.derivatives._second_order_mirror import _mirror_chain, _mirror_maps, _mirror_part, _single_path

    m, _, _, CI, *_ = _setup(5, 12, "chain", True, tangent)
    assert _single_path(CI)
    rel, cj = _mirror_maps(CI, m.nb)
    assert rel.all() and np.any(cj[1:] == cj[:-1])  # every pair related; some joint has several DOFs
    n = int(CI[1])
    T = np.random.default_rng(3).normal(size=(3, n, n, n))
    ref = T.copy()
    _mirror_part(rel, cj, 0, n, ref[0], ref[1], ref[2])
    for cut in (0, n // 3, n):
        got = T.copy()
        _mirror_chain(cj, 0, cut, got[0], got[1], got[2])
        _mirror_chain(cj, cut, n, got[0], got[1], got[2])
        np.testing.assert_array_equal(got, ref)
    assert not np.array_equal(ref, T)  # the mirror changed something


@pytest.mark.parametrize("topology,floating,tangent", [("random", True, True), ("binary-dfs", False, False),
                                                       ("chain", True, True)])
def test_recycled_block_checks_what_no_thread_writes(topology, floating, tangent):
    """The recycled-block runs of ``probes_and_runs`` (``czr, czs``; negative lengths: read under the mask
    ``czm``, zeroed only where masked and changed) cover, under their masks, exactly the entries the kernel never
    writes, each thread's within its own slabs, and with them the kernel gives the serial kernel's tensors on a
    block whose entries hold zeros, -0.0, NaN or anything else (a caller that changed a dropped result)."""
    from redmax.derivatives import rnea_second_order as so
    from redmax.derivatives._second_order_tensors import slab_bounds
    from redmax.derivatives._second_order_write_pattern import probes_and_runs

    m, Ii, Ff, CI, q, qd, qdd, js, _ = _setup(47, 17, topology, floating, tangent)
    n = int(CI[1])
    ref = rnea_second_order_kernel(Ii, Ff, CI, q, qd, qdd, js, np.zeros((m.nb, 6)), 1.0, tangent,
                                   *[np.zeros((n, n, n)) for _ in range(4)])
    P = so_plan(CI, m.nb, 2)
    czr, czs, czm = probes_and_runs(m, CI, tangent, P, so.rnea_second_order_plain, so._so_thread)[7:]
    assert czr.shape[1] > 0 and np.all(czr[1] < 0) and czm.dtype == np.int8
    full = czm[[0, 0, 0, 1]] if czm.shape[0] == 2 else czm  # (2, n^3): d2q, d2v, d2qv share the first mask
    assert full.shape == (4, n ** 3)
    bounds = slab_bounds(CI, m.nb, P[2], P[3])
    nan = [np.full((n, n, n), np.nan) for _ in range(4)]
    so.rnea_second_order_plain(Ii, Ff, CI, q, qd, qdd, tangent, *P, *NO_RUNS, *nan)
    unwritten = np.stack([np.isnan(a) for a in nan]).reshape(-1)
    np.testing.assert_array_equal(full.reshape(-1) == -1, unwritten)
    assert np.isin(czm, (0, -1)).all()
    assert (czm.shape[0] == 2) == bool(full[0].any() and (full[0] == full[1]).all() and (full[0] == full[2]).all())
    assert (czm.shape[0] == 2) == (topology != "chain")  # chains: only dM has never-written entries
    covered = np.zeros(unwritten.size, dtype=bool)
    for c in range(P[2].size - 1):
        for t in range(4):
            for r in range(czs[4 * c + t], czs[4 * c + t + 1]):
                s0, ln = czr[0, r], -czr[1, r]
                assert bounds[c] <= s0 // n ** 2 and (s0 + ln - 1) // n ** 2 < bounds[c + 1], "outside its slabs"
                a = t * n ** 3 + s0
                assert not covered[a:a + ln].any(), "two runs overlap"
                covered[a:a + ln] = True
    np.testing.assert_array_equal(covered & unwritten, unwritten)
    rng = np.random.default_rng(5)
    for fill in (0.0, -0.0, np.nan, "sparse"):
        B = np.zeros((4, n, n, n))
        if fill == "sparse":  # a few changed entries: the other runs are read and left as they are
            B.reshape(-1)[rng.choice(B.size, 7, replace=False)] = 3.0
        else:
            B[...] = fill
        for mask in (czm, np.ascontiguousarray(full)):  # the shared loop and the per-tensor one
            Bm = B.copy()
            got = so.rnea_second_order_plain(Ii, Ff, CI, q, qd, qdd, tangent, *P, czr, czs, mask, *Bm)
            for a, b in zip(got, ref, strict=True):
                assert not np.signbit(a[a == 0]).any()
                _same(a, b)


def test_fresh_results_reuse_only_a_dropped_block():
    """Without out= the results are read-only and the lean path reuses the block of one of its two previous
    calls only when the caller holds no reference to it (no tensor, view or base array): results the caller
    keeps never change, a dropped result that the caller made writeable and changed anywhere comes back right,
    and ``b = f()`` in a loop alternates between two blocks."""
    import redmax

    rng = np.random.default_rng(11)
    m = random_model(rng, n=20, topology="random", joints="revolute", gravity=(0, 0, -9.81))
    q, qd, qdd = rng.normal(size=(3, m.ndof))
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
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
        if numba.get_num_threads() > 1:
            assert id(b[0].base) == ida, "a dropped block is reused"
        for x, y in zip(b, ref, strict=True):
            np.testing.assert_array_equal(x, y)
            assert not x.flags.writeable and not x.base.flags.writeable  # read-only again
        for x, y in zip(kept, ref, strict=True):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(view, ref[2][1:3])
        ids = []
        for k in range(8):  # a loop that holds the last result while it calls: the two slots alternate
            b = redmax.rnea_second_order_derivatives(m, q, qd, qdd)
            ids.append(id(b[0].base))
            for x, y in zip(b, ref, strict=True):
                np.testing.assert_array_equal(x, y)
            if k % 3 == 0:
                _scribble(b, np.nan)
        if numba.get_num_threads() > 1:
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
    finally:
        numba.set_num_threads(before)


_LAYER_PROBE = """
import numba, numpy as np
from redmax._jit import threads_pay
from redmax.dynamics import rnea_second_order as so
from redmax.derivatives.core_tree import core_structure
from redmax.testing.models import random_model
m = random_model(np.random.default_rng(0), n=20, topology="chain", joints="revolute")
CI = core_structure(m, False)
print(threads_pay(), numba.threading_layer(), so.plan(m, CI, False)[2].size - 1, numba.get_num_threads())
"""


def test_one_thread_where_numba_threads_start_slowly():
    """Under Numba's ``workqueue`` threading layer (a machine without OpenMP or TBB), where a parallel region
    costs more than the second-order kernel saves on threads, the plan takes one thread whatever the thread count;
    under the layer of this process (OpenMP or TBB where installed) the count decides."""
    import os
    import subprocess
    import sys

    from redmax._jit import threads_pay

    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue", NUMBA_NUM_THREADS="2")
    r = subprocess.run([sys.executable, "-c", _LAYER_PROBE], env=env, capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["False", "workqueue", "1", "2"]
    assert threads_pay() == (numba.threading_layer() != "workqueue")


def test_num_threads_follows_numba():
    """``redmax._jit.num_threads`` (Numba's C getter, for the per-call paths) gives ``numba.get_num_threads()``
    after ``numba.set_num_threads`` and in another Python thread (Numba keeps the count per thread)."""
    import threading

    from redmax._jit import num_threads

    before = numba.get_num_threads()
    try:
        for nt in (1, numba.config.NUMBA_NUM_THREADS, 1):
            numba.set_num_threads(nt)
            assert num_threads() == numba.get_num_threads() == nt
        seen = []
        t = threading.Thread(target=lambda: seen.append((num_threads(), numba.get_num_threads())))
        t.start()
        t.join()
        assert seen[0][0] == seen[0][1] >= 1
        assert num_threads() == 1  # this thread's count, unchanged by the other
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("topology,floating", [("random", True), ("chain", True)])
def test_aligned_chain_rule_touches_only_related_triples(topology, floating):
    """The in-place chain rule of aligned models reads and writes only the entries of related index triples (every
    pair on one root path): with NaN in every other entry of the core tensors it gives the chain rule's result on
    zeroed ones there, and leaves the NaN where they are (the entries the lean path's threads zero before it); on
    one thread (complex step's path) and on Numba's threads."""
    from redmax.derivatives._second_order_chain_inplace import (
        chain_second_order_aligned,
        chain_second_order_aligned_par,
    )
    from redmax.derivatives.second_order_chain import related_dofs

    m, Ii, Ff, CI, q, qd, qdd, js, n = _aligned_setup(53, 16, topology, floating)
    rel = related_dofs(CI, m.nb).astype(bool)
    triple = rel[:, :, None] & rel[:, None, :] & rel[None, :, :]
    core = [np.zeros((n, n, n)) for _ in range(4)]
    fo = idsva_so(Ii, Ff, CI, q, qd, qdd, js, np.zeros((m.nb, 6)), 1.0, False, True, *core)
    assert all(np.all(t[~triple] == 0) for t in core)  # branch-induced sparsity of the core tensors
    for chain in (chain_second_order_aligned, chain_second_order_aligned_par):
        ref = chain(Ii, Ff, CI, q, qd, qdd, js, False, *fo, *[t.copy() for t in core])
        for mark in (np.nan, 3.0):  # NaN: never read; 3.0: never written (NaN would come back NaN either way)
            dirty = [t.copy() for t in core]
            for t in dirty:
                t[~triple] = mark
            got = chain(Ii, Ff, CI, q, qd, qdd, js, False, *fo, *dirty)
            for a, b in zip(got, ref, strict=True):
                np.testing.assert_array_equal(a[~triple], mark, err_msg="an entry of an unrelated triple changed")
                np.testing.assert_array_equal(a[triple], b[triple])
                assert np.all(b[~triple] == 0)
    if topology == "random":
        assert (~triple).any()


@pytest.mark.parametrize("nt", [1, 2])
def test_aligned_lean_path_equals_checked_path_and_recycles(nt):
    """A free base in rotation vectors (coordinates that differ from the core's in aligned blocks) takes the lean
    path too: one compiled call whose threads zero the entries the kernel leaves in a fresh or recycled block
    (the chain rule writes some of them, so a recycled block is zeroed, not checked).  Its tensors equal those of
    the checked path (reached with zero external wrenches) to round-off, with the same zeros, and its own first
    result exactly after the caller filled a dropped result with NaN; results the caller keeps never change;
    out= full of ones or NaN comes back equal too (zeroed where the kernel leaves it, as the checked path zeroes
    it whole), on the lean path."""
    from redmax.derivatives import rnea_second_order as so

    if nt > numba.config.NUMBA_NUM_THREADS:
        nt = numba.config.NUMBA_NUM_THREADS
    rng = np.random.default_rng(61)
    m = random_model(rng, n=20, topology="random", joints="multi", floating=True, gravity=(0, 0, -9.81))
    CI = core_structure(m, False)
    assert CI[2] != 1 and CI[3] == 1 and int(CI[1]) == m.ndof
    q, qd = random_state(rng, m)
    qdd = rng.normal(size=m.ndof)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(nt)
        checked = rm.rnea_second_order_derivatives(m, q, qd, qdd, f_ext=np.zeros((m.nb, 6)))
        rec = so._lean_record(m, False)
        assert rec is not None and rec[0] is not None
        kept = rm.rnea_second_order_derivatives(m, q, qd, qdd)
        ref = [r.copy() for r in kept]
        for a, b in zip(kept, checked, strict=True):  # compiled apart (wrenches or none): equal to round-off
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
            np.testing.assert_array_equal(a == 0, b == 0)
        for _ in range(4):
            a = rm.rnea_second_order_derivatives(m, q, qd, qdd)
            for x, y in zip(a, ref, strict=True):
                np.testing.assert_array_equal(x, y)
            _scribble(a, np.nan)  # changed everywhere, then dropped
            del a
        for a, b in zip(kept, ref, strict=True):
            np.testing.assert_array_equal(a, b)
        calls = []
        real = rec[0]
        rec_l = list(rec)
        if rec_l[-1] is not None:  # the C entry point (redmax._ccall), counted
            cc = rec_l[-1]
            rec_l[-1] = (lambda *a: calls.append(1) or cc[0](*a), *cc[1:])
        else:  # the dispatcher's entry point, counted
            rec_l[0] = lambda *a: calls.append(1) or real(*a)
        from redmax.dynamics._single_call import model_table
        model_table(m)[("rnea_second_order_into", False)] = tuple(rec_l)
        for fill in (1.0, np.nan):
            out = tuple(np.full_like(r, fill) for r in ref)
            got = rm.rnea_second_order_derivatives(m, q, qd, qdd, out=out)
            for a, b, o in zip(got, ref, out, strict=True):
                assert a is o
                np.testing.assert_array_equal(a, b)
        assert len(calls) == 2, "out= on the lean path"
    finally:
        numba.set_num_threads(before)


def test_aligned_recycled_block_zeroes_only_what_the_chain_rule_may_write():
    """A read-only recycled block of a model in rotation vectors (aligned blocks) gets zeroed only the entries the
    kernel never writes and the chain rule may (``czr``: fewer than the new block's runs ``zr`` cover, all among
    them); at states that change every such entry from call to call its results equal the checked path's."""
    from redmax.derivatives import rnea_second_order as so

    rng = np.random.default_rng(67)
    m = random_model(rng, n=20, topology="random", joints="multi", floating=True, gravity=(0, 0, -9.81))
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        q, qd = random_state(rng, m)
        rm.rnea_second_order_derivatives(m, q, qd, qd)
        rec = so._lean_record(m, False)
        zr, czr, pool = rec[14], rec[18], rec[21]
        n = m.ndof
        threads = rec[1] >= 2  # (one thread: a new zeroed block per call, no runs; the results are checked alike)

        def covered(runs):
            mask = np.zeros(4 * n ** 3, dtype=bool)
            for c in range(rec[1]):
                for t in range(4):
                    zs = rec[15] if runs is zr else rec[19]
                    for r in range(zs[4 * c + t], zs[4 * c + t + 1]):
                        a = t * n ** 3 + runs[0, r]
                        mask[a:a + runs[1, r]] = True
            return mask

        if threads:
            cz, z = covered(czr), covered(zr)
            assert 0 < cz.sum() < z.sum() and not (cz & ~z).any()
        else:
            assert czr.shape[1] == 0
        ids = set()
        for _ in range(5):
            q, qd = random_state(rng, m)
            qdd = rng.normal(size=m.ndof)
            got = rm.rnea_second_order_derivatives(m, q, qd, qdd)
            ids.add(id(got[0].base))
            ref = rm.rnea_second_order_derivatives(m, q, qd, qdd, f_ext=np.zeros((m.nb, 6)))  # the checked path
            for a, b in zip(got, ref, strict=True):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
                np.testing.assert_array_equal(a == 0, b == 0)
            del got, a
        if threads:
            assert ids <= {id(pool[0]), id(pool[1])} and len(ids) <= 2, "the blocks are recycled"
        else:
            assert pool[0] is None and pool[1] is None, "one thread: no pool"
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("topology,floating", [("random", True), ("chain", True), ("random", False)])
def test_first_order_products_only_where_the_chain_rule_reads_them(topology, floating):
    """On aligned models the kernel forms the first-order products of the chain rule (T_q, T_v, M_c) only in the
    rows and columns of the block DOFs (``block_dofs``): there they equal the products of every DOF pair, elsewhere
    they stay zero, and the tensors and tau_c do not change; the chain rule (general and in place) then gives the
    same result from either."""
    from redmax.derivatives._second_order_chain_inplace import chain_second_order_aligned
    from redmax.derivatives._second_order_walk import _so_joints, _so_setup
    from redmax.derivatives.second_order_chain import block_dofs, chain_second_order

    m, Ii, Ff, CI, q, qd, qdd, js, n = _aligned_setup(61, 14, topology, floating)
    need = block_dofs(Ii, CI, False)
    assert 0 < need.sum() < n
    fb = np.zeros((m.nb, 6))
    runs = {}
    for name, nd in (("all", np.ones(n, dtype=np.uint8)), ("blocks", need)):
        W, CD = _so_setup(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, False)
        T = [np.zeros((n, n, n)) for _ in range(4)]
        FO = (np.zeros(n), np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n)))
        _so_joints(CI, m.nb, W, CD, np.arange(CI[0]), 0, CI[0], True, nd, *T, *FO)
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
    for chain in (chain_second_order, chain_second_order_aligned):
        ra = chain(Ii, Ff, CI, q, qd, qdd, js, False, *FOa, *[t.copy() for t in Ta])
        rb = chain(Ii, Ff, CI, q, qd, qdd, js, False, *FOb, *[t.copy() for t in Tb])
        for a, b in zip(ra, rb, strict=True):
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-13 * np.abs(a).max())


@pytest.mark.parametrize("tangent", [False, True])
@pytest.mark.parametrize("nch", [2, 3])
def test_tree_threads_write_both_halves_of_dM(tangent, nch):
    """On trees each thread's part writes dM in symmetric pairs (``dM[b, a, k]`` with ``dM[a, b, k]``, equal
    bitwise): no thread reads what another wrote, and the kernel needs no second parallel region.  The written
    entries of the parts partition those of the whole kernel."""
    from redmax.derivatives import rnea_second_order as so
    from redmax.derivatives._second_order_mirror import _single_path
    from redmax.derivatives.core_tree import core_offsets
    from redmax.model.layout import NO_FEXT

    m, Ii, Ff, CI, q, qd, qdd, js, _ = _setup(61 + nch, 22, "random", True, tangent)
    assert not _single_path(CI)
    n = int(CI[1])
    P = so_plan(CI, m.nb, nch)
    o_co = core_offsets(CI, m.nb)[7]
    fo = CI[2] != 1
    nf = n if fo else 0
    seen = np.zeros((n, n, n), dtype=np.int64)
    for c in range(nch):
        T = [np.full((n, n, n), np.nan) for _ in range(4)]
        FO = (np.zeros(nf), np.zeros((nf, nf)), np.zeros((nf, nf)), np.zeros((nf, nf)))
        so._so_thread(Ii, Ff, CI, q, qd, qdd, js, NO_FEXT, 1.0, tangent, fo, P[0], P[1], P[2], c, *NO_RUNS,
                      np.arange(CI[0]), True, o_co, *T, *FO)
        w = ~np.isnan(T[3])
        assert w.any()
        np.testing.assert_array_equal(w, w.transpose(1, 0, 2))
        np.testing.assert_array_equal(T[3][w].view(np.int64), T[3].transpose(1, 0, 2)[w].view(np.int64))
        seen += w
    whole = [np.full((n, n, n), np.nan) for _ in range(4)]
    idsva_so_par(Ii, Ff, CI, q, qd, qdd, js, NO_FEXT, 1.0, tangent, fo, *P, *NO_RUNS, *whole)
    assert seen.max() == 1
    np.testing.assert_array_equal(seen == 1, ~np.isnan(whole[3]))
