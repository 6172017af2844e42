"""Deformable bodies in models (issue 53): strands and meshes as node DOFs, attachments by rows and by elimination,
energies, scene files, and the scenes reference/12 and paper/starfish."""

import numpy as np
import pytest

import redmax as rm
from redmax.deformables import FEM, Strand
from redmax.scenes.reference import G, _standard_chain

from tolerances import ENERGY_DOP853_REL

# The original's stored linearly implicit Euler energy of reference/12 (RedMax MATLAB, testRedMaxScenes.m, scene 12)
H_ORIGINAL_12 = -11740.4013565295099397


def _reference_12(coupling="rows", implicit=False, nodes=(3, 2), stiffness=1e5, mass=1.0):
    b = rm.ModelBuilder("r12", G)
    _standard_chain(b, 2)
    b.add_deformable(Strand("strand1", [("world", (30.0, 0.0, 10.0)), ("link2", (5.0, 0.0, 0.0))], nodes=nodes[0],
                            stiffness=stiffness, mass=mass, coupling=coupling, implicit=implicit))
    b.add_deformable(Strand("strand2", [("link1", (0.0, 0.0, 0.0)), ("link2", (0.0, 0.0, 0.0))], nodes=nodes[1],
                            stiffness=stiffness, mass=mass, coupling=coupling, implicit=implicit))
    return b.build()


@pytest.fixture(scope="module")
def run12():
    return rm.scenes.load("reference/12").simulate()


def test_reference_12_reproduces_the_original_energy(run12):
    assert abs(run12.H - H_ORIGINAL_12) <= 1e-6 + 1e-9 * abs(H_ORIGINAL_12)
    assert run12.meta["steps"] == 200
    assert "deformable" in run12.energy


def test_reference_12_layout_and_world_attachment(run12):
    m = rm.scenes.load("reference/12").model
    assert m.ndof == 17  # nr = 17: 2 joints, 5 nodes
    assert m.dof_names[2:5] == ("strand1.1.x", "strand1.1.y", "strand1.1.z")
    assert m.dof_names[-1] == "strand2.2.z"
    assert sum(c.nrows for c in m.constraints) == 12
    assert np.abs(run12.constraint_violation["strand1.attach.1"]).max() <= 1e-8  # the world attachment
    s1 = m.deformables[0]
    np.testing.assert_allclose(s1.X, [[30, 0, 10], [25, 0, 5], [20, 0, 0]])
    assert np.allclose(s1.mass, 1 / 3) and s1.dofs[0].tolist() == [2, 3, 4]


def test_strand_energy_is_the_segments_strain_energy(run12):
    """The ``deformable`` energy equals sum K e^2 / 2 over the segments, recomputed from the node coordinates."""
    m = rm.scenes.load("reference/12").model
    k = 117
    q = run12.q[k]
    want = 0.0
    for d in m.deformables:
        x = d.positions(m, q)
        L = np.linalg.norm(np.diff(d.X, axis=0), axis=1)
        e = (np.linalg.norm(np.diff(x, axis=0), axis=1) - L) / L
        want += 0.5 * 1e5 * np.sum(e * e)
    assert want > 1.0
    assert abs(run12.energy["deformable"][k] - want) <= 1e-10 * want


@pytest.mark.parametrize("variant", [dict(), dict(implicit=True), dict(nodes=(4, 3), stiffness=3e4, mass=2.0)])
def test_rows_and_elimination_agree_as_the_step_shrinks(variant):
    """Attachment rows (paper Eq. 6) and eliminated nodes (notes Eq. 2.96): final H closer at h/4 than at h."""
    mr, me = _reference_12("rows", **variant), _reference_12("eliminate", **variant)
    assert me.ndof == mr.ndof - 4 * 3  # the strands' end nodes have no DOFs
    assert "strand1.1.x" not in me.dof_names and "strand1.2.x" in me.dof_names
    gaps = []
    for h in (5e-3, 5e-3 / 4):
        Hr = rm.simulate(mr, integrator="euler", dt=h, duration=0.5, baumgarte=5.0).H
        He = rm.simulate(me, integrator="euler", dt=h, duration=0.5).H
        gaps.append(abs(Hr - He))
    assert gaps[1] < gaps[0]


def _block(coupling="eliminate", gravity=(0.0, 0.0, 0.0), element="tet4", material="corotated", **kw):
    b = rm.ModelBuilder("block", gravity)
    b.add_deformable(FEM("block", {"box": [0.4, 0.1, 0.1], "divisions": [4, 1, 1]}, element=element,
                         material=material, young=1e5, poisson=0.3, density=1000.0, coupling=coupling,
                         attach=[{"body": "world", "within": [[-0.21, -1, -1], [-0.19, 1, 1]]}], **kw))
    return b.build()


