"""Dynamics: RedMax vs recursive forward dynamics, ABA o RNEA = id, CRBA = J^T Mm J, M SPD, M^-1 via
Algorithm 10, hybrid dynamics, external wrenches, and an independent Lagrangian check of RNEA."""

import zlib

import numpy as np
import pytest

from redmax import dynamics as dyn
from redmax import kinematics as kn
from redmax.forces import model_forces
from redmax.integrators import accelerations
from redmax.scenes import available, load
from redmax.testing.models import random_model, random_state

from tolerances import CS_STEP, FD_REL, FD_STEP, IDENTITY_REL, rel

CASES = [("chain", "revolute", False), ("binary", "revprism", False), ("random", "mixed", False),
         ("chain", "revolute", True), ("random", "mixed", True)]
IDS = ["-".join(map(str, c)) for c in CASES]


@pytest.fixture(params=CASES, ids=IDS)
def model(request):
    topo, joints, floating = request.param
    seed = zlib.crc32("-".join(map(str, request.param)).encode())
    return random_model(np.random.default_rng(seed), n=9, topology=topo, joints=joints,
                        floating=floating, gravity=(0.3, -0.5, -9.81))


def test_redmax_equals_recursive_forward_dynamics(model):
    rng = np.random.default_rng(0)
    for _ in range(3):
        q, qd = random_state(rng, model)
        tau = rng.normal(size=model.ndof)
        M = dyn.redmax_mass_matrix(model, q, jstate=model.jstate0)
        sys = dyn.redmax_system(model, q, qd, jstate=model.jstate0)
        qdd_redmax = np.linalg.solve(M, sys.fr + tau)
        qdd_aba = dyn.aba(model, q, qd, tau, jstate=model.jstate0)
        backward = rel(M @ qdd_aba, M @ qdd_redmax)
        # backward error: rounding, also of the articulated inertias' recursion, which grows with cond(M) (the
        # mixed floating model's 3.6e7 state gives 2e-10 with the kernels' floating-point contractions)
        assert backward < max(IDENTITY_REL, 1e-16 * np.linalg.cond(M))
        # forward error: at most cond(M) times the backward error (one state of the mixed floating model has
        # cond(M) = 3.6e7, where the two answers differ by 1e-10 from rounding alone)
        assert rel(qdd_aba, qdd_redmax) < max(IDENTITY_REL, 10.0 * np.linalg.cond(M) * backward)


def test_aba_rnea_round_trips(model):
    """ABA(RNEA(qdd)) = qdd, measured by the backward error |M (qdd' - qdd)| / |M qdd| (independent of
    the conditioning of M), and RNEA(ABA(tau)) = tau."""
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, qd = random_state(rng, model)
        qdd = rng.normal(size=model.ndof)
        tau = dyn.rnea(model, q, qd, qdd, jstate=model.jstate0)
        M = dyn.crba(model, q, jstate=model.jstate0)
        assert rel(M @ dyn.aba(model, q, qd, tau, jstate=model.jstate0), M @ qdd) < IDENTITY_REL
        tau2 = rng.normal(size=model.ndof)
        js = model.jstate0
        assert rel(dyn.rnea(model, q, qd, dyn.aba(model, q, qd, tau2, jstate=js), jstate=js), tau2) < IDENTITY_REL


def test_crba_equals_redmax_mass_matrix_and_is_spd(model):
    rng = np.random.default_rng(2)
    q, _ = random_state(rng, model)
    M = dyn.crba(model, q, jstate=model.jstate0)
    Mr = dyn.redmax_mass_matrix(model, q, jstate=model.jstate0)
    assert rel(M, Mr) < IDENTITY_REL
    assert np.abs(M - M.T).max() == 0.0
    assert np.all(np.linalg.eigvalsh(M) > 0.0)
    np.linalg.cholesky(Mr)
    # RNEA with qd = 0, no gravity gives M qdd
    qdd = rng.normal(size=model.ndof)
    tau = dyn.rnea(model, q, np.zeros(model.ndof), qdd, gravity=False, jstate=model.jstate0)
    assert rel(tau, M @ qdd) < IDENTITY_REL


