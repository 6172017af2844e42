"""``njit`` for redmax kernels: Numba's, with calls between kernels typed on plain (non-literal) argument types.

Numba types a constant passed from one compiled function to another as a literal (``Literal[int](0)``) and
compiles the callee once more for every distinct constant, layered through the whole call tree below it.  The
kernels here never branch on the type of a literal, so those specialisations only cost compile time (a third of
all compiled specialisations of the test suite, measured from the cache index).  The dispatchers made here
resolve such calls with :func:`numba.core.types.unliteral` argument types, so that every call site shares the
``int64`` / ``float64`` / ``bool`` specialisation.  Likewise for read-only arrays: a call from compiled code that
passes a writeable array where the kernel already has a specialisation taking a read-only one (the model's
arrays and the kernels' global constants are read-only, workspaces and copies are not) calls that one, through
Numba's free cast, instead of compiling the kernel again (Numba does the same for calls from Python).

No kernel uses Numba's parallel mode (its thread team, OpenMP's, waits at the end of every region for each of
its threads, however the cores are shared): redmax's parallel calls run on the pool of :mod:`redmax._kernels.pool`.
Two processes that need the same kernel while neither finds it in the on-disk cache (``pytest -n``, ``redmax
compile -j``, a user's process pool) would both compile it: a dispatcher here compiles under a file lock of its
own (named by the kernel, the signature and its cache folder), so the second waits and loads the first one's
result.  The call graph has no cycles, so nested locks (a kernel typed while its caller compiles) are always
taken caller first and cannot deadlock; the OS drops a lock whose process dies.

Everything else (caching, options, calls from Python) is Numba's.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
import threading
import time

import numpy as np
from numba import njit as _numba_njit
from numba.core import types, typing
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher
from numba.core.sigutils import normalize_signature

from redmax._kernel_cache import name_files_by_stamp

# Floating-point freedoms for the recursive kernels: fused multiply-add, reassociation (lets loops
# vectorise), no signed zeros, reciprocal approximations.  Never "nnan"/"ninf": the kernels check inputs
# for NaN and inf.  Results move by rounding only (~1e-15 relative).
FAST = {"contract", "reassoc", "nsz", "arcp"}


# Loop index type for loops that should vectorise: Numba wraps negative indices around, so an index it
# cannot prove non-negative (``for c in range(a, n)`` with a read from an array) costs a select per
# access and keeps LLVM from vectorising the loop; an unsigned index has no such branch.  Write
# ``for c in range(U64(a), U64(n))`` and index with c only (uint64 mixed with int64 arithmetic
# promotes to float64 in Numba).  Measured: 2.3x on the M^-1 column sweeps at n = 100.
U64 = np.uint64

__all__ = ["ANNOUNCE_AFTER", "FAST", "U64", "compile_seconds", "compiling", "njit"]

logger = logging.getLogger("redmax")

ANNOUNCE_AFTER = 2.0  # s: a compile still running after this long is announced on the "redmax" logger
_TLS = threading.local()  # per thread: depth of nested kernel compiles
_TOTAL = [0.0]  # s spent in top-level compiles (cache loads included) by every thread of the process
_TOTAL_LOCK = threading.Lock()


def compile_seconds() -> float:
    """Seconds this process has spent compiling (or loading from the cache) redmax kernels so far.  Callers
    take the difference around a call to report compile time apart from run time."""
    return _TOTAL[0]


def _announce(name: str, state: list) -> None:
    state[0] = True
    logger.warning("compiling %s for first use (cached on disk afterwards; `redmax compile` compiles ahead of "
                   "time)...", name)


class KernelDispatcher(CPUDispatcher):
    """A CPUDispatcher whose calls from compiled code are typed on unliteral argument types, and whose long
    compiles are announced (a ``redmax`` logger warning when one takes over :data:`ANNOUNCE_AFTER` s)."""

    def get_call_template(self, args, kws):
        args = tuple(types.unliteral(a) for a in args)
        kws = {k: types.unliteral(v) for k, v in kws.items()}
        if self._can_compile and not kws:
            pysig, folded = self._compiler.fold_argument_types(args, kws)
            folded = tuple(folded)
            if folded not in self.overloads:
                sig = _read_only_match(self.nopython_signatures, folded)
                if sig is not None:  # a writeable array passed where a read-only one was compiled: reuse it
                    name = self.py_func.__name__
                    return (typing.make_concrete_template(f"CallTemplate({name})", key=name, signatures=[sig]),
                            pysig, folded, {})
        return super().get_call_template(args, kws)

    def compile(self, sig):
        existing = self.overloads.get(tuple(normalize_signature(sig)[0]))
        if existing is not None:  # (asked again each time a caller is typed)
            return existing.entry_point
        with compiling(self.py_func.__qualname__):  # (a callee compiled while its caller is typed: with the caller)
            if self._cache.__class__.__name__ == "NullCache":
                return super().compile(sig)
            # Numba's process-wide compiler lock first: a thread never waits for a file lock that another thread
            # of this process holds while it waits for Numba's
            with global_compiler_lock, _file_lock(self, sig):
                return super().compile(sig)


def _read_only_match(signatures, args):
    """The compiled signature that ``args`` convert to when they differ from it only by arrays that are writeable
    here and read-only there (Numba casts a writeable array to a read-only one for free), or None."""
    for sig in signatures:
        if len(sig.args) != len(args) or sig.args == args:
            continue
        if all(a == s or (isinstance(a, types.Array) and isinstance(s, types.Array) and a.mutable and not s.mutable
                          and a.dtype == s.dtype and a.ndim == s.ndim and a.layout == s.layout
                          and a.aligned == s.aligned)
               for a, s in zip(args, sig.args, strict=True)):
            return sig
    return None


_LOCKS = threading.local()  # per thread: the lock files held, by path (re-entered when a kernel types itself)


@contextlib.contextmanager
def _file_lock(dispatcher, sig):
    """Hold an exclusive lock (``flock``) on a file named by the kernel's qualified name, its signature ``sig``
    and its cache folder, in the temporary directory, while it compiles or loads (a no-op where ``fcntl`` is
    missing).  One lock per signature: loading one specialisation never waits for the compile of another."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    key = f"{getattr(dispatcher._cache, '_cache_path', '')}|{dispatcher.py_func.__module__}." \
          f"{dispatcher.py_func.__qualname__}|{normalize_signature(sig)[0]}"
    path = os.path.join(tempfile.gettempdir(), "redmax-compile-locks",
                        hashlib.sha1(key.encode()).hexdigest()[:20] + ".lock")
    held = _LOCKS.__dict__.setdefault("held", set())
    if path in held:
        yield
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:  # an unwritable temporary directory: compile without the lock
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.add(path)
        try:
            yield
        finally:
            held.discard(path)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextlib.contextmanager
