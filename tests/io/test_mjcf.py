"""MJCF import through MuJoCo's compiler, checked against MuJoCo on the dm-control suite models: mass matrix
(``mj_fullM``), bias forces (``qfrc_bias``) and accelerations with contacts, constraints and actuators off agree to
1e-9 relative; joint names, ``qpos0``, ``ref``, armature, multi-joint bodies, gravity flags; joint and fixed-tendon
equalities as Linear rows whose value is MuJoCo's residual; models that cannot map decline with a ModelError naming
what."""

import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
import redmax as rm  # noqa: E402
from redmax.testing.mujoco_bridge import compare_with_mujoco, qpos_from_q  # noqa: E402

from tolerances import CROSS_REL  # noqa: E402

TOL = CROSS_REL


def _suite_dir():
    suite = pytest.importorskip("dm_control.suite")
    return os.path.dirname(suite.__file__)


# suite files that decline (a tendon acting on the dynamics), with the reason; manipulator, quadruped and stacker
# carry fixed-tendon equalities, which load as Linear constraint rows
DECLINE = {"fish.xml": r"tendon '.*': stiffness"}
SUITE = ["acrobot.xml", "ball_in_cup.xml", "cartpole.xml", "cheetah.xml", "dog.xml", "finger.xml", "fish.xml",
         "hopper.xml", "humanoid.xml", "humanoid_CMU.xml", "lqr.xml", "manipulator.xml", "pendulum.xml",
         "point_mass.xml", "quadruped.xml", "reacher.xml", "stacker.xml", "swimmer.xml", "walker.xml"]


@pytest.mark.parametrize("name", SUITE)
def test_suite_model_agrees_with_mujoco(name):
    path = os.path.join(_suite_dir(), name)
    if name in DECLINE:
        with pytest.raises(rm.ModelError, match=rf"{name}: .*{DECLINE[name]}"):
            rm.load_mjcf(path)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rm.RedmaxWarning)
        model = rm.load_mjcf(path)
    m = mujoco.MjModel.from_xml_path(path)
    assert model.ndof == m.nv
    worst = compare_with_mujoco(model, m, np.random.default_rng(3), states=2)
    assert max(worst.values()) < TOL, worst
    # each hinge/slide DOF is named by its MuJoCo joint; q0 is qpos0 there
    for j in range(m.njnt):
        if m.jnt_type[j] in (2, 3):
            jn = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
            k = model.dof_names.index(jn)
            assert k == m.jnt_dofadr[j] and model.q0[k] == m.qpos0[m.jnt_qposadr[j]]
    if m.neq:
        _equality_rows_equal_mujocos(model, path)


def _equality_rows_equal_mujocos(model, path):
    """Every MuJoCo equality is one Linear constraint row of ours, named alike, whose value
    ``g = sum c_i q_i - value`` is MuJoCo's constraint residual ``efc_pos`` at random states (constraints on)."""
    m = mujoco.MjModel.from_xml_path(path)
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_EQUALITY, k) for k in range(m.neq)]
    assert [c.name for c in model.constraints] == names
    d = mujoco.MjData(m)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = model.q0 + rng.uniform(-0.3, 0.3, model.ndof)
        d.qpos[:] = qpos_from_q(model, m, q)
        d.qvel[:] = 0.0
        mujoco.mj_forward(m, d)
        eq = [r for r in range(d.nefc) if d.efc_type[r] == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)]
        assert len(eq) == m.neq
        for c, r in zip(model.constraints, eq, strict=True):
            g = sum(k * q[model.dof_names.index(j)] for j, k in zip(c.joints, c.coefficients, strict=True)) - c.value
            assert abs(g - d.efc_pos[r]) < 1e-12 * max(1.0, abs(d.efc_pos[r])), (c.name, g, d.efc_pos[r])