def _kick(m, v=0.5):
    st = m.initial_state()
    d = m.deformables[0]
    qd = np.zeros(m.ndof)
    for i in np.flatnonzero(d.X[:, 0] > 0.19):
        qd[d.dofs[i, 2]] = v
    st.qd = qd
    return st


@pytest.mark.parametrize("material", ["corotated", "neo_hookean"])
def test_clamped_block_conserves_energy_under_dop853(material):
    m = _block(material=material)
    r = rm.simulate(m, _kick(m), integrator="dop853", dt=0.02, duration=0.2, rtol=1e-10, atol=1e-10)
    E = r.energy["total"]
    assert np.ptp(r.energy["deformable"]) > 0.1 * abs(E[0])  # it vibrates
    assert np.abs(E - E[0]).max() <= ENERGY_DOP853_REL * abs(E[0])


def test_world_rows_hold_and_equal_elimination():
    me, mr = _block("eliminate"), _block("rows")
    assert mr.ndof == me.ndof + 12 and len(mr.constraints) == 4
    re = rm.simulate(me, _kick(me), integrator="euler", dt=1e-3, duration=0.1)
    rr = rm.simulate(mr, _kick(mr), integrator="euler", dt=1e-3, duration=0.1)
    assert max(np.abs(v).max() for v in rr.constraint_violation.values()) <= 1e-8
    assert abs(re.H - rr.H) <= 1e-9 * abs(re.energy["total"][0])


def test_fem_on_a_rotating_body_rows_and_elimination_converge():
    """A block hanging from a pendulum link (attachments on a moving body): rows and elimination agree as h -> 0,
    and the mesh's elastic energy is exchanged with the link's."""
    def model(coupling):
        b = rm.ModelBuilder("pendulum", (0.0, 0.0, -9.81))
        b.add_body("link", rm.bodies.Cuboid(0.3, 0.05, 0.05, density=1000.0), rm.joints.Revolute((0, 1, 0)),
                   body_placement=rm.spatial.trans(0.15, 0, 0))
        b.add_deformable(FEM("tail", {"box": [0.3, 0.05, 0.05], "divisions": [3, 1, 1]}, young=2e5, poisson=0.3,
                             density=500.0, placement=rm.spatial.trans(0.45, 0, 0), coupling=coupling,
                             attach=[{"body": "link", "within": [[0.14, -1, -1], [0.16, 1, 1]]}]))
        return b.build()

    mr, me = model("rows"), model("eliminate")
    gaps = []
    for h in (4e-3, 1e-3):
        rr = rm.simulate(mr, integrator="euler", dt=h, duration=0.2, baumgarte=5.0)
        re = rm.simulate(me, integrator="euler", dt=h, duration=0.2)
        assert np.all(np.isfinite(rr.energy["total"])) and re.energy["deformable"].max() > 0
        gaps.append(abs(rr.q[-1, 0] - re.q[-1, 0]))
    assert gaps[1] < gaps[0]


def test_scene_file_round_trip(tmp_path):
    b = rm.ModelBuilder("mixed", G)
    _standard_chain(b, 1)
    b.add_deformable(Strand("s", [("world", (0, 0, 10)), ("link1", (5, 0, 0))], nodes=3, stiffness=1e4, mass=0.5,
                            damping=0.1, implicit=True, coupling="eliminate"))
    b.add_deformable(FEM("f", {"box": [10, 2, 2], "divisions": [2, 1, 1]}, young=1e5, poisson=0.3, density=0.1,
                         placement=rm.spatial.trans(15, 0, 0), rayleigh=(0.1, 0.01),
                         attach=[{"body": "link1", "within": [[4.9, -2, -2], [5.1, 2, 2]]}]))
    scene = rm.scenes.Scene("mixed", b.build(), duration=0.05, dt=1e-2)
    path = tmp_path / "mixed.toml"
    rm.scenes.save(scene, path)
    text = path.read_text()
    assert "[[deformables]]" in text and 'type = "fem"' in text
    again = rm.scenes.load(str(path))
    assert again.model.dof_names == scene.model.dof_names
    r0, r1 = scene.simulate(), again.simulate()
    np.testing.assert_array_equal(r0.q, r1.q)