def compiling(name: str):
    """Time a top-level compile (or cache load) of ``name``: added to :func:`compile_seconds`, announced on the
    ``redmax`` logger when it takes over :data:`ANNOUNCE_AFTER` s.  Compiles nested inside it are timed with it."""
    depth = getattr(_TLS, "depth", 0)
    _TLS.depth = depth + 1
    if depth:
        try:
            yield
        finally:
            _TLS.depth = depth
        return
    state = [False]
    timer = threading.Timer(ANNOUNCE_AFTER, _announce, (name, state))
    timer.daemon = True
    t0 = time.perf_counter()
    timer.start()
    try:
        yield
    finally:
        _TLS.depth = 0
        timer.cancel()
        dt = time.perf_counter() - t0
        with _TOTAL_LOCK:
            _TOTAL[0] += dt
        if state[0]:
            logger.warning("compiled %s in %.1f s", name, dt)


def njit(*args, **options):
    """``numba.njit`` with the dispatcher above (same call forms: ``@njit``, ``@njit(cache=True, ...)``)."""
    if len(args) == 1 and callable(args[0]) and not options:
        return _adopt(_numba_njit(args[0]))

    def wrap(fn):
        return _adopt(_numba_njit(*args, **options)(fn))

    return wrap


def _adopt(dispatcher):
    dispatcher.__class__ = KernelDispatcher
    name_files_by_stamp(dispatcher)
    return dispatcher
