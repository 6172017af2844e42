"""The adjoint method (issue 13): gradients of objectives of the simulated states against central differences of the
whole simulation (relative 1e-6) for every parameter kind under BDF1, SDIRK2 and BDF2, the adjoint reaching scenes
diff/100 (BDF1) and diff/101 (BDF2), scene objectives and scene files, the optimisation front end."""

import numpy as np
import pytest

import redmax as rm
from redmax import params
from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.errors import SceneError, SimulationError
from redmax.forces import Cable, JointLimit, PointSpring, SpringDamper
from redmax.joints import Prismatic, Revolute, SphericalExp
from redmax.objectives import Objective, PointTarget, StateTarget
from redmax.optimize import Problem, value_and_gradient
from redmax.spatial import trans

from tolerances import ADJOINT_REL, rel

IMPLICIT = ("bdf1", "sdirk2", "bdf2")
TIGHT = {"tol": 1e-12}


def _model():
    """Three bodies (revolute, spherical, prismatic) with joint springs and dampers, a point spring, a
    spring-damper to the world, a taut cable, an active joint limit and body damping, in SI units."""
    b = ModelBuilder("adj", (0.0, 0.0, -9.81))
    b.add_body("b1", Cuboid(1.0, 0.2, 0.2), Revolute((0, 1, 0)), joint_name="J1", body_placement=trans(0.5, 0, 0),
               q=[0.3], qd=[0.5], stiffness=4.0, joint_damping=0.3)
    b.add_body("b2", Cuboid(0.2, 0.2, 1.0), SphericalExp(), parent="b1", joint_name="J2",
               joint_placement=trans(1.0, 0, 0), body_placement=trans(0, 0, -0.5), q=[0.2, -0.1, 0.3],
               qd=[0.1, 0.4, -0.2], stiffness=2.0, joint_damping=0.2, damping=0.05)
    b.add_body("b3", Cuboid(0.3, 0.3, 0.3), Prismatic((0, 0, 1)), parent="b2", joint_name="J3",
               joint_placement=trans(0, 0, -1.0), q=[0.1], qd=[-0.3], stiffness=5.0, joint_damping=0.1)
    b.add_force(PointSpring(("b1", (0.3, 0.0, 0.1)), ("b3", (0.1, 0.0, 0.0)), ks=8.0, kd=0.5, name="spring"))
    b.add_force(SpringDamper((None, (0.5, 0.3, 0.2)), ("b3", (0.0, 0.1, 0.0)), k=6.0, d=0.4, name="sd"))
    b.add_force(Cable([("b1", (0.5, 0, 0)), ("b2", (0, 0.1, 0)), ("b3", (0, 0, 0.1))], k=5.0, d=0.3, rest_length=0.45,
                      name="cable"))  # initial length 0.826: taut throughout
    b.add_force(JointLimit("J3", -1.0, -0.5, stiffness=1.0, damping=0.05, name="limit"))  # violated throughout
    return b.build()


def _objective():
    return Objective([PointTarget("b3", (0.1, 0.05, 0.0), (1.0, 0.2, -1.0), time=None, weight=3.0),
                      StateTarget(q=np.zeros(5), qd=np.ones(5), time=0.05, weight=0.7, weight_qd=0.4)],
                     regularization=1e-3)


PARAMS = {
    "torque": lambda: [params.Torque("J2", scale=2.0)],
    "torque_sequence": lambda: [params.TorqueSequence("J1", scale=1.5)],
    "initial_q": lambda: [params.InitialQ("J2")],
    "initial_qd": lambda: [params.InitialQd()],
    "stiffness": lambda: [params.Stiffness("J1"), params.Stiffness("spring"), params.Stiffness("sd"),
                          params.Stiffness("cable"), params.Stiffness("limit")],
    "damping": lambda: [params.Damping("J3"), params.Damping("spring"), params.Damping("sd"), params.Damping("cable"),
                        params.Damping("limit")],
    "mass": lambda: [params.Mass("b2"), params.Mass("b3")],
}


def _fd(prob, x, step):
    g = np.zeros_like(x)
    for i in range(x.size):
        def at(s, i=i):
            y = x.copy()
            y[i] += s
            return prob.value(y)
        d = step * max(1.0, abs(x[i]))
        g[i] = (8.0 * (at(d) - at(-d)) - (at(2 * d) - at(-2 * d))) / (12.0 * d)
    return g


@pytest.mark.parametrize("kind", list(PARAMS))
@pytest.mark.parametrize("method", IMPLICIT)
def test_adjoint_gradient_equals_central_differences(kind, method):
    m = _model()
    prob = Problem(m, PARAMS[kind](), _objective(), integrator=method, dt=0.01, duration=0.1, newton=TIGHT)
    rng = np.random.default_rng(1)
    x = prob.x0 + 0.1 * rng.normal(size=prob.x0.size) * np.maximum(1.0, np.abs(prob.x0))
    out = prob.evaluate(x)
    fd = _fd(prob, x, 1e-4)
    print(method, kind, out.gradient, fd, out.info)
    assert rel(out.gradient, fd) < ADJOINT_REL
    assert len(out.gradients) == len(prob.parameters)
    assert out.info["solves"] == len(out.result.meta["newton_iterations"]) * (2 if method == "sdirk2" else 1) + \
        (1 if method == "bdf2" else 0)


