"""The builder: ordering, compiled arrays, and one ModelError test per invalid-model case of the issue."""

import numpy as np
import pytest

from redmax import dynamics
from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.errors import ModelError
from redmax.joints import Composite, Fixed, Free3D, Prismatic, Revolute, SphericalEuler, SphericalExp
from redmax.spatial import make_E, rot_x, trans


def chain(n=3, **kw):
    b = ModelBuilder("chain", (0, 0, -980))
    prev = None
    for k in range(n):
        b.add_body(f"link{k}", Cuboid(10, 1, 1), Revolute((0, 1, 0)), parent=prev, joint_name=f"joint{k}",
                   joint_placement=trans(10, 0, 0) if k else None, body_placement=trans(5, 0, 0), **kw)
        prev = f"link{k}"
    return b


def test_compiled_arrays_and_names():
    b = ModelBuilder("m", (0, 0, -9.81))
    b.add_body("base", Cuboid(1, 1, 1), Free3D(), joint_name="root")
    b.add_body("arm", Cuboid(1, 1, 4), Revolute((0, 0, 1)), parent="base", joint_name="shoulder", q=[0.3])
    b.add_body("tool", Cuboid(1, 1, 1), Fixed(), parent="arm", joint_name="weld")
    m = b.build()
    assert m.nb == 3 and m.ndof == 7
    assert list(m.parent) == [-1, 0, 1]
    assert m.dof_names == ("root.x", "root.y", "root.z", "root.rx", "root.ry", "root.rz", "shoulder")
    assert m.joint_names == ("root", "shoulder", "weld")
    assert m.q0[6] == 0.3
    assert list(m.reparam_joints) == [0]
    with pytest.raises(ValueError):
        m.q0[0] = 1.0  # arrays are read-only
    with pytest.raises(AttributeError):
        m.nb = 4  # the model is frozen


def test_bodies_may_be_added_before_their_parents():
    b = ModelBuilder("m")
    b.add_body("c", Cuboid(1, 1, 1), Revolute(), parent="b")
    b.add_body("a", Cuboid(1, 1, 1), Revolute())
    b.add_body("b", Cuboid(1, 1, 1), Revolute(), parent="a")
    m = b.build()
    assert m.body_names == ("a", "b", "c")
    assert all(m.parent[i] < i for i in range(m.nb))


def test_explicit_mass_and_inertia_tensor():
    R = rot_x(0.4)
    I_tensor = R @ np.diag([1.0, 2.0, 2.5]) @ R.T
    b = ModelBuilder("m")
    b.add_body("a", None, Revolute(), mass=3.0, inertia=I_tensor)
    m = b.build()
    assert np.allclose(np.sort(m.I_body[0]), [1.0, 2.0, 2.5])
    Rb = m.E_jb[0][:3, :3]
    assert np.allclose(Rb @ np.diag(m.I_body[0]) @ Rb.T, I_tensor)


# ---- one test per invalid case ---------------------------------------------------------------


def test_unknown_parent():
    b = chain(2)
    b.add_body("hand", Cuboid(1, 1, 1), Revolute(), parent="forearm")
    with pytest.raises(ModelError, match="'hand'.*unknown parent body 'forearm'"):
        b.build()


def test_cyclic_parent():
    b = ModelBuilder("m")
    b.add_body("a", Cuboid(1, 1, 1), Revolute(), parent="c")
    b.add_body("b", Cuboid(1, 1, 1), Revolute(), parent="a")
    b.add_body("c", Cuboid(1, 1, 1), Revolute(), parent="b")
    with pytest.raises(ModelError, match="cyclic parent chain among bodies 'a', 'b', 'c'"):
        b.build()


def test_self_parent():
    b = ModelBuilder("m")
    b.add_body("a", Cuboid(1, 1, 1), Revolute(), parent="a")
    with pytest.raises(ModelError, match="'a'.*own parent"):
        b.build()


@pytest.mark.parametrize("joint", [Revolute((0, 0, 0)), Prismatic((0.0, 0.0, 0.0))])
def test_zero_axis(joint):
    b = chain(1)
    b.add_body("slider", Cuboid(1, 1, 1), joint, parent="link0", joint_name="rail")
    with pytest.raises(ModelError, match="joint 'rail': axis must be non-zero"):
        b.build()


@pytest.mark.parametrize("mass", [0.0, -1.0])
def test_non_positive_mass(mass):
    b = chain(1)
    b.add_body("ghost", None, Revolute(), parent="link0", mass=mass, inertia=[1, 1, 1])
    with pytest.raises(ModelError, match="body 'ghost': mass must be positive"):
        b.build()


