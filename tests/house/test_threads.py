"""redmax's threads: no call changes Numba's or the BLAS libraries' thread counts (from the main thread or from
another Python thread), ``threads=`` and :func:`redmax.set_num_threads` choose how many threads a parallel call
uses, the results do not depend on it (bitwise), and the pool's workers take chunks only when they are free: a
worker that is not running never holds the caller up."""

import threading
import time

import numba
import numpy as np
import pytest

import redmax as rm
from redmax._kernels import pool, tables
from redmax.testing.models import random_model, random_state


def _blas_limits():
    from threadpoolctl import threadpool_info

    return sorted((d["internal_api"], d["filepath"], d["num_threads"]) for d in threadpool_info())


def _models():
    """A revolute chain (the batched lane kernels), a tree of every multi-DOF joint with a free base (the per-state
    batched kernels; the in-place chain rule of the second order) and a revolute tree in tangent rates (the core
    tensors without chain rule)."""
    rng = np.random.default_rng(3)
    return (random_model(rng, n=14, topology="chain", joints="revolute"),
            random_model(rng, n=8, topology="random", joints="multi", floating=True),
            random_model(rng, n=16, topology="random", joints="revolute", floating=True))


def _calls(threads):
    """Every public entry point that runs chunks on the pool, each as (name, thunk)."""
    out = []
    kw = {} if threads == "default" else {"threads": threads}
    for m in _models():
        rng = np.random.default_rng(m.ndof)
        B = 40
        Q, V, A = (rng.normal(size=(B, m.ndof)) * 0.3 for _ in range(3))
        q, qd = random_state(rng, m)
        qdd = rng.normal(size=m.ndof)
        out += [(f"{m.name} rnea batch", lambda m=m, Q=Q, V=V, A=A: rm.rnea(m, Q, V, A, **kw)),
                (f"{m.name} aba batch", lambda m=m, Q=Q, V=V, A=A: rm.aba(m, Q, V, A, **kw)),
                (f"{m.name} rnea batch f_ext", lambda m=m, Q=Q, V=V, A=A: rm.rnea(m, Q, V, A,
                                                                                f_ext=np.ones((m.nb, 6)), **kw)),
                (f"{m.name} crba batch", lambda m=m, Q=Q: rm.crba(m, Q, **kw)),
                (f"{m.name} minv batch", lambda m=m, Q=Q: rm.minv(m, Q, **kw))]
        for tangent in (False, True):
            out += [(f"{m.name} second order {tangent}",
                     lambda m=m, q=q, qd=qd, qdd=qdd, t=tangent: rm.rnea_second_order_derivatives(m, q, qd, qdd,
                                                                                                 tangent=t, **kw)),
                    (f"{m.name} forward second order {tangent}",
                     lambda m=m, q=q, qd=qd, qdd=qdd, t=tangent: rm.aba_second_order_derivatives(m, q, qd, qdd,
                                                                                                tangent=t, **kw))]
    m = _models()[0]
    out.append(("simulate", lambda m=m: rm.simulate(m, m.initial_state(), dt=1e-3, duration=0.01).q))
    out.append(("Simulator", lambda m=m: _one_step(m)))
    return out


def _one_step(m):
    sim = rm.Simulator(m, dt=1e-3)
    sim.step()
    return sim.q.copy()


def _copy(r):
    return [np.array(x) for x in r] if isinstance(r, tuple | list) else np.array(r)


def _equal(a, b):
    if isinstance(a, list):
        return all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def _check_unchanged(calls):
    """Run every call; Numba's thread count and the BLAS limits are what they were, after each."""
    numba_before = numba.get_num_threads()
    blas_before = _blas_limits()
    for name, f in calls:
        f()
        assert numba.get_num_threads() == numba_before, name
        assert _blas_limits() == blas_before, name


def test_no_call_changes_numba_or_blas_thread_counts():
    """Every parallel entry point, with threads=1, 2, 3 and the default, from the main thread and from another
    Python thread (whose Numba count is its own), leaves Numba's count and every BLAS limit as it found them, in
    that thread and in the other."""
    main_before = numba.get_num_threads()
    for threads in (1, 2, 3, "default"):
        _check_unchanged(_calls(threads))
    assert numba.get_num_threads() == main_before
    errors = []

    def other():
        try:
            numba.set_num_threads(1)  # this thread's own count
            _check_unchanged(_calls(2))
            _check_unchanged(_calls("default"))
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert not errors, errors
    assert numba.get_num_threads() == main_before


