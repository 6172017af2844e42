"""Hyper-reduced coordinates (RedMax paper Eqs. 8-10, notes §2.6): ``ModelBuilder.couple`` removes coordinates
from the model's DOFs; every algorithm maps through the constant T and agrees with the same model solved with
ratio rows."""

import numpy as np
import pytest

import redmax as rm
from redmax import constraints as cs
from redmax.errors import ModelError
from redmax.spatial import trans

from tolerances import COUPLING_REL, IDENTITY_REL, rel


def _finger(coupled: bool, ratio_rows: bool = False, gravity=(0, 0, -980.0)):
    b = rm.ModelBuilder("finger", gravity)
    b.add_body("palm", rm.Cuboid(4, 4, 1), rm.Universal(), joint_name="wrist", q=[0.2, -0.1], qd=[0.5, 0.3])
    b.add_body("p1", rm.Cuboid(1, 1, 4), rm.Revolute((0, 1, 0)), parent="palm", joint_name="mcp",
               joint_placement=trans(2, 0, 0), body_placement=trans(0, 0, -2), q=[0.3])
    b.add_body("p2", rm.Cuboid(1, 1, 3), rm.Revolute((0, 1, 0)), parent="p1", joint_name="pip",
               joint_placement=trans(0, 0, -4), body_placement=trans(0, 0, -1.5), q=[0.4], qd=[1.0])
    b.add_body("p3", rm.Cuboid(1, 1, 2), rm.Revolute((0, 1, 0)), parent="p2", joint_name="dip",
               joint_placement=trans(0, 0, -3), body_placement=trans(0, 0, -1), q=[0.2], qd=[0.5],
               stiffness=50.0, joint_damping=2.0)
    b.add_body("side", rm.Cuboid(1, 1, 3), rm.Revolute((1, 0, 0)), parent="palm", joint_name="side",
               joint_placement=trans(-2, 0, 0), body_placement=trans(0, 0, -1.5))
    if coupled:
        b.couple("dip", "pip", 0.5)
    if ratio_rows:
        b.add_constraint(cs.JointRatio(["pip", "dip"], 0.5, name="dip_pip"))
    return b.build()


def test_couple_removes_the_dependent_dofs():
    m = _finger(True)
    assert m.ndof == 5 and m.ncoord == 6
    assert m.dof_names == ("wrist.x", "wrist.y", "mcp", "pip", "side")
    assert m.dofs.coord_names == ("wrist.x", "wrist.y", "mcp", "pip", "dip", "side")
    assert m.q0.shape == (5,)
    qj = m.dofs.expand(m.q0)
    assert qj[4] == 0.5 * qj[3]  # the dependent joint's own q (0.2) is replaced by the map
    assert "coupling: joint 'dip' = 0.5 * joint 'pip'" in m.describe()


def test_coupled_algorithms_are_the_full_ones_mapped_through_T():
    m = _finger(True)
    full = m.coordinate_model
    T = m.dofs.T
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.normal(size=m.ndof), rng.normal(size=m.ndof), rng.normal(size=m.ndof)
    qj, qdj, qddj = m.dofs.expand(q), T @ qd, T @ qdd
    assert rel(rm.rnea(m, q, qd, qdd), T.T @ rm.rnea(full, qj, qdj, qddj)) < IDENTITY_REL
    M = rm.crba(m, q)
    assert rel(M, T.T @ rm.crba(full, qj) @ T) < IDENTITY_REL
    assert np.all(np.linalg.eigvalsh(M) > 0)
    assert rel(rm.minv(m, q) @ M, np.eye(m.ndof), 1.0) < IDENTITY_REL
    tau = rm.rnea(m, q, qd, qdd)
    assert rel(rm.aba(m, q, qd, tau), qdd) < IDENTITY_REL  # ABA o RNEA = id on the DOFs
    assert rel(rm.redmax_accelerations(m, q, qd, 0.0, forces=[], tau=tau), qdd) < IDENTITY_REL  # no springs
    assert rel(rm.redmax_mass_matrix(m, q), M) < IDENTITY_REL
    J, _ = rm.jacobian(m, q, qd)
    Jf, _ = rm.jacobian(full, qj, qdj)
    assert rel(J, Jf @ T) < IDENTITY_REL
    assert rm.energies(m, q, qd)["kinetic"] == pytest.approx(0.5 * qd @ M @ qd, rel=1e-12)
    pres = np.array([False, True, False, False, False])  # mcp prescribed
    a, t = rm.hybrid_dynamics(m, q, qd, tau, qdd, pres)
    assert rel(a, qdd) < IDENTITY_REL and rel(t, tau) < IDENTITY_REL
    Y = rm.minv_product(m, q, tau)
    assert rel(M @ Y, tau) < IDENTITY_REL


