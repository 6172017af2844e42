"""The built-in reference scenes: they load, carry the specified settings, and run under Euler."""

import warnings

import numpy as np
import pytest

import redmax as rm
from redmax import scenes
from redmax.errors import SceneError

SPEC = {  # name: (duration, dt, ndof)
    "reference/-1": (2.0, 1e-2, 2), "reference/00": (2.0, 1e-2, 3), "reference/01": (2.0, 1e-2, 3),
    "reference/02": (2.0, 1e-2, 4), "reference/03": (3.0, 1e-2, 6), "reference/05": (10.0, 5e-2, 3),
    "reference/11": (5.0, 2e-2, 3), "reference/14": (2.0, 1e-2, 6), "reference/16": (2.0, 1e-2, 4),
    "reference/17": (2.0, 1e-2, 5), "reference/18": (7.0, 1e-2, 6), "reference/19": (2.0, 2e-2, 2),
    "reference/21": (2.0, 5e-3, 3), "reference/22": (2.0, 1e-2, 4), "reference/25": (2.0, 1e-2, 1),
    "reference/26": (1.0, 1e-2, 2), "reference/35": (10.0, 1e-2, 4),
    "reference/10": (2.0, 1e-2, 3), "reference/23": (2.0, 1e-2, 4), "reference/24": (2.0, 1e-2, 2),
    "diff/10": (1.0, 1e-2, 4), "diff/11": (0.6, 5e-4, 3), "diff/12": (1.0, 1e-2, 2), "diff/13": (1.0, 1e-2, 3),
    "diff/14": (1.0, 5e-3, 3),
    # constraint scenes (issue 12) and the paper's reconstructions
    "reference/04": (2.0, 1e-2, 4), "reference/06": (2.0, 1e-2, 2), "reference/07": (2.0, 2e-2, 3),
    "reference/08": (2.0, 2e-2, 6), "reference/09": (10.0, 2e-2, 3), "reference/13": (10.0, 5e-2, 4),
    "reference/15": (2.0, 1e-2, 4), "reference/20": (10.0, 5e-2, 5), "reference/32": (1.0, 5e-3, 4),
    "reference/34": (1.0, 1e-2, 2), "paper/hand": (2.0, 5e-3, 17), "paper/hagfish": (4.8, 2e-3, 150),
    "diff/00": (1.0, 1e-2, 3), "diff/01": (1.0, 1e-2, 3), "diff/02": (1.0, 1e-2, 4), "diff/03": (1.0, 1e-2, 2),
    "diff/04": (1.0, 1e-2, 4), "diff/05": (2.0, 1e-2, 5), "diff/06": (0.4, 5e-3, 3), "diff/07": (1.0, 2e-3, 6),
    "diff/08": (1.0, 1e-2, 6), "diff/09": (6.0, 5e-2, 6), "diff/100": (1.0, 1e-2, 2), "diff/101": (1.0, 1e-2, 2),
    # friction scenes (issue 52)
    "reference/27": (1.0, 1e-2, 2), "reference/28": (1.0, 1e-2, 6), "reference/29": (1.0, 1e-2, 2),
    "reference/31": (2.0, 1e-2, 2), "reference/30": (1.0, 5e-3, 3), "reference/33": (1.0, 5e-3, 9),
    # deformable bodies (issue 53)
    "reference/12": (1.0, 5e-3, 17),
}


PARAMETRIC = {"paper/simple_bridge", "paper/bridge", "paper/umbrella", "paper/tree", "paper/chain_pcg",
              "paper/chain", "paper/klann", "paper/starfish"}  # (their own tests: test_scaling_scenes.py,
# tests/friction, tests/deformables)


def test_catalogue_is_complete():
    assert set(scenes.available()) == set(SPEC) | PARAMETRIC
    assert all(desc for desc in scenes.available().values())


@pytest.mark.parametrize("name", list(SPEC))
def test_scene_runs_with_its_defaults(name):
    """Every built-in scene runs with its defaults, and without a SimulationWarning: the instability rule
    (redmax.integrators.instability) gives no false positive on any of them."""
    s = scenes.load(name)
    duration, dt, ndof = SPEC[name]
    assert (s.duration, s.dt, s.model.ndof) == (duration, dt, ndof)
    assert s.on_instability == "warn"
    with warnings.catch_warnings():
        warnings.simplefilter("error", rm.SimulationWarning)
        res = s.simulate()
    n = int(np.rint(duration / dt))
    assert res.t.shape == (n + 1,) and res.q.shape == (n + 1, ndof) and res.qdot.shape == (n + 1, ndof)
    for key in ("kinetic", "gravity", "joint_springs", "springs", "total"):
        assert res.energy[key].shape == (n + 1,) and np.all(np.isfinite(res.energy[key]))
    assert np.all(np.isfinite(res.q)) and np.isfinite(res.H)
    assert res.meta["scene"] == name and res.meta["integrator"] == s.integrator
    assert s.integrator == {"diff/100": "bdf1", "diff/101": "bdf2"}.get(name, "euler")


