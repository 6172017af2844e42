"""Every force: K = df/dq and D = -df/dqd against central finite differences (maximal: variations
E <- E exp(h delta) of the body frames and of the body twists; reduced: of q and qd), and
f = -dV/dq where a potential exists."""

import dataclasses

import numpy as np
import pytest

from redmax import forces as fc
from redmax.builder import ModelBuilder
from redmax.errors import ModelError
from redmax.forces import ForceTerms
from redmax.kinematics import kinematics
from redmax.spatial import exp_se3
from redmax.testing.models import random_model, random_state

from tolerances import FD_REL

H = 1e-6


def rel(a, b):
    return np.abs(a - b).max() / max(1e-12, np.abs(b).max())


def _model_with(force, seed=0, n=5):
    """A random mixed-joint model (bodies b0..b{n-1}) with ``force`` added, and a random state."""
    rng = np.random.default_rng(seed)
    base = random_model(rng, n=n, topology="random", joints="mixed")
    b = ModelBuilder("forces", base.gravity)
    for i in range(base.nb):
        b.add_body(base.body_names[i], None, base.joints[i],
                   parent=None if base.parent[i] < 0 else base.body_names[base.parent[i]],
                   joint_placement=base.E_pj0[i], body_placement=base.E_jb[i], mass=base.mass[i],
                   inertia=base.I_body[i])
    b.add_force(force)
    m = b.build()
    q, qd = random_state(rng, m)
    return m, m.forces[0], kinematics(m, q, qd, m.jstate0)


def _perturbed(kin, b, delta):
    E = kin.E_wb.copy()
    E[b] = E[b] @ exp_se3(delta)
    return dataclasses.replace(kin, E_wb=E)


def _with_phi(kin, phi):
    return dataclasses.replace(kin, phi=phi)


# Velocity step of the D differences: the laws are linear or smooth in velocity, so the truncation error of a
# central difference is tiny while its round-off grows like |f| eps / HV (contact wrenches reach ~1e5 here: with
# HV = 1e-6 the round-off alone is ~1e-6 relative, the test's tolerance; with 1e-4 the error is ~1e-8).
HV = 1e-4


def maximal_fd(model, force, kin):
    """Finite-difference K (wrt body-frame variations) and D (wrt twists) of a maximal force."""
    nm = 6 * model.nb
    K = np.zeros((nm, nm))
    D = np.zeros((nm, nm))
    for b in range(model.nb):
        for c in range(6):
            e = np.zeros(6)
            e[c] = H
            fp = force.wrenches(model, _perturbed(kin, b, e), False)[0]
            fm = force.wrenches(model, _perturbed(kin, b, -e), False)[0]
            K[:, 6 * b + c] = (fp - fm).reshape(-1) / (2 * H)
            phi = kin.phi.copy()
            phi[b, c] += HV
            fp = force.wrenches(model, _with_phi(kin, phi), False)[0]
            phi[b, c] -= 2 * HV
            fm = force.wrenches(model, _with_phi(kin, phi), False)[0]
            D[:, 6 * b + c] = -(fp - fm).reshape(-1) / (2 * HV)
    return K, D


def maximal_grad_V(model, force, kin):
    g = np.zeros(6 * model.nb)
    for b in range(model.nb):
        for c in range(6):
            e = np.zeros(6)
            e[c] = H
            Vp = force.energy(model, _perturbed(kin, b, e))
            g[6 * b + c] = (Vp - force.energy(model, _perturbed(kin, b, -e))) / (2 * H)
    return g


def cubic(l, ld):
    return 3.0 * (l - 4.0) ** 3 + 0.7 * ld * l


