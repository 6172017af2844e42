"""Keep Numba's on-disk cache of redmax's kernels consistent with their sources, and recompile only what changed.

Numba stamps a cached function with its own source file only.  A kernel that calls a kernel of another file
carries a compiled copy of that callee, so editing the callee's file would leave the caller running the old
callee.  :func:`install` puts a cache locator in front of Numba's own locators for the files of this package; the
stamp of each kernel (:func:`kernel_stamp`) is a digest of the files that hold the kernel and every redmax
function it calls, directly or through other kernels (found from the names its byte code reads), of the values
of the constants it reads from other modules, of the compile settings (``_jit.py``) and of Numba's optimisation
level.  Editing one kernel module therefore recompiles exactly the cached kernels that call into it.

The stamp is computed lazily, the first time Numba compares or saves it (after every module is imported), and at
most once per kernel; each kernel file's digest is taken when the file is imported, so a file edited while a
process runs is never stamped with contents other than those that process compiled.  Importing redmax writes
nothing; where the package folder is not writable the cache goes to Numba's user-wide cache folder instead.

A kernel's cache files are named by its stamp too (:func:`name_files_by_stamp`), so that processes whose stamps
differ (a registered joint family or force of a plugin, another checkout sharing ``NUMBA_CACHE_DIR``) keep their
own compiled versions side by side instead of overwriting each other's (Numba keeps one stamp per kernel and
discards the index of any other).  The :data:`KEEP_VERSIONS` most recently used versions of a kernel are kept.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import sys
import types
from pathlib import Path

import numpy as np

__all__ = ["KEEP_VERSIONS", "dependencies", "install", "kernel_stamp", "name_files_by_stamp"]

KEEP_VERSIONS = 8  # stamped versions of one kernel kept in its cache folder (the most recently used)

_ROOT = Path(__file__).resolve().parent
_ALWAYS = (_ROOT / "_jit.py",)  # how calls between kernels are typed: part of every kernel's meaning


def _inside(path: str) -> bool:
    try:
        return Path(path).resolve().is_relative_to(_ROOT)
    except (OSError, ValueError, TypeError):
        return False


@functools.cache
def _file_digest(path: str) -> bytes:
    return hashlib.sha256(Path(path).read_bytes()).digest()


def _names(code: types.CodeType, out: set) -> set:
    """The global and attribute names read by ``code`` and the functions nested in it."""
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _names(c, out)
    return out


def _constant(value) -> bytes | None:
    """Bytes that identify a constant Numba freezes into compiled code (None for anything else)."""
    if isinstance(value, bool | int | float | complex | str | bytes | np.generic):
        return repr(value).encode()
    if isinstance(value, np.ndarray):
        return str(value.dtype).encode() + repr(value.shape).encode() + value.tobytes()
    if isinstance(value, tuple) and all(_constant(v) is not None for v in value):
        return b"(" + b",".join(_constant(v) for v in value) + b")"
    return None


def _numba_own(fn) -> bool:
    """True for a function of Numba itself (its files change only with its version, which Numba's cache checks)."""
    return (getattr(fn, "__module__", "") or "").split(".")[0] == "numba"


def dependencies(fn) -> tuple[set, list]:
    """(files, constants) a kernel's compiled code depends on: the redmax files holding ``fn`` and every redmax
    function, kernel, intrinsic or class it reaches through the names its byte code reads (transitively), and the
    (name, bytes) of the constants those functions read from their modules' globals.  Compiled kernels outside the
    package that a redmax kernel calls (a joint family registered by another package) count with their files, and
    functions written at import time (``__redmax_source__``: the joint dispatch of the registered families) with
    their text."""
    files: set[str] = set()
    consts: list[tuple[str, bytes]] = []
    seen: set[int] = set()

    def visit(obj, names):
        if id(obj) in seen:
            return
        py = getattr(obj, "py_func", None) or getattr(obj, "_defn", None)  # a dispatcher or an intrinsic
        if isinstance(py, types.FunctionType):
            seen.add(id(obj))
            function(py, plugin=getattr(obj, "py_func", None) is py and not _numba_own(py))
        elif isinstance(obj, types.FunctionType):
            function(obj)
        elif isinstance(obj, types.ModuleType):
            if _inside(getattr(obj, "__file__", None) or ""):
                seen.add(id(obj))
                for n in names:
                    if n in vars(obj):
                        visit(vars(obj)[n], names)
        elif isinstance(obj, type):
            mod = sys.modules.get(getattr(obj, "__module__", ""), None)
            f = getattr(mod, "__file__", None)
            if f and _inside(f):
                files.add(f)

    def function(fn, plugin=False):
        if id(fn) in seen:
            return
        seen.add(id(fn))
        f = fn.__code__.co_filename
        if not _inside(f) and not (plugin and Path(f).is_file()):
            return
        files.add(f)
        written = getattr(fn, "__redmax_source__", None)  # code written at import (the joint dispatch): its text
        if written is not None:
            consts.append((f"{fn.__module__}.{fn.__qualname__}", written.encode()))
        names = _names(fn.__code__, set())
        g = fn.__globals__
        for n in sorted(names):
            if n in g:
                c = _constant(g[n])
                if c is not None:
                    consts.append((f"{fn.__module__}.{n}", c))
                else:
                    visit(g[n], names)
        for cell in fn.__closure__ or ():
            try:
                v = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            c = _constant(v)
            if c is not None:
                consts.append((f"{fn.__qualname__}.<closure>", c))
            else:
                visit(v, names)

    function(fn)
    return files, consts


def kernel_stamp(fn) -> str:
    """The stamp of one cached kernel: a digest of what :func:`dependencies` finds, and ``NUMBA_OPT`` (kernels
    compiled at another optimisation level are recompiled, never served)."""
    from numba.core import config

    files, consts = dependencies(fn)
    h = hashlib.sha256()
    for f in sorted({*files, *map(str, _ALWAYS)}):
        # outside the package (a plugin's joint family or force): the file's name, not its folder, so that the
        # same plugin installed or copied elsewhere has the same stamp (its contents are in the digest)
        name = Path(f).resolve().relative_to(_ROOT).as_posix() if _inside(f) else "<plugin>/" + Path(f).name
        h.update(name.encode() + b"\0" + _file_digest(f))
    for name, c in sorted(consts):
        h.update(name.encode() + b"\0" + c)
    return f"{h.hexdigest()}-O{config.OPT}"


class _LazyStamp:
    """A kernel's stamp, computed when Numba first compares or saves it (by then every module is imported, so
    the kernel's callees can be found).  Pickles as the plain string."""

    __slots__ = ("_fn", "_value")

    def __init__(self, fn):
        self._fn = fn
        self._value = None

    def value(self) -> str:
        if self._value is None:
            self._value = kernel_stamp(self._fn)
        return self._value

    def __eq__(self, other):
        return self.value() == (other.value() if isinstance(other, _LazyStamp) else other)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.value())

    def __reduce__(self):
        return (str, (self.value(),))

    def __repr__(self):
        return f"_LazyStamp({self.value()!r})"


