"""Constraints in scene files, the builder and the command line (scene-constraints.md): every type and the
couplings survive a save-then-load bit for bit (rows, runs, violations, reactions), and bad input raises a
RedmaxError naming the constraint (or the file's table) and the field."""

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import redmax as rm
from constraint_models import constraint_model
from redmax import constraints as cs
from redmax import scenes
from redmax.cli import main
from redmax.constraints.program import evaluate_rows, program_for
from redmax.errors import ModelError, SceneError
from redmax.integrators.constrained import _state_workspace
from redmax.scenes import Scene
from redmax.spatial import trans


def _rows(m, q, qd, t):
    return evaluate_rows(m, program_for(m), _state_workspace(m, q, qd, m.jstate0), q, qd, t, 1)


def test_every_constraint_type_round_trips_through_a_scene_file(tmp_path):
    a = Scene("all-constraints", constraint_model(), baumgarte=3.0, baumgarte_acc=(2.0, 7.0), constraint_solver="qp")
    p = scenes.save(a, tmp_path / "all.toml")
    b = scenes.load(p)
    assert (b.baumgarte, b.baumgarte_acc, b.constraint_solver) == (3.0, (2.0, 7.0), "qp")
    ta = [c.to_scene() for c in a.model.constraints]
    assert ta == [c.to_scene() for c in b.model.constraints]
    assert {d["type"] for d in ta} == set(cs.CONSTRAINTS)  # every type is in the file
    rng = np.random.default_rng(3)
    m, mb = a.model, b.model
    for _ in range(2):
        q, qd, t = rng.uniform(-0.8, 0.8, m.ndof), rng.normal(size=m.ndof), rng.uniform(0, 2)
        ra, rb = _rows(m, q, qd, t), _rows(mb, q, qd, t)
        for x in ("G", "g", "gd", "ga", "kind"):
            assert np.array_equal(getattr(ra, x), getattr(rb, x)), x
    assert Path(scenes.save(b, tmp_path / "again.toml")).read_text() == Path(p).read_text()


@pytest.mark.parametrize("name", ["reference/08", "reference/20", "paper/hand"])
def test_constraint_scenes_round_trip_with_identical_violations_and_reactions(name, tmp_path):
    a = scenes.load(name)
    b = scenes.load(scenes.save(a, tmp_path / "copy.toml"))
    assert b.model.dofs.coord_names == a.model.dofs.coord_names and b.model.dof_names == a.model.dof_names
    ra, rb = a.simulate(duration=0.2), b.simulate(duration=0.2)
    assert np.array_equal(ra.q, rb.q)
    assert ra.constraint_violation.keys() == rb.constraint_violation.keys() == {c.name for c in a.model.constraints}
    for k in ra.constraint_violation:
        assert np.array_equal(ra.constraint_violation[k], rb.constraint_violation[k]), k
        assert np.array_equal(ra.reactions[k], rb.reactions[k]), k
        n = len(a.model.constraints[[c.name for c in a.model.constraints].index(k)].react_labels)
        assert ra.reactions[k].shape == (ra.t.size, n) and np.all(ra.reactions[k][0] == 0.0)


HEADER = 'format = "redmax-scene"\nversion = 1\n[scene]\nname = "t"\n'
BODIES = ('[[bodies]]\nname = "a"\nshape = { type = "cuboid", sides = [1.0, 1.0, 1.0] }\n'
          '[bodies.joint]\ntype = "revolute"\nname = "ja"\naxis = [0.0, 1.0, 0.0]\n'
          '[[bodies]]\nname = "c"\nparent = "a"\nshape = { type = "cuboid", sides = [1.0, 1.0, 1.0] }\n'
          '[bodies.joint]\ntype = "revolute"\nname = "jc"\naxis = [0.0, 1.0, 0.0]\n'
          'placement = { translation = [1.0, 0.0, 0.0] }\n'
          '[[bodies]]\nname = "s"\nparent = "c"\nshape = { type = "cuboid", sides = [1.0, 1.0, 1.0] }\n'
          '[bodies.joint]\ntype = "spherical_exp"\nname = "js"\n')
LOOP = '[[constraints]]\ntype = "loop"\nname = "{n}"\npoints = [{{ body = "c", point = [0, 0, 0] }}, ' \
       '{{ body = "world", point = [1, 0, 0] }}]\n'


