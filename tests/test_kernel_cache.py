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


def test_read_only_and_strided_inputs_compile_no_new_specialisation():
    """The public fast paths and the Python-level callers of compiled stages pass kernels one array type
    (writeable C float64 vectors, read-only chart words): calls with read-only or strided vectors give the same
    results as with plain arrays (to round-off: some take the checked path's kernel) and add no specialisation to
    any redmax kernel (each is seconds of compilation; before, fk_kernel held four float64 ones, one per
    read-only combination of q and qd)."""
    import sys as _sys

    import numpy as np

    import redmax as rm
    from redmax._jit import KernelDispatcher
    from redmax.testing.models import random_model

    rng = np.random.default_rng(3)
    m = random_model(rng, n=6, topology="random", joints="revolute", gravity=(0, 0, -9.81))
    q, qd, qdd = rng.normal(size=(3, m.ndof))

    def calls(a, b, c, js=None):  # js given: the checked path (which converts its arrays)
        return [rm.rnea(m, a, b, c, jstate=js), rm.aba(m, a, b, c, jstate=js), rm.crba(m, a, jstate=js),
                rm.minv(m, a, jstate=js), *rm.rnea_derivatives(m, a, b, c, jstate=js),
                *rm.aba_derivatives(m, a, b, c, jstate=js), *rm.rnea_derivatives(m, a, b, c, jstate=js, tangent=True),
                *rm.rnea_second_order_derivatives(m, a, b, c, jstate=js), rm.kinematics.kinematics(m, a, b, js).V]

    def signatures():
        out = {}
        for name, mod in list(_sys.modules.items()):
            if name.startswith("redmax"):
                for obj in vars(mod).values():
                    if isinstance(obj, KernelDispatcher):
                        out[f"{name}.{obj.py_func.__name__}"] = len(obj.signatures)
        return out

    ref = calls(q, qd, qdd)
    calls(q, qd, qdd, m.jstate0)
    before = signatures()
    ro = [v.copy() for v in (q, qd, qdd)]
    for v in ro:
        v.flags.writeable = False
    strided = [np.repeat(v, 2)[::2] for v in (q, qd, qdd)]
    assert not strided[0].flags.c_contiguous
    for args in (ro, strided):
        for a, b in zip(calls(*args), ref, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(b).max()))  # (checked path)
    grown = {k: (before.get(k, 0), n) for k, n in signatures().items() if n > before.get(k, 0)}
    assert sum(before.values()) > 10
    assert grown == {}
