"""API misuse answered by named errors with helpful messages (the leak table L1-L8 of the first-hour review and
their kin), overflowing inputs refused instead of returning NaN, chart words that do not go with q refused, and
``simulate``'s keyword-only arguments.  The fuzz test (tests/house/test_fuzz.py, redmax.testing.fuzz.misuse_cases) runs
the same reproducers as a leak check; this module checks what the messages say."""

import os
import warnings

import numpy as np
import pytest

import redmax as rm
from redmax.cli import main
from redmax.testing.fuzz import URDF_BASE


@pytest.fixture(scope="module")
def scene():
    return rm.scenes.load("reference/05")


@pytest.fixture(scope="module")
def xyz():
    b = rm.ModelBuilder("xyz")
    b.add_body("a", rm.Cuboid(1.0, 2.0, 3.0), rm.SphericalEuler("XYZ"))
    b.add_body("b", rm.Cuboid(1.0, 2.0, 3.0), rm.SphericalEuler("XYZ"), parent="a")
    return b.build()


SCENE_HINT = r"got Scene \(a Scene: pass scene.model or use scene.simulate\(\)\)"


def test_a_scene_or_nothing_where_a_model_belongs(arm, scene):
    for call, fn in ((lambda: rm.simulate(scene), "simulate"), (lambda: rm.Simulator(scene), "Simulator"),
                     (lambda: rm.euler_step(scene, arm.initial_state(), 1e-3), "euler_step"),
                     (lambda: rm.linearized_step(scene, arm.initial_state(), 1e-3), "linearized_step"),
                     (lambda: rm.forward_kinematics(scene, np.zeros(3)), "forward_kinematics"),
                     (lambda: rm.energies(scene, np.zeros(3), np.zeros(3)), "energies"),
                     (lambda: rm.redmax_system(scene, np.zeros(3), np.zeros(3)), "redmax_system")):
        with pytest.raises(rm.ModelError, match=rf"^{fn}: expected a redmax.Model as first argument, {SCENE_HINT}$"):
            call()
    with pytest.raises(rm.ModelError, match=r"rnea: expected a redmax.Model .* got Scene \(a Scene: pass scene.model"):
        rm.rnea(scene, np.zeros(3), np.zeros(3), np.zeros(3))
    for bad in (None, 3):
        with pytest.raises(rm.ModelError, match=rf"simulate: expected a redmax.Model as first argument, got "
                                                rf"{type(bad).__name__}$"):
            rm.simulate(bad)
    for bad in ("reference/05", os.path.join("a", "scene.toml")):
        with pytest.raises(rm.ModelError, match=r"got str '.*' \(a name or path: load it first with "
                                                r"redmax.scenes.load\(...\)"):
            rm.simulate(bad)
    with pytest.raises(rm.ModelError, match="Simulator: expected a redmax.Model as first argument, got NoneType"):
        rm.Simulator(None)
    with pytest.raises(rm.ModelError, match="euler_step: expected a redmax.Model"):
        rm.euler_step(None, arm.initial_state(), 1e-3)
    with pytest.raises(rm.ModelError, match="forward_kinematics: expected a redmax.Model"):
        rm.forward_kinematics(None, np.zeros(4))


def test_arrays_of_q(arm):
    E = rm.forward_kinematics(arm, np.zeros(4))[1]
    E_ld = rm.forward_kinematics(arm, np.zeros(4, np.longdouble))[1]  # converted to float64 like rnea
    assert E_ld.dtype == np.float64 and np.array_equal(E, E_ld)
    with pytest.raises(rm.ModelError, match=r"arm: q must hold numbers \(float or complex\), got dtype bool"):
        rm.forward_kinematics(arm, np.zeros(4, bool))
    with pytest.raises(rm.ModelError, match=r"arm: q must hold numbers \(float or complex\), got None$"):
        rm.forward_kinematics(arm, None)
    with pytest.raises(rm.ModelError, match=r"q must hold numbers .* got dtype bool"):
        rm.rnea(arm, np.zeros(4, bool), np.zeros(4), np.zeros(4))


def test_states_are_checked_when_made(arm):
    with pytest.raises(rm.ModelError, match="State: q must be an array of numbers, got None"):
        rm.State(None, None)
    with pytest.raises(rm.ModelError, match="State: qd must be an array of numbers, got dtype <U1"):
        rm.State(np.zeros(4), ["a"] * 4)
    with pytest.raises(rm.ModelError, match="State: t must be a number, got '0'"):
        rm.State(np.zeros(4), np.zeros(4), "0")
    with pytest.raises(rm.SimulationError, match=r"arm: state must be a redmax.State, got str \(simulate takes "
                                                 r"integrator=, dt=, duration=... as keywords\)"):
        rm.simulate(arm, "rk45")
    st = rm.State([0, 0, 0, 0], np.zeros(4), 0)  # integers are numbers
    assert rm.simulate(arm, st, duration=0.01).q.shape == (2, 4)


