"""Real robot files as Pinocchio reads them: a representative subset of example-robot-data and pybullet_data URDFs
(one per defect class of issue 11) loads, warns about what it should, and agrees with Pinocchio's rnea, aba and
crba to 1e-9 relative, fixed and floating base.  The full sweep over every file is benchmarks/robots_sweep.py."""

import os
import warnings

import numpy as np
import pytest

import redmax as rm
from redmax.testing.robots import pybullet_root, robots_root

pin = pytest.importorskip("pinocchio")
from redmax.testing.pinocchio_bridge import compare_with_pinocchio  # noqa: E402

from tolerances import CROSS_REL  # noqa: E402

TOL = CROSS_REL

# (root, relative path, expected warning substring or None): one file per defect class
CASES = [
    ("erd", "ur_description/urdf/ur5_robot.urdf", None),
    ("erd", "panda_description/urdf/panda.urdf", "mimic"),  # mimic joint: a warning, meta["mimic"]
    ("erd", "icub_description/robots/icub.urdf", "initial state q0 only"),  # point masses, singular at q0
    ("erd", "romeo_description/urdf/romeo_small.urdf", "triangle inequality"),
    ("erd", "tiago_description/robots/tiago.urdf", "not positive semi-definite"),
    ("erd", "hector_description/robots/quadrotor_base.urdf", None),  # only fixed joints: zero DOF when fixed
    ("pybullet", "kuka_iiwa/model.urdf", "zero mass but rotational inertia"),
    ("pybullet", "differential/diff_ring.urdf", None),  # whitespace before <?xml
    ("pybullet", "TwoJointRobot_w_fixedJoints.urdf", "triangle inequality"),
    ("pybullet", "mini_cheetah/mini_cheetah.urdf", "triangle inequality"),
    ("pybullet", "xarm/xarm6_robot.urdf", "triangle inequality"),
    ("pybullet", "cube_no_rotation.urdf", "lower 1 > upper -1"),  # reversed limits, kept in meta
    ("pybullet", "plane.urdf", None),  # no joint at all
]


# with a free root these are singular in Pinocchio too (a massless plane; a base whose first joint repeats a
# direction of the free joint and carries all the mass): refused with an error naming the joint
SINGULAR_FLOATING = {"plane.urdf": "joint 'root_joint': moves no mass",
                     "differential/diff_ring.urdf": "joint 'diff_ring_world': DOF .* is dependent",
                     "cube_no_rotation.urdf": "joint 'x_to_world': DOF .* is dependent"}


def _sym(M):
    return np.triu(M) + np.triu(M, 1).T


def _path(root, rel):
    # example-robot-data and pybullet (for pybullet_data) are test extras: a missing one is an error, not a skip
    base = robots_root() if root == "erd" else pybullet_root()
    return os.path.join(base, rel)


def _pin_model(path, floating):
    return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("root,rel,warning", CASES, ids=[c[1].split("/")[-1] for c in CASES])
def test_robot_file_loads_warns_and_agrees_with_pinocchio(root, rel, warning, floating):
    path = _path(root, rel)
    pm = _pin_model(path, floating)
    if floating and rel in SINGULAR_FLOATING:  # Pinocchio's M is singular too: refused, naming the joint
        with pytest.raises(rm.ModelError, match=SINGULAR_FLOATING[rel]):
            rm.load_urdf(path, floating_base=True)
        ev = np.linalg.eigvalsh(_sym(pin.crba(pm, pm.createData(), pin.neutral(pm))))
        assert ev[0] <= 1e-12 * max(1.0, ev[-1])
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = rm.load_urdf(path, floating_base=floating)
    texts = [str(w.message) for w in caught if issubclass(w.category, rm.RedmaxWarning)]
    if warning is not None:
        assert any(warning in t for t in texts), texts
        assert all(t.startswith(path) for t in texts)  # every warning names the file (and the element)
    assert model.ndof == pm.nv
    worst = compare_with_pinocchio(model, pm, np.random.default_rng(5), states=2)
    assert max(worst.values(), default=0.0) < TOL, worst


def test_strict_refuses_what_is_otherwise_a_warning():
    path = _path("erd", "romeo_description/urdf/romeo_small.urdf")
    with pytest.raises(rm.ModelError, match=r"romeo_small\.urdf: link '.*': principal moments .* triangle inequality"
                                            r".*strict=True"):
        rm.load_urdf(path, strict=True)
    with pytest.raises(rm.ModelError, match=r"joint 'panda_finger_joint2' <mimic>.*strict=True"):
        rm.load_urdf(_path("erd", "panda_description/urdf/panda.urdf"), strict=True)


def test_mimic_recorded_for_the_constraints_issue():
    with pytest.warns(rm.RedmaxWarning, match="mimic"):
        m = rm.load_urdf(_path("erd", "panda_description/urdf/panda.urdf"))
    assert m.meta["mimic"] == [{"joint": "panda_finger_joint2", "parent": "panda_finger_joint1", "multiplier": 1.0,
                                "offset": 0.0}]
    assert "panda_finger_joint2" in m.joint_names  # still an independent joint until couplings exist


def test_zero_dof_model_runs_every_algorithm():
    m = rm.load_urdf(_path("erd", "hector_description/robots/quadrotor_base.urdf"))
    z = np.zeros(0)
    assert m.ndof == 0 and m.nb == 0
    for out in (rm.rnea(m, z, z, z), rm.aba(m, z, z, z), rm.crba(m, z), rm.minv(m, z)):
        assert out.size == 0
    res = rm.simulate(m, duration=0.02, dt=0.01)
    assert res.q.shape == (3, 0) and np.all(res.energy["total"] == 0.0)
    assert rm.load_urdf(_path("erd", "hector_description/robots/quadrotor_base.urdf"), floating_base=True).ndof == 6


def test_structurally_singular_robot_is_refused_naming_the_joint():
    """romeo's hand joints carry no mass at all: Pinocchio's aba returns NaN there; redmax refuses by name."""
    with pytest.raises(rm.ModelError, match=r"romeo\.urdf: joint 'LHand': moves no mass"):
        rm.load_urdf(_path("erd", "romeo_description/urdf/romeo.urdf"))
    with pytest.raises(rm.ModelError, match=r"romeo_laas_small\.urdf: joint 'l_gripper_joint': moves no mass"):
        rm.load_urdf(_path("erd", "romeo_description/urdf/romeo_laas_small.urdf"))


def test_singular_at_q0_only_warns_naming_the_joint():
    """icub's neck axes align at q = 0 over a point-mass head: M(q0) is singular, M elsewhere is not."""
    from redmax.dynamics.diagnostics import dependent_dof

    path = _path("erd", "icub_description/robots/icub.urdf")
    with pytest.warns(rm.RedmaxWarning, match=r"joint 'neck_yaw'.*initial state q0 only"):
        m = rm.load_urdf(path)
    assert m.dof_names[dependent_dof(rm.crba(m, m.q0.copy()))[0]] == "neck_yaw"
    assert dependent_dof(rm.crba(m, m.q0 + 0.3))[0] < 0
