"""Scene files: built-ins stored as files, save-then-load lossless bit for bit, precise errors."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from redmax import scenes
from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.errors import SceneError
from redmax.io.scene_file import _TABLES, scene_to_dict
from redmax.io.toml_write import dumps
from redmax.joints import Revolute
from redmax.scenes import Scene, builtin_path
from redmax.scenes.generate import authored, build

NAMES = sorted(authored())


def _same_run(a: Scene, b: Scene, duration=0.2):
    ra = a.simulate(duration=min(duration, a.duration))
    rb = b.simulate(duration=min(duration, b.duration))
    assert np.array_equal(ra.t, rb.t) and np.array_equal(ra.q, rb.q) and np.array_equal(ra.qdot, rb.qdot)
    for k in ra.energy:
        assert np.array_equal(ra.energy[k], rb.energy[k])


def test_every_builtin_is_a_packaged_file_matching_its_definition():
    parametric = {n for n in scenes.available() if scenes.parameters(n)}  # (built on load: test_scaling_scenes.py)
    assert sorted(set(scenes.available()) - parametric) == NAMES
    for name in NAMES:
        path = Path(builtin_path(name))
        assert path.is_file()
        text = path.read_text().split("\n", 1)[1]  # drop the comment line
        assert text == dumps(scene_to_dict(build(name), str(path.parent)), _TABLES), (
            f"{name}: packaged file is stale; run python -m redmax.scenes.generate")


@pytest.mark.parametrize("name", NAMES)
def test_file_scene_equals_python_definition_bit_for_bit(name):
    _same_run(scenes.load(name), build(name))


@pytest.mark.parametrize("name", NAMES)
def test_save_then_load_is_lossless(name, tmp_path):
    a = scenes.load(name)
    p = scenes.save(a, tmp_path / "copy.toml")
    b = scenes.load(p)
    for attr in ("duration", "dt", "integrator", "method", "rtol", "atol", "symmetrize", "description"):
        assert getattr(a, attr) == getattr(b, attr)
    ma, mb = a.model, b.model
    for attr in ("E_pj0", "E_jb", "mass", "I_body", "jparam", "q0", "qd0", "q_rest", "gravity", "joint_stiffness"):
        assert np.array_equal(getattr(ma, attr), getattr(mb, attr)), attr
    _same_run(a, b)
    # saving again gives the same text
    q = scenes.save(b, tmp_path / "copy2.toml")
    assert Path(p).read_text() == Path(q).read_text()


def test_mesh_paths_are_relative_to_the_scene_file(tmp_path):
    sub = tmp_path / "models"
    sub.mkdir()
    shutil.copy(builtin_path("reference/26"), sub / "scene.toml")
    shutil.copy(Path(builtin_path("reference/26")).parent.parent / "cuboid.obj", tmp_path / "cuboid.obj")
    assert 'file = "../cuboid.obj"' in (sub / "scene.toml").read_text()  # relative to the file's folder
    s = scenes.load(sub / "scene.toml")
    assert s.model.mass[0] == pytest.approx(6.000001)
    out = scenes.save(s, tmp_path / "elsewhere.toml")
    assert 'file = "cuboid.obj"' in Path(out).read_text()


HEADER = 'format = "redmax-scene"\nversion = 1\n[scene]\nname = "t"\n'
BODY = ('[[bodies]]\nname = "a"\nshape = { type = "cuboid", sides = [1.0, 1.0, 1.0] }\n'
        '[bodies.joint]\ntype = "revolute"\n')


def _write(tmp_path, text, name="bad.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_minimal_file_and_readable_rotations(tmp_path):
    text = HEADER + BODY + 'placement = { translation = [1.0, 0, 0], rotation = { axis = [0, 1, 0], angle = 0.5 } }\n'
    s = scenes.load(_write(tmp_path, text, "ok.toml"))
    assert s.model.nb == 1 and s.dt == 1e-2 and s.integrator == "euler"
    assert s.model.E_pj0[0][0, 3] == 1.0 and s.model.E_pj0[0][0, 0] == pytest.approx(np.cos(0.5))


@pytest.mark.parametrize(
    "text,match",
    [
        (HEADER + BODY.replace('name = "a"', 'name = "a"\ncolour = "red"'),
         r"bad.toml: bodies\[0\].colour: unknown key"),
        (HEADER + BODY + "axes = [0, 1, 0]\n", r"bodies\[0\].joint.axes: unknown key"),
        (HEADER + BODY.replace("revolute", "hinge"), r"bodies\[0\].joint.type: unknown joint type 'hinge'"),
        (HEADER + BODY + "axis = [0, 1]\n", r"bodies\[0\].joint.axis: expected an array of shape 3"),
        (HEADER + BODY + 'axis = ["x", 0, 1]\n', r"bodies\[0\].joint.axis: expected numbers"),
        (HEADER + BODY + "axis = [0, 0, 0]\n", r"bodies\[0\].joint: axis must be non-zero"),
        (HEADER + BODY + 'q = "__import__(\'os\')"\n', r"bodies\[0\].joint.q: expected"),
        (HEADER + BODY.replace("[1.0, 1.0, 1.0]", "[1.0, -1.0, 1.0]"), r"bodies\[0\].shape.*positive"),
        (HEADER + BODY.replace('type = "cuboid"', 'type = "blob"'), r"bodies\[0\].shape.type: unknown shape type"),
        (HEADER + BODY.replace('name = "a"', 'name = "a"\nparent = "ghost"'), r"unknown parent body 'ghost'"),
        (HEADER + BODY + "torque = { times = [1.0, 0.5], values = [[1.0], [2.0]] }\n",
         r"joint.torque: schedule: times must be strictly increasing"),
        (HEADER.replace("redmax-scene", "other"), r"format: expected 'redmax-scene'"),
        (HEADER.replace("version = 1", "version = 7") + BODY, r"version: unsupported version 7"),
        (HEADER + BODY.replace('[bodies.joint]\ntype = "revolute"\n', ""), r"bodies\[0\].joint: missing required key"),
        (HEADER + "dt = -1.0\n" + BODY, r"scene.dt: must be positive"),
        (HEADER + BODY + '[[forces]]\ntype = "point_spring"\npoints = [{ body = "a", point = [0, 0, 0] }]\nks = 1.0\n',
         r"forces\[0\].points: a point spring joins exactly 2 points"),
        (HEADER + BODY + '[[forces]]\ntype = "rubber_band"\n', r"forces\[0\].type: unknown force type"),
        (HEADER + BODY + '[[forces]]\ntype = "ground_contact"\npoints = [{ body = "a", point = [0, 0, 0] }]\n'
         'kn = 1.0\ndynamic_friction = "forward"\n',
         r"forces\[0\].dynamic_friction: expected one of 'opposing', 'original', got 'forward'"),
        (HEADER + BODY.replace('type = "cuboid", sides = [1.0, 1.0, 1.0]', 'type = "mesh", file = "nope.obj"'),
         r"bodies\[0\].shape.file: mesh file not found"),
        ("format = = 1\n", r"bad.toml: not valid TOML"),
        (HEADER + 'integrator = "bogus"\n' + BODY,
         r"bad.toml: scene.integrator: expected one of 'euler', 'rk45', 'dop853'.*got 'bogus'"),
        (HEADER + BODY + "q = [0.5, 1.0]\n",
         r"bad.toml: bodies\[0\].joint.q: expected 1 values \(one per DOF of the revolute joint\), got 2"),
        (HEADER + BODY + "torque = { times = [0.0, 1.0], values = [[1.0, 2.0], [0.0, 0.0]] }\n",
         r"bad.toml: bodies\[0\].joint.torque.values: rows of 2 values, expected 1"),
        (HEADER + BODY + "torque = [1.0, 2.0]\n", r"bad.toml: bodies\[0\].joint.torque: expected 1 values"),
    ],
)
def test_malformed_files_name_file_and_field(tmp_path, text, match):
    with pytest.raises(SceneError, match=match):
        scenes.load(_write(tmp_path, text))


def test_missing_file_and_unknown_name(tmp_path):
    with pytest.raises(SceneError, match="no such scene file"):
        scenes.load(tmp_path / "absent.toml")
    with pytest.raises(SceneError, match="unknown scene 'reference/999'"):
        scenes.load("reference/999")


def test_unsavable_inputs_are_reported(tmp_path):
    b = ModelBuilder("m")
    b.add_body("a", Cuboid(1, 1, 1), Revolute(), joint_name="elbow", torque=lambda t: [1.0])
    s = Scene("m", b.build())
    with pytest.raises(SceneError, match="joint 'elbow': a joint torque given as a Python callable"):
        scenes.save(s, tmp_path / "x.toml")
    b = ModelBuilder("m")
    b.add_body("a", Cuboid(1, 1, 1), Revolute())
    with pytest.raises(SceneError, match="a replacement force list \\(Scene.forces\\) cannot be saved"):
        scenes.save(Scene("m", b.build(), forces=[]), tmp_path / "y.toml")