@pytest.mark.parametrize("integrator", ["euler", "dop853"])
def test_coupling_agrees_with_the_same_model_solved_with_ratio_rows(integrator):
    kw = {"rtol": 1e-10, "atol": 1e-10} if integrator == "dop853" else {}
    a = rm.simulate(_finger(True), integrator=integrator, dt=1e-2, duration=1.0, **kw)
    mb = _finger(False, ratio_rows=True)
    b = rm.simulate(mb, integrator=integrator, dt=1e-2, duration=1.0, **kw)
    keep = [mb.dof_names.index(n) for n in _finger(True).dof_names]
    tol = COUPLING_REL if integrator == "euler" else 1e-7
    assert rel(a.q, b.q[:, keep]) < tol
    assert rel(a.energy["total"], b.energy["total"]) < tol
    assert a.q.shape[1] == 5


def test_compiled_python_and_simulator_paths_agree_on_a_coupled_model():
    m = _finger(True)
    a = rm.simulate(m, dt=1e-2, duration=0.5)
    assert a.meta["compiled"]
    b = rm.simulate(m, dt=1e-2, duration=0.5, constraint_solver="qp")  # the Python stages
    assert not b.meta["compiled"]
    assert rel(a.q, b.q) < COUPLING_REL
    sim = rm.Simulator(m, dt=1e-2)
    for _ in range(50):
        sim.step()
    assert rel(sim.q, a.q[-1]) < COUPLING_REL and sim.q.shape == (5,)
    st = rm.euler_step(m, m.initial_state(), 1e-2)
    assert rel(st.q, a.q[1]) < COUPLING_REL


def test_coupling_errors_name_the_joint():
    b = rm.ModelBuilder("bad", (0, 0, -9.81))
    b.add_body("a", rm.Cuboid(1, 1, 1), rm.Revolute((0, 1, 0)), joint_name="ja")
    b.add_body("s", rm.Cuboid(1, 1, 1), rm.SphericalExp(), parent="a", joint_name="js")
    b.add_body("c", rm.Cuboid(1, 1, 1), rm.Revolute((1, 0, 0)), parent="s", joint_name="jc")
    for dep, on, msg in ((r"js", "ja", r"couplings\[0\]: joint 'js': a spherical_exp joint re-parameterises"),
                         ("jc", "nope", r"couplings\[0\]: joint 'nope': no such joint"),
                         ("jc", "jc", "cannot be coupled to itself")):
        bb = rm.ModelBuilder("bad", (0, 0, -9.81))
        bb._bodies = list(b._bodies)
        with pytest.raises(ModelError, match=msg):
            bb.couple(dep, on, 0.5)
            bb.build()
    bb = rm.ModelBuilder("cycle", (0, 0, -9.81))
    bb._bodies = list(b._bodies)
    bb.couple("jc", "ja", 1.0)
    bb.couple("ja", "jc", 1.0)
    with pytest.raises(ModelError, match=r"couplings\[0\]: joint 'jc': coupling cycle through joint 'jc'"):
        bb.build()
    bb.couple("jc", "ja", 2.0)
    with pytest.raises(ModelError, match=r"couplings\[2\]: joint 'jc': coupled twice \(first in couplings\[0\]\)"):
        bb.build()