@pytest.mark.parametrize("inertia", [[1.0, 0.0, 1.0], [1.0, -2.0, 1.0], [1.0, 1.0, 5.0]])
def test_non_positive_or_impossible_inertia(inertia):
    b = chain(1)
    b.add_body("odd", None, Revolute(), parent="link0", mass=1.0, inertia=inertia)
    with pytest.raises(ModelError, match="body 'odd'"):
        b.build()


def test_nan_in_joint_placement():
    b = chain(1)
    E = trans(1, 0, 0)
    E[1, 3] = np.nan
    b.add_body("b", Cuboid(1, 1, 1), Revolute(), parent="link0", joint_name="knee", joint_placement=E)
    with pytest.raises(ModelError, match="joint 'knee': joint_placement.*NaN or inf"):
        b.build()


def test_inf_in_body_placement():
    b = chain(1)
    E = trans(1, 0, 0)
    E[0, 3] = np.inf
    b.add_body("shin", Cuboid(1, 1, 1), Revolute(), parent="link0", body_placement=E)
    with pytest.raises(ModelError, match="body 'shin': body_placement.*NaN or inf"):
        b.build()


def test_non_rigid_placement():
    b = chain(1)
    E = make_E(2.0 * np.eye(3))
    b.add_body("b", Cuboid(1, 1, 1), Revolute(), parent="link0", joint_name="scaled", joint_placement=E)
    with pytest.raises(ModelError, match="joint 'scaled': joint_placement.*proper rotation"):
        b.build()


def test_nan_in_gravity_and_initial_state():
    b = chain(1)
    b.set_gravity((0, np.nan, 0))
    with pytest.raises(ModelError, match="gravity.*NaN"):
        b.build()
    b = chain(1)
    b.set_state("joint0", qd=[np.inf])
    with pytest.raises(ModelError, match="joint 'joint0': initial qd.*NaN or inf"):
        b.build()


def test_nan_in_axis():
    b = chain(1)
    b.add_body("b", Cuboid(1, 1, 1), Revolute((np.nan, 0, 1)), parent="link0", joint_name="wobbly")
    with pytest.raises(ModelError, match="joint 'wobbly': axis contains NaN"):
        b.build()


def test_negative_damping_and_stiffness():
    b = chain(1, damping=-1.0)
    with pytest.raises(ModelError, match="body 'link0': damping: must be >= 0"):
        b.build()
    b = chain(1, stiffness=-3.0)
    with pytest.raises(ModelError, match="joint 'joint0': stiffness: must be >= 0"):
        b.build()


def test_duplicate_body_names():
    b = chain(2)
    b.add_body("link1", Cuboid(1, 1, 1), Revolute(), parent="link0", joint_name="other")
    with pytest.raises(ModelError, match="body 'link1': duplicate body name"):
        b.build()


def test_duplicate_joint_names():
    b = chain(2)
    b.add_body("extra", Cuboid(1, 1, 1), Revolute(), parent="link0", joint_name="joint1")
    with pytest.raises(ModelError, match="joint 'joint1': duplicate joint name"):
        b.build()


def test_wrong_initial_q_size():
    b = ModelBuilder("m")
    b.add_body("ball", Cuboid(1, 1, 1), SphericalExp(), joint_name="hip", q=[0.1, 0.2])
    with pytest.raises(ModelError, match="joint 'hip': initial q: expected 3 value"):
        b.build()


