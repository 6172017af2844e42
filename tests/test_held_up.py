"""Calls whose threads were held up (:mod:`redmax._kernels.thread_guard`): the rule on given call times and a given
clock, and on real calls (the lean second order, batches) that a period on one thread gives bitwise the same
results and Numba's thread count back whatever happens; and the forward-dynamics second order runs its products
on one BLAS thread and gives the BLAS count back."""

import numba
import numpy as np
import pytest

import redmax as rm
from redmax._kernels import thread_guard as hu
from redmax.derivatives import rnea_second_order as so
from redmax.dynamics._single_call import model_table
from redmax.errors import ModelError
from redmax.testing.models import random_model, random_state

MS = 1_000_000  # ns


def test_rule_on_given_call_times():
    """Held up: slower than units x twice the fastest time per unit plus SLACK_NS; then the calls of FIRST_NS on one
    thread, a period that doubles while the retries are held up, up to LAST_NS, and falls back to FIRST_NS after
    one that is not."""
    T = 10**12
    g = hu.new_guard()
    assert not hu.held_up(g, 50_000, 1, T)  # the first call sets the fastest
    assert g[0] == 50_000 and g[1] == 0
    assert not hu.held_up(g, 2 * 50_000 + hu.SLACK_NS, 1, T)  # at the bound: not held up
    assert hu.held_up(g, 2 * 50_000 + hu.SLACK_NS + 1, 1, T)
    assert g[1] == T + hu.FIRST_NS and g[2] == 2 * hu.FIRST_NS
    periods = []
    for _ in range(12):  # retries held up again: the periods double, then stay at LAST_NS
        assert hu.held_up(g, 4 * MS, 1, T)
        periods.append(g[1] - T)
    assert periods[:2] == [2 * hu.FIRST_NS, 4 * hu.FIRST_NS] and periods[-1] == hu.LAST_NS == max(periods)
    assert not hu.held_up(g, 60_000, 1, T)  # a retry that is not held up
    assert g[2] == hu.FIRST_NS
    assert not hu.held_up(g, 30_000, 1, T) and g[0] == 30_000  # a faster call lowers the bound
    b = hu.new_guard()  # per unit of work: batches of different sizes
    assert not hu.held_up(b, 1_000_000, 1000, T) and b[0] == 1000
    assert not hu.held_up(b, 500_000, 16, T)  # a small batch: its overhead is within SLACK_NS
    assert hu.held_up(b, 2 * 1000 * 1000 + hu.SLACK_NS + 1, 1000, T)


def test_guarded_runs_on_one_thread_during_the_period(monkeypatch):
    """guarded() times a threaded call on a clock, and during the period after a held-up one runs the call with
    Numba's count at 1, giving the count back after it, also when the call raises; below two threads it runs the
    call as it is."""
    nt = min(2, numba.config.NUMBA_NUM_THREADS)
    clock = [0]
    monkeypatch.setattr(hu, "perf_counter_ns", lambda: clock[0])
    g = hu.new_guard()

    def f(dt):  # a call of dt ns that reports the thread count it ran with
        clock[0] += dt
        return numba.get_num_threads()

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(nt)
        assert hu.guarded(g, 1, 1, f, 10 * MS) == nt and g[0] > 1e18  # unguarded: not recorded
        if nt < 2:  # a one-core machine: nothing to fall back from
            return
        assert hu.guarded(g, nt, 1, f, 50_000) == nt and g[0] == 50_000
        assert hu.guarded(g, nt, 1, f, 4 * MS) == nt  # held up
        assert g[1] == clock[0] + hu.FIRST_NS
        assert hu.guarded(g, nt, 1, f, MS) == 1 and numba.get_num_threads() == nt
        with pytest.raises(ZeroDivisionError):
            hu.guarded(g, nt, 1, lambda: 1 / 0)
        assert numba.get_num_threads() == nt
        clock[0] = g[1]  # the period is over: threaded, timed, not held up
        assert hu.guarded(g, nt, 1, f, 60_000) == nt and g[2] == hu.FIRST_NS
    finally:
        numba.set_num_threads(before)


def _model(kind):
    rng = np.random.default_rng(5)
    if kind == "tangent":  # the core's coordinates: free base and spherical joints in body twists
        m = random_model(rng, n=22, topology="random", joints="multi", floating=True)
    else:  # a free base in rotation vectors: aligned blocks, the chain rule on the threads too
        m = random_model(rng, n=22, topology="random", joints="multi", floating=True, gravity=(0, 0, -9.81))
    q, qd = random_state(rng, m)
    return m, q, qd, rng.normal(size=m.ndof), kind == "tangent"


