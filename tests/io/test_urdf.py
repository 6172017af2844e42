"""URDF loading: joints, inertias, merged fixed links, kept limits/damping/friction, and clear errors."""

import numpy as np
import pinocchio as pin
import pytest

import redmax as rm
from redmax.errors import ModelError
from redmax.testing.robots import robot_urdf

LINK = '<link name="{n}"><inertial><origin xyz="{c}" rpy="{r}"/><mass value="{m}"/>' \
       '<inertia ixx="{i}" ixy="0.01" ixz="0" iyy="{i}" iyz="0" izz="{i}"/></inertial></link>'


def link(n, m=1.0, c="0 0 0.1", r="0 0 0", i=0.1):
    return LINK.format(n=n, m=m, c=c, r=r, i=i)


def joint(n, t, p, c, xyz="0 0 0.5", rpy="0 0 0", axis="0 1 0", extra=""):
    return (f'<joint name="{n}" type="{t}"><parent link="{p}"/><child link="{c}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{extra}</joint>')


def robot(*parts):
    return '<robot name="test">' + "".join(parts) + "</robot>"


def write(tmp_path, text, name="r.urdf"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_names_limits_damping_friction_and_inertial_frames(tmp_path):
    text = robot(link("base"), link("a", r="0.3 0.2 0.1"), link("b"), '<link name="tool"/>',
                 joint("j1", "revolute", "base", "a",
                       extra='<limit lower="-1" upper="1.5" effort="10" velocity="2"/><dynamics damping="0.3" '
                             'friction="0.2"/>'),
                 joint("j2", "prismatic", "a", "b", axis="1 0 0", extra='<limit lower="-1" upper="1" effort="1" '
                       'velocity="1"/>'),
                 joint("weld", "fixed", "b", "tool", xyz="0 0 0.2"))
    m = rm.load_urdf(write(tmp_path, text))
    assert m.joint_names == ("j1", "j2") and m.dof_names == ("j1", "j2")
    assert m.meta["limits"]["j1"] == {"lower": -1.0, "upper": 1.5, "effort": 10.0, "velocity": 2.0}
    assert m.meta["friction"]["j1"] == 0.2 and m.joint_damping[0] == 0.3
    assert m.meta["frames"]["tool"][0] == 1 and np.allclose(m.meta["frames"]["tool"][1][:3, 3], [0, 0, 0.2])
    # agrees with Pinocchio (which also merges the fixed link and reads rotated inertial frames)
    pm = pin.buildModelFromUrdf(write(tmp_path, text))
    pd = pm.createData()
    q = np.array([0.4, -0.2])
    assert np.allclose(rm.crba(m, q), np.triu(pin.crba(pm, pd, q)) + np.triu(pin.crba(pm, pd, q), 1).T, rtol=1e-12)


def test_link_pose_matches_pinocchio_frames():
    path = robot_urdf("panda")
    m = rm.load_urdf(path)
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    q = np.random.default_rng(0).normal(size=m.ndof)
    pin.framesForwardKinematics(pm, pd, q)
    for name in ("panda_hand", "panda_link8", "panda_leftfinger", "panda_link0"):
        fid = pm.getFrameId(name)
        assert np.allclose(rm.link_pose(m, q, name), pd.oMf[fid].homogeneous, atol=1e-12)
    with pytest.raises(ModelError, match="no link 'nope'"):
        rm.link_pose(m, q, "nope")


def test_massless_intermediate_link_is_fine_but_massless_leaf_is_not(tmp_path):
    ok = robot(link("base"), '<link name="mid"/>', link("tip"), joint("j1", "revolute", "base", "mid"),
               joint("j2", "revolute", "mid", "tip", axis="1 0 0"))
    m = rm.load_urdf(write(tmp_path, ok))
    assert m.mass[0] == 0.0 and m.mass[1] == 1.0
    assert np.all(np.linalg.eigvalsh(rm.crba(m, np.zeros(2))) > 0)
    bad = robot(link("base"), link("a"), '<link name="ghost"/>', joint("j1", "revolute", "base", "a"),
                joint("spin", "revolute", "a", "ghost"))
    with pytest.raises(ModelError, match=r"r.urdf: joint 'spin': moves no mass"):
        rm.load_urdf(write(tmp_path, bad))


def test_planar_and_floating_joints(tmp_path):
    text = robot(link("base"), link("sled"), link("drone"),
                 joint("slide", "planar", "base", "sled", axis="0 0 1"),
                 joint("fly", "floating", "sled", "drone"))
    m = rm.load_urdf(write(tmp_path, text))
    assert [j.kind for j in m.joints] == ["free2d", "free3d"] and m.ndof == 9
    assert m.meta["joint_types"] == {"slide": "planar", "fly": "floating"}
    m2 = rm.load_urdf(write(tmp_path, text), floating_base=True)
    assert m2.joint_names[0] == "root_joint" and m2.ndof == 15
    # a planar joint about a tilted axis still moves in the plane normal to it
    tilt = robot(link("base"), link("sled", c="0 0 0"), joint("slide", "planar", "base", "sled", axis="1 0 0"))
    mt = rm.load_urdf(write(tmp_path, tilt, "t.urdf"))
    p = rm.link_pose(mt, np.array([0.3, -0.2, 0.7]), "sled")[:3, 3] - np.array([0.0, 0.0, 0.5])  # minus origin
    assert abs(p[0]) < 1e-12 and np.linalg.norm(p) == pytest.approx(np.hypot(0.3, 0.2), abs=1e-12)


def test_meshes_only_when_asked(tmp_path):
    text = robot('<link name="base"><visual><origin xyz="0 0 1"/><geometry><mesh filename="package://pkg/m.stl" '
                 'scale="2 2 2"/></geometry></visual><visual><geometry><box size="1 2 3"/></geometry></visual>'
                 + LINK.format(n="", m=1, c="0 0 0", r="0 0 0", i=0.1)[len('<link name="">'):],
                 link("a"), joint("j", "revolute", "base", "a"))
    p = write(tmp_path, text)
    assert "visuals" not in rm.load_urdf(p).meta
    vis = rm.load_urdf(p, meshes=True, package_dirs=[str(tmp_path / "share")]).meta["visuals"]["base"]
    assert vis[0]["type"] == "mesh" and vis[0]["filename"].endswith("m.stl") and list(vis[0]["scale"]) == [2, 2, 2]
    assert vis[1]["type"] == "box" and list(vis[1]["size"]) == [1, 2, 3]


def test_unmerged_fixed_joints(tmp_path):
    text = robot(link("base"), link("a"), link("b"), joint("j", "revolute", "base", "a"),
                 joint("w", "fixed", "a", "b"))
    m = rm.load_urdf(write(tmp_path, text), merge_fixed=False)
    assert m.nb == 2 and [j.kind for j in m.joints] == ["revolute", "fixed"]
    merged = rm.load_urdf(write(tmp_path, text))
    q = np.array([0.7])
    assert np.allclose(rm.crba(m, q), rm.crba(merged, q), rtol=1e-13)


@pytest.mark.parametrize(
    "text,pattern",
    [
        (robot(link("base"), link("a"), joint("j", "revolute", "base", "a", xyz="0 a 1")),
         r"joint 'j' <origin xyz>: expected 3 numbers, got '0 a 1'"),
        (robot(link("base"), link("a"), joint("j", "ball", "base", "a")), r"joint 'j': unknown joint type 'ball'"),
        (robot(link("base"), link("a"), joint("j", "revolute", "base", "nowhere")),
         r"joint 'j': child link 'nowhere' does not exist"),
        (robot(link("base"), link("a"), joint("j", "revolute", "basis", "a")),
         r"joint 'j': parent link 'basis' does not exist"),
        (robot(link("base"), link("a"), link("b")), r"tree: expected exactly one root link, found 3"),
        (robot(link("a"), link("b"), joint("j1", "revolute", "a", "b"), joint("j2", "revolute", "b", "a")),
         r"expected exactly one root link, found 0.*cycle"),
        (robot(link("base"), link("a"), link("b"), joint("j1", "revolute", "base", "b"),
               joint("j2", "revolute", "a", "b")), r"link 'b' already has parent joint 'j1'"),
        (robot(link("base"), link("a", m=-2), joint("j", "revolute", "base", "a")), r"link 'a': negative mass"),
        (robot(link("base"), '<link name="a"><inertial><mass value="1"/></inertial></link>',
               joint("j", "revolute", "base", "a")), r"link 'a': <inertial> has no <inertia>"),
        (robot(link("base"), link("a"), joint("j", "revolute", "base", "a", axis="0 0 0")),
         r"joint 'j': axis must be non-zero"),
        (robot(link("base"), link("a"), joint("j", "planar", "base", "a", axis="0 0 0")),
         r"joint 'j': axis must be non-zero"),
        (robot(link("base"), link("base")), r"link 'base': duplicate link name"),
        ("<robot><link name='a'>", r"not valid XML"),
        ("<model/>", r"root element: expected <robot>, got <model>"),
    ],
)
def test_malformed_urdf_names_file_and_element(tmp_path, text, pattern):
    with pytest.raises(ModelError, match=r"bad\.urdf: .*" + pattern):
        rm.load_urdf(write(tmp_path, text, "bad.urdf"))


def test_missing_file():
    with pytest.raises(ModelError, match=r"/no/such/robot\.urdf: no such URDF file"):
        rm.load_urdf("/no/such/robot.urdf")