def test_saving_a_scene_names_the_problem(tmp_path, arm, scene):
    with pytest.raises(rm.SceneError, match="^save: expected a redmax.scenes.Scene, got None$"):
        rm.scenes.save(None, tmp_path / "x.toml")
    with pytest.raises(rm.SceneError, match=r"got Model \(a Model: wrap it as redmax.scenes.Scene\(name, model\)\)"):
        rm.scenes.save(arm, tmp_path / "x.toml")
    with pytest.raises(rm.SceneError, match="^/nonexistent/x.toml: cannot write: folder /nonexistent does not exist$"):
        rm.scenes.save(scene, "/nonexistent/x.toml")
    with pytest.raises(rm.SceneError, match=f"^{tmp_path}: is a directory"):
        rm.scenes.save(scene, tmp_path)
    with pytest.raises(rm.SceneError, match="save: a path is text or a path object, got 5"):
        rm.scenes.save(scene, 5)


# ------------------------------------------------------------------------------------------------------------
# overflow is named, never a NaN nor "moves no mass"

def test_overflowing_q_is_refused_by_every_recursive_call(arm):
    q = np.full(4, 1e155)
    for call in (lambda: rm.crba(arm, q), lambda: rm.crba(arm, np.full(4, 1e300)), lambda: rm.minv(arm, q),
                 lambda: rm.crba(arm, q, jstate=arm.jstate0), lambda: rm.crba(arm, q, out=np.zeros((4, 4))),
                 lambda: rm.crba(arm, np.stack([q, q])), lambda: rm.minv(arm, np.stack([q, q])),
                 lambda: rm.aba(arm, q, np.zeros(4), np.zeros(4)),
                 lambda: rm.hybrid_dynamics(arm, q, np.zeros(4), np.zeros(4), np.zeros(4), np.zeros(4, bool)),
                 lambda: rm.minv_product(arm, q, np.ones(4)),
                 lambda: rm.redmax_accelerations(arm, q, np.zeros(4))):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no NumPy RuntimeWarning on the way either
            with pytest.raises(rm.ModelError) as info:
                call()
        msg = str(info.value)
        assert "overflow" in msg and "moves no mass" not in msg, msg
    assert np.isfinite(rm.crba(arm, np.full(4, 0.3))).all()


def test_overflowing_models_are_named_not_massless(tmp_path):
    for label, old, new in (("axis", '<axis xyz="0 1 0"/>', '<axis xyz="1e300 0 0"/>'),
                            ("origin", '<origin xyz="0.2 0 0"/>\n    <axis xyz="0 1 0"/>',
                             '<origin xyz="1e300 0 0"/>\n    <axis xyz="0 1 0"/>')):
        p = tmp_path / f"{label}.urdf"
        p.write_text(URDF_BASE.replace(old, new, 1))
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            if label == "axis":  # a huge axis is only a direction
                m = rm.load_urdf(str(p))
                assert np.isfinite(rm.crba(m, m.q0)).all() and np.isfinite(rm.forward_kinematics(m, m.q0)[1]).all()
                continue
            with pytest.raises(rm.ModelError) as info:
                rm.load_urdf(str(p))
        assert "moves no mass" not in str(info.value) and "overflow" in str(info.value), str(info.value)
    b = rm.ModelBuilder("s")
    b.add_body("b", rm.Cuboid(1, 1, 1), rm.SphericalExp())
    m = b.build()
    with pytest.raises(rm.ModelError, match="overflow"):
        rm.crba(m, np.full(3, 1e300))


# ------------------------------------------------------------------------------------------------------------
# chart words

def test_chart_words_that_do_not_go_with_q_are_refused(xyz):
    m = xyz
    assert list(m.jstate0) == [6, 6]  # XYZ
    st = rm.State(np.zeros(6), np.zeros(6), 0.0, np.zeros(2))  # word 0: chart XYX, singular at q2 = 0
    pattern = (r"joint 'a': jstate\[0\] = 0 selects Euler chart XYX, not the joint's own XYZ \(word 6\), and q is "
               r"singular in that chart")
    for call in (lambda: rm.simulate(m, st, duration=0.02), lambda: rm.simulate(m, st, integrator="rk45",
                                                                                 duration=0.02),
                 lambda: rm.simulate(m, st, integrator="bdf1", duration=0.02), lambda: rm.Simulator(m, st),
                 lambda: rm.euler_step(m, st, 1e-3), lambda: rm.forward_kinematics(m, np.zeros(6), np.zeros(2))):
        with pytest.raises(rm.ModelError, match=pattern):
            call()
    rm.forward_kinematics(m, np.zeros(6), m.jstate0)
    q = np.array([0.1, 0.7, 0.2, 0.0, 0.0, 0.0])  # regular in chart XYX too: a state after a chart switch
    rm.forward_kinematics(m, q, np.array([0, 6]))


