"""Keep Numba's on-disk cache of redmax's kernels consistent with their sources, without writing at import.

Numba stamps a cached function with a hash of its own source file only.  A kernel that calls a kernel from
another file carries a compiled copy of that callee, so editing the callee's file (or a checkout that leaves
the caller's file untouched) would leave the caller running the old callee.  :func:`install` puts a cache
locator in front of Numba's own locators for the files of this package; its source stamp is a digest of
*every* kernel source of the package (:func:`sources_digest`, computed once, lazily, when Numba first asks).
Any change of any kernel source therefore makes every cached redmax kernel stale, and Numba recompiles and
overwrites it on first use.  Importing redmax reads the sources at most once and writes nothing; where the
package folder is not writable the cache goes to Numba's user-wide cache folder instead.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__all__ = ["cache_stamp", "install", "kernels_cached", "sources_digest"]

_ROOT = Path(__file__).resolve().parent


def sources_digest(root: Path = _ROOT) -> str:
    """SHA-256 over the paths and contents of the package's source files that mention ``njit``."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        data = p.read_bytes()
        if b"njit" in data:
            h.update(p.relative_to(root).as_posix().encode())
            h.update(b"\0")
            h.update(data)
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def _package_digest() -> str:
    return sources_digest()


def cache_stamp() -> str:
    """The stamp of every cached kernel: the sources digest and Numba's optimisation level (``NUMBA_OPT``), so
    that kernels compiled at another level (e.g. a run with NUMBA_OPT=1) are recompiled, never served."""
    from numba.core import config

    return f"{_package_digest()}-O{config.OPT}"


def _inside(path: str) -> bool:
    try:
        return Path(path).resolve().is_relative_to(_ROOT)
    except (OSError, ValueError):
        return False


def _locators():
    """Locator classes stamped by the package digest: ``NUMBA_CACHE_DIR`` (when set), the in-tree
    ``__pycache__``, then the user-wide cache folder (Numba's own order)."""
    from numba.core import caching

    class _Stamped:
        def get_source_stamp(self):
            return cache_stamp()

        @classmethod
        def from_function(cls, py_func, py_file):
            if not _inside(py_file):
                return None
            return super().from_function(py_func, py_file)

    class InTree(_Stamped, caching.InTreeCacheLocator):
        """In-tree cache of a redmax kernel, stamped by the digest of all kernel sources."""

    class UserWide(_Stamped, caching.UserWideCacheLocator):
        """User-wide cache of a redmax kernel (read-only installs), stamped the same way."""

    class UserDir(_Stamped, caching.UserProvidedCacheLocator):
        """The folder named by ``NUMBA_CACHE_DIR`` (when set), stamped the same way."""

    return UserDir, InTree, UserWide


def kernels_cached() -> bool:
    """Whether the cache holds the current compile of the simulation loop (read only: an index whose stamp is
    the package digest).  False means the next run compiles the kernels (first use, or sources changed)."""
    try:
        from redmax.integrators._loop import euler_loop

        return bool(euler_loop._cache._cache_file._load_index())
    except Exception:
        return True


_INSTALLED: list = []


def install() -> None:
    """Register the package-stamped locators with Numba (idempotent).  Must run before any kernel module is
    imported: Numba picks a function's locator when the decorator runs.  Files outside the package keep
    Numba's own locators."""
    if _INSTALLED:
        return
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in Numba 0.61
    classes = _locators()
    impl._locator_classes = list(classes) + list(impl._locator_classes)
    _INSTALLED.extend(classes)

install()
