"""Batched rnea/aba/crba/minv over a leading batch axis (B, n): equal to the single calls to round-off (the kernels
are compiled with fastmath contraction and reassociation, so two compiled call paths may differ in the last bits;
models of fixed, revolute and prismatic joints run on the lane kernels, which order their products differently),
with the
same checks (shapes, finiteness, chart words, singular states named), f_ext and jstate per state or shared, and
``out=`` for single and batched calls."""

import numpy as np
import pytest

import redmax as rm
from redmax.testing.models import random_model

from paths import ARM_URDF


def _same(a, b, tol=1e-13):
    """Equal to round-off: ``tol`` of the largest entry."""
    return a.shape == b.shape and np.abs(a - b).max(initial=0.0) <= tol * max(1.0, np.abs(b).max(initial=0.0))


# Accelerations of a batch of fixed/revolute/prismatic models come from the lane kernels (redmax.dynamics.lanes):
# the same recursion as the single call, its products in another order, so they agree to the round-off of the
# solve, cond(M) eps (cond(M) < 100 for the models here): 1e-12.
ABA_TOL = 1e-12


@pytest.fixture(scope="module")
def models():
    rng = np.random.default_rng(4)
    return {"chain": random_model(rng, n=7, topology="chain", joints="revprism"),
            "tree": random_model(rng, n=9, topology="binary", joints="multi", floating=True),
            "arm": rm.load_urdf(ARM_URDF)}


@pytest.mark.parametrize("name", ["chain", "tree", "arm"])
def test_batched_equals_single_calls(models, name):
    m = models[name]
    rng = np.random.default_rng(1)
    B = 37
    Q, V, A = rng.normal(size=(3, B, m.ndof)) * 0.7
    tau = rm.rnea(m, Q, V, A)
    qdd = rm.aba(m, Q, V, tau)
    M = rm.crba(m, Q)
    Mi = rm.minv(m, Q)
    assert tau.shape == (B, m.ndof) and M.shape == Mi.shape == (B, m.ndof, m.ndof)
    for k in range(B):
        assert _same(tau[k], rm.rnea(m, Q[k], V[k], A[k]))
        assert _same(qdd[k], rm.aba(m, Q[k], V[k], tau[k]), ABA_TOL)
        assert _same(M[k], rm.crba(m, Q[k]))
        assert _same(Mi[k], rm.minv(m, Q[k]))
    assert np.abs(qdd - A).max() < 1e-9 * max(1.0, np.abs(A).max())  # ABA o RNEA = identity
    # external wrenches: one per state, or one (nb, 6) array for all
    F = rng.normal(size=(B, m.nb, 6))
    tf = rm.rnea(m, Q, V, A, f_ext=F)
    assert _same(tf[5], rm.rnea(m, Q[5], V[5], A[5], f_ext=F[5]))
    assert _same(rm.aba(m, Q, V, tf, f_ext=F[0])[2], rm.aba(m, Q[2], V[2], tf[2], f_ext=F[0]))
    tg = rm.rnea(m, Q, V, A, gravity=False)
    assert _same(tg[3], rm.rnea(m, Q[3], V[3], A[3], gravity=False))


def test_out_single_and_batched(models):
    m = models["arm"]
    rng = np.random.default_rng(2)
    q, qd, a = rng.normal(size=(3, m.ndof))
    out = np.empty(m.ndof)
    assert rm.rnea(m, q, qd, a, out=out) is out and _same(out, rm.rnea(m, q, qd, a))
    assert rm.aba(m, q, qd, a, out=out) is out and _same(out, rm.aba(m, q, qd, a))
    Mo = np.full((m.ndof, m.ndof), np.nan)
    assert rm.crba(m, q, out=Mo) is Mo and _same(Mo, rm.crba(m, q))
    assert rm.minv(m, q, out=Mo) is Mo and _same(Mo, rm.minv(m, q))
    Q = rng.normal(size=(5, m.ndof))
    OB = np.empty((5, m.ndof))
    assert rm.rnea(m, Q, Q, Q, out=OB) is OB and _same(OB[1], rm.rnea(m, Q[1], Q[1], Q[1]))
    for bad in (np.empty(m.ndof, dtype=np.float32), np.empty(m.ndof + 1), np.empty((2, m.ndof)), [0.0] * m.ndof):
        with pytest.raises(rm.ModelError, match="out must be"):
            rm.rnea(m, q, qd, a, out=bad)
    ro = np.empty(m.ndof)
    ro.setflags(write=False)
    with pytest.raises(rm.ModelError, match="out must be a writeable"):
        rm.rnea(m, q, qd, a, out=ro)


