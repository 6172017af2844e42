"""Regression tests of the wave-one defects found in review (each failed before its fix)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import redmax as rm
from redmax import forces as fc
from redmax.integrators import accelerations
from redmax.kinematics import kinematics
from redmax.spatial import trans
from redmax.testing.models import random_model, random_state

from tolerances import IDENTITY_REL, rel


def _dropped_box(**contact):
    b = rm.ModelBuilder("drop", gravity=(0, 0, -9.81))
    b.add_body("box", rm.Cuboid(1, 1, 1), rm.Free3D(), q=[0, 0, 0.45, 0, 0, 0])
    corners = [("box", (sx * 0.5, sy * 0.5, -0.5)) for sx in (-1, 1) for sy in (-1, 1)]
    b.add_force(fc.GroundContact(corners, **contact))
    return b.build()


def test_ground_contact_defaults_give_no_nan_without_tangential_velocity():
    """mu = kt = 0 (the defaults) and a point moving straight down: the friction direction is undefined; the
    force must be the normal force alone (it was NaN)."""
    m = _dropped_box(kn=1e4, kd=50.0)
    out = m.forces[0].evaluate(m, kinematics(m, m.q0, np.array([0, 0, -1.0, 0, 0, 0])), 0.0)
    assert np.all(np.isfinite(out.f)) and np.all(np.isfinite(out.K.blocks)) and np.all(np.isfinite(out.D.blocks))
    assert np.allclose(out.f[0, 3:5], 0.0) and out.f[0, 5] > 0  # normal force only, upwards
    r = rm.simulate(m, integrator="euler", dt=1e-3, duration=2.0)
    assert np.all(np.isfinite(r.q))
    assert abs(r.qdot[-1]).max() < 1e-2  # at rest on the ground
    assert 0.45 < r.q[-1, 2] < 0.5


def test_forces_argument_never_drops_the_coriolis_terms():
    """forces=[] means "no applied forces"; the velocity-product terms belong to the dynamics (the RedMax path
    dropped them and disagreed with the recursive path by 3.1 in qdd)."""
    rng = np.random.default_rng(0)
    m = random_model(rng, n=5, gravity=(0, 0, 0))
    q, qd = random_state(np.random.default_rng(1), m)
    a1 = accelerations(m, q, qd, 0.0, m.jstate0, [], "redmax")
    a2 = accelerations(m, q, qd, 0.0, m.jstate0, [], "recursive")
    a3 = rm.aba(m, q, qd, np.zeros(m.ndof))
    assert rel(a1, a3) < IDENTITY_REL and rel(a2, a3) < IDENTITY_REL
    r1 = rm.simulate(m, rm.State(q, qd), integrator="dop853", dt=0.1, duration=1.0, forces=[], rtol=1e-10,
                     atol=1e-10)
    r2 = rm.simulate(m, rm.State(q, qd), integrator="dop853", dt=0.1, duration=1.0, forces=[], method="recursive",
                     rtol=1e-10, atol=1e-10)
    assert np.abs(r1.q - r2.q).max() < 1e-7
    r3 = rm.simulate(m, rm.State(q, qd), integrator="euler", dt=1e-3, duration=0.2, forces=[])
    r4 = rm.simulate(m, rm.State(q, qd), integrator="euler", dt=1e-3, duration=0.2)
    assert np.array_equal(r3.q, r4.q)  # the model has no applied force: forces=[] changes nothing


def _euler_ball():
    b = rm.ModelBuilder("ball", (0, 0, -980))
    b.add_body("b1", rm.Cuboid(1, 2, 10), rm.SphericalEuler("XYZ"), body_placement=trans(0, 0, -5), q=[.2, .3, .1])
    return b.build()


def test_chart_joints_require_jstate():
    """Omitting jstate for a model with Euler-angle joints silently used the initial chart (pose off by 4.84)."""
    m = _euler_ball()
    q = np.array([0.2, 1.4, 0.1])
    qd = np.array([0.3, 0.5, 0.2])
    z = np.zeros(3)
    calls = [lambda: rm.forward_kinematics(m, q), lambda: rm.evaluate_kinematics(m, q, qd),
             lambda: rm.rnea(m, q, qd, z), lambda: rm.aba(m, q, qd, z), lambda: rm.crba(m, q),
             lambda: rm.minv(m, q), lambda: rm.jacobian(m, q, qd), lambda: rm.redmax_accelerations(m, q, qd),
             lambda: rm.simulate(m, rm.State(q, qd), integrator="euler", dt=1e-3, duration=0.01)]
    for call in calls:
        with pytest.raises(rm.ModelError, match="joint 'b1' uses Euler-angle charts: pass jstate"):
            call()
    js = m.jstate0.copy()
    E0 = rm.forward_kinematics(m, q, js)[1][0]
    from redmax.configuration import reparameterize

    assert reparameterize(m, q, qd, js)
    assert np.abs(rm.forward_kinematics(m, q, js)[1][0] - E0).max() < 1e-12  # same pose in the new chart
    rm.simulate(m, integrator="euler", dt=1e-3, duration=0.01)  # the initial state carries its charts
    with pytest.raises(rm.ModelError, match="not a valid chart word"):
        rm.crba(m, q, jstate=[13])
    with pytest.raises(rm.ModelError, match="jstate must have shape"):
        rm.crba(m, q, jstate=[0, 0])


_CHAIN = textwrap.dedent("""
    import numpy as np, redmax as rm, redmax.dynamics as D
    from redmax.dynamics._single_call import lean
    from redmax.testing.models import random_model
    m = random_model(np.random.default_rng(0), n=6)
    q, qd, qdd = np.random.default_rng(1).normal(size=(3, m.ndof))
    calls = {"aba": 0, "aba_plain": 0, "aba_kernel": 0, "rnea": 0, "rnea_plain": 0, "rnea_kernel": 0, "crba": 0,
             "crba_plain": 0, "crba_kernel": 0}
    rec = lean(m)
    rm.rnea(m, q, qd, qdd), rm.aba(m, q, qd, qdd), rm.crba(m, q)  # first calls bind the lean tier's entry points
    for name in list(calls):
        owner = rec if name in ("aba", "rnea", "crba") else D
        orig = getattr(owner, name)
        def counted(*a, _orig=orig, _name=name):
            calls[_name] += 1
            return _orig(*a)
        setattr(owner, name, counted)
    tau = rm.rnea(m, q, qd, qdd)
    qdd2 = rm.aba(m, q, qd, tau)
    M = rm.crba(m, q)
    tau2 = rm.rnea(m, q, qd, np.linalg.solve(M, M @ qdd2))
    qdd3 = rm.aba(m, q, qd, tau2 + 0.0)
    assert np.abs(qdd3 - qdd).max() < 1e-9
    print(*calls.values())