def _locators():
    """Locator classes stamped per kernel: ``NUMBA_CACHE_DIR`` (when set), the in-tree ``__pycache__``, then the
    user-wide cache folder (Numba's own order)."""
    from numba.core import caching

    class _Stamped:
        def get_source_stamp(self):
            return self._stamp

        @classmethod
        def from_function(cls, py_func, py_file):
            if not _inside(py_file):
                return None
            loc = super().from_function(py_func, py_file)
            if loc is not None:
                loc._stamp = _LazyStamp(py_func)
                _file_digest(str(py_file))  # now, while the module is imported: the stamp names the code that runs
            return loc

    class InTree(_Stamped, caching.InTreeCacheLocator):
        """In-tree cache of a redmax kernel, stamped by the sources it depends on."""

    class UserWide(_Stamped, caching.UserWideCacheLocator):
        """User-wide cache of a redmax kernel (read-only installs), stamped the same way."""

    class UserDir(_Stamped, caching.UserProvidedCacheLocator):
        """The folder named by ``NUMBA_CACHE_DIR`` (when set), stamped the same way.  Its sub-folders are named by
        the package-relative folder (``redmax-dynamics``), not by a digest of the absolute path as Numba's own:
        since the stamps name the sources' contents, several checkouts can share one cache."""

        @classmethod
        def get_suitable_cache_subpath(cls, py_file):
            rel = Path(py_file).resolve().parent.relative_to(_ROOT)
            return "-".join(("redmax", *rel.parts))

    return UserDir, InTree, UserWide