def test_wrong_initial_qd_size():
    b = ModelBuilder("m")
    b.add_body("ball", Cuboid(1, 1, 1), SphericalEuler("ZYX"), joint_name="hip", qd=[0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ModelError, match="joint 'hip': initial qd: expected 3 value"):
        b.build()


def test_wrong_state_sizes_in_algorithms():
    m = chain(3).build()
    with pytest.raises(ModelError, match="chain: q must have shape \\(3,\\)"):
        dynamics.crba(m, np.zeros(4))
    with pytest.raises(ModelError, match="qd must have shape"):
        dynamics.rnea(m, np.zeros(3), np.zeros(2), np.zeros(3))
    with pytest.raises(ModelError, match="NaN or inf"):
        dynamics.aba(m, np.zeros(3), np.array([0, np.nan, 0]), np.zeros(3))
    with pytest.raises(ModelError, match="f_ext must have shape"):
        dynamics.rnea(m, np.zeros(3), np.zeros(3), np.zeros(3), f_ext=np.zeros((2, 6)))
    # 2-D vectors of the right length: a ModelError naming the vector, on the fast float64 path too
    with pytest.raises(ModelError, match=r"qd must have shape \(3,\) or \(B, 3\), got \(3, 1\)"):
        dynamics.rnea(m, np.zeros(3), np.zeros((3, 1)), np.zeros(3))
    with pytest.raises(ModelError, match=r"qdd must have shape \(3,\) like q, got \(1, 3\)"):
        dynamics.rnea(m, np.zeros(3), np.zeros(3), np.zeros((1, 3)))
    with pytest.raises(ModelError, match=r"tau must have shape \(3,\) or \(B, 3\), got \(3, 1\)"):
        dynamics.aba(m, np.zeros(3), np.zeros(3), np.zeros((3, 1)))
    with pytest.raises(ModelError, match="qdd contains NaN or inf"):
        dynamics.hybrid_dynamics(m, np.zeros(3), np.zeros(3), np.zeros(3), np.array([0, np.inf, 0]),
                                 np.zeros(3, dtype=bool))


def test_bad_torque_values():
    b = chain(2)
    b.set_torque("joint1", lambda t: [np.nan])
    m = b.build()
    with pytest.raises(ModelError, match="joint 'joint1': torque at t=0.5"):
        m.joint_torque(0.5)
    b = chain(2)
    b.set_torque("joint0", [1.0, 2.0])
    with pytest.raises(ModelError, match="joint 'joint0': torque: expected 1 value"):
        b.build()
    from redmax.model import Schedule

    b = chain(2)
    b.set_torque("joint1", Schedule([0.0, 1.0], [[1.0, 2.0], [3.0, 4.0]]))
    with pytest.raises(ModelError, match="joint 'joint1': torque schedule has rows of 2 values, expected 1"):
        b.build()


def test_not_a_joint_and_empty_model():
    b = ModelBuilder("m")
    with pytest.raises(ModelError, match="body 'x': joint must be a redmax.joints.Joint"):
        b.add_body("x", Cuboid(1, 1, 1), "revolute")
    with pytest.raises(ModelError, match="has no bodies"):
        ModelBuilder("empty").build()


def test_non_numeric_stiffness():
    b = ModelBuilder("m")
    b.add_body("a", Cuboid(1, 1, 1), Revolute(), stiffness="abc")
    with pytest.raises(ModelError, match="joint 'a': stiffness: must be a number"):
        b.build()


def test_redundant_joint_is_rejected_naming_it():
    """A composite of two coaxial revolutes moves one body two ways: M is singular from the start."""
    b = chain(2)
    b.add_body("twice", Cuboid(1, 1, 1), Composite(Revolute((1, 0, 0)), Revolute((1, 0, 0))), parent="link1")
    with pytest.raises(ModelError, match="joint 'twice': DOF 'twice.1' is dependent on the DOFs before it"):
        b.build()
    # coaxial joints carrying separate bodies are fine
    b = ModelBuilder("coaxial")
    b.add_body("a", Cuboid(1, 1, 1), Revolute((1, 0, 0)))
    b.add_body("b", Cuboid(1, 1, 1), Revolute((1, 0, 0)), parent="a")
    assert b.build().ndof == 2


def test_singular_configuration_names_the_joint():
    """Euler angles XYZ at gimbal lock (middle angle pi/2) with the chart held fixed: the recursive
    algorithms and the RedMax solve raise ModelError naming the joint, never return garbage."""
    b = ModelBuilder("gimbal")
    b.add_body("ball", Cuboid(1, 2, 3), SphericalEuler("XYZ"))
    m = b.build()
    q, qd = np.array([0.2, np.pi / 2, 0.1]), np.ones(3)
    msg = "joint 'ball': DOF 'ball.q3' is dependent"
    with pytest.raises(ModelError, match="gimbal: aba: " + msg):
        dynamics.aba(m, q, qd, np.zeros(3), jstate=m.jstate0)
    with pytest.raises(ModelError, match="gimbal: minv: " + msg):
        dynamics.minv(m, q, jstate=m.jstate0)
    with pytest.raises(ModelError, match="redmax_accelerations: " + msg):
        dynamics.redmax_accelerations(m, q, qd, jstate=m.jstate0)
    # one step away from the lock everything is regular
    q[1] = 1.2
    assert np.all(np.isfinite(dynamics.aba(m, q, qd, np.zeros(3), jstate=m.jstate0)))


def test_pickled_and_copied_models_keep_their_arrays_read_only(lean_kernels):
    """A model's arrays are read-only wherever it comes from (a pickle sent to a Dask worker, copy.deepcopy): the
    compiled kernels then see the array types of the model that was built, and compile nothing more for it.  The
    one exception keeps its type too: a lean model's packed ints (revolute joints here) stay writeable."""
    import copy
    import pickle

    import redmax as rm

    m = rm.scenes.load("reference/05").model
    for other in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        arrays = [other.packed[1], other.jstate0, other.q0, other.qd0, other.tree.parent, other.dofs.dof_joint,
                  other.body_damping, other.gravity]
        assert arrays and not any(a.flags.writeable for a in arrays)
        assert m.packed[0].flags.writeable and other.packed[0].flags.writeable  # lean: redmax.model.layout
        assert np.array_equal(other.packed[1], m.packed[1])
        assert other.initial_state().q.flags.writeable  # a user's state stays theirs to change
