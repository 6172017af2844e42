"""Issue 11's fuzz test: a deterministic generator of malformed scene files and URDFs (redmax.testing.fuzz: deleted
keys, wrong types, NaN/inf/negative/zero/huge values, unknown references, cycles, duplicates, truncated, binary and
mis-encoded files) -- every case must raise a RedmaxError subclass (no other exception, no hang, no crash, no
silent acceptance), each within a time bound."""

import time

import numpy as np
import pytest

import redmax as rm
from redmax._jit import compile_seconds
from redmax.testing.fuzz import MisuseContext, misuse_cases, scene_cases, urdf_cases

from paths import ARM_URDF

BOUND = 20.0  # seconds per case: generous for a loaded 2-core machine (cases take ~10 ms to 0.5 s)
SCENES = scene_cases()
URDFS = urdf_cases()
MISUSES = misuse_cases()


def test_there_are_at_least_200_cases_and_they_are_deterministic():
    assert len(SCENES) + len(URDFS) >= 200
    assert [c[0] for c in scene_cases()] == [c[0] for c in SCENES]
    assert urdf_cases() == URDFS


def _write(tmp_path, suffix, kind, payload):
    p = tmp_path / f"case{suffix}"
    if kind == "bytes":
        p.write_bytes(payload)
    else:
        p.write_text(payload, encoding="utf-8")
    return p


@pytest.mark.parametrize("case", SCENES, ids=[c[0] for c in SCENES])
def test_malformed_scene_file_raises_a_redmax_error(tmp_path, case):
    _label, kind, payload = case
    path = _write(tmp_path, ".toml", kind, payload)
    t0, c0 = time.perf_counter(), compile_seconds()
    with pytest.raises(rm.RedmaxError) as info:
        scene = rm.scenes.load(str(path))
        scene.simulate(duration=min(scene.duration, 5 * scene.dt))  # a file that loads must fail when run
    assert time.perf_counter() - t0 - (compile_seconds() - c0) < BOUND  # a cold kernel cache compiles first
    assert str(path) in str(info.value) or isinstance(info.value, rm.SimulationError), str(info.value)


@pytest.mark.parametrize("case", URDFS, ids=[c[0] for c in URDFS])
def test_malformed_urdf_raises_a_redmax_error(tmp_path, case):
    _label, kind, payload = case
    path = _write(tmp_path, ".urdf", "text" if kind == "strict" else kind, payload)
    t0, c0 = time.perf_counter(), compile_seconds()
    with pytest.raises(rm.RedmaxError) as info:
        rm.load_urdf(str(path), strict=kind == "strict")  # (its inertia check compiles crba on a cold cache)
    assert time.perf_counter() - t0 - (compile_seconds() - c0) < BOUND
    assert str(info.value).startswith(str(path)), str(info.value)


@pytest.fixture(scope="module")
def misuse(tmp_path_factory):
    return MisuseContext(str(ARM_URDF), str(tmp_path_factory.mktemp("misuse")))


def test_the_review_leak_table_is_covered():
    labels = [c[0] for c in MISUSES]
    assert sum(label.startswith(("L1 ", "L2 ", "L3 ", "L4 ", "L5 ", "L6 ", "L7 ", "L8 ")) for label in labels) == 12
    assert len(set(labels)) == len(labels)


@pytest.mark.parametrize("case", MISUSES, ids=[c[0] for c in MISUSES])
def test_api_misuse_raises_a_redmax_error(misuse, case):
    """Every misuse ends in a RedmaxError subclass (never AttributeError, a Numba TypingError, an OSError or a silent
    NaN); long-double arrays may instead give the float64 result."""
    label, call = case
    t0, c0 = time.perf_counter(), compile_seconds()
    if label.startswith("L5 "):
        _, E_wb = call(misuse)
        assert E_wb.dtype == np.float64
        assert np.array_equal(E_wb, rm.forward_kinematics(misuse.arm, np.zeros(4))[1])
        return
    with pytest.raises(rm.RedmaxError) as info:
        call(misuse)
    assert time.perf_counter() - t0 - (compile_seconds() - c0) < BOUND  # a cold kernel cache compiles first
    msg = str(info.value)
    assert "np.float64" not in msg and "NoneType' object" not in msg, msg
