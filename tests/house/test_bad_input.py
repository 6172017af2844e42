"""The reproducers of shared/reviews/bad-input.md, each answered by a named RedmaxError (or accepted where the
review found silent acceptance, now refused), and the CLI's one-line errors with exit status 2."""

import os
import sys

import numpy as np
import pytest

import redmax as rm
from redmax.cli import main

from paths import ARM_URDF


@pytest.fixture(scope="module")
def euler_model():
    b = rm.ModelBuilder("e")
    b.add_body("b", rm.Cuboid(1, 2, 3), rm.SphericalEuler("XYZ"))
    return b.build()


@pytest.mark.parametrize("js", [12, 15, -1, 16, 2**40])
def test_out_of_range_chart_words_are_named_never_a_crash(euler_model, js):
    m = euler_model
    q = np.zeros(3)
    for call in (lambda: rm.crba(m, q, jstate=np.array([js])), lambda: rm.minv(m, q, jstate=np.array([js])),
                 lambda: rm.rnea(m, q, q, q, jstate=np.array([js])), lambda: rm.aba(m, q, q, q, jstate=np.array([js])),
                 lambda: rm.simulate(m, rm.State(q, q, 0.0, np.array([js])), duration=0.02)):
        with pytest.raises(rm.ModelError, match=r"joint 'b': jstate\[0\] = .* is not a valid chart word"):
            call()


@pytest.mark.parametrize("bad,pattern", [
    (None, "qd must hold numbers .* got None"),
    (np.array(["a"] * 4), "qd must hold numbers .* dtype <U1"),
    (np.array([object()] * 4), "qd must hold numbers .* dtype object"),
    (np.zeros((4, 1)), r"qd must have shape \(4,\) or \(B, 4\), got \(4, 1\)"),
    (np.zeros((3, 4)), r"qd must have shape \(4,\) like q, got \(3, 4\) \(a batch takes every array"),
    (np.zeros(5), r"qd must have shape \(4,\) or \(B, 4\)"),
    (np.array([0, 0, np.inf, 0.0]), "qd contains NaN or inf"),
])
def test_api_arrays(arm, bad, pattern):
    z = np.zeros(4)
    with pytest.raises(rm.ModelError, match=pattern):
        rm.rnea(arm, z, bad, z)


def test_api_models_and_flags(arm):
    z = np.zeros(4)
    scene = rm.scenes.load("reference/05")
    with pytest.raises(rm.ModelError, match=r"crba: expected a redmax.Model .* got Scene \(a Scene: pass "
                                            r"scene.model\)"):
        rm.crba(scene, z)
    with pytest.raises(rm.ModelError, match="got NoneType"):
        rm.aba(None, z, z, z)
    with pytest.raises(rm.ModelError, match="gravity must be True or False, got 'no'"):
        rm.rnea(arm, z, z, z, gravity="no")
    assert np.allclose(rm.rnea(arm, z.astype(np.longdouble), z, z), rm.rnea(arm, z, z, z))  # converted to float64
    with pytest.raises(rm.ModelError, match="overflow"):
        rm.rnea(arm, z, np.full(4, 1e154), z)
    with pytest.raises(rm.ModelError, match="overflow"):
        rm.aba(arm, z, np.full(4, 1e200), z)
    with pytest.raises(rm.ModelError, match=r"state q must have shape \(4,\), got \(5,\)"):
        rm.simulate(arm, rm.State(np.zeros(5), np.zeros(5)))
    with pytest.raises(rm.ModelError, match="is a directory"):
        rm.load_urdf(os.path.dirname(ARM_URDF))


def test_simulation_settings_and_blow_ups(arm):
    with pytest.raises(rm.SimulationError, match="longer than duration"):
        rm.simulate(arm, dt=50, duration=10)
    for kw in ({"atol": -1.0}, {"rtol": 0.0}, {"rtol": float("nan")}):
        with pytest.raises(rm.SimulationError, match="rtol and atol must be positive"):
            rm.simulate(arm, integrator="rk45", duration=0.01, **kw)
    z = np.zeros(4)
    with pytest.raises(rm.SimulationError, match=r"arm: .*not finite"):
        rm.simulate(arm, rm.State(z, np.full(4, 1e200)), integrator="rk45", duration=0.01)
    m = rm.scenes.load("reference/03").model
    q = np.zeros(m.ndof)
    q[:3] = [1.5 * np.pi, 0.0, 0.0]  # exactly on the re-parameterisation sphere
    for integ in ("rk45", "dop853", "euler"):
        res = rm.simulate(m, rm.State(q, np.zeros(m.ndof)), integrator=integ, duration=0.02)
        assert np.all(np.isfinite(res.q))
    with pytest.raises(rm.SimulationError, match=r"step \d+ \(t = .*\).*not finite"):  # names the step and time
        rm.simulate(m, rm.State(m.q0.copy(), np.full(m.ndof, 1e6)), duration=0.1)


def _scene_text(**changes):
    import tomllib

    from redmax.io.toml_write import dumps
    from redmax.scenes import builtin_path

    with open(builtin_path("reference/03"), "rb") as fh:
        d = tomllib.load(fh)
    d["scene"].update(changes)
    return dumps(d, frozenset({"scene", "bodies", "bodies.joint", "forces"}))


