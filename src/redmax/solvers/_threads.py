"""BLAS/LAPACK threads for the compiled step: one thread while a loop runs.

The step's systems are small (tens to hundreds of unknowns) and the loop around them is single-threaded; on the
two-core machines this project targets, OpenBLAS's worker threads only add synchronisation (measured in
benchmarks/step.py: LAPACK ``dpotrf`` at n = 200 took ~1.5 ms with two threads under load against ~0.3 ms with
one).  :func:`one_blas_thread` limits the BLAS libraries to one thread for the duration of a ``with`` block and
restores them afterwards (``threadpoolctl``).
"""

from __future__ import annotations

import contextlib

__all__ = ["one_blas_thread"]


@contextlib.contextmanager
def one_blas_thread(active: bool = True):
    """Context manager: BLAS libraries (NumPy's and SciPy's OpenBLAS) run single-threaded inside."""
    if not active:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