def test_joint_equality_is_a_linear_row_and_holds_in_simulation(tmp_path):
    """<equality><joint polycoef="a0 a1 0 0 0"/>: q1 - q1_0 = a0 + a1 (q2 - q2_0) as a Linear row (g equals MuJoCo's
    efc_pos), held by the Euler step; an inactive equality is skipped and listed."""
    rod = '<geom type="capsule" fromto="0 0 0 1 0 0" size=".05"/>'
    xml = (f'<body><joint name="a" axis="0 1 0" ref="0.1"/>{rod}'
           f'<body pos="1 0 0"><joint name="b" axis="0 1 0"/>{rod}</body></body>'
           '</worldbody><equality><joint joint1="b" joint2="a" polycoef="0.2 -0.5 0 0 0"/>'
           '<joint name="off" joint1="a" active="false"/></equality><worldbody>')
    path = _xml(tmp_path, xml, '<compiler angle="radian"/>')
    model = rm.load_mjcf(path)
    (c,) = model.constraints
    assert c.type == "linear" and model.meta["equalities_inactive"] == ["off"]
    assert dict(zip(c.joints, c.coefficients, strict=True)) == {"b": 1.0, "a": 0.5} and c.value == pytest.approx(0.25)
    st = rm.State(np.array([0.1, 0.2]), np.zeros(2))
    r = rm.simulate(model, st, integrator="euler", dt=1e-3, duration=0.5)
    resid = r.q[:, 1] - 0.2 + 0.5 * (r.q[:, 0] - 0.1)
    assert np.abs(resid).max() < 1e-3 and np.ptp(r.q[:, 0]) > 0.1  # it moves, on the constraint


def test_equality_kinds_that_cannot_map_are_named(tmp_path):
    two = ('<body name="p"><joint name="a"/><geom size=".1"/></body>'
           '<body name="r" pos="1 0 0"><joint name="b"/><geom size=".1"/></body>')
    for eq, pattern in (('<connect body1="p" body2="r" anchor="0 0 0"/>', r"\(connect\): connect equalities"),
                        ('<joint joint1="a" joint2="b" polycoef="0 1 0.5 0 0"/>', "is not linear")):
        with pytest.raises(rm.ModelError, match=pattern):
            rm.load_mjcf(_xml(tmp_path, two + f"</worldbody><equality>{eq}</equality><worldbody>"))


def _xml(tmp_path, body, options=""):
    p = tmp_path / "m.xml"
    p.write_text(f'<mujoco model="t">{options}<worldbody>{body}</worldbody></mujoco>')
    return str(p)


def test_ref_armature_multijoint_body_and_flags(tmp_path):
    body = ('<body name="a" pos="0 0 1" euler="0.3 0.2 0.1"><joint name="h" type="hinge" axis="0 1 0" ref="0.7" '
            'armature="0.3" damping="0.2" stiffness="4" springref="0.1" pos="0.1 0 0"/>'
            '<joint name="s" type="slide" axis="1 0 0" ref="-0.2" armature="0.1"/>'
            '<geom type="box" size=".2 .1 .05" pos=".1 .02 0" mass="2"/>'
            '<body name="b" pos="0.4 0 0"><joint name="ball" type="ball" pos="0 0.1 0"/>'
            '<geom type="capsule" fromto="0 0 0 0.3 0 0" size=".04"/></body></body>'
            '<body name="c" pos="1 0 0"><freejoint name="free"/><geom type="sphere" size=".1" pos=".05 0 0"/></body>')
    path = _xml(tmp_path, body, '<compiler angle="radian"/><option gravity="0.5 -0.3 -9"/>')
    model = rm.load_mjcf(path)
    m = mujoco.MjModel.from_xml_path(path)
    assert model.dof_names[:2] == ("h", "s") and model.body_names[:2] == ("a:h", "a")  # a chain of two joints
    assert model.q0[0] == 0.7 and model.q0[1] == -0.2  # qpos0 (ref)
    assert np.allclose(model.gravity, [0.5, -0.3, -9])
    bare = rm.load_mjcf(_xml(tmp_path, body.replace('armature="0.3" ', "").replace(' armature="0.1"', ""),
                             '<compiler angle="radian"/><option gravity="0.5 -0.3 -9"/>'))
    assert bare.armature is None and np.allclose(model.armature[:2], [0.3, 0.1])
    q = model.q0.copy()
    assert np.allclose(rm.crba(model, q) - rm.crba(bare, q), np.diag(model.armature), atol=1e-14)
    path = _xml(tmp_path, body, '<compiler angle="radian"/><option gravity="0.5 -0.3 -9"/>')
    worst = compare_with_mujoco(model, m, np.random.default_rng(0), states=3)
    assert max(worst.values()) < TOL, worst
    flags = _xml(tmp_path, body, '<compiler angle="radian"/><option><flag gravity="disable"/></option>')
    assert np.all(rm.load_mjcf(flags).gravity == 0.0)


