"""Our second-order inverse-dynamics derivatives against Pinocchio's C++ IDSVA-SO, in one process.

Usage: ``python benchmarks/pinocchio_cpp.py [--quick] [--threads N]`` (needs the test extras, a C++17 compiler
(``$CXX``, default ``g++``) and, once, the package registry).

The target is a second order "at least as fast as Pinocchio's C++", which Pinocchio's Python bindings do not
expose; ``benchmarks/derivatives.py`` therefore checks a proxy (15.4x and 5.0x Pinocchio's Python first order on a
chain of 36 and on talos_reduced, the ratios the C++ was once measured at).  This script measures the original
instead: it compiles ``benchmarks/cpp/pinocchio_so.cpp`` against the headers and the library of the installed
``pin`` wheel (the header-only Eigen and urdfdom_headers it was built with are not in the wheel: ``pip download``
fetches ``cmeel-eigen<5`` and ``cmeel-urdfdom-headers`` into the cache, ``$XDG_CACHE_HOME/redmax/pinocchio-cpp``),
loads it with ctypes and times, round robin in batches in this process (median per-call times):

* Pinocchio's ``computeRNEADerivatives`` from Python and from C++ (its first order);
* Pinocchio's ``ComputeRNEASecondOrderDerivatives`` in C++, both overloads: the one on its ``Data``, which zeroes
  the four tensors on every call (what a fresh result costs: compare with our call without ``out=``), and the
  one that fills caller-owned tensors without zeroing them (compare with our ``out=``);
* ours, ``rnea_second_order_derivatives`` without and with ``out=`` (on redmax's threads, ``--threads N``;
  Pinocchio's C++ runs on one).

Before timing, Pinocchio's four C++ tensors are checked against ours (relative 1e-9).  Models: the random
revolute chains of 36 and 100 of ``benchmarks/derivatives.py`` (same seed) and talos_reduced with a free-flyer
base (ours with ``tangent=True``).  The wheel's library is built for a generic x86-64 target; a Pinocchio built
with ``-march=native`` may be faster (it cannot be mixed with the wheel's: the Eigen alignment differs).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as benchmarks/derivatives.py

import ctypes
import functools
import hashlib
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

import redmax as rm

SRC = Path(__file__).with_name("cpp") / "pinocchio_so.cpp"
_FLAGS = ["-O3", "-DNDEBUG", "-std=c++17", "-fPIC", "-shared", "-DPINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION",
          "-DPINOCCHIO_WITH_URDFDOM", "-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
          "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12"]
_REVOLUTE = {"JointModelRX": 0, "JointModelRY": 1, "JointModelRZ": 2, "JointModelRevoluteUnaligned": 3}


def _cache() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "redmax" / "pinocchio-cpp"


def _prefix(pin) -> Path:
    """The cmeel prefix of the ``pin`` wheel (``include/pinocchio``, ``lib/libpinocchio_default.so``)."""
    p = Path(pin.__file__).resolve()
    for d in p.parents:
        if (d / "include" / "pinocchio").is_dir() and (d / "lib").is_dir():
            return d
    raise SystemExit(f"pinocchio_cpp: no include/pinocchio above {p} (a wheel without its C++ headers?)")


def _header_package(name: str, spec: str, probe: str) -> Path:
    """The include directory holding ``probe`` from the header-only wheel ``spec`` (downloaded once)."""
    dest = _cache() / name
    hits = list(dest.glob(f"**/{probe}")) if dest.is_dir() else []
    if not hits:
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, spec],
                               capture_output=True, text=True)
            if r.returncode:
                raise SystemExit(f"pinocchio_cpp: pip download {spec} failed:\n{r.stdout}{r.stderr}")
            for whl in Path(tmp).glob("*.whl"):
                with zipfile.ZipFile(whl) as z:
                    z.extractall(dest)
        hits = list(dest.glob(f"**/{probe}"))
    if not hits:
        raise SystemExit(f"pinocchio_cpp: {spec} has no {probe}")
    return hits[0].parents[len(Path(probe).parts) - 1]


def build(pin) -> Path:
    """The shared library of ``cpp/pinocchio_so.cpp`` for this ``pin`` (compiled once, cached by source hash)."""
    pre = _prefix(pin)
    if not list((pre / "lib").glob("libpinocchio_default.so*")):
        raise SystemExit(f"pinocchio_cpp: no libpinocchio_default.so in {pre / 'lib'}")
    key = hashlib.sha256(SRC.read_bytes() + str(pre).encode() + pin.__version__.encode()).hexdigest()[:16]
    out = _cache() / f"pinocchio_so-{pin.__version__}-{key}.so"
    if out.exists():
        return out
    cxx = os.environ.get("CXX", "g++")
    if shutil.which(cxx) is None:
        raise SystemExit(f"pinocchio_cpp: no C++ compiler ({cxx}); set CXX")
    eigen = _header_package("eigen", "cmeel-eigen<5", "Eigen/Core")
    urdf = _header_package("urdfdom_headers", "cmeel-urdfdom-headers", "urdf_model/model.h")
    major, minor, patch = _urdf_version(urdf)
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [cxx, *_FLAGS, f"-DPINOCCHIO_URDFDOM_HEADERS_MAJOR_VERSION={major}",
           f"-DPINOCCHIO_URDFDOM_HEADERS_MINOR_VERSION={minor}", f"-DPINOCCHIO_URDFDOM_HEADERS_PATCH_VERSION={patch}",
           f"-I{pre / 'include'}", f"-I{pre / 'include' / 'urdfdom'}", f"-I{eigen}", f"-I{urdf}", str(SRC),
           "-o", str(out) + ".tmp", f"-L{pre / 'lib'}", "-lpinocchio_default", "-lpinocchio_parsers",
           "-lurdfdom_model", f"-Wl,-rpath,{pre / 'lib'}"]
    print(f"compiling {SRC.name} against Pinocchio {pin.__version__} (about 30 s, once) ...", flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        tail = "\n".join((r.stdout + r.stderr).splitlines()[-30:])
        raise SystemExit(f"pinocchio_cpp: compiling {SRC.name} failed ({cxx}):\n{tail}")
    os.replace(str(out) + ".tmp", out)
    return out


def _urdf_version(include: Path) -> tuple:
    """urdfdom_headers' version from its ``urdf_model/..`` tree location (the wheel's dist-info), else 3.0.0."""
    for info in include.parents[2].glob("cmeel_urdfdom_headers-*.dist-info"):
        parts = info.name.split("-")[1].split(".")
        return (*parts[:3], *["0"] * (3 - len(parts[:3])))
    return ("3", "0", "0")


def _library(path: Path):
    lib = ctypes.CDLL(str(path))
    P, I, D = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_double)
    lib.pso_load.restype = P
    lib.pso_load.argtypes = [ctypes.c_char_p, I, D]
    for f in ("pso_nq", "pso_nv"):
        getattr(lib, f).restype = I
        getattr(lib, f).argtypes = [P]
    lib.pso_set_state.argtypes = [P, D, D, D]
    for f in ("pso_fo", "pso_so_data", "pso_so_own"):
        getattr(lib, f).argtypes = [P, I]
    lib.pso_tensors.argtypes = [P, D]
    lib.pso_free.argtypes = [P]
    return lib


def _ptr(x: np.ndarray):
    return x.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


def write_revolute_tree(pm, path: Path) -> None:
    """A Pinocchio model of revolute joints in the text format of ``cpp/pinocchio_so.cpp``."""
    rows = []
    for j in range(1, pm.njoints):
        jm = pm.joints[j]
        kind = _REVOLUTE.get(jm.shortname())
        if kind is None:
            raise SystemExit(f"pinocchio_cpp: joint {pm.names[j]} is a {jm.shortname()}, not revolute")
        axis = np.asarray(jm.extract().axis) if kind == 3 else np.eye(3)[kind]
        M, inertia = pm.jointPlacements[j], pm.inertias[j]
        row = [pm.parents[j], kind, *axis, *M.rotation.reshape(-1), *M.translation, inertia.mass, *inertia.lever,
               *inertia.inertia.reshape(-1)]
        rows.append(" ".join(repr(float(v)) for v in row))
    path.write_text(f"{len(rows)}\n" + "\n".join(rows) + "\n")


def _derivatives():
    """``benchmarks/derivatives.py`` as a module: its models and states (same seed) and its command line."""
    here = str(Path(__file__).parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import derivatives

    return derivatives


def cases(tmp: Path) -> list:
    """(label, our model, Pinocchio's Python model, loader args, our (q, qd, qdd), Pinocchio's (q, v, a), tangent,
    map of Pinocchio's tensors into our DOF order)."""
    out = []
    for label, m, pm, q, qd, qdd, mp, tangent in _derivatives().cases(np.random.default_rng(2024)):
        if label.startswith("chain"):
            f = tmp / f"{label.split('=')[1]}.txt"
            write_revolute_tree(pm, f)
            out.append((label, m, pm, (str(f), 1, pm.gravity.linear), (q, qd, qdd), (q, qd, qdd), False,
                        lambda T: T))
        elif tangent:
            from redmax.testing.robots import robot_urdf

            out.append((label, m, pm, (robot_urdf("talos"), 0, pm.gravity.linear), (q, qd, qdd),
                        (mp.q_pin(q), mp.vec(qd), mp.vec(qdd)), True, mp.tensor))
    return out


def timed(fs: dict, rounds: int, batch: dict) -> dict:
    """Round robin over ``fs`` (name -> f(reps), running its call ``reps`` times); median per-call times (s)."""
    times = {k: [] for k in fs}
    for f in fs.values():
        f(2)
    for _ in range(rounds):
        for k, f in fs.items():
            t = time.perf_counter()
            f(batch[k])
            times[k].append((time.perf_counter() - t) / batch[k])
    return {k: float(np.median(v)) for k, v in times.items()}


def _loop(f):
    def run(reps):
        for _ in range(reps):
            f()
    return run


def run(rounds: int, quick: bool) -> dict:
    import pinocchio as pin

    lib = _library(build(pin))
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, m, pm, (path, kind, g), ours, (qp, vp, ap), tangent, tmap in cases(Path(tmp)):
            g = np.ascontiguousarray(g, dtype=np.float64)
            h = lib.pso_load(path.encode(), kind, _ptr(g))
            if not h:
                raise SystemExit(f"pinocchio_cpp: Pinocchio could not load {path}")
            try:
                n = lib.pso_nv(h)
                qp, vp, ap = (np.ascontiguousarray(x, dtype=np.float64) for x in (qp, vp, ap))
                if n != m.ndof or lib.pso_nq(h) != qp.size:
                    raise SystemExit(f"{label}: Pinocchio's C++ model has nv = {n}, ours {m.ndof}")
                lib.pso_set_state(h, _ptr(qp), _ptr(vp), _ptr(ap))
                lib.pso_so_own(h, 1)
                theirs = np.empty((4, n, n, n))
                lib.pso_tensors(h, _ptr(theirs))
                q, qd, qdd = ours
                mine = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tangent)
                for k, name in enumerate(("d2tau_dq2", "d2tau_dqd2", "d2tau_dqdqd", "dM_dq")):
                    T = tmap(theirs[k])
                    err = np.abs(T - mine[k]).max() / max(np.abs(T).max(), 1e-300)
                    if not err < 1e-9:
                        raise AssertionError(f"{label}: {name} differs from Pinocchio's C++ by {err:.1e}")
                pd = pm.createData()
                out = tuple(np.zeros((n, n, n)) for _ in range(4))
                so = functools.partial(rm.rnea_second_order_derivatives, m, q, qd, qdd, tangent=tangent)
                fs = {
                    "pin_fo_py": _loop(lambda: pin.computeRNEADerivatives(pm, pd, qp, vp, ap)),  # noqa: B023
                    "pin_fo_cpp": lambda r: lib.pso_fo(h, r),  # noqa: B023
                    "pin_so_data": lambda r: lib.pso_so_data(h, r),  # noqa: B023
                    "pin_so_own": lambda r: lib.pso_so_own(h, r),  # noqa: B023
                    "so": _loop(so),
                    "so_out": _loop(functools.partial(so, out=out)),
                }
                big = n >= 50
                batch = {"pin_fo_py": 200, "pin_fo_cpp": 200, "pin_so_data": 3 if big else 20,
                         "pin_so_own": 3 if big else 20, "so": 3 if big else 20, "so_out": 3 if big else 20}
                if quick:
                    batch = {k: max(1, v // 4) for k, v in batch.items()}
                rows[label] = timed(fs, rounds, batch)
            finally:
                lib.pso_free(h)
    return rows


def main(argv=None) -> int:
    a = _derivatives().parse_args(argv, __doc__, slope=False)
    try:
        import pinocchio as pin
    except ImportError:
        raise SystemExit("pinocchio_cpp: needs Pinocchio (python -m pip install '.[test]')") from None

    rounds = 5 if a.quick else 15
    print(f"redmax {rm.__version__} vs Pinocchio {pin.__version__} C++ (wheel library): median per-call times, "
          f"{rounds} rounds; ours on {rm.get_num_threads()} thread(s), Pinocchio on one\n")
    rows = run(rounds, a.quick)
    print(f"{'model':18s} {'pin FO py':>10s} {'pin FO C++':>10s} {'pin SO Data':>11s} {'pin SO own':>10s} "
          f"{'(x FO py)':>9s} {'ours SO':>9s} {'ours out=':>9s} {'SO/Data':>7s} {'out=/own':>8s}")
    ratios = {}
    for label, t in rows.items():
        us = {k: v * 1e6 for k, v in t.items()}
        r = ratios[label] = (t["so"] / t["pin_so_data"], t["so_out"] / t["pin_so_own"])
        print(f"{label:18s} {us['pin_fo_py']:8.1f}us {us['pin_fo_cpp']:8.1f}us {us['pin_so_data']:9.0f}us "
              f"{us['pin_so_own']:8.0f}us {t['pin_so_own'] / t['pin_fo_py']:8.1f}x {us['so']:7.0f}us "
              f"{us['so_out']:7.0f}us {r[0]:7.2f} {r[1]:8.2f}", flush=True)
    print("\ntarget: second order at least as fast as Pinocchio's C++")
    for label, (fresh, own) in ratios.items():
        for text, v in (("fresh tensors / Pinocchio's Data overload", fresh),
                        ("out= / Pinocchio's caller-owned overload", own)):
            print(f"  {text:42s} {label:18s} {v:5.2f}  {'met' if v <= 1 else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