def test_scene_facts():
    m = scenes.load("reference/-1").model
    assert np.allclose(m.mass, 10.0) and np.allclose(m.I_body[0], [10 / 12 * 2, 10 / 12 * 101, 10 / 12 * 101])
    assert np.allclose(m.q0, [np.pi / 2, np.pi / 4])
    m = scenes.load("reference/00").model
    assert [j.kind for j in m.joints] == ["revolute", "fixed", "revolute", "fixed", "revolute"]
    m = scenes.load("reference/26").model
    assert m.mass[0] == pytest.approx(6.000001, rel=1e-9)
    m = scenes.load("reference/25").model
    assert m.mass[0] == pytest.approx(10.0 + np.pi * 10.0, rel=1e-14)
    R = m.E_jb[0][:3, :3]
    assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-12)
    m = scenes.load("reference/18").model
    assert list(m.gravity) == [0.0, 0.0, -1.0] and list(m.qd0) == [0, 0, 3, 0.2, 0.4, 0.6]
    m = scenes.load("reference/35").model
    assert list(m.gravity) == [0.0, -1.0, 0.0] and list(m.qd0) == [0, 0, 1, -1]


def test_unknown_scene():
    with pytest.raises(SceneError, match="unknown scene 'reference/99'"):
        scenes.load("reference/99")
    with pytest.raises(SceneError, match="a scene is a name or a path, got 5"):
        scenes.load(5)


def test_overrides():
    s = scenes.load("reference/01")
    r = s.simulate(dt=2e-2, duration=0.1)
    assert r.t.size == 6 and r.meta["dt"] == 2e-2


@pytest.mark.parametrize("diff,ref", [("diff/00", "reference/00"), ("diff/01", "reference/01"),
                                      ("diff/02", "reference/02"), ("diff/08", "reference/14"),
                                      ("diff/04", "reference/16")])
def test_diff_scenes_that_are_reference_scenes(diff, ref):
    """reference-scenes.md: diff/00, 01, 02, 08 are reference/00, 01, 02, 14 and diff/04 is reference/16 (the same
    bodies, joints, placements and initial state; the diff catalogue's defaults: 1 s, h = 1e-2)."""
    from redmax.kinematics import kinematics

    a, b = rm.scenes.load(diff), rm.scenes.load(ref)
    ma, mb = a.model, b.model
    assert ma.ndof == mb.ndof and ma.nb == mb.nb and np.array_equal(ma.parent, mb.parent)
    assert np.array_equal(ma.q0, mb.q0) and np.array_equal(ma.qd0, mb.qd0)
    assert np.array_equal(ma.gravity, mb.gravity) and np.array_equal(ma.mass, mb.mass)
    ka = kinematics(ma, ma.q0, ma.qd0 + 0.3, ma.jstate0)
    kb = kinematics(mb, mb.q0, mb.qd0 + 0.3, mb.jstate0)
    assert np.abs(ka.E_wb - kb.E_wb).max() < 1e-12 and np.abs(ka.phi - kb.phi).max() < 1e-12
    assert np.abs(rm.crba(ma, ma.q0, ma.jstate0) - rm.crba(mb, mb.q0, mb.jstate0)).max() < 1e-9
    assert (a.duration, a.dt) == (1.0, 1e-2)


def test_every_builtin_scene_is_regular_at_its_initial_state(monkeypatch):
    """scenes.load skips the joint-space inertia check of ModelBuilder.build for the built-in scenes (so that a
    first run does not compile the inertia kernel): this test runs that check on each of them (and sees that
    load_scene_file runs it when asked, and scenes.load does not)."""
    import redmax.builder as builder
    from redmax.io.scene_file import load_scene_file
    from redmax.scenes import _builtin_names, builtin_path

    names = _builtin_names()
    assert len(names) >= len(SPEC)
    checked = []
    check = builder._check_inertia_regular
    monkeypatch.setattr(builder, "_check_inertia_regular", lambda m: (checked.append(m.name), check(m)))
    for name in names:
        load_scene_file(builtin_path(name), check_regular=True)  # raises SceneError when singular
    assert len(checked) == len(names)
    scenes.load("reference/05")
    assert len(checked) == len(names)
