"""Joint kernels: S = unbracket(Q^-1 dQ/dq) and Sdot = dS/dt by finite differences and complex step,
near singular points, and re-parameterisations that preserve the rotation and the angular velocity."""

import numpy as np
import pytest

import redmax as rm
from redmax import spatial as sp
from redmax.errors import ModelError
from redmax.joints import (
    CHARTS,
    Composite,
    Free3D,
    Planar,
    Prismatic,
    Revolute,
    SphericalEuler,
    SphericalExp,
    SplineCurve,
    SplineSurface,
    euler_angles,
)
from redmax.joints.dispatch import joint_calc, joint_event, joint_reparam
from redmax.testing.models import all_joint_kinds, spline_frames, spline_grid

from tolerances import CS_REL, CS_STEP, FD_REL, FD_STEP, ROUNDOFF

rng = np.random.default_rng(7)
JOINTS = all_joint_kinds(np.random.default_rng(3))


def calc(j, q, qd, js=None):
    p = j.params("test joint")
    js = j.jstate() if js is None else js
    dt = np.result_type(q, qd)
    Q = np.zeros((4, 4), dtype=dt)
    S = np.zeros((6, j.nq), dtype=dt)
    Sd = np.zeros((6, j.nq), dtype=dt)
    joint_calc(j.code, p, np.ascontiguousarray(q, dtype=dt), np.ascontiguousarray(qd, dtype=dt), js, Q, S, Sd)
    return Q, S, Sd


def unbracket(M):
    return np.concatenate([sp.unskew(M[:3, :3]), M[:3, 3]])