@pytest.mark.parametrize("content,pattern", [
    (b'format = "redmax-scene"\nversion = 1\n# caf\xe9\n', r"line 3: not UTF-8 text \(byte 0xe9\)"),
    (_scene_text(atol=-1.0, integrator="rk45").encode(), r"scene.atol: must be positive"),
    (_scene_text(dt=10**400).encode(), r"scene.dt: number too large"),
    (_scene_text(dt=50.0, duration=10.0).encode(), r"scene.dt: 50.0 is longer than scene.duration"),
    (_scene_text(gravity=["0", "0", "-9.8"]).encode(), r"scene.gravity: expected numbers, got '0'"),
    (b'format = "redmax-scene"\nversion = 1\nx = ' + b"[" * 1000 + b"]" * 1000 + b"\n", "nested too deeply"),
])
def test_scene_file_reproducers(tmp_path, content, pattern):
    p = tmp_path / "s.toml"
    p.write_bytes(content)
    with pytest.raises(rm.SceneError, match=pattern):
        rm.scenes.load(str(p))


def test_scene_gravity_blow_up_is_a_simulation_error(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text(_scene_text(gravity=[0.0, 0.0, -1e12]))
    with pytest.raises(rm.SimulationError, match="not finite"):
        rm.scenes.load(str(p)).simulate()


def test_huge_sizes_and_names_round_trip(tmp_path):
    with pytest.raises(rm.ModelError, match="cuboid: mass must be positive and finite|principal moments"):
        rm.Cuboid(1e300, 1e300, 1e300)
    b = rm.ModelBuilder("del")
    b.add_body("del\x7fchar", rm.Cuboid(1, 1, 1), rm.Revolute((0, 1, 0)))
    s = rm.scenes.Scene("del", b.build())
    rm.scenes.save(s, tmp_path / "d.toml")
    assert rm.scenes.load(str(tmp_path / "d.toml")).model.body_names == ("del\x7fchar",)


def test_a_body_named_world_is_refused_in_scene_files(tmp_path):
    text = _scene_text()
    assert 'name = "b1"' in text  # the first body of reference/03
    text = text.replace('name = "b1"', 'name = "world"', 1)
    p = tmp_path / "w.toml"
    p.write_text(text)
    with pytest.raises(rm.SceneError, match=r"bodies\[0\].name: 'world' is reserved"):
        rm.scenes.load(str(p))


def test_cli_one_line_errors(tmp_path, capsys):
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'format = "redmax-scene"\n# caf\xe9\n')
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not UTF-8" in err
    assert main(["run", "reference/05", "--integrator", "foo"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(f" {name}," in err or err.rstrip().endswith(f" {name}") for name in
                                        ("euler", "rk45", "dop853", "rk23", "radau", "scipy-bdf", "lsoda", "bdf1",
                                         "sdirk2", "bdf2"))
    assert main(["run", "reference/05", "--integrator", "EULER", "--duration", "0.1", "--quiet"]) == 0
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"redmax {rm.__version__}"
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    helptext = " ".join(capsys.readouterr().out.split())
    for name in ("euler", "rk45", "dop853", "rk23", "radau", "bdf", "lsoda"):
        assert name in helptext
    if not __import__("shutil").which("ffmpeg"):  # refused before simulating, not after
        assert main(["run", "reference/05", "--animate", str(tmp_path / "m.mp4")]) == 2
        assert "MP4 needs ffmpeg" in capsys.readouterr().err
    assert main(["run", "reference/23", "--dt", "0.5", "--duration", "50", "--quiet"]) == 2  # a blow-up
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("redmax: error: reference/23: ") and "step" in err, err


def test_cli_shows_the_compile_notices_on_stderr(capsys):
    """The command line prints the ``redmax`` logger's messages (a long first compile) as one line each on stderr,
    and nothing with --quiet."""
    import logging

    from redmax.cli import _CompileNotices

    log = logging.getLogger("redmax")
    with _CompileNotices(False):
        log.warning("compiling euler_loop for first use")
    assert capsys.readouterr().err == "redmax: compiling euler_loop for first use\n"
    with _CompileNotices(True):
        log.warning("compiling euler_loop for first use")
    assert "compiling" not in capsys.readouterr().err
    assert not any(isinstance(h, logging.StreamHandler) and h.stream is sys.stderr for h in log.handlers)


def test_run_summary_reports_compile_time_apart(monkeypatch, capsys):
    """The run summary counts compiling apart from simulating."""
    import redmax.cli as cli

    ticks = iter([0.0, 7.5])
    monkeypatch.setattr(cli, "compile_seconds", lambda: next(ticks))
    assert main(["run", "reference/05", "--duration", "0.1"]) == 0
    assert "(+ 7.5 s compiling)" in capsys.readouterr().out



def test_all_finite_is_exact_and_silent_at_the_edges_of_float64():
    """The per-call finiteness check (a sum first): huge finite values pass, NaN and inf are found, and an
    overflowing or inf - inf sum raises no RuntimeWarning."""
    import warnings

    from redmax._validate import all_finite

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert all_finite(np.array([1e308, 1e308, -1e308]))
        assert all_finite(np.array([1, 2], dtype=np.int64)) and all_finite(np.array([1 + 2j, 3j]))
        assert not all_finite(np.array([np.inf, -np.inf]))
        assert not all_finite(np.array([0.0, np.nan])) and not all_finite(np.array([1e308, np.inf]))
        assert not all_finite(np.array([complex(0.0, np.inf)]))
