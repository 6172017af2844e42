"""The Numba cache guard: every cached kernel is stamped with the files it calls into (and the constants it reads),
so an edit recompiles exactly the kernels that call into the edited file; importing redmax writes nothing."""

import importlib
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import redmax
from redmax import _kernel_cache as kc

_PKG = Path(redmax.__file__).resolve().parent


def _rel(files) -> set:
    return {Path(f).resolve().relative_to(_PKG).as_posix() for f in files}


def test_dependencies_follow_calls_across_files():
    """A kernel depends on its own file and on the files of every kernel it calls, directly or through others,
    and on nothing else."""
    from redmax.dynamics.crba import crba_kernel
    from redmax.integrators._loop import euler_loop
    from redmax.spatial import skew

    assert _rel(kc.dependencies(skew.py_func)[0]) == {"spatial.py"}
    loop = _rel(kc.dependencies(euler_loop.py_func)[0])
    assert {"integrators/_loop.py", "forces/_compiled.py", "joints/dispatch.py", "joints/spline.py"} <= loop
    # (joints/spline.py: three calls down, dispatch -> primitive)
    assert not {"dynamics/crba.py", "dynamics/rnea.py", "io/urdf.py", "cli.py", "constraints/_compiled.py"} & loop
    # the constrained solve, which the loop calls through a C function's address, depends on the constraint rows
    from redmax.integrators._constrained import _call

    assert {"integrators/_constrained.py", "constraints/_compiled.py", "solvers/_kkt.py"} <= _rel(
        kc.dependencies(_call.py)[0])
    crba = _rel(kc.dependencies(crba_kernel.py_func)[0])
    assert "dynamics/crba.py" in crba and "joints/dispatch.py" in crba
    assert not [f for f in crba if f.startswith(("integrators/", "forces/", "constraints/"))]


def test_stamp_follows_files_and_constants_of_callees(tmp_path, monkeypatch):
    """In a small package of three files: the caller's stamp changes with the callee's file and with a constant
    the callee imports from a third file, and not with an unrelated file."""
    pkg = tmp_path / "stamp_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "consts.py").write_text("K = 2.0\n")
    (pkg / "other.py").write_text("from redmax._jit import njit\n\n@njit\ndef g(x):\n    return x\n")
    (pkg / "callee.py").write_text(textwrap.dedent("""
        from redmax._jit import njit
        from stamp_pkg.consts import K

        @njit
        def f(x):
            return K * x
        """))
    (pkg / "caller.py").write_text(textwrap.dedent("""
        from redmax._jit import njit
        from stamp_pkg import callee

        @njit
        def h(x):
            return callee.f(x) + 1.0
        """))
    monkeypatch.setattr(kc, "_ROOT", tmp_path)
    monkeypatch.setattr(kc, "_ALWAYS", ())
    monkeypatch.syspath_prepend(str(tmp_path))

    def stamp():
        kc._file_digest.cache_clear()
        for m in [m for m in sys.modules if m.startswith("stamp_pkg")]:
            del sys.modules[m]
        caller = importlib.import_module("stamp_pkg.caller")
        files, consts = kc.dependencies(caller.h.py_func)
        return kc.kernel_stamp(caller.h.py_func), {Path(f).name for f in files}, consts

    s0, files, consts = stamp()
    assert files == {"caller.py", "callee.py"}
    assert consts == [("stamp_pkg.callee.K", b"2.0")]
    (pkg / "other.py").write_text((pkg / "other.py").read_text() + "# edited\n")
    assert stamp()[0] == s0
    (pkg / "consts.py").write_text("K = 3.0\n")
    s1 = stamp()[0]
    assert s1 != s0
    (pkg / "callee.py").write_text((pkg / "callee.py").read_text() + "# edited\n")
    assert stamp()[0] != s1
    kc._file_digest.cache_clear()


