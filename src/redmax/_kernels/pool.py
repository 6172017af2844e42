"""The threads of redmax's parallel calls: a small help-first pool, and the library's thread setting.

A parallel call splits its work into chunks (states of a batch, joints of the second-order walk, slabs of a
tensor) and runs them with :func:`pool_run`: the calling thread takes chunks one by one from a shared counter,
and the pool's worker threads take chunks from the same counter when they are running.  The caller never waits
for a worker that has not started a chunk: a worker that the operating system has not scheduled (another process
busy on its core) leaves its chunks to the caller, so a call takes at most about its one-thread time plus the
chunks already in progress elsewhere, however the cores are shared.  (A team of threads that all must join a
parallel region, as OpenMP's, waits for a descheduled member until the scheduler's next tick, milliseconds.)

No process-wide state changes: the pool has its own threads and its own counter; Numba's thread count, Numba's
threading layer and the BLAS libraries are never touched.  :func:`set_num_threads` / :func:`get_num_threads` are
redmax's own setting, the default of every ``threads=`` keyword (``threads=None``); at import it is Numba's
default count (``NUMBA_NUM_THREADS``, the number of CPUs unless that variable says otherwise).

The chunks are C functions ``void chunk(int64 ctx, int64 c)`` (:mod:`redmax._kernels.tables`): ``ctx`` is the
address of an int64 table the caller fills with the addresses and shapes of its arrays, ``c`` the chunk.  A worker
waits for work by polling with ``sched_yield`` for :data:`POLL_NS` after its last chunk (so that the next call of a
loop finds it awake, while any other runnable thread gets the core), then sleeps on a POSIX semaphore of its own.  A
call wakes only the sleeping workers it allows to help: with one semaphore for all, a worker that may not help
could wake, go back to sleep and take the wake-up meant for one that may, which then slept through the call.  Two
calls at once from different Python threads do not share the pool: the second runs its chunks on its own thread.
"""

from __future__ import annotations

import atexit
import os
import threading

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from redmax._jit import njit

__all__ = ["MAX_CHUNKS", "POLL_NS", "call_chunk", "get_num_threads", "pool_for", "pool_run", "run_chunks",
           "set_num_threads"]

POLL_NS = 200_000  # a worker polls this long after its last chunk before it sleeps (ns)
MAX_CHUNKS = (1 << 16) - 1  # chunks of one call (16 bits of the job word)

# slots of the control block (int64; each group on a 64-byte line of its own)
_WORD = 0  # (generation << 32) | (chunks << 16) | next chunk: claimed by compare-and-swap
_DONE = 8  # chunks finished
_FN, _CTX, _ALLOW = 16, 17, 18  # the chunk function, its table, how many workers may help
_STOP = 32  # 1: workers return
_BUSY = 40  # 1 while a call owns the pool
# then a line per worker w at _WORKER + 8 w: a timespec (2 slots), its sem_t (32 bytes on Linux), 1 while it is
# asleep (or about to be) on that semaphore, and the number of times it woke from it
_WORKER = 48
_W_TIME, _W_SEM, _W_ASLEEP, _W_WAKES = 0, 2, 6, 7
MAX_WORKERS = 63
_SIZE = _WORKER + 8 * MAX_WORKERS

_sem_init = types.ExternalFunction("sem_init", types.int32(types.voidptr, types.int32, types.uint32))
_sem_wait = types.ExternalFunction("sem_wait", types.int32(types.voidptr))
_sem_post = types.ExternalFunction("sem_post", types.int32(types.voidptr))
_sched_yield = types.ExternalFunction("sched_yield", types.int32())
_clock_gettime = types.ExternalFunction("clock_gettime", types.int32(types.int32, types.voidptr))
_CLOCK_MONOTONIC = 1


def _slot(context, builder, aty, arr, i):
    return builder.gep(context.make_array(aty)(context, builder, arr).data, [i])


@intrinsic
def _addr(typingctx, arr, i):
    """``void *`` to ``arr[i]``."""
    sig = types.voidptr(arr, types.intp)

    def codegen(context, builder, signature, args):
        return builder.bitcast(_slot(context, builder, signature.args[0], *args), ir.IntType(8).as_pointer())

    return sig, codegen


@intrinsic
def _load(typingctx, arr, i):
    """``arr[i]`` (int64), an atomic load with acquire order."""
    sig = types.int64(arr, types.intp)

    def codegen(context, builder, signature, args):
        return builder.load_atomic(_slot(context, builder, signature.args[0], *args), "acquire", 8)

    return sig, codegen