@pytest.mark.parametrize("doc, field", [
    ({"type": "strand", "name": "s", "nodes": 1, "stiffness": 1.0, "mass": 1.0,
      "ends": [{"body": "world", "point": [0, 0, 0]}, {"body": "world", "point": [1, 0, 0]}]}, "nodes"),
    ({"type": "strand", "name": "s", "nodes": 3, "stiffness": 1.0, "mass": 1.0,
      "ends": [{"body": "nobody", "point": [0, 0, 0]}, {"body": "world", "point": [1, 0, 0]}]}, "nobody"),
    ({"type": "fem", "name": "f", "mesh": {"box": [1, 1, 1], "divisions": [1, 1, 1]}, "density": 1.0,
      "material": {"young": 1e5, "poisson": 0.7}}, "poisson"),
    ({"type": "fem", "name": "f", "mesh": {"box": [1, 1, 1], "divisions": [1, 1, 1]}, "density": 1.0,
      "material": {"young": 1e5, "poisson": 0.3}, "attach": [{"body": "world", "within": 0.01}]}, "within"),
    ({"type": "fem", "name": "f", "mesh": {"sphere": 1}, "density": 1.0,
      "material": {"young": 1e5, "poisson": 0.3}}, "mesh"),
    ({"type": "jelly", "name": "f"}, "type"),
])
def test_bad_deformable_tables_name_the_field(doc, field):
    from redmax.io.scene_file import scene_from_dict

    d = {"format": "redmax-scene", "version": 1, "scene": {"name": "bad"}, "deformables": [doc]}
    with pytest.raises(rm.RedmaxError) as e:
        scene_from_dict(d, "bad.toml")
    msg = str(e.value)
    assert "bad.toml: deformables[0]" in msg and field in msg, msg


def test_starfish_builds_about_two_hundred_nodes_around_twenty_joints():
    m = rm.scenes.load("paper/starfish", duration=0.01).model
    d = m.deformables[0]
    assert 180 <= d.nnodes <= 260 and d.kind == "fem"
    assert sum(1 for j in m.joints if j.kind == "revolute") == 20
    assert sum(1 for a in d.attached if a) >= 40
    assert d.surface.shape[1] == 3


@pytest.mark.parametrize("solver", ["dense", "sparse", "pcg"])
def test_starfish_runs_under_every_solver(solver):
    r = rm.scenes.load("paper/starfish", duration=0.02, coupling="eliminate").simulate(solver=solver)
    assert r.meta["solver"] == solver
    for k, v in r.energy.items():
        assert np.all(np.isfinite(v)), k
    assert r.energy["deformable"][-1] > 0


def test_starfish_skin_moves_the_bones_and_bones_move_the_skin():
    """Two-way coupling: with the drives off, a push on skin nodes only (an initial velocity of the tip nodes of
    arm 2, none attached) turns arm 2's joints; with the skin at rest, a driven joint moves the skin."""
    scene = rm.scenes.load("paper/starfish", duration=0.05, coupling="eliminate")
    m = scene.model
    free = m.deformables[0]
    st = m.initial_state()
    qd = np.zeros(m.ndof)
    a2 = 2 * np.pi / 5
    tip = [i for i in range(free.nnodes) if free.dofs[i, 0] >= 0
           and free.X[i] @ np.array([np.cos(a2), np.sin(a2), 0.0]) > 0.42]
    assert tip
    for i in tip:
        qd[free.dofs[i, 2]] = 1.0
    st.qd = qd
    passive = rm.scenes.load("paper/starfish", duration=0.05, coupling="eliminate", drive=False)
    pushed, rest = passive.simulate(state=st), passive.simulate()
    arm2 = [m.dof_names.index(f"arm2.joint{k}") for k in range(1, 5)]
    moved = np.abs(pushed.q[-1, arm2] - rest.q[-1, arm2]).max()
    assert moved > 3e-4  # the skin moved the bones (radians, in 0.05 s)
    driven = scene.simulate()
    x0 = free.positions(m, driven.q[0])
    x1 = free.positions(m, driven.q[-1])
    arm1_skin = [i for i in range(free.nnodes) if free.X[i, 0] > 0.35 and free.dofs[i, 0] >= 0]
    assert np.linalg.norm(x1[arm1_skin] - x0[arm1_skin], axis=1).max() > 1e-3  # the bones moved the skin



def test_fem_surface_rests_on_the_ground():
    """A free block dropped on the penalty ground (its surface nodes) comes to rest on it: no node sinks more than
    a few millimetres, and the block stops."""
    b = rm.ModelBuilder("drop", (0.0, 0.0, -9.81))
    b.add_deformable(FEM("cube", {"box": [0.1, 0.1, 0.1], "divisions": [1, 1, 1]}, young=1e5, poisson=0.3,
                         density=500.0, rayleigh=(1.0, 0.01), placement=rm.spatial.trans(0, 0, 0.06),
                         ground={"kn": 1e4, "kd": 50.0, "mu": 0.5, "kt": 100.0}))
    m = b.build()
    r = rm.simulate(m, integrator="euler", dt=2e-3, duration=1.0)
    z = m.deformables[0].positions(m, r.q[-1])[:, 2]
    assert z.min() > -0.005 and z.min() < 0.0  # in contact, shallow
    assert np.abs(r.qdot[-1]).max() < 1e-2