def test_results_do_not_depend_on_the_thread_count():
    """threads=1 (one chunk, the calling thread), 2 and 3 (4 and 3 chunks per thread on the pool) and the default
    give the same bits, for every parallel entry point."""
    ref = [(name, _copy(f())) for name, f in _calls(1)]
    for threads in (2, 3, "default"):
        for (name, f), (rname, r) in zip(_calls(threads), ref, strict=True):
            assert name == rname
            assert _equal(_copy(f()), r), (name, threads)


def test_second_order_chunks_do_not_change_the_tensors():
    """An explicit plan of 1 to 5 chunks of the walk (and of the in-place chain rule's slabs and rows), all run on
    the calling thread, gives the one-chunk tensors bitwise (each entry computed by the same operations whatever
    the chunk): what threads only change is which thread runs a chunk."""
    from redmax.derivatives import rnea_second_order as so

    for m in _models()[1:]:
        for tangent in (False, True):
            rng = np.random.default_rng(5)
            q, qd = random_state(rng, m)
            qdd = rng.normal(size=m.ndof)
            ref = None
            for nchunks in (1, 2, 3, 5):
                res = so.run_plan(m, tangent, q, qd, qdd, nchunks)
                if ref is None:
                    ref = res
                    assert np.count_nonzero(ref[0]) > 0
                assert all(_equal(a, b) for a, b in zip(res, ref, strict=True)), (m.name, tangent, nchunks)


def test_set_num_threads_is_the_default_of_threads():
    """redmax.set_num_threads sets redmax's own default (not Numba's), refuses what is not a positive integer and
    threads= refuses it too, naming the call."""
    before = rm.get_num_threads()
    nb = numba.get_num_threads()
    try:
        rm.set_num_threads(1)
        assert rm.get_num_threads() == 1 and numba.get_num_threads() == nb
        assert pool.pool_for(None)[1] == 0
        rm.set_num_threads(3)
        assert pool.pool_for(None)[1] == 2 and numba.get_num_threads() == nb
        for bad in (0, -1, 1.5, True, "2", None):
            with pytest.raises(rm.RedmaxError):
                rm.set_num_threads(bad)
        m = _models()[0]
        Q = np.zeros((3, m.ndof))
        for bad in (0, 2.0, False):
            with pytest.raises(rm.ModelError, match="threads must be a positive integer"):
                rm.rnea(m, Q, Q, Q, threads=bad)
            with pytest.raises(rm.ModelError, match="threads must be a positive integer"):
                rm.rnea_second_order_derivatives(m, Q[0], Q[0], Q[0], threads=bad)
    finally:
        rm.set_num_threads(before)


# ------------------------------------------------------------------------------------------------------------
# the pool itself


@tables.chunk_function
def _RECORD(ctx, c):
    """Chunk c records the thread that runs it (``pthread_self``) and, for chunk 0 when the table asks for it,
    waits (up to 60 s: a worker's first call may load its code) until another thread has taken chunk 1."""
    T = tables.table_of(ctx, 8)
    seen, k = tables.take1(T, 0, np.int64)
    seen[c] = _thread_id()
    if c == 0 and T[k] != 0:
        for _ in range(60000):
            if seen[1] != 0:
                break
            _sleep_ms()


@numba.njit(cache=True)
def _thread_id():
    return _pthread_self()


_pthread_self = numba.types.ExternalFunction("pthread_self", numba.types.int64())
_usleep = numba.types.ExternalFunction("usleep", numba.types.int32(numba.types.uint32))


@numba.njit(cache=True)
def _sleep_ms():
    _usleep(1000)


# nogil: the workers' first call needs the GIL that a waiting caller would hold; not cached: it carries a copy of
# redmax's pool_run, whose edits the cache of a test file would not see
@numba.njit(nogil=True)
def _run(ctl, fn, T, nchunks, helpers):
    pool.pool_run(ctl, fn, T.ctypes.data, nchunks, helpers)


