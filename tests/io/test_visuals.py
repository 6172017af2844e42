"""Visual geometry (issue 55 item 1): ``model.visuals`` from shapes, URDF ``<visual>`` elements and MJCF geoms."""

import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import redmax as rm


def test_shapes_become_visuals_placed_in_the_joint_frame():
    m = rm.scenes.load("reference/25").model  # a box and a cylinder on one body (a composite)
    kinds = sorted((v.body, v.kind) for v in m.visuals)
    assert kinds == [("b1", "box"), ("b1", "cylinder")]
    box = next(v for v in m.visuals if v.kind == "box")
    assert box.size == (1.0, 1.0, 10.0) and np.allclose(box.placement[:3, 3], (0, 0, -5))
    mesh = rm.scenes.load("reference/26").model.visuals
    assert [v.kind for v in mesh] == ["mesh", "mesh"] and os.path.isfile(mesh[0].file)
    assert mesh[0].vertices.shape == (8, 3) and mesh[0].faces.shape[1] == 3


def _visual_meshes(path):
    """The <mesh> elements inside <visual> elements of a URDF file."""
    root = ET.parse(path).getroot()
    return [g for link in root.findall("link") for vis in link.findall("visual")
            for g in vis.findall("geometry/mesh")]


def test_every_example_robot_data_urdf_loads_its_visuals():
    """Each <visual><mesh> of every robot becomes one mesh record, or one warning naming its missing file."""
    from redmax.io.robots import robot_path

    checked = 0
    for name in rm.available_robots():
        path = robot_path(name)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = rm.load_urdf(path)
        missing = [w for w in caught if "mesh file" in str(w.message) and "not found" in str(w.message)]
        meshes = [v for v in m.visuals if v.kind == "mesh"]
        assert len(meshes) + len(missing) == len(_visual_meshes(path)), name
        assert all(os.path.isfile(v.file) for v in meshes)
        checked += 1
    assert checked >= 40


def test_urdf_visual_primitives_origins_and_colours(tmp_path):
    urdf = tmp_path / "r.urdf"
    urdf.write_text("""<robot name="r">
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.5"/><geometry><box size="1 2 3"/></geometry><material name="blue"/></visual></link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><cylinder radius="0.1" length="2"/></geometry>
      <material name="red"><color rgba="1 0 0 0.5"/></material></visual>
    <visual><geometry><mesh filename="missing.stl"/></geometry></visual></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 1"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>""")
    with pytest.warns(rm.RedmaxWarning, match="missing.stl"):
        m = rm.load_urdf(urdf)
    box, cyl = m.visuals
    assert box.body == "world" and box.kind == "box" and box.size == (1.0, 2.0, 3.0) and box.rgba == (0, 0, 1, 1)
    assert np.allclose(box.placement[:3, 3], (0, 0, 0.5))
    assert cyl.body == "arm" and cyl.kind == "cylinder" and cyl.size == (0.1, 2.0) and cyl.rgba == (1, 0, 0, 0.5)


def test_mjcf_geoms_become_visuals():
    xml = """<mujoco><worldbody><geom type="plane" size="1 1 .1"/>
      <body name="a" pos="0 0 1"><joint name="h" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -1" size="0.05" rgba="1 0 0 1"/>
        <geom type="box" pos="0 0 -1" size="0.1 0.2 0.3"/></body></worldbody></mujoco>"""
    import mujoco

    from redmax.io.mjcf import from_mjmodel

    m = from_mjmodel(mujoco.MjModel.from_xml_string(xml))
    kinds = [(v.body, v.kind) for v in m.visuals]
    assert kinds == [("a", "capsule"), ("a", "box")]  # the plane is not drawn
    cap, box = m.visuals
    assert cap.size == pytest.approx((0.05, 1.0)) and cap.rgba == (1.0, 0.0, 0.0, 1.0)
    assert box.size == pytest.approx((0.2, 0.4, 0.6))