def test_minv_and_preconditioner_terms(model):
    rng = np.random.default_rng(3)
    q, _ = random_state(rng, model)
    M = dyn.crba(model, q, jstate=model.jstate0)
    Mi = dyn.minv(model, q, jstate=model.jstate0)
    assert np.abs(Mi @ M - np.eye(model.ndof)).max() < IDENTITY_REL * np.linalg.cond(M)
    # (M + J^T blkdiag(Pm) J + diag(Pr))^-1 x, RedMax paper Algorithm 1
    Pr = rng.uniform(0.1, 1.0, model.ndof)
    A = rng.normal(size=(model.nb, 6, 6))
    Pm = np.einsum("bij,bkj->bik", A, A) * 0.1
    J, _ = kn.jacobian(model, q, jstate=model.jstate0)
    big = np.zeros((6 * model.nb, 6 * model.nb))
    for i in range(model.nb):
        big[6 * i : 6 * i + 6, 6 * i : 6 * i + 6] = Pm[i]
    x = rng.normal(size=(model.ndof, 2))
    y = dyn.minv_product(model, q, x, Pr=Pr, Pm=Pm, jstate=model.jstate0)
    assert rel(y, np.linalg.solve(M + J.T @ big @ J + np.diag(Pr), x)) < 1e-9


@pytest.mark.parametrize("topology,joints,n", [("binary-dfs", "multi", 31), ("binary-dfs", "revprism", 63),
                                                ("chain", "multi", 20), ("random", "multi", 40)])
def test_minv_on_larger_trees(topology, joints, n):
    """M^-1 from the recursive sweeps on trees with zero-DOF (fixed) and multi-DOF joints, contiguous
    (depth-first) and not: M^-1 M = 1 and exact symmetry."""
    rng = np.random.default_rng(n)
    model = random_model(rng, n=n, topology=topology, joints=joints)
    q, _ = random_state(rng, model)
    M = dyn.crba(model, q, jstate=model.jstate0)
    Mi = dyn.minv(model, q, jstate=model.jstate0)
    if joints == "multi":  # fixed and multi-DOF joints both present
        assert (np.diff(model.idx) == 0).any() and (np.diff(model.idx) > 1).any()
    assert np.linalg.cond(M) < 1e10
    assert np.abs(Mi @ M - np.eye(model.ndof)).max() < IDENTITY_REL * np.linalg.cond(M)
    assert np.array_equal(Mi, Mi.T)
    _check_fused_aba_minv(model, q, rng)
    from redmax.io.mjcf import with_armature

    _check_fused_aba_minv(with_armature(model, rng.uniform(0.0, 0.5, model.ndof)), q, rng)


def _check_fused_aba_minv(model, q, rng):
    """The fused ABA + M^-1 (one articulated pass, used by aba_derivatives) equals aba and minv run apart, in
    float64 and complex (scalar-generic), with the armature in D."""
    from redmax.dynamics.aba import NO_TANGENT, aba_minv_kernel
    from redmax.model.layout import NO_FEXT

    Ii, Ff = model.packed
    qd, tau = rng.normal(size=(2, model.ndof))
    qdd, Mi = aba_minv_kernel(Ii, Ff, q, qd, tau, model.jstate0, NO_FEXT, 1.0, NO_TANGENT)
    assert rel(qdd, dyn.aba(model, q, qd, tau, jstate=model.jstate0)) < 1e-12
    assert rel(Mi, dyn.minv(model, q, jstate=model.jstate0)) < 1e-12
    assert np.array_equal(Mi, Mi.T)
    h = 1e-30  # complex step through the fused kernel: d qdd / d tau_0 = M^-1[:, 0]
    tc = tau.astype(complex)
    tc[0] += 1j * h
    qc, Mc = aba_minv_kernel(Ii, Ff, q.astype(complex), qd.astype(complex), tc, model.jstate0,
                             NO_FEXT.astype(complex), 1.0, NO_TANGENT)
    assert rel(qc.imag / h, Mi[:, 0]) < 1e-12 and rel(Mc.real, Mi) < 1e-12


