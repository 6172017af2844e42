"""Instability detection (redmax.integrators.instability): a run whose energy grows beyond what the model can explain
gives one SimulationWarning naming the step, time and energy ("warn"), a SimulationError ("raise") or nothing
("ignore"), on every integrator, the Simulator, scenes, scene files and the command line; stable runs never warn;
an adaptive integrator that cannot make progress stops within seconds naming its step size."""

import time
import warnings

import numpy as np
import pytest

import redmax as rm
import redmax.integrators.instability as instability
from redmax.cli import main
from redmax.solvers.linear import DenseSolver
from redmax.spatial import trans

from paths import ARM_URDF, user_messages


def chain(n: int = 50):
    """The 50-link chain of the first-hour review (§B.3): cuboids 0.1 x 0.02 x 0.02 m of density 1000, revolute
    joints about y, gravity 9.81, no damping, q0 = 0.5 on the first joint and 0.02 on the others."""
    b = rm.ModelBuilder(f"chain{n}", gravity=(0.0, 0.0, -9.81))
    prev = None
    for i in range(n):
        prev = b.add_body(f"b{i}", rm.Cuboid(0.1, 0.02, 0.02, density=1000.0), rm.Revolute((0, 1, 0)), parent=prev,
                          joint_placement=None if i == 0 else trans(0.1, 0, 0), body_placement=trans(0.05, 0, 0),
                          q=[0.5 if i == 0 else 0.02])
    return b.build()


@pytest.fixture(scope="module")
def chain50():
    return chain(50)


def pendulum(gravity=-9.81):
    b = rm.ModelBuilder("pendulum", gravity=(0.0, 0.0, gravity))
    b.add_body("arm", rm.Cuboid(1.0, 0.1, 0.1), rm.Revolute((0, 1, 0)), body_placement=trans(0.5, 0, 0), q=[0.3])
    return b.build()


def simulation_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [w for w in caught if issubclass(w.category, rm.SimulationWarning)]


# ------------------------------------------------------------------------------------------------------------
# the rule

def test_the_rule_and_its_scale():
    m = pendulum()
    L = instability.model_size(m)  # joint at the origin, centre of mass at 0.5, radius of gyration of a 1 m bar
    assert L == pytest.approx(0.5 + np.sqrt(m.I_body[0].max() / m.mass[0]))
    mass = float(m.mass[0])
    assert instability.energy_scale(m, [0, 0, 0, 0, 0]) == pytest.approx(max(mass * 9.81 * L,
                                                                           0.5 * (mass * L * L + m.I_body[0].max())))
    assert instability.energy_scale(m, [0, -1e9, 0, 0, 0]) == 1e9
    assert instability.FACTOR == 1e6 and issubclass(rm.SimulationWarning, rm.RedmaxWarning)
    with pytest.raises(rm.SimulationError, match="on_instability must be one of 'warn', 'raise', 'ignore'"):
        instability.check_mode("loud")


def test_the_warning_fires_once_at_the_first_bad_sample_and_counts_the_inputs_work():
    m = pendulum()
    t = np.arange(6) * 0.1
    w = instability.Watch(m, "warn", "p", t)
    w.start([0.0, 1.0, 0.0, 0.0, 0.0])
    S, F = w.scale, instability.FACTOR
    w.add_work(0, np.array([0.0, 0.0, 3 * S, 0.0, 0.0]))  # the inputs have done 3 S of work from sample 3 on
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w.energies(0, 1 + F * S * np.array([0.0, 0.5, 2.0, 2.0, 5.0, 9.0]))
        w.energies(0, 1 + F * S * np.full(6, 9.0))  # once per run
    assert len(caught) == 1 and caught[0].category is rm.SimulationWarning
    assert "at step 2 (t = 0.2)" in str(caught[0].message)  # no work yet at sample 2: 2 F S gained
    w = instability.Watch(m, "raise", "p", t)
    w.start([0.0, 1.0, 0.0, 0.0, 0.0])
    w.add_work(0, np.array([3 * S, 0.0, 0.0, 0.0, 0.0]))  # from sample 1 on the bound is F (S + 3 S)
    w.energies(0, 1 + F * S * np.array([0.0, 2.0, 3.9]))  # explained by the work
    with pytest.raises(rm.SimulationError, match=r"p: unstable simulation: at step 4 \(t = 0.4\)"):
        w.energies(3, 1 + F * S * np.array([3.9, 4.1]))
    w = instability.Watch(m, "ignore", "p", t)
    w.energies(0, np.full(6, np.inf))  # "ignore" looks at nothing