@intrinsic
def _store(typingctx, arr, i, v):
    """``arr[i] = v`` (int64), an atomic store with sequentially consistent order."""
    sig = types.void(arr, types.intp, types.int64)

    def codegen(context, builder, signature, args):
        builder.store_atomic(args[2], _slot(context, builder, signature.args[0], args[0], args[1]), "seq_cst", 8)

    return sig, codegen


@intrinsic
def _cas(typingctx, arr, i, old, new):
    """Compare-and-swap of ``arr[i]`` from ``old`` to ``new``; True if it was ``old`` (and is now ``new``)."""
    sig = types.boolean(arr, types.intp, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        p = _slot(context, builder, signature.args[0], args[0], args[1])
        return builder.extract_value(builder.cmpxchg(p, args[2], args[3], "seq_cst", "seq_cst"), 1)

    return sig, codegen


@intrinsic
def _add(typingctx, arr, i, v):
    """Atomic ``arr[i] += v``; the old value."""
    sig = types.int64(arr, types.intp, types.int64)

    def codegen(context, builder, signature, args):
        return builder.atomic_rmw("add", _slot(context, builder, signature.args[0], args[0], args[1]), args[2],
                                  "seq_cst")

    return sig, codegen


@intrinsic
def call_chunk(typingctx, fn, ctx, c):
    """Call the C function at address ``fn``, ``void fn(int64 ctx, int64 c)``."""
    sig = types.void(types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(64), ir.IntType(64)])
        builder.call(builder.inttoptr(args[0], fnty.as_pointer()), [args[1], args[2]])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True)
def run_chunks(fn, ctx, nchunks):
    """Chunks ``0 .. nchunks - 1`` of ``fn`` in order, on the calling thread."""
    for c in range(nchunks):
        call_chunk(fn, ctx, c)


@njit(cache=True, nogil=True)
def _help(ctl, g):
    """Take and run chunks of job ``g`` until none is left (or a newer job is posted)."""
    fn = ctl[_FN]
    ctx = ctl[_CTX]
    while True:
        w = _load(ctl, _WORD)
        c = w & 0xFFFF
        if (w >> 32) != g or c >= ((w >> 16) & 0xFFFF):
            return
        # claimed only if no other thread took chunk c first; a successful swap also shows that job g was not
        # finished, so that fn and ctx, read after its word, are job g's
        if _cas(ctl, _WORD, w, w + 1):
            call_chunk(fn, ctx, c)
            _add(ctl, _DONE, 1)


@njit(cache=True, nogil=True)
def pool_run(ctl, fn, ctx, nchunks, helpers):
    """Run chunks ``0 .. nchunks - 1`` of the C function ``fn`` (``void fn(int64 ctx, int64 c)``, table address
    ``ctx``) on the calling thread and at most ``helpers`` of the pool's workers (module docstring); returns once
    every chunk has finished.  On the calling thread alone when ``helpers`` is 0 or another call owns the pool."""
    if helpers <= 0 or nchunks <= 1 or nchunks > MAX_CHUNKS or not _cas(ctl, _BUSY, 0, 1):
        run_chunks(fn, ctx, nchunks)
        return
    g = (_load(ctl, _WORD) >> 32) + 1
    ctl[_FN] = fn
    ctl[_CTX] = ctx
    _store(ctl, _ALLOW, helpers)
    _store(ctl, _DONE, 0)
    _store(ctl, _WORD, (g << 32) | (nchunks << 16))  # publishes fn and ctx with the job
    for w in range(min(helpers, MAX_WORKERS)):  # the workers that may help and sleep (then the word: _worker)
        o = _WORKER + 8 * w
        if _load(ctl, o + _W_ASLEEP) != 0:
            _sem_post(_addr(ctl, o + _W_SEM))
    _help(ctl, g)
    k = 0
    while _load(ctl, _DONE) < nchunks:  # chunks in progress on workers (a worker preempted in one gets this core)
        k += 1
        if k > 64:
            _sched_yield()
    _store(ctl, _BUSY, 0)


@njit(cache=True, nogil=True)
def _now(ctl, o):
    """CLOCK_MONOTONIC in ns (the worker's timespec at ``ctl[o:o + 2]``)."""
    _clock_gettime(_CLOCK_MONOTONIC, _addr(ctl, o))
    return ctl[o] * 1_000_000_000 + ctl[o + 1]


