"""The C call path of the second-order lean call (redmax._ccall.Table + redmax.derivatives._second_order_c_entry).

Where the extension is built the lean call of ``rnea_second_order_derivatives`` passes its arrays to a
``numba.cfunc`` through an int64 table; it must give the very numbers of the dispatcher's entry point (the same
compiled kernel) for a new block, a recycled block and ``out=``, in the core's coordinates and with aligned
blocks, and decline (NotImplemented, or the kernel's -2) everything else, so that the checked path names the
problem as before."""

import numpy as np
import pytest

pytest.importorskip("redmax._ccall", reason="the C extension is not built here (setup.py needs a C compiler)")

import redmax as rm
from redmax.derivatives import rnea_second_order as so
from redmax.dynamics import _single_call
from redmax.errors import ModelError
from redmax.testing.models import random_model, random_state


def _model(seed=5):
    m = random_model(np.random.default_rng(seed), n=16, topology="random", joints="multi", floating=True)
    assert not m.chart_joints.size
    return m


def _inputs(m, seed=1):
    rng = np.random.default_rng(seed)
    q, qd = random_state(rng, m)
    return q, qd, rng.normal(size=m.ndof)


@pytest.mark.parametrize("tangent", [True, False])
def test_c_path_is_used_and_equals_the_entry_point(tangent):
    from redmax import _ccall

    m, m2 = _model(), _model()
    q, qd, qdd = _inputs(m)
    n = m.ndof
    got = [a.copy() for a in rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent)]
    rec = so._lean_record(m, tangent)
    assert rec is not None and isinstance(rec[-1][0], _ccall.Table)
    use_c = _single_call.USE_C
    try:  # a second model of the same structure, its record made without the extension: the dispatcher's entry
        _single_call.USE_C = False
        ref = [a.copy() for a in rm.rnea_second_order_derivatives(m2, q, qd, qdd, tangent=tangent)]
        assert so._lean_record(m2, tangent)[-1] is None
        for a, b in zip(rm.rnea_second_order_derivatives(m2, q, qd, qdd, tangent=tangent), ref, strict=True):
            assert np.array_equal(a, b) and not a.flags.writeable  # a recycled block, read-only
        q2, qd2, qdd2 = _inputs(m, seed=2)  # a recycled block on each path, at another state
        ref2 = [a.copy() for a in rm.rnea_second_order_derivatives(m2, q2, qd2, qdd2, tangent=tangent)]
    finally:
        _single_call.USE_C = use_c
    for a, b in zip(got, ref, strict=True):
        assert np.array_equal(a, b)
    again = rm.rnea_second_order_derivatives(m, q2, qd2, qdd2, tangent=tangent)  # the block of the first call
    for a, b in zip(again, ref2, strict=True):
        assert np.array_equal(a, b) and not a.flags.writeable
    del again
    out = tuple(np.full((n, n, n), 0.0) for _ in range(4))
    res = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent, out=out)
    assert all(a is b for a, b in zip(res, out, strict=True))
    for a, b in zip(out, ref, strict=True):
        assert np.array_equal(a, b)
    checked = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent, gravity=True, jstate=None,
                                               f_ext=np.zeros((m.nb, 6)))  # the checked path
    for a, b in zip(checked, ref, strict=True):
        assert np.allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())


class _Sub(np.ndarray):
    """An ndarray subclass (not an exact ndarray)."""