def test_batched_checks(models):
    m = models["chain"]
    n = m.ndof
    Q = np.zeros((4, n))
    with pytest.raises(rm.ModelError, match=r"qd must have shape \(B, 7\)"):
        rm.rnea(m, Q, np.zeros(n), Q)
    with pytest.raises(rm.ModelError, match="qd has 3 states, q has 4"):
        rm.rnea(m, Q, np.zeros((3, n)), Q)
    bad = Q.copy()
    bad[2, 1] = np.nan
    with pytest.raises(rm.ModelError, match=r"qdd\[2\] contains NaN or inf"):
        rm.rnea(m, Q, Q, bad)
    with pytest.raises(rm.ModelError, match="complex"):
        rm.crba(m, Q.astype(complex))
    with pytest.raises(rm.ModelError, match=r"f_ext must have shape"):
        rm.rnea(m, Q, Q, Q, f_ext=np.zeros((3, m.nb, 6)))


def test_batched_chart_words_and_singular_states():
    b = rm.ModelBuilder("euler")
    b.add_body("a", rm.Cuboid(1, 2, 3), rm.SphericalEuler("XYZ"))
    b.add_body("b", rm.Cuboid(1, 2, 3), rm.Revolute((1, 0, 0)), parent="a", joint_placement=rm.spatial.trans(0, 0, 2))
    m = b.build()
    Q = np.random.default_rng(0).normal(size=(6, m.ndof)) * 0.3
    JS = np.tile(m.jstate0, (6, 1))  # the XYZ chart (word 6) of the joint, in every state
    JS[3, 0] = 5  # another chart (ZYZ) for state 3
    M = rm.crba(m, Q, jstate=JS)
    assert _same(M[3], rm.crba(m, Q[3], jstate=JS[3]))
    with pytest.raises(rm.ModelError, match="uses Euler-angle charts: pass jstate"):
        rm.crba(m, Q)
    JS[4, 0] = 12
    with pytest.raises(rm.ModelError, match=r"joint 'a': jstate\[0\] = 12 is not a valid chart word"):
        rm.aba(m, Q, Q, Q, jstate=JS)
    JS[4, 0] = 16
    with pytest.raises(rm.ModelError, match="bits outside its chart fields"):
        rm.crba(m, Q, jstate=JS)
    # gimbal lock of the XYZ chart in state 2: the failing state and joint are named
    JS[4, 0] = m.jstate0[0]
    Q[2, :3] = [0.1, np.pi / 2, 0.2]
    with pytest.raises(rm.ModelError, match=r"aba: state 2 of 6: joint 'a'"):
        rm.aba(m, Q, np.zeros_like(Q), np.zeros_like(Q), jstate=JS)


def test_direct_entry_points_and_every_other_layout_agree(models):
    """Single calls with C-contiguous writeable float64 vectors take the compiled entry point directly
    (dynamics/_single_call.py); strided, read-only, Fortran and big-endian inputs go through the dispatcher or the
    checked path: all give the same numbers (to rounding)."""
    m = models["tree"]
    rng = np.random.default_rng(8)
    W = rng.normal(size=(3, 2 * m.ndof))
    q, qd, a = (np.ascontiguousarray(w[::2]) for w in W)
    ref = (rm.rnea(m, q, qd, a), rm.aba(m, q, qd, a), rm.crba(m, q), rm.minv(m, q))
    ro = [x.copy() for x in (q, qd, a)]
    for x in ro:
        x.setflags(write=False)
    for args in ((W[0, ::2], W[1, ::2], W[2, ::2]), ro, [x.astype(">f8") for x in (q, qd, a)]):
        got = (rm.rnea(m, *args), rm.aba(m, *args), rm.crba(m, args[0]), rm.minv(m, args[0]))
        for g, r in zip(got, ref, strict=True):  # other layouts run other compiled code: rounding may differ
            assert np.abs(g - r).max() <= 1e-13 * np.abs(r).max()
    out, Mo = np.empty(m.ndof), np.empty((m.ndof, m.ndof))
    assert _same(rm.rnea(m, q, qd, a, out=out), ref[0]) and _same(rm.crba(m, q, out=Mo), ref[2])
    with pytest.raises(rm.ModelError, match="qd must have shape"):  # the kernel's size check still answers
        rm.rnea(m, q, qd[:-1].copy(), a)


def _fixed_joint_model():
    """Revolute, prismatic and fixed joints (a fixed body mid-chain and a fixed leaf), with armature."""
    from redmax.io.mjcf import with_armature
    from redmax.spatial import trans

    b = rm.ModelBuilder("lanes", gravity=(0.3, -0.2, -9.81))
    b.add_body("a", rm.Cuboid(1, 2, 3), rm.Revolute((0, 0, 1)))
    b.add_body("b", rm.Cuboid(1, 1, 2), rm.Fixed(), parent="a", joint_placement=trans(0, 1, 0))
    b.add_body("c", rm.Cuboid(2, 1, 1), rm.Prismatic((1, 0, 0)), parent="b", joint_placement=trans(0, 0, 1))
    b.add_body("d", rm.Cylinder(0.5, 2), rm.Revolute((0, 1, 0)), parent="c", joint_placement=trans(1, 0, 0))
    b.add_body("e", rm.Sphere(0.5), rm.Fixed(), parent="a", joint_placement=trans(0, 0, 2))
    b.add_body("f", rm.Cuboid(1, 1, 1), rm.Revolute((1, 0, 0)), parent="e", joint_placement=trans(0, 1, 1))
    m = b.build()
    return with_armature(m, np.linspace(0.1, 0.4, m.ndof))