def test_the_forces_of_the_gradient_model_are_active_throughout():
    """Guards the stiffness/damping gradients above: the cable stays taut and the joint limit violated."""
    from redmax.kinematics import kinematics

    m = _model()
    r = rm.simulate(m, integrator="bdf1", dt=0.01, duration=0.1)
    assert np.all(r.q[:, 4] > -0.5 + 0.1)
    pts = [(0, (0.5, 0, 0)), (1, (0, 0.1, 0)), (2, (0, 0, 0.1))]
    for q, js in zip(r.q, r.jstate, strict=True):
        E = kinematics(m, q, None, js).E_wb
        x = [E[b, :3, :3] @ np.array(p) + E[b, :3, 3] for b, p in pts]
        assert np.linalg.norm(x[1] - x[0]) + np.linalg.norm(x[2] - x[1]) > 0.45 * 1.1


@pytest.mark.parametrize("name,method", [("diff/100", "bdf1"), ("diff/100", "sdirk2"), ("diff/101", "bdf2")])
def test_reaching_scenes_gradients(name, method):
    s = rm.scenes.load(name)
    p = np.array([0.03, -0.02])
    val, grad = s.objective(p, integrator=method)
    prob = s.problem(method)
    fd = np.zeros(2)
    for i in range(2):
        d = 1e-5
        e = np.zeros(2)
        e[i] = d
        v = [prob.value(p + c * e) for c in (1, -1, 2, -2)]
        fd[i] = (8 * (v[0] - v[1]) - (v[2] - v[3])) / (12 * d)
    print(name, method, val, grad, fd)
    assert rel(grad, fd) < ADJOINT_REL
    assert val == pytest.approx(prob.value(p), rel=1e-12)


def test_reaching_scene_setup_and_optimisation():
    s = rm.scenes.load("diff/100")
    assert s.integrator == "bdf1" and np.array_equal(s.parameters, [0.0, 0.0])
    assert rm.scenes.load("diff/101").integrator == "bdf2"
    from scipy.optimize import minimize

    res = minimize(s.objective, s.parameters, jac=True, method="L-BFGS-B", options={"maxiter": 30})
    hist = s.problem().history
    print("diff/100 objective", hist[0], "->", res.fun, res.nit, res.message)
    assert res.fun < 1e-2 * hist[0]
    x = s.problem().objective.terms[0].position(s.model, s.problem().simulate(res.x)[0].q[-1],
                                                s.model.jstate0)
    assert np.linalg.norm(x - [10.0, 0.0, -10.0]) < 1.0


def test_scene_file_round_trip_of_objective_and_parameters(tmp_path):
    s = rm.scenes.load("diff/101")
    path = rm.scenes.save(s, tmp_path / "reach.toml")
    text = open(path).read()
    assert "[objective]" in text and "[[parameters]]" in text and 'type = "point_target"' in text
    s2 = rm.scenes.load(path)
    p = np.array([0.01, 0.02])
    assert np.allclose(s2.objective(p)[1], s.objective(p)[1], rtol=1e-12)
    w = text.replace("weight = 100.0", "weights = [100.0, 0.01]").replace("regularization = 0.01\n", "")
    assert w != text and "regularization" not in w
    (tmp_path / "w.toml").write_text(w)
    assert np.allclose(rm.scenes.load(tmp_path / "w.toml").objective(p)[1], s.objective(p)[1], rtol=1e-12)
    (tmp_path / "w2.toml").write_text(text.replace("weight = 100.0", "weight = 100.0\nweights = [1.0, 2.0]"))
    with pytest.raises(SceneError, match=r"objective\.weights"):
        rm.scenes.load(tmp_path / "w2.toml")
    bad = text.replace('type = "torque"', 'type = "force"')
    (tmp_path / "bad.toml").write_text(bad)
    with pytest.raises(SceneError, match=r"parameters\[0\]\.type"):
        rm.scenes.load(tmp_path / "bad.toml")


def test_errors_name_the_problem():
    m = _model()
    with pytest.raises(SceneError, match="unknown joint 'nope'"):
        Problem(m, [params.Torque("nope")], _objective())
    with pytest.raises(SceneError, match="runs with bdf1"):
        Problem(m, [params.Torque("J1")], _objective(), integrator="euler")
    with pytest.raises(SceneError, match="defines no objective"):
        rm.scenes.load("diff/00").objective([0.0])
    assert rm.scenes.load("diff/00").parameters is None


def test_adjoint_refuses_a_run_with_a_chart_switch():
    b = ModelBuilder("spin", (0.0, 0.0, 0.0))
    b.add_body("a", Cuboid(1, 2, 3), SphericalExp(), joint_name="J", q=[4.6, 0.0, 0.0], qd=[3.0, 0.0, 0.0])
    m = b.build()
    with pytest.raises(SimulationError, match="chart switch"):
        value_and_gradient(m, [params.InitialQd("J")], StateTarget(q=np.zeros(3)), dt=0.01, duration=0.1)


def test_cli_optimize(tmp_path, capsys):
    from redmax.cli import main

    plot, movie = tmp_path / "obj.png", tmp_path / "motion.gif"
    assert main(["optimize", "diff/100", "--maxiter", "3", "--plot", str(plot), "--animate", str(movie)]) == 0
    out = capsys.readouterr().out
    assert "iteration   1" in out and "parameters:" in out
    assert plot.stat().st_size > 0 and movie.stat().st_size > 0
    assert main(["optimize", "diff/00"]) == 2