URDF_MIMIC = """<?xml version="1.0"?>
<robot name="gripper">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <link name="left"><inertial><origin xyz="0 0 0.05"/><mass value="0.1"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.0005" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="right"><inertial><origin xyz="0 0 0.05"/><mass value="0.1"/>
    <inertia ixx="0.001" iyy="0.001" izz="0.0005" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="finger_left" type="revolute"><parent link="base"/><child link="left"/>
    <origin xyz="0.02 0 0.1"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="finger_right" type="revolute"><parent link="base"/><child link="right"/>
    <origin xyz="-0.02 0 0.1"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
    <mimic joint="finger_left" multiplier="-1" offset="0.1"/></joint>
</robot>
"""


def test_urdf_mimic_joints_become_couplings(tmp_path):
    from redmax.io.urdf_mimic import couple_mimic_joints, load_urdf_with_mimic, mimic_records

    path = tmp_path / "gripper.urdf"
    path.write_text(URDF_MIMIC)
    assert mimic_records(path) == [{"joint": "finger_right", "mimic": "finger_left", "multiplier": -1.0,
                                    "offset": 0.1}]
    model = rm.load_urdf(path, floating_base=True)  # the loader of issue 11 records meta["mimic"] itself
    model.meta.setdefault("mimic", mimic_records(path))
    m = couple_mimic_joints(model)
    assert m.ndof == model.ndof - 1 and "finger_right" not in m.dof_names
    r = rm.simulate(m, dt=1e-3, duration=0.2)
    qj = np.array([m.dofs.expand(q) for q in r.q])
    i, j = m.dofs.coord_names.index("finger_left"), m.dofs.coord_names.index("finger_right")
    assert np.abs(qj[:, j] - (-qj[:, i] + 0.1)).max() < 1e-14
    m2 = load_urdf_with_mimic(path, floating_base=True)
    assert m2.dof_names == m.dof_names


def test_load_urdf_mimic_option_agrees_with_pinocchios_mimic_models(tmp_path):
    """``load_urdf(path, mimic=True)`` couples every <mimic> joint (no independence warning) and equals Pinocchio's
    ``buildModelFromUrdf(path, mimic=True)`` (rnea, crba, aba) on robot files with mimic grippers; the default stays
    Pinocchio's default (independent joints, with a warning)."""
    import warnings

    pin = pytest.importorskip("pinocchio")
    import pybullet_data

    from redmax.testing.robots import robot_urdf

    path = tmp_path / "gripper.urdf"
    path.write_text(URDF_MIMIC)
    with pytest.warns(rm.RedmaxWarning, match="mimic=True"):
        independent = rm.load_urdf(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rm.RedmaxWarning)  # coupled: nothing to warn about
        coupled = rm.load_urdf(path, mimic=True)
    assert coupled.ndof == independent.ndof - 1 and "finger_right" not in coupled.dof_names
    rng = np.random.default_rng(4)
    for f in (robot_urdf("panda"), f"{pybullet_data.getDataPath()}/xarm/xarm6_with_gripper.urdf"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rm.RedmaxWarning)  # xarm's inertias break the triangle inequality
            full, m = rm.load_urdf(f), rm.load_urdf(f, mimic=True)
        pm = pin.buildModelFromUrdf(f, mimic=True)
        pd = pm.createData()
        assert m.ndof == pm.nv < full.ndof
        idx = {pm.names[i]: pm.joints[i].idx_v for i in range(1, pm.njoints) if pm.joints[i].nv > 0}
        perm = [idx[n] for n in m.dof_names]
        q, qd, qdd = rng.uniform(-0.5, 0.5, (3, m.ndof))
        qp, vp, ap = (np.zeros(pm.nv) for _ in range(3))
        qp[perm], vp[perm], ap[perm] = q, qd, qdd
        tau_p = pin.rnea(pm, pd, qp, vp, ap)[perm]
        Mp = pin.crba(pm, pd, qp)
        Mp = (np.triu(Mp) + np.triu(Mp, 1).T)[np.ix_(perm, perm)]
        assert rel(rm.rnea(m, q, qd, qdd), tau_p) < 1e-12
        assert rel(rm.crba(m, q), Mp) < 1e-12
        assert rel(rm.aba(m, q, qd, tau_p), qdd) < 1e-10