@pytest.mark.parametrize(
    "text,match",
    [
        ('[[constraints]]\ntype = "rope"\nname = "r"\n', r"bad.toml: constraints\[0\].type: unknown constraint type"),
        ('[[constraints]]\ntype = "limit"\njoint = "ja"\nupper = 1.0\n', r"constraints\[0\].name: missing"),
        (LOOP.format(n="l") + LOOP.format(n="l"), r"constraints\[1\].name: duplicate constraint name 'l'"),
        ('[[constraints]]\ntype = "limit"\nname = "lim"\njoint = "ghost"\nupper = 1.0\n',
         r"bad.toml: constraint 'lim' \(limit\): joint: unknown joint 'ghost'"),
        ('[[constraints]]\ntype = "limit"\nname = "lim"\njoint = "ja"\nlower = 1.0\nupper = 0.0\n',
         r"constraint 'lim' \(limit\): lower: lower \[1.0\] exceeds upper \[0.0\]"),
        ('[[constraints]]\ntype = "limit"\nname = "lim"\njoint = "ja"\nupper = 1.0\nstiffness = 3.0\n',
         r"constraints\[0\].stiffness: unknown key"),
        ('[[constraints]]\ntype = "point"\nname = "p"\npoints = [{ body = "a", point = [0, 0, 0] }, '
         '{ body = "ghost", point = [0, 0, 0] }]\n',
         r"constraint 'p' \(point\): points\[1\].body: unknown body 'ghost'"),
        ('[[constraints]]\ntype = "point"\nname = "p"\npoints = [{ body = "a", point = [0, 0] }, '
         '{ body = "c" }]\n', r"constraints\[0\]: points\[0\].point: expected"),
        ('[[constraints]]\ntype = "loop"\nname = "lp"\npoints = [{ body = "s", point = [0, 0, 0] }, '
         '{ body = "world", point = [0, 0, 0] }]\n', r"constraint 'lp' \(loop\): points\[0\].body: body 's' hangs on a "
         r"spherical_exp joint; a hinge-type loop needs a revolute joint"),
        ('[[constraints]]\ntype = "joint_ratio"\nname = "g"\njoints = ["ja", "jc"]\nratio = "x"\n',
         r"constraints\[0\]: ratio"),
        ('[[constraints]]\ntype = "prescribed_joint"\nname = "d"\njoint = "ja"\n'
         'profile = { type = "square", value = [1.0] }\n', r"constraints\[0\]: profile.type: unknown profile type"),
        ('[[constraints]]\ntype = "prescribed_joint"\nname = "d"\njoint = "ja"\n'
         'profile = { type = "piecewise_linear", times = [1.0, 0.0], values = [[0.0], [1.0]] }\n',
         r"constraints\[0\]: profile: times must be strictly increasing"),
        ('[[constraints]]\ntype = "prescribed_body"\nname = "pb"\nbody = "a"\ncomponents = ["wq"]\n'
         'angular = { type = "constant", value = [0, 0, 0] }\n', r"constraints\[0\]: components"),
        ('[[constraints]]\ntype = "floor"\nname = "f"\nbody = "a"\nradius = 1.0\ncorners = [[0, 0, 0]]\n',
         r"constraints\[0\]: radius: give either radius"),
        ('[[constraints]]\ntype = "floor"\nname = "f"\nbody = "a"\nradius = 1.0\nnormal = [0, 0, 0]\n',
         r"constraints\[0\]: normal: must be non-zero"),
        ('[[constraints]]\ntype = "limit"\nname = "lim"\njoint = "ja"\n', r"constraints\[0\]: lower: give lower"),
        ('[[couplings]]\njoint = "jc"\non = "ja"\n', r"couplings\[0\].ratio: missing"),
        ('[[couplings]]\njoint = "jc"\non = "ghost"\nratio = 0.5\n',
         r"bad.toml: couplings\[0\]: joint 'ghost': no such joint \(in couple\('jc', 'ghost'"),
        ('[[couplings]]\njoint = "js"\non = "ja"\nratio = 0.5\n',
         r"bad.toml: couplings\[0\]: joint 'js': a spherical_exp joint re-parameterises"),
        ('[[couplings]]\njoint = "jc"\non = "ja"\nratio = 0.5\n[[couplings]]\njoint = "ja"\non = "jc"\nratio = 2.0\n',
         r"bad.toml: couplings\[0\]: joint 'jc': coupling cycle through joint 'jc'"),
    ],
)
def test_bad_constraint_tables_name_the_file_table_and_field(tmp_path, text, match):
    p = tmp_path / "bad.toml"
    p.write_text(HEADER + BODIES + text)
    with pytest.raises(SceneError, match=match):
        scenes.load(p)


