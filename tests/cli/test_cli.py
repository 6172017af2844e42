"""The command line: listing, info, runs writing results, summaries, plots and animations; user errors."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from redmax import __version__
from redmax.cli import main

from paths import DOCS, user_messages


def run(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, user_messages(out.err)


def test_scenes_and_info(capsys):
    code, out, _ = run(["scenes"], capsys)
    assert code == 0 and "reference/05" in out and "reference/-1" in out and "diff/11" in out
    code, out, _ = run(["info", "reference/23"], capsys)
    assert code == 0 and "4 bodies, 4 DOFs" in out and "spring1 (PointSpring)" in out


def test_parametric_scenes_list_their_parameters_and_take_them_on_the_command_line(capsys):
    code, out, _ = run(["scenes"], capsys)
    assert code == 0 and "paper/bridge" in out and "[parameters: n_deck=20, n_tower=20, load=0.0]" in out
    code, out, _ = run(["info", "paper/bridge", "--param", "n_deck=8", "--param", "n_tower=2"], capsys)
    assert code == 0 and "12 DOFs" in out and "parameters: n_deck=8, n_tower=2, load=0.0" in out
    code, out, err = run(["run", "paper/chain_pcg", "--param", "n=4", "--duration", "0.05", "--solver", "dense"],
                         capsys)
    assert code == 0 and "paper/chain_pcg: 10 steps of euler (dt 0.005)" in out and not err


def test_run_writes_results_and_summary(tmp_path, capsys):
    npz, js = tmp_path / "r.npz", tmp_path / "s.json"
    code, out, err = run(["run", "reference/05", "--duration", "1", "--out", str(npz), "--json", str(js)], capsys)
    assert code == 0 and err == "" and "20 steps of euler" in out
    d = np.load(npz)
    assert d["t"].shape == (21,) and d["q"].shape == (21, 3) and d["qdot"].shape == (21, 3)
    for k in ("kinetic", "gravity", "joint_springs", "springs", "total"):
        assert d[f"energy_{k}"].shape == (21,)
    assert str(d["scene"]) == "reference/05" and str(d["integrator"]) == "euler" and float(d["dt"]) == 0.05
    assert str(d["version"]) == __version__
    s = json.loads(js.read_text())
    assert set(s) >= {"scene", "integrator", "dt", "steps", "t_final", "q_final", "qdot_final", "energy_initial",
                      "energy_final"}
    assert s["steps"] == 20 and s["t_final"] == pytest.approx(1.0) and len(s["q_final"]) == 3
    assert set(s["energy_final"]) >= {"kinetic", "gravity", "joint_springs", "springs", "total"}
    assert s["energy_final"]["kinetic"] == pytest.approx(float(d["energy_kinetic"][-1]))
    # the stored trajectory is the simulation's, bit for bit
    from redmax import scenes

    ref = scenes.load("reference/05").simulate(duration=1.0)
    assert np.array_equal(d["q"], ref.q) and np.array_equal(d["qdot"], ref.qdot) and np.array_equal(d["t"], ref.t)
    assert np.array_equal(d["energy_total"], ref.energy["total"])
    assert s["q_final"] == ref.q[-1].tolist() and s["qdot_final"] == ref.qdot[-1].tolist()


def test_run_with_ode_integrator_and_overrides(tmp_path, capsys):
    js = tmp_path / "s.json"
    code, _out, _ = run(["run", "reference/-1", "--integrator", "dop853", "--dt", "0.02", "--duration", "0.2",
                        "--method", "recursive", "--json", str(js)], capsys)
    assert code == 0
    s = json.loads(js.read_text())
    assert s["integrator"] == "dop853" and s["dt"] == 0.02 and s["steps"] == 10 and s["method"] == "recursive"


def test_plot_and_animation(tmp_path, capsys):
    png, gif = tmp_path / "e.png", tmp_path / "m.gif"
    code, out, _ = run(["run", "reference/25", "--duration", "0.3", "--plot", str(png), "--animate", str(gif)], capsys)
    assert code == 0, out
    im = Image.open(png)
    assert im.size[0] > 200 and im.size[1] > 150
    g = Image.open(gif)
    assert g.n_frames == 31 and gif.stat().st_size > 1000
    top = tmp_path / "top.gif"  # another camera and no joint triads: other pixels
    code, out, _ = run(["run", "reference/25", "--duration", "0.3", "--animate", str(top), "--view", "80,-90",
                        "--no-frames", "--quiet"], capsys)
    assert code == 0 and out == ""
    a, b = np.asarray(Image.open(gif).convert("RGB")), np.asarray(Image.open(top).convert("RGB"))
    assert a.shape == b.shape and np.abs(a.astype(int) - b.astype(int)).max() > 0


@pytest.mark.parametrize(
    "args,pattern",
    [
        (["run", "reference/99"], r"unknown scene 'reference/99'"),
        (["run", "reference/05", "--dt", "-1"], r"--dt must be positive"),
        (["run", "reference/05", "--integrator", "rk4"], r"unknown integrator .rk4.; expected one of euler, rk45"),
        (["run", "reference/05", "--out", "/no/such/folder/r.npz"], r"folder /no/such/folder does not exist"),
        (["run", "reference/05", "--plot", "energy.txt"], r"--plot energy.txt: expected a file name ending in"),
        (["run", "reference/05", "--animate", "movie.avi"], r"--animate movie.avi: expected"),
        (["run", "reference/05", "--animate", "m.gif", "--view", "60"], r"--view must be ELEV,AZIM in degrees"),
        (["run", "reference/05", "--animate", "m.gif", "--view", "60,nan"], r"--view must be finite"),
        (["run", "reference/05", "--bogus"], r"unrecognized arguments: --bogus"),
        (["run", "missing.toml"], r"missing.toml: no such scene file"),
        (["frobnicate"], r"invalid choice"),
        (["run", "reference/05", "--dt", "1e-300", "--duration", "1"], r"samples is more than 1e\+08: choose a larger"),
        (["info", "paper/bridge", "--param", "n_dek=8"], r"no parameter 'n_dek'; its parameters: n_deck, n_tower"),
        (["run", "paper/bridge", "--param", "n_deck"], r"--param n_deck: expected NAME=VALUE"),
        (["plot", "paper/tree", "x.png", "--param", "levels=two"], r"parameter 'levels' expects int"),
        (["run", "reference/05", "--param", "n=3"], r"'reference/05' has no parameters"),
        (["run", "reference/05", "--solver", "cg"], r"unknown linear solver 'cg'; expected one of dense"),
    ],
)
def test_user_errors_are_one_line_with_status_2(args, pattern, capsys):
    code, _out, err = run(args, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("redmax: error:") and re.search(pattern, lines[0]), err
    assert "Traceback" not in err


def test_malformed_scene_file_is_a_user_error(tmp_path, capsys):
    p = tmp_path / "bad.toml"
    p.write_text('format = "redmax-scene"\nversion = 1\n[scene]\nname = "x"\nfoo = 1\n[[bodies]]\n')
    code, _, err = run(["run", str(p)], capsys)
    assert code == 2 and "bad.toml: scene.foo: unknown key" in err


def test_python_dash_m_and_entry_point_without_a_tty(tmp_path):
    """No progress bar when stderr is not a terminal; python -m redmax works."""
    r = subprocess.run([sys.executable, "-m", "redmax", "run", "reference/00", "--duration", "0.1"],
                       capture_output=True, text=True, timeout=1200)  # a cold kernel cache compiles first
    assert r.returncode == 0 and user_messages(r.stderr) == "" and "10 steps of euler" in r.stdout
    r = subprocess.run([sys.executable, "-m", "redmax", "info", "nope/1"], capture_output=True, text=True,
                       timeout=1200)
    assert r.returncode == 2 and user_messages(r.stderr).count("\n") == 1


def test_docs_example_scene_file_runs(tmp_path):
    text = (DOCS / "scene-files.md").read_text()
    toml = re.findall(r"```toml\n(.*?)```", text, re.S)[0]
    p = tmp_path / "example.toml"
    p.write_text(toml)
    from redmax import scenes

    s = scenes.load(p)
    assert s.model.nb == 2 and s.model.forces[0].name == "tether"
    assert np.all(np.isfinite(s.simulate(duration=0.1).q))


def test_progress_bar_only_after_a_second_and_only_when_enabled(monkeypatch, capsys):
    import redmax.cli as cli

    clock = [100.0]
    monkeypatch.setattr(cli.time, "perf_counter", lambda: clock[0])
    p = cli._Progress(enabled=True)
    p(0.5, 2.0)
    assert capsys.readouterr().err == ""  # under one second: nothing
    clock[0] += 1.5
    p(1.0, 2.0)
    err = capsys.readouterr().err
    assert "50.0%" in err and "#" in err
    p.close()
    assert capsys.readouterr().err.strip() == ""  # the bar is erased
    off = cli._Progress(enabled=False)
    clock[0] += 5.0
    off(1.0, 2.0)
    assert capsys.readouterr().err == ""


def test_friction_options_and_info(capsys, tmp_path):
    code, out, _ = run(["info", "reference/31"], capsys)
    assert code == 0 and "friction (bisp): joint mu 0.1, world mu 0.2" in out
    assert "joint joint1: cylinder (radius 1.0, height 1.0)" in out
    res = {}
    for flags in (["--friction-solver", "none"], [], ["--compat", "original"]):
        path = tmp_path / f"r{len(res)}.npz"
        code, out, _ = run(["run", "reference/27", "--out", str(path), *flags], capsys)
        assert code == 0
        res[" ".join(flags)] = np.load(path)
    E = {k: float(v["energy_total"][-1]) for k, v in res.items()}
    assert E[""] < E["--friction-solver none"] and E[""] != E["--compat original"]
    code, _, err = run(["run", "reference/27", "--friction-solver", "sp9"], capsys)
    assert code == 2 and "--friction-solver" in str(err)