def test_kernels_use_the_stamped_locator():
    from redmax.spatial import skew

    loc = skew._cache._impl.locator
    assert type(loc).__qualname__.startswith("_locators.")
    assert loc.get_source_stamp() == kc.kernel_stamp(skew.py_func)
    assert pickle.loads(pickle.dumps(loc.get_source_stamp())) == kc.kernel_stamp(skew.py_func)
    assert type(pickle.loads(pickle.dumps(loc.get_source_stamp()))) is str  # the index stores a plain string


def _run(pkg_parent: Path, code: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(pkg_parent), PYTHONDONTWRITEBYTECODE="1")
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _files(root: Path) -> set:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file()}


def test_import_writes_nothing_and_an_edit_recompiles_only_the_kernels_that_call_into_it(tmp_path):
    """Three cached kernels in a copy of the package: after an edit of ``spatial.py``, the two that call into it
    (``skew`` itself, and ``sph_exp_S`` of another file) are recompiled; ``inertia_apply``, which does not, is
    served from the cache."""
    pkg = tmp_path / "redmax"
    shutil.copytree(_PKG, pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    before = _files(pkg)
    assert _run(tmp_path, "import redmax; print(redmax.__file__)").startswith(str(pkg))
    assert _files(pkg) == before  # no stamp, no cache file, no deletion

    call = textwrap.dedent("""
        import numpy as np
        from redmax.spatial import skew
        from redmax.joints.spherical_exp import sph_exp_S
        from redmax.dynamics._world_pass import inertia_apply
        skew(np.ones(3))
        sph_exp_S(np.ones(3), np.ones(3), np.zeros((3, 3)), np.zeros((3, 3)))
        inertia_apply(np.zeros(30), 0, 10, 20)
        print(" ".join(str(sum(k.stats.cache_hits.values())) for k in (skew, sph_exp_S, inertia_apply)))
        """)
    assert _run(tmp_path, call) == "0 0 0"  # compiled and cached
    assert _run(tmp_path, call) == "1 1 1"  # loaded from the cache
    spatial = pkg / "spatial.py"
    original = spatial.read_text()
    spatial.write_text(original + "\n# edited\n")
    assert _run(tmp_path, call) == "0 0 1"  # the two that call into spatial.py recompiled, the other served
    assert _run(tmp_path, call) == "1 1 1"
    # the files are named by the stamp: the version of the original sources is still there (a plugin's process or
    # another checkout sharing the folder does not overwrite it), and only the newest KEEP_VERSIONS are kept
    spatial.write_text(original)
    assert _run(tmp_path, call) == "1 1 1"
    skew_files = lambda ext: sorted((pkg / "__pycache__").glob(f"spatial.skew-*.{ext}"))  # noqa: E731
    assert len(skew_files("nbi")) == len(skew_files("nbc")) == 2


def test_versions_are_kept_side_by_side_and_pruned_to_the_most_recently_used(tmp_path):
    """The stamped cache file of one kernel: each stamp has its own index and data files; saving a version
    removes Numba's unstamped files and all but the KEEP_VERSIONS most recently used (loaded or saved) versions."""
    import time

    (tmp_path / "k-1.py311.nbi").write_bytes(b"old")  # Numba's own naming, from before
    (tmp_path / "k-1.py311.1.nbc").write_bytes(b"old")
    cls = kc._stamped_file_class()

    def version(k):
        stamp = kc._LazyStamp(None)
        stamp._value = f"stamp {k}"
        return cls(str(tmp_path), "k-1.py311", stamp)

    past = time.time() - 1000
    for k in range(kc.KEEP_VERSIONS):
        version(k).save(("sig",), f"data {k}")
        os.utime(version(k)._index_path, (past + k, past + k))
    assert not (tmp_path / "k-1.py311.nbi").exists() and not (tmp_path / "k-1.py311.1.nbc").exists()
    assert version(0).load(("sig",)) == "data 0"  # a use: now the most recent
    version(kc.KEEP_VERSIONS).save(("sig",), "new")
    assert len(list(tmp_path.glob("*.nbi"))) == len(list(tmp_path.glob("*.nbc"))) == kc.KEEP_VERSIONS
    assert version(1).load(("sig",)) is None  # the least recently used went
    assert [version(k).load(("sig",)) for k in (0, 2, kc.KEEP_VERSIONS)] == ["data 0", "data 2", "new"]


def test_every_cached_kernel_is_declared_with_njit():
    """A kernel declared another way (``@jit(nopython=True, cache=True)``, ``numba.jit``) would escape the
    dependency walk (it is not a redmax dispatcher) and could be served stale after a callee's file changes:
    every cached kernel must be declared with ``njit``."""
    import re

    offenders = [str(p.relative_to(_PKG)) for p in sorted(_PKG.rglob("*.py"))
                 if re.search(r"(?<!n)jit\(", p.read_text()) or ("cache=True" in p.read_text()
                                                                and "njit" not in p.read_text())]
    assert offenders == []


def test_a_long_compile_is_announced_on_the_redmax_logger(monkeypatch, caplog):
    """A compile still running after ``ANNOUNCE_AFTER`` seconds is announced (and its end too) on the ``redmax``
    logger, and counted by ``compile_seconds``; a quick one says nothing."""
    import logging
    import time

    from numba.core.registry import CPUDispatcher

    import redmax._jit as jit

    @jit.njit
    def quick_kernel(x):
        return x - 1.0

    with caplog.at_level(logging.INFO, logger="redmax"):
        assert quick_kernel(1.0) == 0.0
    assert not [r for r in caplog.records if r.name == "redmax"]

    orig = CPUDispatcher.compile

    def slow(self, sig):
        time.sleep(0.6)
        return orig(self, sig)

    monkeypatch.setattr(CPUDispatcher, "compile", slow)
    monkeypatch.setattr(jit, "ANNOUNCE_AFTER", 0.1)

    @jit.njit
    def slow_kernel(x):
        return x + 1.0

    c0 = jit.compile_seconds()
    with caplog.at_level(logging.INFO, logger="redmax"):
        assert slow_kernel(1.0) == 2.0
    msgs = [r.getMessage() for r in caplog.records if r.name == "redmax"]
    assert len(msgs) == 2, msgs
    assert "compiling" in msgs[0] and "slow_kernel for first use" in msgs[0]
    assert "compiled" in msgs[1] and "slow_kernel in" in msgs[1]
    assert jit.compile_seconds() - c0 >= 0.6


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


def test_a_shared_cache_folder_is_named_by_the_package_relative_folder():
    """With NUMBA_CACHE_DIR, kernels are cached under ``redmax-<folder>`` (not a digest of the absolute path), so
    several checkouts of the same sources share one cache (the stamps name the sources' contents)."""
    user_dir = kc._INSTALLED[0]
    assert user_dir.get_suitable_cache_subpath(str(_PKG / "dynamics" / "rnea.py")) == "redmax-dynamics"
    assert user_dir.get_suitable_cache_subpath(str(_PKG / "spatial.py")) == "redmax"


_RACER = '''
import os, sys, time
from redmax._jit import njit


@njit(cache=True)
def slow(x):
    y = x
{body}
    return y


go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.005)
slow(1.0)
print(slow.stats.cache_hits.get((__import__("numba").float64,), 0), sum(slow.stats.cache_misses.values()))
'''


def test_two_processes_compile_a_kernel_once(tmp_path):
    """Two processes that need the same uncached kernel at the same moment: one compiles it, the other waits for
    the file lock and loads the result from the on-disk cache (pytest -n, redmax compile -j)."""
    body = "\n".join(f"    y = y * {1 + k / 997!r} + {k}.0 / (1.0 + y * y)" for k in range(300))
    (tmp_path / "racer.py").write_text(_RACER.format(body=body))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path)}
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, str(tmp_path / "racer.py"), str(go)], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    import time

    time.sleep(3.0)  # both imported redmax and wait for the signal
    go.write_text("")
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    counts = sorted(tuple(map(int, o[0].split())) for o in outs)
    assert counts == [(0, 1), (1, 0)], counts  # (cache hits, misses): one compiled, one loaded