def test_bad_scene_level_gains_are_scene_errors(tmp_path):
    for line, match in (("baumgarte = -1.0\n", r"scene.baumgarte: must be finite and >= 0"),
                        ("baumgarte_acc = [1.0]\n", r"scene.baumgarte_acc"),
                        ('constraint_solver = "lcp"\n', r"scene.constraint_solver: expected one of")):
        p = tmp_path / "bad.toml"
        p.write_text(HEADER + line + BODIES)
        with pytest.raises(SceneError, match=match):
            scenes.load(p)


def _builder():
    b = rm.ModelBuilder("m", (0, 0, -9.81))
    b.add_body("a", rm.Cuboid(1, 1, 1), rm.Revolute((0, 1, 0)), joint_name="ja")
    b.add_body("c", rm.Cuboid(1, 1, 1), rm.Universal(), parent="a", joint_name="jc", joint_placement=trans(1, 0, 0))
    return b


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: cs.Limit("ja", 0.5, -0.5, name="lim_a"),
         r"constraint 'lim_a' \(limit\): lower: lower \[0.5\] exceeds"),
        (lambda: cs.Limit("jc", [0.1, 0.2, 0.3], name="lim_c"),
         r"constraint 'lim_c' \(limit\): lower: expected 1 or 2 values \(one per DOF of joint 'jc'\), got 3"),
        (lambda: cs.JointRatio(["ja", "nope"], 2.0, name="gear"), r"constraint 'gear' \(joint_ratio\): .*'nope'"),
        (lambda: cs.Point([("a", (0, 0, 0)), ("a", (1, 0, 0))], name="pt"),
         r"constraint 'pt' \(point\): points: the two points are on the same body"),
        (lambda: cs.Loop([("c", (0, 0, 0)), ("world", (0, 0, 0))], name="hinge"),
         r"constraint 'hinge' \(loop\): points\[0\].body: body 'c' hangs on a universal joint"),
        (lambda: cs.PrescribedBody("a", ["vq"], linear=cs.Constant([0, 0, 0]), name="pb"),
         r"constraint 'pb' \(prescribed_body\): components"),
        (lambda: cs.PrescribedJoint("ghost", cs.Constant(0.0), name="drive"),
         r"constraint 'drive' \(prescribed_joint\): joint: unknown joint 'ghost'"),
        (lambda: cs.Floor("world", radius=1.0, name="fl"), r"constraint 'fl' \(floor\): body: must be a body"),
        (lambda: cs.Universal([("a", (0, 0, 0)), ("c", (0, 0, 0))], axes=[(0, 0, 0), (1, 0, 0)], name="uj"),
         r"constraint 'uj' \(universal\): axes\[0\]: must be non-zero"),
        (lambda: cs.Sinusoid([1.0, float("nan")], 1.0), r"amplitude"),
    ],
)
def test_bad_constraints_in_python_name_the_constraint_and_field(make, match):
    with pytest.raises(ModelError, match=match):
        b = _builder()
        b.add_constraint(make())
        b.build()


def test_duplicate_constraint_names_are_refused_by_the_builder():
    b = _builder()
    b.add_constraint(cs.Limit("ja", -1.0, 1.0, name="lim"))
    with pytest.raises(ModelError, match="lim"):
        b.add_constraint(cs.Limit("jc", -1.0, 1.0, name="lim"))
        b.build()


def test_cli_info_lists_constraints_and_plot_shows_violation(tmp_path, capsys):
    assert main(["info", "reference/08"]) == 0
    out = capsys.readouterr().out
    assert "constraints (baumgarte 5" in out
    assert "loop (loop: maximal equality, 2 row(s))" in out and "ratio_36 (joint_ratio: reduced equality" in out
    png = tmp_path / "v.png"
    assert main(["plot", "reference/06", str(png), "--duration", "0.5"]) == 0
    im = Image.open(png)
    assert im.size[0] > 200 and im.size[1] > 150


def test_floor_origin_and_normal_errors_name_their_field():
    with pytest.raises(ModelError, match=r"constraint 'fl' \(floor\): origin: expected"):
        cs.Floor("a", radius=1.0, origin=(0, 0), name="fl")
    with pytest.raises(ModelError, match=r"constraint 'fl' \(floor\): normal: must be numeric"):
        cs.Floor("a", radius=1.0, normal=("x", 0, 1), name="fl")
