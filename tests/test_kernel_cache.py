"""The Numba cache guard: every cached kernel is stamped with the digest of all kernel sources, so an edit of
any kernel file makes every cached kernel stale; importing redmax writes nothing."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import redmax
from redmax import _kernel_cache as kc

_PKG = Path(redmax.__file__).resolve().parent


def test_digest_follows_kernel_sources_only(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "k.py").write_text("from numba import njit\n")
    (tmp_path / "plain.py").write_text("x = 1\n")
    d0 = kc.sources_digest(tmp_path)
    (tmp_path / "plain.py").write_text("x = 2\n")
    assert kc.sources_digest(tmp_path) == d0
    (tmp_path / "sub" / "k.py").write_text("from numba import njit  # edited\n")
    assert kc.sources_digest(tmp_path) != d0


def test_kernels_use_the_package_stamped_locator():
    from redmax.spatial import skew

    loc = skew._cache._impl.locator
    assert type(loc).__qualname__.startswith("_locators.")
    assert loc.get_source_stamp() == kc.cache_stamp()
    assert kc.cache_stamp().startswith(kc.sources_digest() + "-O")


def _run(pkg_parent: Path, code: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(pkg_parent), PYTHONDONTWRITEBYTECODE="1")
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _files(root: Path) -> set:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file()}


def test_import_writes_nothing_and_an_edit_anywhere_invalidates_the_cache(tmp_path):
    pkg = tmp_path / "redmax"
    shutil.copytree(_PKG, pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    before = _files(pkg)
    assert _run(tmp_path, "import redmax; print(redmax.__file__)").startswith(str(pkg))
    assert _files(pkg) == before  # no stamp, no cache file, no deletion

    call = ("import numpy as np; from redmax.spatial import skew; skew(np.ones(3)); "
            "print(skew.stats.cache_hits.most_common(1)[0][1] if skew.stats.cache_hits else 0)")
    assert _run(tmp_path, call) == "0"  # compiled and cached
    assert _run(tmp_path, call) == "1"  # loaded from the cache
    other = pkg / "joints" / "simple.py"  # a different kernel file
    other.write_text(other.read_text() + "\n# edited\n")
    assert _run(tmp_path, call) == "0"  # stale: recompiled
    assert _run(tmp_path, call) == "1"


def test_every_cached_kernel_file_is_in_the_digest():
    """A kernel declared another way (``@jit(nopython=True, cache=True)``, ``numba.jit``) would escape the digest
    and could be served stale after its file changes: every cached kernel must be declared with ``njit``."""
    import re

    offenders = [str(p.relative_to(_PKG)) for p in sorted(_PKG.rglob("*.py"))
                 if re.search(r"(?<!n)jit\(", p.read_text()) or ("cache=True" in p.read_text()
                                                                and "njit" not in p.read_text())]
    assert offenders == []