MAXIMAL = {
    "world_point_force": lambda: fc.WorldPointForce("b2", (0.3, -0.2, 0.5), (1.0, -2.0, 3.0)),
    "point_spring": lambda: fc.PointSpring(("b1", (0.5, 0.1, 0.0)), ("b4", (-0.2, 0.3, 0.1)), ks=7.0, kd=1.5,
                                           stiffness="full"),
    "point_spring_world": lambda: fc.PointSpring((None, (1.0, 2.0, 3.0)), ("b3", (0.1, 0.1, 0.1)), ks=3.0, kd=0.5,
                                                 stiffness="full"),
    "spring_damper": lambda: fc.SpringDamper(("b0", (0.2, 0.0, 0.1)), ("b3", (0.0, -0.4, 0.2)), k=11.0, d=2.0,
                                             rest_length=0.5, stiffness="full"),
    "spring_damper_rest_initial": lambda: fc.SpringDamper(("b2", (0.2, 0.0, 0.1)), ("b4", (0.0, -0.4, 0.2)), k=5.0,
                                                          d=1.0, stiffness="full"),
    "generic_spring": lambda: fc.GenericSpring(("b1", (0.1, 0.2, 0.3)), ("b2", (-0.3, 0.0, 0.2)), cubic,
                                               lambda l, ld: 9.0 * (l - 4.0) ** 2 + 0.7 * ld, lambda l, ld: 0.7 * l,
                                               potential=lambda l: 0.75 * (l - 4.0) ** 4, stiffness="full"),
    "multipoint_spring": lambda: fc.MultiPointSpring(
        [(None, (0.0, 0.0, 1.0)), ("b1", (0.1, 0.2, 0.3)), ("b3", (-0.3, 0.0, 0.2)), ("b4", (0.2, 0.2, 0.0)),
         ("b1", (-0.4, 0.1, 0.0))], cubic, lambda l, ld: 9.0 * (l - 4.0) ** 2 + 0.7 * ld, lambda l, ld: 0.7 * l,
        potential=lambda l: 0.75 * (l - 4.0) ** 4, stiffness="full"),
    "cable_taut": lambda: fc.Cable([("b4", (0, 0, 0)), ("b2", (-0.4, 0.0, 0.1)), ("b3", (-0.4, 0.0, 0.1))], k=50.0,
                                   d=3.0, rest_length=0.05, stiffness="full"),
    "ground_contact": lambda: fc.GroundContact([("b0", (0.5, 0.5, 0.5)), ("b2", (-0.5, 0.2, 0.3)),
                                                ("b4", (0.1, -0.5, 0.5))], kn=1e3, kd=5.0, kt=50.0, mu=0.6,
                                               normal=(0.1, 0.2, 1.0), origin=(0.0, 0.0, 100.0)),
}


@pytest.mark.parametrize("key", list(MAXIMAL))
def test_maximal_force_K_D_and_potential(key):
    for seed in (1, 2):
        model, force, kin = _model_with(MAXIMAL[key](), seed)
        f, K, D = force.wrenches(model, kin, True)
        assert np.abs(f).max() > 0
        K_fd, D_fd = maximal_fd(model, force, kin)
        assert rel(K, K_fd) < FD_REL
        assert rel(D, D_fd) < FD_REL if np.abs(D_fd).max() > 0 else np.abs(D).max() == 0
        damping_free = key in ("world_point_force",) or (getattr(force, "kd", 0.0) == 0 and getattr(force, "d", 0) == 0)
        if key in ("point_spring", "point_spring_world", "spring_damper", "spring_damper_rest_initial", "cable_taut"):
            # conservative part: the same force without damping is -dV
            force.kd = 0.0
            force.d = 0.0
            damping_free = True
        if damping_free and key != "ground_contact":
            f0 = force.wrenches(model, _with_phi(kin, np.zeros_like(kin.phi)), False)[0]
            assert rel(f0.reshape(-1), -maximal_grad_V(model, force, kin)) < FD_REL


@pytest.mark.parametrize("dynamic", ["opposing", "original"])
def test_ground_contact_both_friction_regimes_and_potential(dynamic):
    """Points below a tilted plane: static (slow) and dynamic (fast) friction, K and D by FD, with either sign of the
    dynamic branch; the normal force is -dV/dq at rest (friction vanishes with zero velocity)."""
    for speed, expect_static in ((1e-4, True), (1e5, False)):
        force = fc.GroundContact([("b0", (0.5, 0.5, 0.5)), ("b1", (-0.5, 0.2, 0.3))], kn=1e3, kd=0.0, kt=50.0, mu=0.6,
                                 normal=(0.1, 0.2, 1.0), origin=(0.0, 0.0, 100.0), dynamic_friction=dynamic)
        model, force, kin = _model_with(force, 3)
        kin = _with_phi(kin, kin.phi * speed / np.abs(kin.phi).max())
        x, xd, _, _ = force.point_set.evaluate(kin)
        d = (x - force.origin) @ force.n
        assert np.all(d < 0)
        a = xd - np.outer(xd @ force.n, force.n)
        static = force.mu * force.kn * np.abs(d) > force.kt * np.linalg.norm(a, axis=1)
        assert np.all(static) if expect_static else not np.all(static)  # fast: at least one point slides
        _f, K, D = force.wrenches(model, kin, True)
        K_fd, D_fd = maximal_fd(model, force, kin)
        assert rel(K, K_fd) < FD_REL and rel(D, D_fd) < FD_REL
        f0 = force.wrenches(model, _with_phi(kin, np.zeros_like(kin.phi)), False)[0]
        assert rel(f0.reshape(-1), -maximal_grad_V(model, force, kin)) < FD_REL


