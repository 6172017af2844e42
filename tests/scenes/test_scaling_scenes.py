"""The paper's parametric scaling scenes (RedMax §3, Table 2) and scene parameters: DOF counts as the paper gives
them, the builder's placement rules checked on the built bodies, loops closed at the start, parameters checked
and named, every parameter round-tripping through a scene file."""

import math
import warnings

import numpy as np
import pytest

import redmax as rm
from redmax import scenes
from redmax.errors import SceneError
from redmax.kinematics import forward_kinematics
from redmax.scenes.scaling import deck_camber

PARAMETRIC = {  # name: (non-default parameters, DOF formula)
    "paper/simple_bridge": ({"n_deck": 8}, lambda p: p["n_deck"]),
    "paper/bridge": ({"n_deck": 6, "n_tower": 3, "load": 2.4e6}, lambda p: p["n_deck"] + 2 * p["n_tower"]),
    "paper/umbrella": ({"n": 3}, lambda p: 1 + 16 * p["n"] + 16 * (p["n"] // 2)),
    "paper/tree": ({"levels": 2}, lambda p: 3 * (2 ** p["levels"] - 1)),
    "paper/chain_pcg": ({"n": 5}, lambda p: p["n"]),
}


def _world_point(model, E_wb, body, x):
    return (E_wb[list(model.body_names).index(body)] @ np.r_[x, 1.0])[:3]


def test_the_parametric_scenes_are_listed_with_their_parameters():
    listed = scenes.available()
    for name, (given, _) in PARAMETRIC.items():
        assert listed.get(name)
        assert set(scenes.parameters(name)) == set(given)
    assert scenes.parameters("reference/05") == {}
    assert scenes.parameters("paper/bridge") == {"n_deck": 20, "n_tower": 20, "load": 0.0}


@pytest.mark.parametrize("name", list(PARAMETRIC))
def test_dof_counts_at_the_defaults_and_at_other_values(name):
    given, dofs = PARAMETRIC[name]
    for params in ({}, given):
        s = scenes.load(name, **params)
        full = {**scenes.parameters(name), **params}
        assert s.params == full and s.name == name
        assert s.model.ndof == dofs(full)


def test_the_paper_sizes_have_the_paper_dof_counts():
    """Table 2's DOF columns (spec §3.8: simple_bridge(n), bridge(n, n), umbrella n = 10 ... 46)."""
    assert scenes.load("paper/umbrella", n=10).model.ndof == 241
    assert scenes.load("paper/umbrella", n=16).model.ndof == 385
    assert scenes.load("paper/bridge", n_deck=40, n_tower=40).model.ndof == 120
    assert scenes.load("paper/simple_bridge", n_deck=80).model.ndof == 80


def test_deck_camber_matches_the_spec():
    c, ell = deck_camber(20)
    assert abs(c[0] - 0.125007) < 1e-6 and abs(ell - 1.202287) < 1e-6
    span = ell * np.sum(np.cos(np.cumsum(c[:20])))
    assert abs(span - 24.0002) < 1e-4
    assert abs(np.sum(c[:11])) < 1e-12  # the cumulative angle is 0 at the middle ...
    assert abs(np.sum(c[:20]) + c[0]) < 1e-12  # ... and -c[0] at the right end


@pytest.mark.parametrize("name", ["paper/simple_bridge", "paper/bridge"])
def test_bridge_geometry_follows_the_builders_rules(name):
    s = scenes.load(name, n_deck=20)
    m = s.model
    E_wb = forward_kinematics(m, m.q0)[1]
    assert np.allclose(_world_point(m, E_wb, "anchor_left", (0, 1.5, 0)), (-12, 3, 0))
    assert np.allclose(_world_point(m, E_wb, "anchor_right", (0, 1.5, 0)), (12, 3, 0))
    ell = deck_camber(20)[1]
    # the deck hangs from the left anchor's top, and its right end meets the right anchor's top to 2e-4
    assert np.allclose(_world_point(m, E_wb, "deck0", (-ell / 2, 0, 0)), (-12, 3, 0))
    gap = _world_point(m, E_wb, "deck19", (ell / 2, 0, 0)) - (12, 3, 0)
    assert np.abs(gap).max() < 2e-4
    top = "tower_left" if name == "paper/simple_bridge" else "tower_left19"
    tip = (0, 5, 0) if name == "paper/simple_bridge" else (0, 0.25, 0)
    assert np.allclose(_world_point(m, E_wb, top, tip), (-5, 10, 0))
    cables = [f for f in m.forces if f.name.startswith("cable")]
    assert len(cables) == 30 and s.baumgarte == 100.0 and s.dt == 1e-2
    assert [c.type for c in m.constraints] == ["loop"]
    moving = {m.body_names[i] for i in range(m.nb) if m.joints[i].nq > 0}
    for f in cables:
        ends = {p[0] for p in f.points}
        assert len(ends & moving) == (1 if name == "paper/simple_bridge" else 2), f.name


def test_bridge_load_is_a_point_force_at_the_deck_start_only_when_given():
    assert not [f for f in scenes.load("paper/bridge", n_deck=6, n_tower=2).model.forces if f.name == "load"]
    (f,) = [f for f in scenes.load("paper/bridge", n_deck=6, n_tower=2, load=2.4e6).model.forces if f.name == "load"]
    assert f.points[0][0] == "deck0" and np.allclose(f.force, (0, -2.4e6, 0))


def test_umbrella_closures_start_closed_and_ribs_hang_ten_degrees_off_the_tube():
    s = scenes.load("paper/umbrella", n=4)
    m = s.model
    assert s.baumgarte == 0.0 and np.allclose(m.gravity, 0.0)
    E_wb = forward_kinematics(m, m.q0)[1]
    for c in m.constraints:
        (ba, xa), (bb, xb) = c.points
        assert np.abs(_world_point(m, E_wb, ba, xa) - _world_point(m, E_wb, bb, xb)).max() < 1e-12
        assert c.axis is not None
    for k in range(8):
        th = 2 * math.pi * k / 8
        z = E_wb[list(m.body_names).index(f"rib{k}_1"), :3, 2]
        want = (math.sin(th) * math.cos(math.radians(80)), -math.sin(math.radians(80)),
                math.cos(th) * math.cos(math.radians(80)))
        assert np.allclose(z, want)


def test_tree_is_a_hanging_mobile_pulled_at_its_corners():
    m = scenes.load("paper/tree", levels=3).model
    E_wb = forward_kinematics(m, m.q0)[1]
    corners = [f for f in m.forces if f.name.startswith("corner")]
    assert len(corners) == 4 and len({f.points[0][0] for f in corners}) == 4
    weight = 10 * np.sum(m.mass)
    for f in corners:
        F = np.asarray(f.force)
        assert np.allclose(np.abs(F), weight) and F[1] < 0
        centre = _world_point(m, E_wb, f.points[0][0], (0, 0, 0))
        assert np.sign(centre[0]) == np.sign(F[0]) and np.sign(centre[2]) == np.sign(F[2])
    for i in range(m.nb):
        if m.body_names[i].endswith(("a", "b")):  # leaves hang straight down
            assert abs(abs(E_wb[i, 1, 0]) - 1.0) < 1e-12, m.body_names[i]


@pytest.mark.parametrize("name", list(PARAMETRIC))
def test_scenes_run_their_default_duration_and_are_regular_at_their_defaults(name):
    import redmax.builder as builder

    s = scenes.load(name)
    builder._check_inertia_regular(s.model)  # (the scenes build without it, as the built-in files load)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rm.SimulationWarning)
        res = s.simulate()  # (its whole default duration)
    assert np.all(np.isfinite(res.q)) and res.meta["scene"] == name
    limit = 1e-2 if s.baumgarte == 0 else 1e-3  # (the umbrella: no drift correction, spec; ribs 50 long)
    for v in res.constraint_violation.values():
        assert np.abs(v).max() < limit


@pytest.mark.parametrize("name", list(PARAMETRIC))
def test_every_parameter_round_trips_through_a_scene_file(name, tmp_path):
    given, _ = PARAMETRIC[name]
    a = scenes.load(name, **given)
    path = scenes.save(a, tmp_path / "scene.toml")
    b = scenes.load(str(path))
    assert b.params == a.params == {**scenes.parameters(name), **given}
    ma, mb = a.model, b.model
    assert ma.ndof == mb.ndof and list(ma.body_names) == list(mb.body_names)
    for key in ("q0", "mass", "E_pj0", "E_jb", "gravity"):
        assert np.allclose(getattr(ma, key), getattr(mb, key), rtol=0, atol=1e-12), key
    assert [f.name for f in ma.forces] == [f.name for f in mb.forces]
    assert [c.to_scene() for c in ma.constraints] == [c.to_scene() for c in mb.constraints]
    assert (b.baumgarte, b.dt, b.duration, b.solver) == (a.baumgarte, a.dt, a.duration, a.solver)


def test_parameters_are_checked_and_named():
    with pytest.raises(SceneError, match=r"no parameter 'n_dek'; its parameters: n_deck, n_tower, load"):
        scenes.load("paper/bridge", n_dek=8)
    with pytest.raises(SceneError, match=r"parameter 'n_deck' expects int .* got 'eight'"):
        scenes.load("paper/bridge", n_deck="eight")
    with pytest.raises(SceneError, match=r"parameter 'n_deck' expects int .* got 8.5"):
        scenes.load("paper/bridge", n_deck=8.5)
    with pytest.raises(SceneError, match=r"parameter 'load' expects float .* got True"):
        scenes.load("paper/bridge", load=True)
    with pytest.raises(SceneError, match=r"parameter 'load' must be finite"):
        scenes.load("paper/bridge", load=float("nan"))
    with pytest.raises(SceneError, match=r"parameter 'n_deck' must be >= 4 and <= 100000, got 2"):
        scenes.load("paper/bridge", n_deck=2)
    with pytest.raises(SceneError, match=r"parameter 'levels' must be >= 1 and <= 15, got 40"):
        scenes.load("paper/tree", levels=40)  # (3 (2^40 - 1) DOFs would never finish building)
    with pytest.raises(SceneError, match=r"'reference/05' has no parameters"):
        scenes.load("reference/05", n=3)
    assert scenes.load("paper/chain_pcg", n="7").model.ndof == 7  # (strings as the command line gives them)
    assert scenes.load("paper/chain_pcg", n=7.0).model.ndof == 7


def test_a_users_parametric_scene_is_registered_loaded_and_refused_when_malformed():
    @scenes.register("user/pendulums", "n pendulums", params={"n": 2, "length": 1.0, "damped": False})
    def _pendulums(n, length, damped):
        b = rm.ModelBuilder("pendulums", (0, 0, -9.81))
        for i in range(n):
            b.add_body(f"p{i}", rm.Cuboid(0.1, 0.1, length), rm.Revolute((1, 0, 0)),
                       joint_placement=rm.spatial.trans(i, 0, 0), body_placement=rm.spatial.trans(0, 0, -length / 2),
                       damping=1.0 if damped else 0.0)
        return scenes.Scene("x", b.build())

    try:
        s = scenes.load("user/pendulums", n=3, damped="true")
        assert s.model.ndof == 3 and s.params == {"n": 3, "length": 1.0, "damped": True}
        assert s.name == "user/pendulums" and "user/pendulums" in scenes.available()
    finally:
        scenes._PARAMETRIC.pop("user/pendulums")
    with pytest.raises(SceneError, match="default of type bool, int, float or str"):
        scenes.register("user/bad", "bad", params={"x": [1, 2]})
    with pytest.raises(SceneError, match="identifiers"):
        scenes.register("user/bad", "bad", params={"not a name": 1})