@pytest.mark.parametrize("kind", ["tangent", "aligned"])
def test_one_thread_period_gives_bitwise_the_same_tensors(kind, monkeypatch):
    """During a period on one thread the lean second-order call runs its plan with Numba's count at 1 around the
    call and back to the plan's after, and every call, fresh or out=, returns bitwise the tensors of the threaded
    call; after the period it is threaded again."""
    nt = min(2, numba.config.NUMBA_NUM_THREADS)
    m, q, qd, qdd, tangent = _model(kind)
    n = m.ndof
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(nt)
        ref = [r.copy() for r in rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent)]
        rec = so._lean_record(m, tangent)
        assert rec is not None
        if nt < 2:  # one-thread plan (a one-core machine): nothing to fall back from
            assert rec[1] == 0
            return
        assert rec[1] == nt
        guard = rec[-2]
        seen = []
        real_set = hu.set_num_threads

        def spy_set(k):
            seen.append(k)
            real_set(k)

        monkeypatch.setattr(hu, "set_num_threads", spy_set)
        guard[1] = hu.perf_counter_ns() + 3600 * 10**9  # a period on one thread
        for i in range(4):
            if i % 2:
                out = tuple(np.zeros((n, n, n)) for _ in range(4))
                got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent, out=out)
                assert all(a is b for a, b in zip(got, out, strict=True))
            else:
                got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent)
            for a, b in zip(got, ref, strict=True):
                np.testing.assert_array_equal(a, b)
            del got
            assert numba.get_num_threads() == nt
        assert seen == [1, nt] * 4
        guard[1] = 0  # the period is over
        got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent)
        for a, b in zip(got, ref, strict=True):
            np.testing.assert_array_equal(a, b)
        assert len(seen) == 8
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("what", ["rnea", "aba", "crba", "minv"])
@pytest.mark.parametrize("joints", ["revolute", "multi"])
def test_batches_on_one_thread_are_bitwise_the_same(what, joints, monkeypatch):
    """A batch during a period on one thread (the SIMD lanes of revolute models and the per-state kernels) runs
    with Numba's count at 1 around it and returns bitwise the threaded batch's results, with the count back after
    it; each kernel and thread count has its own guard; an empty batch is not timed."""
    nt = min(2, numba.config.NUMBA_NUM_THREADS)
    rng = np.random.default_rng(9)
    m = random_model(rng, n=12, topology="random", joints=joints)
    B = 37
    Q = np.array([random_state(rng, m)[0] for _ in range(B)])
    V, A = rng.normal(size=(2, B, m.ndof))
    f = getattr(rm, what)
    call = (lambda: f(m, Q, V, A)) if what in ("rnea", "aba") else (lambda: f(m, Q))
    seen = []
    real_set = hu.set_num_threads

    def spy_set(k):
        seen.append(k)
        real_set(k)

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(nt)
        ref = call()
        lanes = what in ("rnea", "aba") and joints == "revolute"
        keys = [k for k in model_table(m) if k[:2] == ("held_up", what)]
        assert keys == [("held_up", what, lanes, nt)]
        empty = np.zeros((0, m.ndof))  # an empty batch: not timed (no work to divide by)
        got = f(m, empty, empty, empty) if what in ("rnea", "aba") else f(m, empty)
        assert got.shape[0] == 0
        if nt < 2:  # a one-core machine: unguarded
            return
        g = model_table(m)[keys[0]]
        assert g[0] < 1e18  # timed
        monkeypatch.setattr(hu, "set_num_threads", spy_set)
        g[1] = hu.perf_counter_ns() + 3600 * 10**9
        np.testing.assert_array_equal(call(), ref)
        assert seen == [1, nt] and numba.get_num_threads() == nt
        g[1] = 0
        np.testing.assert_array_equal(call(), ref)
        assert seen == [1, nt]
        if what in ("rnea", "aba"):  # with wrenches: the per-state kernel, its own guard
            f(m, Q, V, A, f_ext=np.zeros((B, m.nb, 6)))
            assert ("held_up", what, False, nt) in model_table(m)
    finally:
        numba.set_num_threads(before)


def test_declined_lean_calls_are_not_timed():
    """A lean call the C path declines (a strided vector) or rejects (a NaN) goes to the checked path without
    passing for the fastest threaded call."""
    nt = min(2, numba.config.NUMBA_NUM_THREADS)
    m, q, qd, qdd, _ = _model("tangent")
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(nt)
        ref = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True)[0].copy()
        guard = so._lean_record(m, True)[-2]
        guard[:] = [50_000.0, 0, hu.FIRST_NS]
        wide = np.zeros((2, m.ndof))
        wide[0] = q
        np.testing.assert_allclose(rm.rnea_second_order_derivatives(m, wide.T[:, 0], qd, qdd, tangent=True)[0], ref,
                                   rtol=0, atol=1e-12 * np.abs(ref).max())
        bad = q.copy()
        bad[0] = np.nan
        with pytest.raises(ModelError, match="q"):
            rm.rnea_second_order_derivatives(m, bad, qd, qdd, tangent=True)
        assert guard[0] == 50_000.0
    finally:
        numba.set_num_threads(before)