def test_table_declines_what_it_does_not_take():
    m = _model()
    q, qd, qdd = _inputs(m)
    n = m.ndof
    rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True)
    f, T_out = so._lean_record(m, True)[-1][0::4]
    out = [np.zeros((n, n, n)) for _ in range(4)]
    assert f(T_out, q, qd, qdd, *out) == -1  # the contract itself
    ro = np.zeros((n, n, n))
    ro.flags.writeable = False
    strided = np.zeros((2 * n,))[::2]
    bad_args = [
        (T_out, q, qd, qdd, *out[:3]),  # too few
        (T_out, q, qd, qdd, *out, out[0]),  # too many
        (T_out.astype(np.int32), q, qd, qdd, *out),  # the table's dtype
        (list(T_out), q, qd, qdd, *out),  # not an array
        (T_out, q.astype(np.float32), qd, qdd, *out),  # dtype
        (T_out, q[:-1], qd, qdd, *out),  # length
        (T_out, strided, qd, qdd, *out),  # layout
        (T_out, q.view(_Sub), qd, qdd, *out),  # subclass
        (T_out, q, qd, qdd, ro, *out[1:]),  # read-only out
        (T_out, q, qd, qdd, np.zeros((n, n, n + 1)), *out[1:]),  # shape
        (T_out, q, qd, qdd, np.zeros((n, n * n)), *out[1:]),  # dimensions
        (T_out, q, qd, qdd, np.asfortranarray(np.zeros((n, n, n)))[:, ::-1], *out[1:]),  # not C-contiguous
        (T_out, q, qd, qdd, out[0].byteswap().view(out[0].dtype.newbyteorder()), *out[1:]),  # byte order
    ]
    for args in bad_args:
        assert f(*args) is NotImplemented
    assert f(T_out, q, qd, qdd, *out, key=1) is NotImplemented
    nan = q.copy()
    nan[0] = np.nan
    assert f(T_out, nan, qd, qdd, *out) == -2  # the kernel's rejection: the checked path names it
    with pytest.raises(ModelError, match="q"):
        rm.rnea_second_order_derivatives(m, nan, qd, qdd, tangent=True)
    with pytest.raises(ModelError, match="q"):
        rm.rnea_second_order_derivatives(m, nan, qd, qdd, tangent=True, out=tuple(out))


def test_declined_arguments_reach_the_checked_path():
    """Arguments the table declines give the checked path's results or its named errors."""
    m = _model()
    q, qd, qdd = _inputs(m)
    n = m.ndof
    ref = [a.copy() for a in rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=False)]
    rec = so._lean_record(m, False)
    strided = np.repeat(q, 2)[::2]
    for qq in (strided, q.view(_Sub), list(q)):  # all declined by the table, taken by the checked path
        if isinstance(qq, np.ndarray):
            assert rec[-1][0](rec[-1][3], qq, qd, qdd, *[np.zeros((n, n, n)) for _ in range(4)]) is NotImplemented
        got = rm.rnea_second_order_derivatives(m, qq, qd, qdd, tangent=False)
        for a, b in zip(got, ref, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
            assert not a.flags.writeable and not (a.base is not None and a.base.flags.writeable)
    ro = [np.zeros((n, n, n)) for _ in range(4)]
    ro[1].flags.writeable = False
    with pytest.raises(ModelError, match=r"out\[1\]"):
        rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=False, out=tuple(ro))
    with pytest.raises(ModelError, match="q"):
        rm.rnea_second_order_derivatives(m, q[:-1], qd, qdd, tangent=False)


def test_a_call_that_did_not_finish_leaves_its_block_to_be_checked():
    """A block whose call was rejected (here a NaN: the kernel raised after the block entered the pool) is not
    taken as clean by the next call, however read-only it is: its never-written entries may hold anything (an
    uninitialised block; simulated here with NaN), so they are checked and the results are right."""
    import numba

    m = _model(7)
    n = m.ndof
    q, qd, qdd = _inputs(m, 3)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        rec = so._lean_record(m, True)
        nan = q.copy()
        nan[1] = np.nan
        with pytest.raises(ModelError, match="q"):
            rm.rnea_second_order_derivatives(m, nan, qd, qdd, tangent=True)
        pool = so._lean_record(m, True)[21]
        if rec[1] >= 2:  # threads: the rejected call's new block is in the pool, not clean
            assert pool[3:] == [False, False]
            B = next(b for b in pool[:2] if b is not None)
            B.flags.writeable = True  # what an uninitialised block may hold, read-only as a new block is
            B[...] = np.nan
            B.flags.writeable = False
            del B
        else:  # one thread: a new zeroed block per call, no pool
            assert pool[:2] == [None, None]
        got = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True)
        ref = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=True, f_ext=np.zeros((m.nb, 6)))
        for a, b in zip(got, ref, strict=True):
            assert a.shape == (n, n, n)
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
            np.testing.assert_array_equal(a == 0, b == 0)
    finally:
        numba.set_num_threads(before)
