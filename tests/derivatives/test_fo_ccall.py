"""The C call path of the first-order derivatives (redmax._ccall.Table + redmax.derivatives._first_order_c_entry).

The public ``rnea_derivatives`` and ``aba_derivatives`` take it for float64 C-contiguous vectors, gravity, no
external wrench and the initial charts; it agrees with the dispatcher's compiled kernels; every argument it does
not take (another dtype, a strided or non-array vector, complex step) reaches the other paths with the same
numbers, and every input its kernels decline (NaN) reaches the checked path and its named error."""

import numpy as np
import pytest

import redmax as rm
from redmax.derivatives import first_order
from redmax.derivatives.aba_first_order import ABA_KERNELS
from redmax.derivatives.core_tree import core_structure
from redmax.derivatives.rnea_first_order import RNEA_KERNELS, chain_kind
from redmax.dynamics import _single_call
from redmax.testing.models import random_model

from tolerances import COND_REL

PUBLIC = {"rnea": rm.rnea_derivatives, "aba": rm.aba_derivatives}


def _kernel(model, kind, tangent):
    """The kernel of the model's chain kind, called through its dispatcher (gravity, no wrench, initial charts)."""
    Ii, Ff = model.packed
    CI = core_structure(model, tangent)
    js, fb = np.array(model.jstate0, dtype=np.int64), np.zeros((0, 6))
    if kind == "rnea":
        k = RNEA_KERNELS[chain_kind(CI)]
        return lambda q, qd, x: k(Ii, Ff, CI, q, qd, x, js, fb, 1.0, tangent)
    k = ABA_KERNELS[(tangent, chain_kind(CI))]
    return lambda q, qd, x: k(Ii, Ff, CI, q, qd, x, js, fb, 1.0)


def _rel(a, b):
    return np.abs(a - b).max() / max(1.0, np.abs(b).max())


def _tol(model, kind, q):
    """The paths compile the same algorithm separately (fastmath contractions may differ): forward dynamics agrees
    within the round-off M's conditioning allows, as in tests/derivatives/test_derivatives.py."""
    return 1e-13 if kind == "rnea" else COND_REL * np.linalg.cond(rm.crba(model, q))


@pytest.fixture(scope="module")
def model():
    return random_model(np.random.default_rng(12), n=12, topology="random", joints="multi", floating=True)


def _counting(model, kind, tangent):
    """Wrap the lean record's call so that the test sees it run; returns the list of its statuses."""
    rec = first_order._record(model, kind, tangent)
    assert rec.c, "the C extension is built in CI, so the lean path must exist"
    real = rec.c
    seen = []

    def call(*args):
        status = real[0](*args)
        seen.append(status)
        return status

    rec.c = (call, *real[1:])
    return seen


@pytest.mark.parametrize("kind", ["rnea", "aba"])
@pytest.mark.parametrize("tangent", [False, True])
def test_c_path_is_used_and_equals_the_kernels(model, kind, tangent):
    rng = np.random.default_rng(1)
    q = model.q0 + 0.1 * rng.normal(size=model.ndof)
    qd, x = rng.normal(size=(2, model.ndof))
    seen = _counting(model, kind, tangent)
    ours = PUBLIC[kind](model, q, qd, x, tangent=tangent)
    assert seen == [0]
    ref = _kernel(model, kind, tangent)(q, qd, x)
    assert len(ours) == len(ref)
    tol = _tol(model, kind, q)
    for a, b in zip(ours, ref, strict=True):
        assert a.shape == (model.ndof, model.ndof) and a.flags.c_contiguous and a.flags.writeable
        assert _rel(a, b) < tol


@pytest.mark.parametrize("kind", ["rnea", "aba"])
def test_declined_arguments_reach_the_other_paths(model, kind):
    rng = np.random.default_rng(2)
    q = model.q0 + 0.1 * rng.normal(size=model.ndof)
    qd, x = rng.normal(size=(2, model.ndof))
    x32 = x.astype(np.float32)
    ref = PUBLIC[kind](model, q, qd, x)
    ref32 = PUBLIC[kind](model, q, qd, x32.astype(np.float64))
    tol = _tol(model, kind, q)
    seen = _counting(model, kind, False)
    wide = np.zeros((model.ndof, 2))
    wide[:, 0] = qd
    for args, want in (((q.copy(), qd, x), ref),  # taken
                       ((list(q), qd, x), ref),  # a list
                       ((q, wide[:, 0], x), ref),  # strided
                       ((q, qd, x32), ref32)):  # another dtype
        out = PUBLIC[kind](model, *args)
        for a, b in zip(out, want, strict=True):
            assert _rel(a, b) < tol
    assert seen[0] == 0 and len(seen) == 4 and all(s is NotImplemented for s in seen[1:])
    qc = q.astype(complex)
    qc[0] += 1e-30j  # complex step: declined too, the dispatcher's complex kernel answers
    out = PUBLIC[kind](model, qc, qd, x)
    assert _rel(out[0].real, ref[0]) < tol and seen[-1] is NotImplemented


@pytest.mark.parametrize("kind", ["rnea", "aba"])
def test_nan_is_named_through_the_c_path(model, kind):
    seen = _counting(model, kind, True)
    z = np.zeros(model.ndof)
    bad = z.copy()
    bad[3] = np.nan
    with pytest.raises(rm.ModelError, match="qd contains NaN"):
        PUBLIC[kind](model, model.q0.copy(), bad, z, tangent=True)
    assert seen == [-2]


def test_no_lean_record_without_the_extension_or_with_charts(model, monkeypatch):
    from redmax.derivatives._first_order_c_entry import lean_record

    chart = rm.ModelBuilder("euler", (0.0, 0.0, -9.81))
    chart.add_body("b", rm.Cuboid(1.0, 1.0, 1.0), rm.SphericalEuler("ZXZ"))
    js, fb = np.zeros(1, dtype=np.int64), np.zeros((0, 6))
    assert lean_record(chart.build(), "rnea", False, 0, js, fb) is False
    monkeypatch.setattr(_single_call, "USE_C", False)
    assert lean_record(model, "aba", True, 0, np.array(model.jstate0, dtype=np.int64), fb) is False