# ------------------------------------------------------------------------------------------------------------
# the 50-link chain under coriolis="implicit" (first-hour review §B.3)

def test_the_exploding_chain_warns_once_naming_step_time_and_energy(chain50):
    """At 2 ms the review saw |qd| > 1e3 rad/s from 7.81 s and energies of 1e15 J; 9 s (4500 steps) suffice."""
    res, ws = simulation_warnings(lambda: rm.simulate(chain50, dt=2e-3, duration=9.0, coriolis="implicit"))
    assert len(ws) == 1
    msg = str(ws[0].message)
    k = int(msg.split("at step ")[1].split(" ")[0])
    assert msg.startswith("chain50: unstable simulation: at step ") and f"(t = {res.t[k]:.6g})" in msg
    assert "total energy" in msg and "bdf1" in msg
    assert ws[0].filename == __file__  # reported at the caller's line
    E = res.energy["total"]
    S = instability.energy_scale(chain50, [res.energy[key][0] for key in res.energy if key != "total"])
    assert 90 < S < 100  # total mass 2 kg x 9.81 x 5 m
    assert abs(E[k] - E[0]) > 1e6 * S >= np.abs(E[:k] - E[0]).max()  # the first sample past the bound
    # (the chain is chaotic: the moment of the blow-up moves with rounding, here near 7 s)
    assert np.abs(res.qdot[k]).max() > 1e3 and res.t[k] > 5.0
    with pytest.raises(rm.SimulationError, match=r"chain50: unstable simulation: at step \d+ \(t = "):
        rm.simulate(chain50, dt=2e-3, duration=9.0, coriolis="implicit", on_instability="raise")
    _, ws = simulation_warnings(lambda: rm.simulate(chain50, dt=2e-3, duration=9.0, coriolis="implicit",
                                                    on_instability="ignore"))
    assert ws == []


def test_the_stable_reference_scheme_does_not_warn(chain50):
    """The reference Euler scheme gains +40 % on this chain over 20 s at 1 ms (documented drift, not an
    explosion): no warning."""
    res, ws = simulation_warnings(lambda: rm.simulate(chain50, dt=1e-3, duration=20.0))
    assert ws == [] and res.energy["total"][-1] - res.energy["total"][0] > 1.0


def test_the_simulator_checks_the_rates(chain50):
    sim = rm.Simulator(chain50, dt=2e-3, coriolis="implicit")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(4500):
            sim.step()
    ws = [w for w in caught if issubclass(w.category, rm.SimulationWarning)]
    assert len(ws) == 1
    msg = str(ws[0].message)
    assert msg.startswith("chain50: unstable simulation: at step ") and "the rate of DOF 'b" in msg
    assert ws[0].filename == __file__
    sim.reset()  # a new run: armed again
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(4500):
            sim.step()
    assert sum(issubclass(w.category, rm.SimulationWarning) for w in caught) == 1
    sim2 = rm.Simulator(chain50, dt=2e-3, coriolis="implicit", on_instability="raise")
    with pytest.raises(rm.SimulationError, match="unstable simulation: at step"):
        for _ in range(4500):
            sim2.step()
    sim3 = rm.Simulator(chain50, dt=2e-3, on_instability="ignore")
    sim3.step()
    with pytest.raises(rm.SimulationError, match="on_instability must be one of"):
        rm.Simulator(chain50, on_instability=None)


def test_a_stable_simulator_run_with_torques_does_not_warn():
    m = pendulum()
    sim = rm.Simulator(m, dt=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rm.SimulationWarning)
        for k in range(3000):
            sim.step(np.array([2.0 * np.sin(3e-3 * k)]))


