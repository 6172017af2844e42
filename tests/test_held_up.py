"""The lean second-order call after its threads were held up (:mod:`redmax.dynamics._held_up`): the rule itself on
given call times, and on real calls that it runs the same plan on one thread for a while, bitwise the same
tensors, and gives Numba's thread count back whatever happens; and the forward-dynamics second order runs its
products on one BLAS thread and gives the count back."""

import numba
import numpy as np
import pytest

import redmax as rm
from redmax.dynamics import _held_up as hu
from redmax.dynamics import rnea_second_order as so
from redmax.dynamics._fastcall import model_table
from redmax.errors import ModelError
from redmax.testing.models import random_model, random_state

MS = 1_000_000  # ns


def test_rule_on_given_call_times():
    """Held up: slower than twice the fastest threaded call plus SLACK_NS; then FIRST calls on one thread, a run
    that doubles while the retries are held up, up to LAST, and falls back to FIRST after one that is not."""
    g = hu.new_guard()
    assert not hu.one_thread(g)
    assert not hu.held_up(g, 50_000)  # the first call sets the fastest
    assert g[0] == 50_000 and g[1] == 0
    assert not hu.held_up(g, 2 * 50_000 + hu.SLACK_NS)  # at the bound: not held up
    assert hu.held_up(g, 2 * 50_000 + hu.SLACK_NS + 1)
    assert g[1] == hu.FIRST
    assert [hu.one_thread(g) for _ in range(hu.FIRST + 1)] == [True] * hu.FIRST + [False]
    runs = []
    for _ in range(12):  # retries held up again: the runs double, then stay at LAST
        assert hu.held_up(g, 4 * MS)
        runs.append(g[1])
        g[1] = 0
    assert runs[:3] == [2 * hu.FIRST, 4 * hu.FIRST, 8 * hu.FIRST] and runs[-1] == hu.LAST == max(runs)
    assert not hu.held_up(g, 60_000)  # a retry that is not held up
    assert g[2] == hu.FIRST and g[1] == 0
    assert not hu.held_up(g, 30_000) and g[0] == 30_000  # a faster call lowers the bound


def _model(kind):
    rng = np.random.default_rng(5)
    if kind == "tangent":  # the core's coordinates: free base and spherical joints in body twists
        m = random_model(rng, n=22, topology="random", joints="multi", floating=True)
    else:  # a free base in rotation vectors: aligned blocks, the chain rule on the threads too
        m = random_model(rng, n=22, topology="random", joints="multi", floating=True, gravity=(0, 0, -9.81))
    q, qd = random_state(rng, m)
    return m, q, qd, rng.normal(size=m.ndof), kind == "tangent"


@pytest.mark.parametrize("kind", ["tangent", "aligned"])
def test_held_up_calls_run_the_same_plan_on_one_thread(kind, monkeypatch):
    """A call made to look held up (its clock reads SLACK_NS + 1 ms more) sends the next FIRST calls to the calling
    thread alone -- with Numba's count at 1 around them and back to the plan's after -- and every call, threaded
    or not, fresh or out=, returns bitwise the same tensors."""
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
        guard[:] = [50_000, 0, hu.FIRST]  # (the real calls before may have been held up: a known state)
        seen = []
        real_set = so.set_num_threads

        def spy_set(k):
            seen.append(("set", k))
            real_set(k)

        monkeypatch.setattr(so, "set_num_threads", spy_set)
        ticks = iter([0, hu.SLACK_NS + 2 * 50_000 + MS])  # one held-up call
        monkeypatch.setattr(so, "perf_counter_ns", lambda: next(ticks))
        got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent)
        for a, b in zip(got, ref, strict=True):
            np.testing.assert_array_equal(a, b)
        del got
        assert guard[1] == hu.FIRST and seen == []
        monkeypatch.setattr(so, "perf_counter_ns", lambda: pytest.fail("a one-thread call is not timed"))
        for i in range(hu.FIRST):
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
        assert seen == [("set", 1), ("set", nt)] * hu.FIRST
        assert guard[1] == 0
        ticks = iter([0, 1000])  # the retry: threaded again, not held up
        monkeypatch.setattr(so, "perf_counter_ns", lambda: next(ticks))
        got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent)
        for a, b in zip(got, ref, strict=True):
            np.testing.assert_array_equal(a, b)
        assert len(seen) == 2 * hu.FIRST and guard[2] == hu.FIRST
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
        rec[-2][1] = 3  # as after a held-up call
        bad = q.copy()
        bad[1] = np.nan
        with pytest.raises(ModelError, match="q"):
            rm.rnea_second_order_derivatives(m, bad, qd, qdd, tangent=True)
        assert numba.get_num_threads() == nt
        assert rec[-2][1] == (2 if nt > 1 else 3)
    finally:
        numba.set_num_threads(before)


def test_forward_dynamics_products_on_one_blas_thread(monkeypatch):
    """aba_second_order_derivatives runs its products with the BLAS libraries on one thread, and their thread
    counts are what they were afterwards."""
    from threadpoolctl import threadpool_info

    from redmax.dynamics import aba_second_order as aso

    m, q, qd, tau, _ = _model("tangent")
    counts = []
    real = aso._products

    def spy(*a):
        counts.append([d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"])
        return real(*a)

    monkeypatch.setattr(aso, "_products", spy)
    before = [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]
    res = rm.aba_second_order_derivatives(m, q, qd, tau, tangent=True)
    assert counts and all(c == 1 for c in counts[0])
    assert [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"] == before
    assert all(r.flags.c_contiguous and r.flags.writeable and r.shape == (m.ndof,) * 3 for r in res)