def test_dynamic_friction_opposes_sliding_unless_the_original_sign_is_asked_for():
    """Every point sliding fast (dynamic regime): Coulomb's friction (the default) takes power out of the motion;
    ``dynamic_friction="original"`` (the original RedMax code's sign, kept for diff/11) is the same force reversed,
    so it puts the same power in.  A value other than the two names is a ModelError naming the force."""
    pts = [("b2", (0.5, 0.5, 0.5)), ("b1", (-0.5, 0.2, 0.3))]
    kw = dict(kn=1e3, kd=0.0, kt=50.0, normal=(0.1, 0.2, 1.0), origin=(0.0, 0.0, 100.0))
    out = {}
    for key, extra in (("normal", dict(mu=0.0)), ("opposing", dict(mu=0.6)),
                       ("original", dict(mu=0.6, dynamic_friction="original"))):
        model, force, kin = _model_with(fc.GroundContact(pts, **kw, **extra), 3)
        kin = _with_phi(kin, kin.phi * 1e5 / np.abs(kin.phi).max())
        x, xd, _, _ = force.point_set.evaluate(kin)
        a = xd - np.outer(xd @ force.n, force.n)
        assert not np.any(0.6 * force.kn * np.abs((x - force.origin) @ force.n) > force.kt * np.linalg.norm(a, axis=1))
        out[key] = (force.wrenches(model, kin, False)[0], kin.phi)
    fn, phi = out["normal"]
    f_opp, f_orig = out["opposing"][0] - fn, out["original"][0] - fn
    power = float(np.sum(f_opp * phi))
    assert power < 0 and np.abs(f_opp).max() > 0
    assert rel(f_orig, -f_opp) < 1e-12
    with pytest.raises(ModelError, match="ground.*dynamic_friction"):
        _model_with(fc.GroundContact(pts, **kw, mu=0.6, dynamic_friction="forward"), 3)


def test_slack_cable_pulls_nothing():
    model, force, kin = _model_with(fc.Cable([("b4", (0, 0, 0)), ("b2", (0, 0, 0))], k=50.0, rest_length=1e6), 1)
    f, K, D = force.wrenches(model, kin, True)
    assert not np.any(f) and not np.any(K) and not np.any(D) and force.energy(model, kin) == 0.0


def test_gravity_stiffness_option():
    """gravity="implicit": the gravity stiffness blocks (notes Eq. 1.35, world form) against central differences
    of the body-frame gravity wrenches; the wrench is -dV/dq."""
    from redmax.dynamics.redmax import gravity_wrenches
    from redmax.forces._compiled import NE, PAIR_FLOATS
    from redmax.forces.evaluate import world_arrays
    from redmax.forces.program import build_program
    from redmax.forces.registry import eval_forces

    model, _, kin = _model_with(fc.PointSpring(("b0", (0, 0, 0)), ("b1", (0, 0, 0)), 1.0), 4)
    prog = build_program(model, [], gravity_implicit=True)
    Rw, pw, Vw = world_arrays(model, kin)
    nb, n = model.nb, model.ndof
    bpair = np.zeros((nb, 2), dtype=np.int64)
    bK, bD = np.zeros((nb, 6, 6)), np.zeros((nb, 6, 6))
    zn = np.zeros(n)
    k, _ = eval_forces(prog.hdr, prog.fi, prog.ff, Rw, pw, Vw, kin.q, kin.qd, True, np.zeros((nb, 6)), bpair, bK, bD,
                       zn.copy(), zn.copy(), zn.copy(), np.zeros(NE), np.zeros(prog.nscratch),
                       np.zeros((1, 2), np.int64), np.zeros((1, PAIR_FLOATS)), False)
    assert not np.any(bD[:k])  # gravity has no damping
    t = ForceTerms(nb, n)
    t.Km = fc.BlockSparse(nb, bpair[:k], bK[:k])
    K = t.dense(kin, "body")["Km"]
    nm = 6 * nb
    K_fd = np.zeros((nm, nm))
    g = np.zeros(nm)
    for b in range(nb):
        for c in range(6):
            e = np.zeros(6)
            e[c] = H
            kp, km = _perturbed(kin, b, e), _perturbed(kin, b, -e)
            K_fd[:, 6 * b + c] = (gravity_wrenches(model, kp) - gravity_wrenches(model, km)).reshape(-1) / (2 * H)
            Vp = -np.sum(model.mass * (kp.E_wb[:, :3, 3] @ model.gravity))
            Vm = -np.sum(model.mass * (km.E_wb[:, :3, 3] @ model.gravity))
            g[6 * b + c] = (Vp - Vm) / (2 * H)
    assert rel(K, K_fd) < FD_REL
    assert rel(gravity_wrenches(model, kin).reshape(-1), -g) < FD_REL


def _terms(model, force, kin):
    t = ForceTerms(model.nb, model.ndof)
    t.add(force, force.evaluate(model, kin, 0.0))
    return t