# ------------------------------------------------------------------------------------------------------------
# every integrator and path checks (the plumbing: a tiny factor makes any drift an "instability")

class PythonDense(DenseSolver):
    """The dense solve, run by the Python Euler loop (the compiled loop implements "dense" only)."""

    name = "python-dense"
    compiled = False


PATHS = {
    "euler": dict(integrator="euler"),
    "euler-python": dict(integrator="euler", solver=PythonDense()),
    "bdf1": dict(integrator="bdf1"),
    "sdirk2": dict(integrator="sdirk2"),
    "bdf2": dict(integrator="bdf2"),
    "rk45": dict(integrator="rk45"),
    "dop853": dict(integrator="dop853"),
}


@pytest.mark.parametrize("path", list(PATHS))
def test_every_integrator_checks_its_samples(monkeypatch, path):
    m = pendulum()
    kw = dict(dt=1e-2, duration=0.3, **PATHS[path])
    res, ws = simulation_warnings(lambda: rm.simulate(m, **kw))
    assert ws == [] and res.meta.get("compiled", True) == (path != "euler-python")
    monkeypatch.setattr(instability, "FACTOR", 1e-14)
    _, ws = simulation_warnings(lambda: rm.simulate(m, **kw))
    assert len(ws) == 1 and "unstable simulation" in str(ws[0].message)
    with pytest.raises(rm.SimulationError, match="unstable simulation"):
        rm.simulate(m, on_instability="raise", **kw)
    _, ws = simulation_warnings(lambda: rm.simulate(m, on_instability="ignore", **kw))
    assert ws == []


@pytest.mark.parametrize("name,integrator", [("reference/04", "euler"), ("reference/04", "rk45"),
                                             ("reference/15", "euler")])
def test_the_constrained_paths_check_their_samples(monkeypatch, name, integrator):
    s = rm.scenes.load(name)
    _, ws = simulation_warnings(lambda: s.simulate(integrator=integrator, duration=0.2))
    assert ws == []
    monkeypatch.setattr(instability, "FACTOR", 1e-14)
    _, ws = simulation_warnings(lambda: s.simulate(integrator=integrator, duration=0.2))
    assert len(ws) == 1 and str(ws[0].message).startswith(f"{s.model.name}: unstable simulation")


def test_an_undamped_pendulum_under_dop853_does_not_warn():
    s = rm.scenes.load("reference/-1")
    _, ws = simulation_warnings(lambda: s.simulate(integrator="dop853", duration=10.0, rtol=1e-10, atol=1e-10))
    assert ws == []


# ------------------------------------------------------------------------------------------------------------
# scenes, scene files and the command line

def test_scene_setting_and_scene_file_round_trip(tmp_path, monkeypatch):
    s = rm.scenes.load("reference/-1")
    assert s.on_instability == "warn"
    s.on_instability = "raise"
    rm.scenes.save(s, tmp_path / "s.toml")
    assert 'on_instability = "raise"' in (tmp_path / "s.toml").read_text()
    s2 = rm.scenes.load(str(tmp_path / "s.toml"))
    assert s2.on_instability == "raise"
    monkeypatch.setattr(instability, "FACTOR", 1e-14)
    with pytest.raises(rm.SimulationError, match="unstable"):
        s2.simulate(duration=0.1)
    _, ws = simulation_warnings(lambda: s2.simulate(duration=0.1, on_instability="warn"))
    assert len(ws) == 1
    s2.on_instability = "warn"
    rm.scenes.save(s2, tmp_path / "w.toml")
    assert "on_instability" not in (tmp_path / "w.toml").read_text()  # the default is not written
    (tmp_path / "bad.toml").write_text((tmp_path / "s.toml").read_text().replace('"raise"', '"loud"'))
    with pytest.raises(rm.SceneError, match=r"scene.on_instability: expected one of 'warn', 'raise', 'ignore'"):
        rm.scenes.load(str(tmp_path / "bad.toml"))


