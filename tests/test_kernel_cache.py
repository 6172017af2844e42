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


def test_calls_between_kernels_share_one_specialisation():
    """redmax's ``njit`` types calls from compiled code on unliteral argument types: constants passed at
    different call sites reuse one specialisation instead of compiling the callee once per constant."""
    import numpy as np

    from redmax._jit import njit

    @njit
    def inner(a, k, flag):
        return a[k] * 2.0 if flag else a[k]

    @njit
    def outer(a):
        return inner(a, 0, True) + inner(a, 1, False) + inner(a, len(a) - 1, a[0] > 0.0)

    assert outer(np.arange(1.0, 4.0)) == 2.0 + 2.0 + 6.0
    assert len(inner.signatures) == 1
    assert "Literal" not in str(inner.signatures[0])


def test_no_kernel_compiled_for_a_literal_argument():
    """After a simulation and the step derivatives, no redmax kernel holds a specialisation for a literal
    argument (each would be a whole extra compile of the callee and of everything below it)."""
    import sys as _sys

    import numpy as np

    import redmax as rm
    from redmax._jit import KernelDispatcher

    sc = rm.scenes.load("reference/05")
    sc.simulate()
    rm.step_derivatives(sc.model, sc.model.initial_state(), 1e-2, np.zeros(sc.model.ndof))
    seen, literal = 0, []
    for name, mod in list(_sys.modules.items()):
        if not name.startswith("redmax"):
            continue
        for obj in vars(mod).values():
            if isinstance(obj, KernelDispatcher) and obj.signatures:
                seen += 1
                literal += [f"{name}.{obj.py_func.__name__}{s}" for s in obj.signatures if "Literal" in str(s)]
    assert seen > 20
    assert literal == []