REDUCED = {
    "nonlinear_spring": lambda: fc.NonlinearJointSpring("b1", lambda e: -4.0 * e - 2.0 * e**3,
                                                        lambda e: np.diag(-4.0 - 6.0 * e**2),
                                                        potential=lambda e: float(np.sum(2.0 * e**2 + 0.5 * e**4)),
                                                        rest=None),
    "limit_upper": lambda: fc.JointLimit("b1", -10.0, -3.0, stiffness=100.0, damping=3.0),
    "limit_lower": lambda: fc.JointLimit("b1", 3.0, 10.0, stiffness=100.0, damping=3.0),
}


@pytest.mark.parametrize("key", list(REDUCED))
def test_reduced_force_K_D_and_potential(key):
    model, force, kin = _model_with(REDUCED[key](), 5)
    q, qd = kin.q.copy(), kin.qd.copy()
    if key == "nonlinear_spring":
        q[force.dofs] += 0.4  # away from rest

    js = model.jstate0

    def fr(qq, vv):
        return _terms(model, force, kinematics(model, qq, vv, js)).fr

    t = _terms(model, force, kinematics(model, q, qd, js))
    assert np.abs(t.fr).max() > 0
    n = model.ndof
    K_fd = np.zeros((n, n))
    D_fd = np.zeros((n, n))
    gV = np.zeros(n)
    for k in range(n):
        e = np.zeros(n)
        e[k] = H
        K_fd[:, k] = (fr(q + e, qd) - fr(q - e, qd)) / (2 * H)
        D_fd[:, k] = -(fr(q, qd + e) - fr(q, qd - e)) / (2 * H)
        Vp = force.energy(model, kinematics(model, q + e, qd, js))
        gV[k] = (Vp - force.energy(model, kinematics(model, q - e, qd, js))) / (2 * H)
    assert rel(t.Kr.dense(), K_fd) < FD_REL
    if key.startswith("limit"):
        assert rel(t.Dr.dense(), D_fd) < FD_REL
        assert rel(fr(q, np.zeros(n)), -gV) < FD_REL
    else:
        assert rel(t.fr, -gV) < FD_REL


@pytest.mark.parametrize("which", ["body_damping", "joint_spring", "joint_damping"])
def test_builtin_linear_forces_K_D_and_potential(which):
    """The model's own linear forces: body damping (D over twists), joint springs (K over q, f = -dV/dq
    about the rest position) and joint damping (D over qd), against central differences."""
    rng = np.random.default_rng(11)
    model = random_model(rng, n=5, topology="random", joints="mixed", damping=True, stiffness=True)
    force = {"body_damping": fc.BodyDamping, "joint_spring": fc.JointSpring, "joint_damping": fc.JointDamping}[which]()
    q, qd = random_state(rng, model)
    js = model.jstate0
    kin = kinematics(model, q, qd, js)

    def terms(k):
        return _terms(model, force, k)

    t = terms(kin)
    if which == "body_damping":
        assert np.abs(t.fm).max() > 0 and not len(t.Km.pairs)
        D_fd = np.zeros((6 * model.nb, 6 * model.nb))
        for b in range(model.nb):
            for c in range(6):
                phi = kin.phi.copy()
                phi[b, c] += H
                fp = terms(_with_phi(kin, phi)).fm_body(kin)
                phi[b, c] -= 2 * H
                D_fd[:, 6 * b + c] = -(fp - terms(_with_phi(kin, phi)).fm_body(kin)).reshape(-1) / (2 * H)
        assert rel(t.dense(kin, "body")["Dm"], D_fd) < FD_REL
        # pure linear damping: f + D V, what the step puts on the right, vanishes (to rounding)
        assert np.abs(t.rhs(kin)[0]).max() < 1e-13 * np.abs(t.fm).max()
        return
    assert np.abs(t.fr).max() > 0
    n = model.ndof
    M_fd = np.zeros((n, n))
    gV = np.zeros(n)
    for k in range(n):
        e = np.zeros(n)
        e[k] = H
        if which == "joint_spring":
            M_fd[:, k] = (terms(kinematics(model, q + e, qd, js)).fr - terms(kinematics(model, q - e, qd, js)).fr
                          ) / (2 * H)
            gV[k] = (force.energy(model, kinematics(model, q + e, qd, js))
                     - force.energy(model, kinematics(model, q - e, qd, js))) / (2 * H)
        else:
            M_fd[:, k] = -(terms(kinematics(model, q, qd + e, js)).fr - terms(kinematics(model, q, qd - e, js)).fr
                           ) / (2 * H)
    if which == "joint_spring":
        assert rel(t.Kr.dense(), M_fd) < FD_REL and not np.any(t.Dr.dense())
        assert rel(t.fr, -gV) < FD_REL
    else:
        assert rel(t.Dr.dense(), M_fd) < FD_REL and not np.any(t.Kr.dense())