def test_cli_diff11_at_half_a_second_warns_on_one_line(capsys):
    """`redmax run diff/11 --dt 0.5 --duration 50` used to exit 0 silently with energy 13272 -> 4.45e17."""
    assert main(["run", "diff/11", "--dt", "0.5", "--duration", "50", "--quiet"]) == 0
    err = user_messages(capsys.readouterr().err)
    assert err.count("\n") == 1 and err.startswith("redmax: warning: diff/11: unstable simulation: at step "), err
    assert main(["run", "diff/11", "--dt", "0.5", "--duration", "50", "--quiet", "--on-instability", "raise"]) == 2
    err = user_messages(capsys.readouterr().err)
    assert err.count("\n") == 1 and err.startswith("redmax: error: diff/11: unstable simulation: at step "), err
    assert main(["run", "diff/11", "--dt", "0.5", "--duration", "50", "--quiet", "--on-instability", "ignore"]) == 0
    assert user_messages(capsys.readouterr().err) == ""
    assert main(["plot", "diff/11", "x.png", "--dt", "0.5", "--duration", "50", "--on-instability", "raise"]) == 2
    assert "unstable simulation" in user_messages(capsys.readouterr().err)
    assert main(["run", "diff/11", "--on-instability", "loud"]) == 2
    assert "--on-instability" in user_messages(capsys.readouterr().err)


# ------------------------------------------------------------------------------------------------------------
# an adaptive integrator that cannot make progress

def test_rk45_from_a_huge_rate_stops_within_seconds_naming_the_step_size():
    """From qd = 1e6 rk45 used to step for 147 s (1e12: 180 s) and then blame a dependent DOF."""
    m = rm.load_urdf(ARM_URDF)
    rm.simulate(m, integrator="rk45", duration=0.01)  # compiled and warm
    for v in (1e6, 1e12):
        t0 = time.perf_counter()
        with pytest.raises(rm.SimulationError, match=r"arm: rk45 cannot make progress: its step size is .* s at t = "
                                                     r".*; the rate of DOF '.*' is .*, beyond any physical motion"):
            rm.simulate(m, rm.State(np.full(4, 0.3), np.full(4, v)), integrator="rk45", duration=0.05)
        assert time.perf_counter() - t0 < 20.0
    for integrator in ("dop853", "radau"):  # whatever on_instability says
        t0 = time.perf_counter()
        with pytest.raises(rm.SimulationError, match=f"arm: {integrator} cannot make progress: its step size is"):
            rm.simulate(m, rm.State(np.full(4, 0.3), np.full(4, 1e6)), integrator=integrator, duration=0.05,
                        on_instability="ignore")
        assert time.perf_counter() - t0 < 20.0


def test_the_step_guard_rule():
    """More than 1e4 steps to go, and a step below 1e-6 s or a rate beyond 1e5 rad/s (1e5 sizes/s sliding)."""
    m = rm.load_urdf(ARM_URDF)
    S = rm.evaluate_kinematics(m, m.q0).S
    bounds = instability.rate_bounds(m, S)
    assert list(bounds[:3]) == [1e5] * 3 and bounds[3] == pytest.approx(1e5 * instability.model_size(m))
    W = instability.WINDOW

    def run(h, rate, t_end=1.0):
        g = instability.StepGuard("arm", "rk45", "RK45", t_end, m.dof_names, bounds)
        for k in range(2 * W + 2):
            g(k * h / 6, np.array([0.0, rate, 0.0, 0.0]))

    run(1e-5, 10.0)  # small steps of a slow motion: fine
    run(1e-7, 10.0, t_end=1e-7 * 2e3)  # tiny steps, but nearly done
    with pytest.raises(rm.SimulationError, match=r"step size is 1e-07 s .*; below 1e-06 s \(the fastest rate is 10"):
        run(1e-7, 10.0)
    with pytest.raises(rm.SimulationError, match=r"the rate of DOF 'shoulder' is 2e\+05, beyond any physical motion"):
        run(1e-5, 2e5)
    run(1e-3, 2e5)  # fast, but the run ends within 1e4 steps