def _record_run(nchunks, helpers, wait=False):
    ctl, _ = pool.pool_for(helpers + 1)
    seen = np.zeros(max(nchunks, 2), dtype=np.int64)
    T = np.zeros(8, dtype=np.int64)
    T[0], T[1], T[2] = seen.ctypes.data, seen.size, int(wait)
    _run(ctl, _RECORD.address, T, nchunks, helpers)
    return seen


def test_a_free_worker_takes_chunks_and_the_caller_runs_the_rest():
    """With a worker allowed, the two chunks run on two threads, the caller's and a worker's (whichever takes
    chunk 0 first: the pool is help-first), chunk 0 waiting for chunk 1 to be taken; with none, the calling thread
    runs every chunk; every chunk runs once."""
    me = _thread_id()
    seen = _record_run(2, 1, wait=True)
    assert me in seen[:2] and 0 not in seen[:2] and seen[0] != seen[1], "a worker took one of the two chunks"
    seen = _record_run(5, 0)
    assert (seen == me).all()


def test_an_allowed_worker_is_woken_when_more_workers_sleep():
    """With two workers asleep on the pool's semaphore, a call that allows one of them (worker 0) still gets its
    help: waking whichever worker the semaphore picks could wake worker 1, which may not help, and leave the
    caller alone (seen in CI after a test had started two workers)."""
    import time

    pool.pool_for(3)  # two workers
    me = _thread_id()
    for _ in range(6):
        time.sleep(0.02)  # (longer than POLL_NS: both workers go to sleep)
        seen = _record_run(2, 1, wait=True)
        assert me in seen[:2] and 0 not in seen[:2] and seen[0] != seen[1], "no worker took the second chunk"


def test_the_caller_does_not_wait_for_a_worker_that_is_not_running():
    """A call whose workers are all busy elsewhere (here: the pool owned by a call on another thread, whose chunk
    waits 2 s) runs its chunks on its own thread at once."""
    done = threading.Event()

    def long_call():
        ctl, _ = pool.pool_for(2)
        T = np.zeros(8, dtype=np.int64)
        _run(ctl, _SLOW.address, T, 2, 1)
        done.set()

    _SLOW.address, _RECORD.address  # (compiled before the clock starts)

    t = threading.Thread(target=long_call)
    t.start()
    ctl, _ = pool.pool_for(2)
    for _ in range(60000):  # until the long call owns the pool (its first call may load its code)
        if ctl[pool._BUSY] != 0:
            break
        time.sleep(0.001)
    assert ctl[pool._BUSY] != 0
    t0 = time.perf_counter()
    seen = _record_run(3, 1)
    assert (seen[:3] == _thread_id()).all()
    assert time.perf_counter() - t0 < 0.2, "it did not wait for the busy pool"
    t.join()
    assert done.is_set()


@tables.chunk_function
def _SLOW(ctx, c):
    for _ in range(2000):
        _sleep_ms()


def test_a_call_wakes_only_the_sleeping_workers_it_allows():
    """Each worker sleeps on a semaphore of its own and a call posts only those of the workers it allows: with
    one semaphore for all, worker 1 (not allowed) woke, slept again at once and took the wake-up meant for worker
    0, which slept through the call (the caller then ran every chunk: seen in a loaded CI run, where the test
    above waited out its 60 s)."""
    import time

    ctl, _ = pool.pool_for(3)  # two workers
    asleep = [pool._WORKER + 8 * w + pool._W_ASLEEP for w in (0, 1)]
    wakes1 = pool._WORKER + 8 + pool._W_WAKES
    for _ in range(20):
        t0 = time.perf_counter()
        while not (ctl[asleep[0]] and ctl[asleep[1]]) and time.perf_counter() - t0 < 10.0:
            time.sleep(0.005)
        time.sleep(0.01)  # (a wake-up left over from an earlier call, if any, is spent by now)
        assert ctl[asleep[0]] and ctl[asleep[1]], "the two workers did not go to sleep"
        before = int(ctl[wakes1])
        seen = _record_run(2, 1, wait=True)
        assert _thread_id() in seen[:2] and 0 not in seen[:2] and seen[0] != seen[1], "no worker took a chunk"
        assert int(ctl[wakes1]) == before, "a worker that may not help was woken"