@functools.cache
def _stamped_file_class():
    """Numba's index-and-data cache file with the names of both files suffixed by a digest of the stamp
    (``world_pass-120.py311.<tag>.nbi`` and ``...<tag>.1.nbc``), pruned to :data:`KEEP_VERSIONS` versions."""
    from numba.core import caching

    class StampedFile(caching.IndexDataCacheFile):
        # Numba's __init__ sets the plain names in the instance dict; these properties (data descriptors) take
        # precedence and derive the stamped names from them when first used (the stamp is lazy).
        def _tag(self) -> str:
            return hashlib.sha256(str(self._source_stamp.value()).encode()).hexdigest()[:16]

        @property
        def _index_path(self):
            return f"{self.__dict__['_index_path'][:-len('.nbi')]}.{self._tag()}.nbi"

        @_index_path.setter
        def _index_path(self, value):
            self.__dict__["_index_path"] = value

        @property
        def _data_name_pattern(self):
            return f"{self.__dict__['_data_name_pattern'][:-len('.{number:d}.nbc')]}.{self._tag()}" + ".{number:d}.nbc"

        @_data_name_pattern.setter
        def _data_name_pattern(self, value):
            self.__dict__["_data_name_pattern"] = value

        def _load_index(self):
            overloads = super()._load_index()
            if overloads:  # used: the newest by use are the ones kept
                try:
                    os.utime(self._index_path)
                except OSError:  # a read-only cache folder
                    pass
            return overloads

        def _save_index(self, overloads):
            super()._save_index(overloads)
            try:
                self._prune()
            except OSError:  # another process pruned first, or a read-only folder: nothing to keep tidy
                pass

        def _prune(self):
            """Remove all but the most recently used versions of this kernel (and Numba's unstamped files)."""
            stem = self.__dict__["_index_path"][:-len(".nbi")]
            pattern = glob.escape(stem)
            versions = sorted(glob.glob(pattern + ".*.nbi"), key=os.path.getmtime, reverse=True)
            doomed = [p[:-len(".nbi")] for p in versions[KEEP_VERSIONS:]]
            unstamped = [p for p in glob.glob(pattern + ".*.nbc") if p[len(stem):-len(".nbc")][1:].isdigit()]
            for path in glob.glob(pattern + ".nbi") + unstamped:  # Numba's own naming (stem.nbi, stem.1.nbc)
                os.remove(path)
            for old in doomed:
                for path in [old + ".nbi", *glob.glob(glob.escape(old) + ".*.nbc")]:
                    os.remove(path)

    return StampedFile


def name_files_by_stamp(dispatcher) -> None:
    """Name the on-disk cache files of a redmax kernel by its stamp (a no-op for kernels not cached, or cached
    by Numba's own locators).  Called for every dispatcher that :func:`redmax._jit.njit` makes."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is not None and isinstance(getattr(cache_file, "_source_stamp", None), _LazyStamp):
        cache_file.__class__ = _stamped_file_class()


_INSTALLED: list = []


def install() -> None:
    """Register the stamped locators with Numba (idempotent).  Must run before any kernel module is imported:
    Numba picks a function's locator when the decorator runs.  Files outside the package keep Numba's own
    locators."""
    if _INSTALLED:
        return
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in Numba 0.61
    classes = _locators()
    impl._locator_classes = list(classes) + list(impl._locator_classes)
    _INSTALLED.extend(classes)


install()