def test_states_after_chart_switches_are_accepted(xyz):
    """The simulation moves a joint to any of the twelve charts near gimbal lock; its results go back in."""
    b = rm.ModelBuilder("ball", gravity=(0.0, 0.0, -9.81))
    b.add_body("a", rm.Cuboid(0.1, 0.1, 1.0), rm.SphericalEuler("XYZ"), body_placement=rm.spatial.trans(0, 0, -0.5),
               q=[0.3, 1.2, 0.0], qd=[0.0, 3.0, 0.5])
    m = b.build()
    res = rm.simulate(m, dt=1e-3, duration=1.0)
    switched = [k for k in range(res.t.size) if res.jstate[k][0] != m.jstate0[0]]
    assert switched, "the run should switch charts"
    for k in switched[::50]:
        rm.forward_kinematics(m, res.q[k], res.jstate[k])
        rm.simulate(m, rm.State(res.q[k], res.qdot[k], res.t[k], res.jstate[k]), duration=0.01)


# ------------------------------------------------------------------------------------------------------------
# simulate: keyword-only after model and state

def test_simulate_takes_keywords_and_warns_on_the_old_positional_form(arm):
    new = rm.simulate(arm, None, integrator="rk45", dt=1e-2, duration=0.05)
    with pytest.warns(DeprecationWarning, match=r"simulate\(model, state, integrator, dt, duration\) by position is "
                                                "deprecated: pass integrator=, dt=, duration= as keywords"):
        old = rm.simulate(arm, None, "rk45", 1e-2, 0.05)
    assert np.array_equal(old.q, new.q) and old.meta["integrator"] == "rk45"
    with pytest.raises(rm.SimulationError, match="simulate: dt given both by position and as a keyword"), \
            pytest.warns(DeprecationWarning):
        rm.simulate(arm, None, "rk45", 1e-2, dt=1e-3)
    with pytest.raises(rm.SimulationError, match="at most 9 deprecated ones"):
        rm.simulate(arm, None, *range(10))
    with pytest.raises(rm.SimulationError, match="integrator must be a name"):
        rm.simulate(arm, integrator=3)


# ------------------------------------------------------------------------------------------------------------
# messages: plain numbers, no doubled prefixes

def test_messages_show_plain_numbers():
    with pytest.raises(rm.ModelError) as info:
        rm.Cuboid(10.0, np.float64(np.nan), 1.0)
    assert str(info.value) == "cuboid: side lengths must be positive finite numbers, got (10.0, nan, 1.0)"
    b = rm.ModelBuilder("lim")
    b.add_body("a", rm.Cuboid(1, 1, 1), rm.Revolute((0, 1, 0)))
    b.add_constraint(rm.constraints.Limit("a", lower=[-1.0, -2.0]))
    with pytest.raises(rm.RedmaxError, match=r"expected 1 value \(one per DOF of joint 'a'\), got 2"):
        b.build()


def test_link_pose_explains_itself(arm, xyz):
    with pytest.raises(rm.ModelError, match="xyz: link_pose knows the links of models loaded by load_urdf only"):
        rm.link_pose(xyz, np.zeros(6), "a")
    with pytest.raises(rm.ModelError, match=r"arm: no link 'c' \(links: "):
        rm.link_pose(arm, np.zeros(4), "c")
    with pytest.raises(rm.ModelError, match="link_pose: expected a redmax.Model"):
        rm.link_pose(None, np.zeros(4), "c")


def test_cli_prefixes_once_and_checks_gtol(capsys):
    assert main(["run", "reference/23", "--dt", "0.5", "--duration", "50", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("redmax: error: reference/23: step") and err.count("reference/23:") == 1, err
    assert main(["run", "paper/hand", "--integrator", "bdf2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("paper/hand:") == 1 and "does not handle constraints" in err, err
    assert main(["optimize", "diff/100", "--gtol", "nan"]) == 2
    assert capsys.readouterr().err == "redmax: error: --gtol must be positive and finite, got nan\n"