def test_minv_on_every_body_order_of_five_bodies():
    """All 120 parent arrays of five bodies (forests included, bodies numbered in any parent-first order):
    the depth-first test that picks the one-buffer column sweep agrees with its definition (every subtree
    is an index range), M^-1 M = 1 either way, and M aba(tau) + rnea(qdd = 0) = tau.  Orders such as
    parents (-1, 0, 0, 1, 3), where a body sits inside its parent's range but its subtree does not, once
    took the depth-first path wrongly."""
    import itertools

    from redmax.bodies import Cuboid
    from redmax.builder import ModelBuilder
    from redmax.dynamics.minv import _depth_first
    from redmax.joints import Revolute
    from redmax.model.layout import offsets
    from redmax.spatial import trans

    rng = np.random.default_rng(5)
    seen_dfs = seen_other = 0
    for rest in itertools.product(*[range(-1, j) for j in range(1, 5)]):
        parent = (-1, *rest)
        b = ModelBuilder(f"order {parent}")
        for j, p in enumerate(parent):
            axis = rng.normal(size=3)
            b.add_body(f"b{j}", Cuboid(*rng.uniform(0.5, 2.0, 3)), Revolute(axis), parent=None if p < 0 else f"b{p}",
                       joint_placement=trans(*rng.normal(size=3)), body_placement=trans(*rng.normal(size=3)))
        model = b.build()
        size = np.ones(5, dtype=np.int64)
        for i in range(4, 0, -1):
            if parent[i] >= 0:
                size[parent[i]] += size[i]
        subtree = [{i} for i in range(5)]
        for i in range(4, 0, -1):
            if parent[i] >= 0:
                subtree[parent[i]] |= subtree[i]
        expect = all(subtree[i] == set(range(i, i + size[i])) for i in range(5))
        Ii, _ = model.packed
        assert _depth_first(Ii, offsets(Ii)[2], 5, size) == expect, parent
        seen_dfs += expect
        seen_other += not expect
        q, qd, tau = rng.normal(size=(3, 5))
        M = dyn.crba(model, q, jstate=model.jstate0)
        assert np.abs(dyn.minv(model, q) @ M - np.eye(5)).max() < IDENTITY_REL * np.linalg.cond(M), parent
        qdd = dyn.aba(model, q, qd, tau, jstate=model.jstate0)
        assert rel(M @ qdd + dyn.rnea(model, q, qd, np.zeros(5)), tau) < IDENTITY_REL * np.linalg.cond(M), parent
        _check_fused_aba_minv(model, q, rng)
    assert seen_dfs > 10 and seen_other > 10


@pytest.mark.parametrize("topology,joints,n,max_slots",
                         [("chain", "revolute", 50, 1), ("binary-dfs", "revolute", 63, 6),
                          ("binary", "revolute", 31, 16), ("random", "multi", 60, 60), ("binary-dfs", "multi", 63, 6)])
def test_minv_forward_sweep_blocks_are_never_overwritten_while_needed(topology, joints, n, max_slots):
    """Replay the forward sweep's block assignment: when body i runs, its parent's block must still
    hold the parent's A (nothing overwrote it), and balanced depth-first trees need O(log n) blocks."""
    from redmax.dynamics.minv import _down_slots

    model = random_model(np.random.default_rng(7), n=n, topology=topology, joints=joints)
    Ii, _ = model.packed
    slot, nslots = _down_slots(Ii)
    assert nslots <= max_slots
    held = {}
    for i in range(model.nb):
        p = model.parent[i]
        if p >= 0:
            assert held[slot[p]] == p, f"body {i}: block of parent {p} was overwritten"
        held[slot[i]] = i