@njit(cache=True, nogil=True)
def _worker(ctl, wid, poll_ns):
    """A worker's life: poll for a new job (``sched_yield`` between looks) for ``poll_ns`` after its last one,
    then sleep on its semaphore until a job that allows it; help with every job that allows it (``wid < allow``).
    A wake-up it did not need (the caller saw it asleep just as it saw the job) leaves its semaphore one ahead:
    it wakes once more for nothing and sleeps again."""
    seen = -1  # (a worker started after its first job was posted helps with it: the swap in _help is the guard)
    o = _WORKER + 8 * wid
    while _load(ctl, _STOP) == 0:
        t0 = _now(ctl, o + _W_TIME)
        while True:
            g = _load(ctl, _WORD) >> 32
            if g != seen or _load(ctl, _STOP) != 0:
                break
            if _now(ctl, o + _W_TIME) - t0 > poll_ns:
                _store(ctl, o + _W_ASLEEP, 1)  # (then the word once more: a caller stores it, then reads this)
                if (_load(ctl, _WORD) >> 32) == seen and _load(ctl, _STOP) == 0:
                    if _sem_wait(_addr(ctl, o + _W_SEM)) == 0:  # (-1: a signal interrupted it)
                        _add(ctl, o + _W_WAKES, 1)
                _store(ctl, o + _W_ASLEEP, 0)
                t0 = _now(ctl, o + _W_TIME)
            else:
                _sched_yield()
        seen = g
        if wid < _load(ctl, _ALLOW):
            _help(ctl, g)


@njit(cache=True)
def _init(ctl):
    """Initialise every worker's semaphore; 0 on success."""
    for w in range(MAX_WORKERS):
        if _sem_init(_addr(ctl, _WORKER + 8 * w + _W_SEM), 0, 0) != 0:
            return -1
    return 0


class _Pool:
    """The control block (an int64 array on its own cache lines) and the worker threads of this process."""

    def __init__(self):
        buf = np.zeros(_SIZE + 8, dtype=np.int64)
        off = (-buf.ctypes.data % 64) // 8
        self.ctl = buf[off:off + _SIZE]
        self.ok = os.name == "posix" and _init(self.ctl) == 0
        self.workers: list[threading.Thread] = []
        self.lock = threading.Lock()

    def helpers(self, threads: int) -> int:
        """Workers for a call on ``threads`` threads (started here as needed; 0 where the pool cannot run)."""
        k = min(threads, MAX_WORKERS + 1) - 1
        if k <= 0 or not self.ok:
            return 0
        if len(self.workers) < k:
            with self.lock:
                while len(self.workers) < k:
                    t = threading.Thread(target=_worker, args=(self.ctl, len(self.workers), POLL_NS),
                                         name=f"redmax-worker-{len(self.workers)}", daemon=True)
                    t.start()
                    self.workers.append(t)
        return k

    def stop(self):
        if self.workers:
            _halt(self.ctl, len(self.workers))


@njit(cache=True)
def _halt(ctl, nworkers):
    """Tell the workers to return (and wake the sleeping ones)."""
    _store(ctl, _STOP, 1)
    for w in range(nworkers):
        _sem_post(_addr(ctl, _WORKER + 8 * w + _W_SEM))


_POOL: list = []
_THREADS = [max(1, int(numba.config.NUMBA_NUM_THREADS))]


def _pool() -> _Pool:
    if not _POOL:
        _POOL.append(_Pool())
    return _POOL[0]


def _forget_after_fork():
    """In a forked child the workers do not exist: the next call makes a new pool."""
    _POOL.clear()


def _stop_at_exit():
    if _POOL:
        _POOL[0].stop()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(_stop_at_exit)


def set_num_threads(n: int) -> None:
    """Set how many threads redmax's parallel calls use by default (``threads=None``): the batched ``rnea``,
    ``aba``, ``crba``, ``minv`` and the second-order derivatives.  A redmax setting only: Numba's thread count and
    the BLAS libraries are not touched.  ``n = 1`` runs everything on the calling thread."""
    from redmax.errors import RedmaxError

    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise RedmaxError(f"set_num_threads: n must be a positive integer, got {n!r}")
    _THREADS[0] = int(n)


def get_num_threads() -> int:
    """The default thread count of redmax's parallel calls (:func:`set_num_threads`; at import, Numba's default
    count ``numba.config.NUMBA_NUM_THREADS``)."""
    return _THREADS[0]


def pool_for(threads, where: str = "") -> tuple:
    """``(ctl, helpers)`` for a call with the ``threads=`` keyword ``threads`` (None: :func:`get_num_threads`):
    the pool's control block and how many of its workers may help (0: the calling thread alone)."""
    if threads is None:
        threads = _THREADS[0]
    elif isinstance(threads, bool) or not isinstance(threads, int | np.integer) or threads < 1:
        from redmax.errors import ModelError

        raise ModelError(f"{where}threads must be a positive integer or None, got {threads!r}")
    p = _pool()
    return p.ctl, p.helpers(int(threads))