""")


def test_kernel_outputs_take_the_fast_path_with_a_warm_cache():
    """Arrays returned by a kernel loaded from Numba's cache carry an equal but not identical float64 dtype; the
    fast path tested ``dtype is float64`` and sent chained calls to the slow checked path (2-7x slower).  Every call
    here must take the lean tier (``redmax.dynamics._single_call.Lean``: rnea, aba, crba), none the checked kernels."""
    env = dict(os.environ)
    for _ in range(2):  # the second run loads every kernel from the on-disk cache
        out = subprocess.run([sys.executable, "-c", _CHAIN], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2", "0", "0", "2", "0", "0", "1", "0", "0"]


@pytest.mark.parametrize("use_c", [True, False])
def test_lean_tier_holds_one_signature_and_hands_other_arguments_on(use_c, monkeypatch):
    """The lean per-call tier (redmax.dynamics._single_call), through the C extension or through its Numba fallback
    (which compiles one signature and never another): float32, strided, complex and list arguments, and a wrong
    ``out``, reach the tiers below with their own results and errors."""
    from redmax.dynamics import _single_call
    from redmax.dynamics._single_call import ABA, CRBA, RNEA
    from redmax.testing.models import random_model

    monkeypatch.setattr(_single_call, "USE_C", use_c)
    m = random_model(np.random.default_rng(0), n=5)
    q, qd, qdd = np.random.default_rng(1).normal(size=(3, m.ndof))
    tau = rm.rnea(m, q, qd, qdd)
    M = rm.crba(m, q)
    strided = np.empty((m.ndof, 2))
    strided[:, 0] = q
    h = 1e-20
    q32 = q.astype(np.float32)
    assert np.abs(rm.rnea(m, q32, qd, qdd) - rm.rnea(m, q32.astype(np.float64), qd, qdd)).max() < 1e-12
    for v in (strided[:, 0], list(q), q + 0j):
        assert np.abs(rm.rnea(m, v, qd, qdd) - tau).max() < 1e-12
        assert np.abs(rm.aba(m, v, qd, tau) - qdd).max() < 1e-9
        assert np.abs(rm.crba(m, v) - M).max() < 1e-12
    dq = np.zeros(m.ndof)
    dq[2] = 1.0
    cs = rm.rnea(m, q + 1j * h * dq, qd, qdd).imag / h  # complex step through the checked path
    fd = (rm.rnea(m, q + 1e-6 * dq, qd, qdd) - rm.rnea(m, q - 1e-6 * dq, qd, qdd)) / 2e-6
    assert np.abs(cs - fd).max() < 1e-6 * max(1.0, np.abs(fd).max())
    out = np.empty(m.ndof)
    assert rm.rnea(m, q, qd, qdd, out=out) is out and np.array_equal(out, tau)
    with pytest.raises(rm.ModelError, match="out must be"):
        rm.rnea(m, q, qd, qdd, out=np.empty(m.ndof + 1))
    with pytest.raises(rm.ModelError, match="q must have shape"):
        rm.aba(m, q[:-1], qd, tau)
    with pytest.raises(rm.ModelError, match="NaN or inf"):
        rm.crba(m, np.full(m.ndof, np.nan))
    rec = _single_call.lean(m)
    if use_c:
        assert type(rec.rnea).__name__ == type(rec.aba).__name__ == type(rec.crba).__name__ == "Bound"
    else:
        for disp in (RNEA, ABA, CRBA):
            assert len(disp.signatures) == 1


_COPIED_FIRST = textwrap.dedent("""
    import copy, pickle, numpy as np, redmax as rm
    from redmax.dynamics._single_call import lean
    from redmax.testing.models import random_model
    m = random_model(np.random.default_rng(3), n=4)
    q, qd, qdd = np.random.default_rng(4).normal(size=(3, m.ndof))
    m2 = pickle.loads(pickle.dumps(m))
    m3 = copy.deepcopy(m)
    tau = rm.rnea(m2, q, qd, qdd)  # a copied model is the first to call in this process
    assert np.array_equal(rm.rnea(m3, q, qd, qdd), tau)
    assert np.abs(rm.aba(m2, q, qd, tau) - qdd).max() < 1e-9
    assert np.array_equal(rm.rnea(m, q, qd, qdd), tau)
    print(lean(m2) is not None, lean(m3) is not None, lean(random_model(np.random.default_rng(5), n=3)) is not None,
          lean(m) is not None, lean(None) is None, lean(object()) is None)
""")


def test_lean_tier_survives_pickled_and_copied_models():
    """A pickled or deep-copied model called first in a process: its arrays come back read-only (Model's
    __setstate__), so it takes the lean tier like the model it was copied from, and later models still do;
    results unchanged."""
    out = subprocess.run([sys.executable, "-c", _COPIED_FIRST], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True"] * 6