def test_minv_product_rejects_bad_inputs():
    from redmax.errors import ModelError

    m = random_model(np.random.default_rng(5), n=4)
    q = np.zeros(m.ndof)
    with pytest.raises(ModelError, match=r"X must have shape \(4,\) or \(4, k\), got \(3,\)"):
        dyn.minv_product(m, q, np.ones(3), jstate=m.jstate0)
    with pytest.raises(ModelError, match="X contains NaN"):
        dyn.minv_product(m, q, np.array([1.0, np.nan, 0.0, 0.0]), jstate=m.jstate0)
    with pytest.raises(ModelError, match="Pr must be a finite"):
        dyn.minv_product(m, q, np.ones(4), Pr=[1.0, np.inf, 0.0, 0.0], jstate=m.jstate0)
    with pytest.raises(ModelError, match=r"Pm must be a finite \(4, 6, 6\)"):
        dyn.minv_product(m, q, np.ones(4), Pm=np.zeros((3, 6, 6)), jstate=m.jstate0)


def test_hybrid_dynamics_matches_forward_and_inverse(model):
    rng = np.random.default_rng(4)
    q, qd = random_state(rng, model)
    tau = rng.normal(size=model.ndof)
    qdd = dyn.aba(model, q, qd, tau, jstate=model.jstate0)
    prescribed = rng.random(model.nb) < 0.5
    tau_in = np.where(np.repeat(prescribed, np.diff(model.idx)), 0.0, tau)
    qdd_in = np.where(np.repeat(prescribed, np.diff(model.idx)), qdd, 0.0)
    qdd2, tau2 = dyn.hybrid_dynamics(model, q, qd, tau_in, qdd_in, prescribed, jstate=model.jstate0)
    assert rel(qdd2, qdd) < IDENTITY_REL
    assert rel(tau2, tau) < IDENTITY_REL


def test_external_wrenches(model):
    rng = np.random.default_rng(5)
    q, qd = random_state(rng, model)
    qdd = rng.normal(size=model.ndof)
    f = rng.normal(size=(model.nb, 6))
    J, _ = kn.jacobian(model, q, jstate=model.jstate0)
    js = model.jstate0
    expect = dyn.rnea(model, q, qd, qdd, jstate=js) - J.T @ f.reshape(-1)
    assert rel(dyn.rnea(model, q, qd, qdd, f_ext=f, jstate=js), expect) < IDENTITY_REL
    tau = dyn.rnea(model, q, qd, qdd, f_ext=f, jstate=model.jstate0)
    assert rel(dyn.aba(model, q, qd, tau, f_ext=f, jstate=model.jstate0), qdd) < IDENTITY_REL


def _T(model, q, qd):
    phi = kn.kinematics(model, q, qd, jstate=model.jstate0).phi
    return 0.5 * np.sum(model.M_body * phi * phi)


def _V(model, q):
    p = kn.forward_kinematics(model, q, jstate=model.jstate0)[1][:, :3, 3]
    return -np.sum(model.mass * (p @ model.gravity))