def test_thread_count_comes_back_after_a_rejected_one_thread_call():
    """A NaN reaching the one-thread call: the checked path names it, and Numba's thread count is the plan's
    again."""
    nt = min(2, numba.config.NUMBA_NUM_THREADS)
    m, q, qd, qdd, _ = _model("tangent")
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(nt)
        rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True)
        rec = model_table(m)[("rnea_second_order_into", True)]
        rec[-2][1] = hu.perf_counter_ns() + 3600 * 10**9  # a period on one thread
        bad = q.copy()
        bad[1] = np.nan
        with pytest.raises(ModelError, match="q"):
            rm.rnea_second_order_derivatives(m, bad, qd, qdd, tangent=True)
        assert numba.get_num_threads() == nt
    finally:
        numba.set_num_threads(before)


def test_forward_dynamics_products_on_one_blas_thread(monkeypatch):
    """aba_second_order_derivatives runs its products with the BLAS libraries on one thread (here set to two
    first), and their thread counts are what they were afterwards."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from redmax.derivatives import aba_second_order as aso

    m, q, qd, tau, _ = _model("tangent")
    counts = []
    real = aso._products

    def blas():
        return [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]

    def spy(*a):
        counts.append(blas())
        return real(*a)

    monkeypatch.setattr(aso, "_products", spy)
    with threadpool_limits(limits=2, user_api="blas"):
        assert blas() and all(c == 2 for c in blas())
        res = rm.aba_second_order_derivatives(m, q, qd, tau, tangent=True)
        assert counts and all(c == 1 for c in counts[0])
        assert all(c == 2 for c in blas())
    assert all(r.flags.c_contiguous and r.flags.writeable and r.shape == (m.ndof,) * 3 for r in res)


def test_one_blas_thread_when_calls_overlap():
    """Overlapping contexts (Python threads: A enters, B enters, A leaves, B leaves) set one thread once, on the
    first entry, and give back the counts read then on the last exit, not a count read while the limit held."""
    from redmax.derivatives.aba_second_order import _OneBlasThread

    class Lib:
        def __init__(self, k):
            self.k, self.log = k, []

        def get_num_threads(self):
            return self.k

        def set_num_threads(self, k):
            self.log.append(k)
            self.k = k

    ctx = _OneBlasThread()
    ctx._libs = libs = [Lib(2), Lib(4)]
    a, b = ctx.__enter__(), ctx.__enter__()
    assert [lib.k for lib in libs] == [1, 1]
    a.__exit__(None, None, None)
    assert [lib.k for lib in libs] == [1, 1]  # B still inside
    b.__exit__(None, None, None)
    assert [lib.log for lib in libs] == [[1, 2], [1, 4]]
    libs[0].k = 3  # changed by the user between calls: read again on the next entry
    with ctx:
        assert [lib.k for lib in libs] == [1, 1]
    assert [lib.k for lib in libs] == [3, 4] and ctx._inside == 0


@pytest.mark.parametrize("topology", ["random", "chain"])
def test_forward_dynamics_terms_sparse_and_dense_agree(topology, monkeypatch):
    """The two ways to the bracketed terms of FDSVA-SO -- over the non-zero entries of dM (trees) and by one dense
    batched product (chains) -- give the same four tensors, and the model decides which one a call takes."""
    from redmax.derivatives import aba_second_order as aso

    rng = np.random.default_rng(8)
    m = random_model(rng, n=16, topology=topology, joints="multi", floating=True)
    q, qd = random_state(rng, m)
    tau = rng.normal(size=m.ndof)
    took = []
    real = aso.fdsva_terms
    monkeypatch.setattr(aso, "fdsva_terms", lambda *a: took.append(1) or real(*a))
    res = [rm.aba_second_order_derivatives(m, q, qd, tau, tangent=True)]
    sparse = len(took) == 1
    dM = rm.rnea_second_order_derivatives(m, q, qd, np.zeros(m.ndof), tangent=True)[3]
    assert sparse == (np.count_nonzero(dM) < aso.SPARSE_DM * dM.size)
    assert sparse == (topology == "random")
    monkeypatch.setattr(aso, "SPARSE_DM", 0.0 if sparse else 2.0)  # the other way
    res.append(rm.aba_second_order_derivatives(m, q, qd, tau, tangent=True))
    assert len(took) == 1  # exactly one of the two calls took the sparse way
    for a, b in zip(*res, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