def fd_S(j, q, qd, js=None):
    n = j.nq
    Q = calc(j, q, qd, js)[0]
    S = np.zeros((6, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = FD_STEP
        dQ = (calc(j, q + e, qd, js)[0] - calc(j, q - e, qd, js)[0]) / (2 * FD_STEP)
        S[:, k] = unbracket(np.linalg.inv(Q) @ dQ)
    Sdot = (calc(j, q + FD_STEP * qd, qd, js)[1] - calc(j, q - FD_STEP * qd, qd, js)[1]) / (2 * FD_STEP)
    return S, Sdot


def rel_err(a, b):
    return np.abs(a - b).max(initial=0.0) / max(1.0, np.abs(b).max(initial=0.0))


def sample_q(j, rng):
    n = j.nq
    q = rng.normal(size=n)
    if j.kind == "spline_surface":
        q = rng.uniform(0.05, 0.95, n)
    return q, rng.normal(size=n)


@pytest.mark.parametrize("joint", JOINTS, ids=[f"{j.kind}{k}" for k, j in enumerate(JOINTS)])
def test_S_and_Sdot_finite_differences(joint):
    for _ in range(4):
        q, qd = sample_q(joint, rng)
        Q, S, Sd = calc(joint, q, qd)
        assert np.abs(Q[:3, :3].T @ Q[:3, :3] - np.eye(3)).max() < 1e-13
        if joint.nq == 0:
            assert np.array_equal(Q, np.eye(4))
        S_fd, Sd_fd = fd_S(joint, q, qd)
        assert rel_err(S, S_fd) < FD_REL
        assert rel_err(Sd, Sd_fd) < FD_REL


@pytest.mark.parametrize("joint", JOINTS, ids=[f"{j.kind}{k}" for k, j in enumerate(JOINTS)])
def test_S_and_Sdot_complex_step(joint):
    """Complex step through the kernels: Q^-1 dQ/dq_k and dS/dt to machine precision."""
    q, qd = sample_q(joint, rng)
    Q, S, Sd = calc(joint, q, qd)
    n = joint.nq
    for k in range(n):
        qc = q.astype(complex)
        qc[k] += 1j * CS_STEP
        dQ = calc(joint, qc, qd.astype(complex))[0].imag / CS_STEP
        assert rel_err(unbracket(np.linalg.inv(Q) @ dQ), S[:, k]) < CS_REL
    qc = q + 1j * CS_STEP * qd
    dS = calc(joint, qc, qd.astype(complex))[1].imag / CS_STEP
    assert rel_err(dS, Sd) < CS_REL


@pytest.mark.parametrize("radius", [0.0, 1e-12, 1e-6, 1e-3, 0.4999, 0.5001, 1.0, np.pi, 1.49 * np.pi, 1.9 * np.pi])
def test_spherical_exp_near_singular_points(radius):
    """Exponential coordinates: series branch near 0, closed form elsewhere, up to close to 2 pi."""
    j = SphericalExp()
    n = rng.normal(size=3)
    q = radius * n / np.linalg.norm(n)
    qd = rng.normal(size=3)
    Q, S, Sd = calc(j, q, qd)
    assert np.abs(Q[:3, :3] - sp.exp_so3(q)).max() < 1e-14
    S_fd, Sd_fd = fd_S(j, q, qd)
    assert rel_err(S, S_fd) < FD_REL
    assert rel_err(Sd, Sd_fd) < FD_REL
    if radius == 0.0:
        assert np.abs(S[:3] - np.eye(3)).max() == 0.0


@pytest.mark.parametrize("chart", CHARTS)
def test_euler_charts_near_gimbal_lock(chart):
    """S and Sdot stay correct approaching the singular q2 of each chart (det S -> 0)."""
    j = SphericalEuler(chart)
    proper = chart[0] == chart[2]
    for q2 in ([1e-3, 0.05, np.pi - 0.05] if proper else [np.pi / 2 - 1e-3, -np.pi / 2 + 0.05]):
        q = np.array([rng.normal(), q2, rng.normal()])
        qd = rng.normal(size=3)
        _, S, Sd = calc(j, q, qd)
        S_fd, Sd_fd = fd_S(j, q, qd)
        assert rel_err(S, S_fd) < FD_REL
        assert rel_err(Sd, Sd_fd) < FD_REL
        assert abs(np.linalg.det(S[:3])) == pytest.approx(abs(np.sin(q2) if proper else np.cos(q2)), abs=1e-12)


@pytest.mark.parametrize("chart", CHARTS)
def test_euler_angles_round_trip(chart):
    for _ in range(5):
        R = sp.exp_so3(rng.normal(size=3))
        q = euler_angles(chart, R)
        Q = calc(SphericalEuler(chart), q, np.zeros(3))[0]
        assert np.abs(Q[:3, :3] - R).max() < 1e-13


def _world_omega(Q, S, qd):
    return Q[:3, :3] @ (S[:3] @ qd)


def test_spherical_exp_reparameterisation_preserves_rotation_and_angular_velocity():
    j = SphericalExp()
    for _ in range(20):
        n = rng.normal(size=3)
        q = (1.5 * np.pi + rng.uniform(1e-6, 0.4 * np.pi)) * n / np.linalg.norm(n)
        qd = rng.normal(size=3) * 3
        Q0, S0, _ = calc(j, q, qd)
        q1, qd1 = q.copy(), qd.copy()
        _, changed = joint_reparam(j.code, j.params("j"), q1, qd1, 0, 0.0)
        assert changed
        assert np.linalg.norm(q1) < 0.5 * np.pi + 1e-12
        Q1, S1, _ = calc(j, q1, qd1)
        assert np.abs(Q1 - Q0).max() < ROUNDOFF
        assert np.abs(_world_omega(Q1, S1, qd1) - _world_omega(Q0, S0, qd)).max() < ROUNDOFF * max(1, np.abs(qd).max())
    # strictly above 1.5 pi only
    q = np.array([1.5 * np.pi, 0.0, 0.0])
    assert not joint_reparam(j.code, j.params("j"), q, np.ones(3), 0, 0.0)[1]
    assert joint_event(j.code, j.params("j"), np.array([1.4 * np.pi, 0, 0]), 0) > 0
    assert joint_event(j.code, j.params("j"), np.array([1.6 * np.pi, 0, 0]), 0) < 0


@pytest.mark.parametrize("chart", CHARTS)
def test_euler_chart_switch_preserves_rotation_and_angular_velocity(chart):
    j = SphericalEuler(chart)
    proper = chart[0] == chart[2]
    c0 = CHARTS.index(chart)
    for q2 in ([0.2, np.pi - 0.3] if proper else [np.pi / 2 - 0.2, -np.pi / 2 + 0.3]):
        q = np.array([rng.normal(), q2, rng.normal()])
        qd = rng.normal(size=3)
        Q0, S0, _ = calc(j, q, qd, c0)
        assert joint_event(j.code, j.params("j"), q, c0) < 0
        q1, qd1 = q.copy(), qd.copy()
        js, changed = joint_reparam(j.code, j.params("j"), q1, qd1, c0, 0.0)
        assert changed and js != c0
        Q1, S1, _ = calc(j, q1, qd1, js)
        assert abs(np.linalg.det(S1[:3])) >= np.sqrt(2 / 3) - 1e-12
        assert np.abs(Q1 - Q0).max() < ROUNDOFF
        assert np.abs(_world_omega(Q1, S1, qd1) - _world_omega(Q0, S0, qd)).max() < ROUNDOFF * max(1, np.abs(qd).max())
        assert joint_event(j.code, j.params("j"), q1, js) > 0


def test_free3d_euler_switches_inside_composite():
    j = Free3D("euler", "XYZ")
    q = np.array([1.0, 2.0, 3.0, 0.3, np.pi / 2 - 0.1, -0.4])
    qd = rng.normal(size=6)
    Q0, S0, _ = calc(j, q, qd)
    V0 = S0 @ qd
    q1, qd1 = q.copy(), qd.copy()
    js, changed = joint_reparam(j.code, j.params("j"), q1, qd1, j.jstate(), 0.0)
    assert changed and (js >> 4) & 15 != CHARTS.index("XYZ")
    Q1, S1, _ = calc(j, q1, qd1, js)
    assert np.abs(Q1 - Q0).max() < ROUNDOFF
    assert np.abs(S1 @ qd1 - V0).max() < 1e-11
    assert np.abs(q1[:3] - q[:3]).max() == 0.0


def test_spline_curve_wraps_and_is_smooth():
    j = SplineCurve(spline_frames())
    n = 4
    for u in [0.0, 0.3, 1.7, 3.999]:
        Qa = calc(j, np.array([u]), np.zeros(1))[0]
        Qb = calc(j, np.array([u + n]), np.zeros(1))[0]
        Qc = calc(j, np.array([u - 2 * n]), np.zeros(1))[0]
        assert np.abs(Qa - Qb).max() < 1e-11 and np.abs(Qa - Qc).max() < 1e-11
    # C2 continuity across a knot: Q, S and dS/dq agree from both sides
    for knot in [1.0, 2.0, 4.0]:
        a = calc(j, np.array([knot - 1e-9]), np.ones(1))
        b = calc(j, np.array([knot + 1e-9]), np.ones(1))
        for x, y in zip(a, b, strict=True):
            assert np.abs(x - y).max() < 1e-6


def test_spline_curve_matches_definition():
    """Q = C_{k+1} prod_{i=2..4} exp(dC_{k+i} Btilde_i(u)), dC_i = log(C_{i-1}^-1 C_i) cyclically
    (Lee & Terzopoulos; Sueda notes Eqs. 2.68-2.73), built here with SciPy's expm and logm."""
    from scipy.linalg import expm, logm

    C = spline_frames()
    n = len(C)
    j = SplineCurve(C)
    B = np.array([[1, -3, 3, -1], [4, 0, -6, 3], [1, 3, 3, -3], [0, 0, 0, 1]]) / 6.0
    # 0-based: dC[i] = log(C[i-1]^-1 C[i]) as a 4x4 matrix (the index wraps: dC[0] uses C[n-1])
    dC = [np.real(logm(np.linalg.inv(C[i - 1]) @ C[i])) for i in range(n)]
    for q in [0.0, 0.3, 1.5, 2.9, 3.7, -0.4, 5.2]:
        k = int(np.floor(q))
        u = q - k
        b = B @ np.array([1.0, u, u * u, u**3])
        Bt = [b[i:].sum() for i in range(4)]  # cumulative basis Btilde_1..4
        E = C[k % n].copy()  # C_{k+1} (1-based)
        for i in (2, 3, 4):  # dC_{k+i} (1-based) = dC[(k + i - 1) % n]
            E = E @ expm(dC[(k + i - 1) % n] * Bt[i - 1])
        assert np.abs(calc(j, np.array([q]), np.zeros(1))[0] - E).max() < 1e-11, q


def test_spline_surface_matches_definition():
    """Q equals the product of the six exponentials of the tensor-product fields (first index with q2)."""
    g = spline_grid()
    j = SplineSurface(g)
    q = np.array([0.3, 0.8])
    B = np.array([[1, -3, 3, -1], [4, 0, -6, 3], [1, 3, 3, -3], [0, 0, 0, 1]]) / 6.0

    def basis(u):
        return B @ np.array([1, u, u * u, u**3])

    E = np.eye(4)
    for k in range(6):
        f = basis(q[1]) @ g[k] @ basis(q[0])
        tw = np.zeros(6)
        tw[3 + k if k < 3 else k - 3] = f
        E = E @ sp.exp_se3(tw)
    assert np.abs(calc(j, q, np.zeros(2))[0] - E).max() < 1e-12


def test_composite_of_two_equals_chained_joints():
    """Composite(revolute, prismatic) has Q = Q1 Q2 and twist Ad(Q2^-1) S1 qd1 + S2 qd2 (supplemental Eq. 45)."""
    r, p = Revolute((0.2, 0.5, 1.0)), Prismatic((1.0, -1.0, 0.3))
    c = Composite(r, p)
    q, qd = rng.normal(size=2), rng.normal(size=2)
    Q1, S1, _ = calc(r, q[:1], qd[:1])
    Q2, S2, _ = calc(p, q[1:], qd[1:])
    Q, S, _ = calc(c, q, qd)
    assert np.abs(Q - Q1 @ Q2).max() < ROUNDOFF
    assert np.abs(S @ qd - (sp.Ad(np.linalg.inv(Q2)) @ S1 @ qd[:1] + S2 @ qd[1:])).max() < ROUNDOFF


@pytest.mark.parametrize(
    "make",
    [lambda: Revolute((0, 0, 0)), lambda: Prismatic((np.nan, 0, 1)), lambda: Planar((1, 0, 0), (2, 0, 0)),
     lambda: SphericalEuler("XXY"), lambda: SplineCurve(spline_frames()[:3]),
     lambda: SplineSurface(np.zeros((6, 3, 4)))],
)
def test_bad_joint_parameters_raise(make):
    with pytest.raises(ModelError, match="elbow"):
        make().params("joint 'elbow'")


def test_reparameterize_skips_only_what_the_kernels_would_leave():
    """``redmax.configuration.reparameterize`` decides in Python that a spherical joint in exponential coordinates,
    or a free joint's rotation vector, stays as it is (so that its compiled dispatch is not compiled for nothing):
    on angles on both sides of the trigger 1.5 pi - margin, also within round-off of it, and on non-finite values,
    its results equal those of the kernels called for every joint."""
    from redmax.configuration import reparameterize
    from redmax.joints.spherical_exp import REPARAM_RADIUS

    b = rm.ModelBuilder("free and ball", gravity=(0, 0, -9.81))
    b.add_body("base", rm.Cuboid(0.3, 0.2, 0.1), Free3D())
    b.add_body("ball", rm.Sphere(0.05), SphericalExp(), parent="base", joint_placement=sp.trans(0.2, 0, 0))
    b.add_body("arm", rm.Cuboid(0.2, 0.02, 0.02), Revolute((0, 1, 0)), parent="ball")
    m = b.build()
    g = np.random.default_rng(5)
    radii = [0.0, 1.0, REPARAM_RADIUS - 0.2, REPARAM_RADIUS * (1 - 1e-13), REPARAM_RADIUS, REPARAM_RADIUS * (1 + 1e-15),
             REPARAM_RADIUS + 1e-9, REPARAM_RADIUS + 0.05, 1.9 * np.pi, np.nan, np.inf]
    seen = set()
    for r1 in radii:
        for r2 in radii[::2]:
            for margin in (0.0, 0.1):
                q = g.normal(size=m.ndof)
                for a, r in ((3, r1), (6, r2)):  # the base's rotation vector, the ball joint
                    d = g.normal(size=3)
                    q[a:a + 3] = r * d / np.linalg.norm(d)
                qd = g.normal(size=m.ndof)
                q1, qd1, js1 = q.copy(), qd.copy(), m.jstate0.copy()
                ch1 = reparameterize(m, q1, qd1, js1, margin)
                q2, qd2, js2, ch2 = q.copy(), qd.copy(), m.jstate0.copy(), False
                for i in m.reparam_joints:
                    s = slice(m.idx[i], m.idx[i + 1])
                    js, ch = joint_reparam(m.jtype[i], m.jparam[m.jp_off[i]:m.jp_off[i + 1]], q2[s], qd2[s],
                                           int(js2[i]), margin)
                    if ch:
                        js2[i], ch2 = js, True
                np.testing.assert_array_equal(q1, q2)
                np.testing.assert_array_equal(qd1, qd2)
                np.testing.assert_array_equal(js1, js2)
                assert ch1 == ch2
                seen.add(ch1)
    assert seen == {False, True}


def test_loading_a_floating_base_robot_compiles_no_reparameterisation(tmp_path):
    """A robot file's floating base at its initial state needs no re-parameterisation: load_urdf (which checks
    M(q0) after re-parameterising) never calls the compiled re-parameterisation (a fresh process)."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import redmax as rm
        from redmax.joints.dispatch import joint_reparam
        m = rm.load_urdf(rm.robot_path("ur5"), floating_base=True)
        assert m.reparam_joints.size == 1, m.reparam_joints
        print(len(joint_reparam.signatures))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "0"
