"""The C call path of single rnea/aba/crba calls (redmax._ccall + redmax.dynamics._c_entry, issue 11 item 4).

It is built in CI (a missing extension would silently fall back to the slower Numba tier, so its absence fails
here); it agrees with the Numba tier and the checked kernels; every argument it does not take (wrong dtype, shape,
layout, byte order, read-only out, subclasses, keywords, wrong count) and every input its kernels decline
(NaN, a singular joint inertia) is answered NotImplemented, so that the public call reaches the checked path and
raises the same named error as before."""

import numpy as np
import pytest

import redmax as rm
from redmax.dynamics import _single_call
from redmax.dynamics.aba import aba_plain
from redmax.dynamics.crba import crba_plain
from redmax.dynamics.rnea import rnea_plain
from redmax.testing.models import random_model


def _close(a, b):
    return a.shape == b.shape and np.abs(a - b).max() <= 1e-13 * max(1.0, np.abs(b).max())


@pytest.fixture(scope="module")
def model():
    return random_model(np.random.default_rng(11), n=6, topology="binary", joints="revprism")


def test_extension_is_built_and_used(model):
    from redmax import _ccall

    rec = _single_call.lean(model)
    q = np.zeros(model.ndof)
    rm.rnea(model, q, q, q), rm.aba(model, q, q, q), rm.crba(model, q)  # the first calls bind the entry points
    assert _single_call.USE_C and isinstance(rec.rnea, _ccall.Bound)
    assert isinstance(rec.aba, _ccall.Bound) and isinstance(rec.crba, _ccall.Bound)


def test_c_path_equals_the_checked_kernels(model):
    rng = np.random.default_rng(0)
    Ii, Ff = model.packed
    rec = _single_call.lean(model)
    for _ in range(5):
        q, qd, x = rng.normal(size=(3, model.ndof))
        tau = rec.rnea(q, qd, x)
        assert _close(tau, rnea_plain(Ii, Ff, q, qd, x))
        assert _close(rec.aba(q, qd, x), aba_plain(Ii, Ff, q, qd, x))
        assert _close(rec.crba(q), crba_plain(Ii, Ff, q))
        assert np.abs(rec.aba(q, qd, tau) - x).max() < 1e-9  # ABA o RNEA = identity
        out = np.full(model.ndof, np.nan)
        assert rec.rnea(q, qd, x, out) is out and np.array_equal(out, tau)
        Mo = np.full((model.ndof, model.ndof), np.nan)  # crba zeroes the entries it does not write
        assert rec.crba(q, Mo) is Mo and np.array_equal(Mo, rec.crba(q))


def test_c_path_declines_what_it_does_not_take(model):
    n = model.ndof
    rec = _single_call.lean(model)
    q = np.linspace(-1, 1, n)
    strided = np.empty((n, 2))
    strided[:, 0] = q
    ro = np.empty(n)
    ro.setflags(write=False)

    class Sub(np.ndarray):
        pass

    bad_inputs = [q.astype(np.float32), q[:-1], q.reshape(1, n), strided[:, 0], q.astype(">f8"), list(q), q + 0j,
                  q.view(Sub), 1.0, None]
    for bad in bad_inputs:
        assert rec.rnea(bad, q, q) is NotImplemented
        assert rec.aba(q, q, bad) is NotImplemented
        assert rec.crba(bad) is NotImplemented
    for bad_out in (ro, np.empty(n + 1), np.empty((n, 1)), np.empty(n, dtype=np.float32), strided[:, 0]):
        assert rec.rnea(q, q, q, bad_out) is NotImplemented
    assert rec.crba(q, np.empty(n)) is NotImplemented
    assert rec.crba(q, np.empty((n, n), order="F")[:, :]) is NotImplemented
    assert rec.rnea(q, q) is NotImplemented and rec.rnea(q, q, q, q, q) is NotImplemented
    assert rec.rnea(q, q, q, out=np.empty(n)) is NotImplemented  # keywords: not part of the contract
    nan = q.copy()
    nan[1] = np.nan
    assert rec.rnea(nan, q, q) is NotImplemented and rec.crba(nan) is NotImplemented
    # the public calls take the checked path for each of them and answer as before
    tau = rm.rnea(model, q, q, q)
    assert _close(rm.rnea(model, strided[:, 0], q, q), tau)
    assert _close(rm.rnea(model, q.astype(">f8"), q, q), tau)
    with pytest.raises(rm.ModelError, match="NaN or inf"):
        rm.rnea(model, nan, q, q)
    with pytest.raises(rm.ModelError, match="out must be a writeable"):
        rm.rnea(model, q, q, q, out=ro)


def test_singular_joint_inertia_is_named_through_the_c_path():
    """A spherical joint in exponential coordinates at |theta| = 2 pi: its S is singular, so is D = S^T Ia S."""
    b = rm.ModelBuilder("ball")
    b.add_body("a", rm.Cuboid(1, 2, 3), rm.SphericalExp())
    m = b.build()
    q = np.array([2 * np.pi, 0.0, 0.0])
    z = np.zeros(3)
    assert _single_call.lean(m).aba(q, z, z) is NotImplemented
    with pytest.raises(rm.ModelError, match="aba: joint 'a'"):
        rm.aba(m, q, z, z)


def test_numba_fallback_gives_the_same_numbers(model, monkeypatch):
    """Without the extension (USE_C off) the Lean record wraps the one-signature dispatchers: same contract."""
    rng = np.random.default_rng(3)
    q, qd, x = rng.normal(size=(3, model.ndof))
    ref = (rm.rnea(model, q, qd, x), rm.aba(model, q, qd, x), rm.crba(model, q))
    monkeypatch.setattr(_single_call, "USE_C", False)
    m2 = random_model(np.random.default_rng(11), n=6, topology="binary", joints="revprism")  # a fresh record
    rec = _single_call.lean(m2)
    assert type(rec.rnea).__name__ != "Bound"
    got = (rm.rnea(m2, q, qd, x), rm.aba(m2, q, qd, x), rm.crba(m2, q))
    for a, b in zip(got, ref, strict=True):
        assert _close(a, b)
    assert rec.rnea(q.astype(np.float32), qd, x) is NotImplemented
    assert rec.rnea(q, qd) is NotImplemented
