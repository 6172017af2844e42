"""``njit`` for redmax kernels: Numba's, with calls between kernels typed on plain (non-literal) argument types.

Numba types a constant passed from one compiled function to another as a literal (``Literal[int](0)``) and
compiles the callee once more for every distinct constant, layered through the whole call tree below it.  The
kernels here never branch on the type of a literal, so those specialisations only cost compile time (a third of
all compiled specialisations of the test suite, measured from the cache index).  The dispatchers made here
resolve such calls with :func:`numba.core.types.unliteral` argument types, so that every call site shares the
``int64`` / ``float64`` / ``bool`` specialisation.

``parallel="prange"`` asks for Numba's parallel mode with only the explicit ``prange`` loops made parallel.  With
``parallel=True`` Numba also turns every array expression, slice assignment and ``np.zeros``-like allocation of
the function into a parallel loop of its own, and each one starts and joins the thread team: 1.5 us for an
``np.zeros(1)`` on the 2-vCPU machine of the benchmarks, against 26 ns in a serial function.  Everything else
(caching, options, calls from Python) is Numba's.

:func:`threads_pay` tells whether Numba's threads start cheaply: with OpenMP (``libgomp``) or TBB a parallel
region costs about 1.5 us on that machine, with Numba's own ``workqueue`` fallback (a machine without either
library) 66-79 us, more than the threaded kernels that take their thread count from it save.
"""

from __future__ import annotations

import logging
import threading
import time

import numpy as np
from numba import get_num_threads, prange, threading_layer
from numba import njit as _numba_njit
from numba.core import types
from numba.core.registry import CPUDispatcher
from numba.np.ufunc import parallel as _parallel

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

__all__ = ["ANNOUNCE_AFTER", "FAST", "U64", "compile_seconds", "njit", "num_threads", "threads_pay"]

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
        return super().get_call_template(args, kws)

    def compile(self, sig):
        depth = getattr(_TLS, "depth", 0)
        if depth:  # a callee compiled while its caller is typed: timed with the caller
            _TLS.depth = depth + 1
            try:
                return super().compile(sig)
            finally:
                _TLS.depth = depth
        state = [False]
        timer = threading.Timer(ANNOUNCE_AFTER, _announce, (self.py_func.__qualname__, state))
        timer.daemon = True
        t0 = time.perf_counter()
        timer.start()
        _TLS.depth = 1
        try:
            return super().compile(sig)
        finally:
            _TLS.depth = 0
            timer.cancel()
            dt = time.perf_counter() - t0
            with _TOTAL_LOCK:
                _TOTAL[0] += dt
            if state[0]:
                logger.warning("compiled %s in %.1f s", self.py_func.__qualname__, dt)


def _prange_only() -> dict:
    """Numba's parallel options with only the ``prange`` loops parallel (a new dict: Numba consumes it)."""
    off = ("comprehension", "reduction", "inplace_binop", "setitem", "numpy", "stencil", "fusion")
    return {"prange": True, **dict.fromkeys(off, False)}


def njit(*args, **options):
    """``numba.njit`` with the dispatcher above (same call forms: ``@njit``, ``@njit(cache=True, ...)``), and
    ``parallel="prange"`` for :func:`_prange_only`."""
    if options.get("parallel") == "prange":
        options["parallel"] = _prange_only()
    if len(args) == 1 and callable(args[0]) and not options:
        return _adopt(_numba_njit(args[0]))

    def wrap(fn):
        return _adopt(_numba_njit(*args, **options)(fn))

    return wrap


def _adopt(dispatcher):
    dispatcher.__class__ = KernelDispatcher
    return dispatcher


_LAYER: list = []  # Numba's threading layer, once known


def num_threads() -> int:
    """``numba.get_num_threads()`` for the per-call paths, once the threading layer is running: its C getter
    directly (``numba.np.ufunc.parallel._get_num_threads``, set when the layer starts), 0.09 us against 0.67 us
    for the public function, which also takes the layer's start lock on every call (measured in one process;
    talos second order: about 100 us a call).  Falls back to the public function if that attribute is missing
    (not yet started, or another Numba) or gives no positive count."""
    f = getattr(_parallel, "_get_num_threads", None)
    n = f() if f is not None else 0
    return n if n > 0 else get_num_threads()


def threads_pay() -> bool:
    """Whether a parallel region is cheap: Numba's threading layer is OpenMP or TBB, not its ``workqueue``
    fallback (where starting and joining the threads of one region took 66-79 us against 1.5 us with OpenMP on
    the 2-vCPU VM of the benchmarks; talos second order under ``workqueue``: 244-326 us on two threads against
    160-173 us on one).  The layer
    is started, if no kernel has yet, by one small cached parallel function, and asked once per process."""
    if not _LAYER:
        _start_layer(np.zeros(2))
        _LAYER.append(threading_layer())
    return _LAYER[0] != "workqueue"


@njit(cache=True, parallel="prange")
def _start_layer(a):
    """(2,) a: one parallel region (it starts Numba's threading layer)."""
    for c in prange(a.shape[0]):
        a[c] = c