def test_rnea_against_lagrange_equations(model):
    """tau = M qdd + Mdot qd - dT/dq + dV/dq with M, T, V from kinematics only (complex step)."""
    rng = np.random.default_rng(6)
    q, qd = random_state(rng, model)
    qdd = rng.normal(size=model.ndof)
    n = model.ndof
    # M by polarisation of the kinetic energy (exact for a quadratic form)
    M = np.zeros((n, n))
    E = np.eye(n)
    Td = [_T(model, q, E[i]) for i in range(n)]
    for i in range(n):
        for j in range(n):
            M[i, j] = _T(model, q, E[i] + E[j]) - Td[i] - Td[j]
    Mdot = dyn.crba(model, q + 1j * CS_STEP * qd, jstate=model.jstate0).imag / CS_STEP
    dTdq = np.array([_T(model, q + 1j * CS_STEP * E[i], qd.astype(complex)).imag / CS_STEP for i in range(n)])
    dVdq = np.array([_V(model, q + 1j * CS_STEP * E[i]).imag / CS_STEP for i in range(n)])
    tau_lagrange = M @ qdd + Mdot @ qd - dTdq + dVdq
    assert rel(dyn.rnea(model, q, qd, qdd, jstate=model.jstate0), tau_lagrange) < 1e-9


def test_rnea_is_complex_step_safe(model):
    rng = np.random.default_rng(7)
    q, qd = random_state(rng, model)
    qdd = rng.normal(size=model.ndof)
    dq = rng.normal(size=model.ndof)
    cs = dyn.rnea(model, q + 1j * CS_STEP * dq, qd, qdd, jstate=model.jstate0).imag / CS_STEP
    h = 1e-6
    js = model.jstate0
    fd = (dyn.rnea(model, q + h * dq, qd, qdd, jstate=js) - dyn.rnea(model, q - h * dq, qd, qdd, jstate=js)) / (2 * h)
    assert rel(fd, cs) < FD_REL


def test_energies_kinetic_is_quadratic_form(model):
    """T = 1/2 qd^T M qd, and the total is conserved along the free motion: these models have no springs, dampers
    or inputs, so dE/dt = dE/dq qd + dE/dqd qdd = 0 at qdd = ABA(q, qd, 0) (central differences along (qd, qdd),
    against the power of gravity and of the inertial forces)."""
    rng = np.random.default_rng(8)
    q, qd = random_state(rng, model)
    js = model.jstate0
    e = dyn.energies(model, q, qd, jstate=js)
    M = dyn.crba(model, q, jstate=js)
    assert e["kinetic"] == pytest.approx(0.5 * qd @ M @ qd, rel=1e-12)
    zero = np.zeros(model.ndof)
    qdd = dyn.aba(model, q, qd, zero, jstate=js)

    def total(s):
        return dyn.energies(model, q + s * qd, qd + s * qdd, jstate=js)["total"]

    dE_dt = (total(FD_STEP) - total(-FD_STEP)) / (2 * FD_STEP)
    power = abs(qd @ dyn.rnea(model, q, zero, zero, jstate=js)) + abs(qd @ M @ qdd)  # each alone is not zero
    assert abs(dE_dt) < FD_REL * power, (dE_dt, power)


@pytest.mark.parametrize("name", list(available()))
def test_scenes_redmax_equals_recursive(name):
    """On every built-in scene (with its torques, springs, damping) at random states, to the forward error a
    backward-stable solve allows: ``IDENTITY_REL``, or ``1e-14 cond(M)`` for the ill-conditioned scaling scenes
    (bridges of 1000 kg/m^3 blocks on 1e8 hinge springs: cond(M) ~ 1e6)."""
    scene = load(name)
    m = scene.model
    rng = np.random.default_rng(9)
    for t in (0.0, 4.0, 7.0):
        q = m.q0 + 0.3 * rng.normal(size=m.ndof)
        for i, j in enumerate(m.joints):
            if j.kind == "spline_surface":
                q[m.idx[i] : m.idx[i + 1]] = rng.uniform(0.2, 0.8, 2)
        qd = rng.normal(size=m.ndof)
        fs = scene.forces or model_forces(m)
        a1 = accelerations(m, q, qd, t, m.jstate0, fs, "redmax")
        a2 = accelerations(m, q, qd, t, m.jstate0, fs, "recursive")
        tol = max(IDENTITY_REL, 1e-14 * np.linalg.cond(dyn.crba(m, q, jstate=m.jstate0)))
        assert rel(a2, a1) < tol