@pytest.mark.parametrize("case", ["chain", "tree", "fixed", "urdf"])
def test_lanes_equal_the_per_state_kernels(models, case):
    """Batches of models with fixed, revolute and prismatic joints run on the lane kernels (redmax.dynamics.lanes,
    several states per instruction); they agree with the single calls, with B not a multiple of the block."""
    from redmax.dynamics import lanes

    m = {"chain": lambda: models["chain"], "fixed": _fixed_joint_model, "urdf": lambda: models["arm"],
         "tree": lambda: random_model(np.random.default_rng(9), n=11, topology="binary", joints="revprism")}[case]()
    assert lanes.tables(m) is not None
    rng = np.random.default_rng(5)
    B = 2 * lanes.LB + 7
    Q, V, A = rng.normal(size=(3, B, m.ndof))
    for gravity in (True, False):
        tau = rm.rnea(m, Q, V, A, gravity=gravity)
        qdd = rm.aba(m, Q, V, tau, gravity=gravity)
        for k in (0, lanes.LB - 1, lanes.LB, B - 1):
            assert _same(tau[k], rm.rnea(m, Q[k], V[k], A[k], gravity=gravity))
            assert _same(qdd[k], rm.aba(m, Q[k], V[k], tau[k], gravity=gravity), ABA_TOL)
        assert np.abs(qdd - A).max() < 1e-9 * max(1.0, np.abs(A).max())  # ABA o RNEA = identity
    M = rm.crba(m, Q[3])
    assert np.abs(M @ rm.aba(m, Q, V, tau)[3] - (tau[3] - rm.rnea(m, Q[3], V[3], 0 * V[3]))).max() < 1e-9


def test_lanes_are_not_used_where_they_do_not_apply(models):
    from redmax.dynamics import lanes

    assert lanes.tables(models["tree"]) is None  # spherical, universal and planar joints


def test_lanes_name_a_state_that_overflows(models):
    """Finite inputs whose result is not (velocities of 1e200 in state 3): named as by the per-state path."""
    m = models["chain"]
    Q = np.zeros((5, m.ndof))
    V = Q.copy()
    V[3] = 1e200
    for f in (rm.rnea, rm.aba):
        with pytest.raises(rm.ModelError, match=rf"{f.__name__}: state 3 of 5: the result is not finite"):
            f(m, Q, V, Q)


def test_lane_sincos_is_within_two_ulp_of_the_c_library(models):
    """The vectorised cos/sin of the lane kernels against NumPy's (the C library's) over several periods and up to
    the bound where the kernels switch to the C library (2 ulp; 1e-30 absolute at the zeros of cos and sin); a
    block with a larger angle takes that path."""
    from redmax.dynamics import lanes

    rng = np.random.default_rng(3)
    q = np.concatenate([rng.uniform(-4, 4, 4000), rng.uniform(-1e3, 1e3, 4000), rng.uniform(-0.99, 0.99, 64)
                        * lanes.SINCOS_MAX, [0.0, -0.0, np.pi / 4, np.pi / 2, np.pi, 1e-300]])
    c = np.empty_like(q)
    s = np.empty_like(q)
    for k0 in range(0, q.size, lanes.LB):
        L = min(lanes.LB, q.size - k0)
        x = np.zeros(6 * lanes.LB)
        x[:L] = q[k0:k0 + L]
        lanes._sincos(x, L)
        c[k0:k0 + L] = x[3 * lanes.LB:3 * lanes.LB + L]
        s[k0:k0 + L] = x[4 * lanes.LB:4 * lanes.LB + L]
    for got, ref in ((c, np.cos(q)), (s, np.sin(q))):
        err = np.abs(got - ref)
        near_zero = np.abs(ref) < 1e-10  # cos(pi/2) = 6e-17: the reduction leaves ~1e-31 there
        assert (err[~near_zero] / np.spacing(np.abs(ref[~near_zero]))).max() <= 2.0
        assert err[near_zero].max(initial=0.0) <= 1e-30
    m = models["chain"]
    Q = rng.normal(size=(lanes.LB + 3, m.ndof))
    Q[lanes.LB + 1, 2] = 3.0 * lanes.SINCOS_MAX  # the second block takes the C library's functions
    tau = rm.rnea(m, Q, Q, Q)
    for k in (0, lanes.LB + 1):
        assert _same(tau[k], rm.rnea(m, Q[k], Q[k], Q[k]))