def test_armature_in_every_algorithm_and_in_simulation(tmp_path):
    path = _xml(tmp_path, '<body><joint name="j" axis="0 1 0" armature="0.5"/><geom type="capsule" '
                          'fromto="0 0 0 0.5 0 0" size=".05"/><body pos=".5 0 0"><joint name="k" axis="0 1 0" '
                          'armature="0.2"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size=".05"/></body></body>')
    model = rm.load_mjcf(path)
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.normal(size=(3, 2))
    M = rm.crba(model, q)
    assert np.allclose(M @ rm.minv(model, q), np.eye(2), atol=1e-12)
    tau = rm.rnea(model, q, qd, qdd)
    assert np.allclose(rm.aba(model, q, qd, tau), qdd, rtol=1e-12)
    assert np.allclose(rm.redmax_mass_matrix(model, q), M, rtol=1e-12)
    assert np.allclose(rm.minv_product(model, q, tau - rm.rnea(model, q, qd, np.zeros(2))), qdd, rtol=1e-10)
    # simulation: Euler (through the stages that add the armature) conserves energy to first order, DOP853 tightly
    res = rm.simulate(model, rm.State(np.array([1.0, 0.3]), np.zeros(2)), integrator="dop853", dt=0.01,
                      duration=1.0, rtol=1e-10, atol=1e-10)
    assert np.ptp(res.energy["total"]) < 1e-6 * np.abs(res.energy["kinetic"]).max()
    eu = rm.simulate(model, rm.State(np.array([1.0, 0.3]), np.zeros(2)), integrator="euler", dt=1e-3, duration=0.2)
    assert np.allclose(eu.q[-1], res.q[20], atol=2e-2)
    with pytest.raises(rm.SimulationError, match="armature"):
        rm.Simulator(model)


@pytest.mark.parametrize("xml,pattern", [
    ('<body><joint type="ball" damping="1"/><geom size=".1"/></body>', r"joint 'joint0' \(ball\): damping"),
])
def test_unmappable_features_decline_by_name(tmp_path, xml, pattern):
    with pytest.raises(rm.ModelError, match=pattern):
        rm.load_mjcf(_xml(tmp_path, xml))


def test_bad_files(tmp_path):
    with pytest.raises(rm.ModelError, match="no such MJCF file"):
        rm.load_mjcf(tmp_path / "nope.xml")
    with pytest.raises(rm.ModelError, match="is a directory"):
        rm.load_mjcf(tmp_path)
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><joint type='hinge' axis='0 0 0'/></body></worldbody></mujoco>")
    with pytest.raises(rm.ModelError, match=r"bad\.xml: MuJoCo cannot compile it"):
        rm.load_mjcf(bad)


def test_scene_and_cli_accept_xml(tmp_path, capsys):
    from redmax.cli import main

    path = _xml(tmp_path, '<body><joint name="j" axis="0 1 0" damping="0.1"/><geom type="capsule" '
                          'fromto="0 0 0 0.5 0 0" size=".05"/></body>', '<option timestep="0.005"/>')
    s = rm.scenes.load(path)
    assert s.dt == 0.005 and s.model.dof_names == ("j",)
    assert main(["run", path, "--duration", "0.05", "--quiet"]) == 0
    assert main(["info", path]) == 0
    assert "joint 'j'" in capsys.readouterr().out
