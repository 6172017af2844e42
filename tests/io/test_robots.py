"""Robots by name: ``rm.load_robot`` finds each robot of example-robot-data (a test extra) and loads exactly its URDF;
the errors name the package to install or the closest names; ``robot:NAME`` on the command line; the docs table
and the example."""

import ast
import os
import runpy
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import redmax as rm
from redmax.cli import main
from redmax.io import robots
from redmax.io.robots import ROBOTS

from paths import REPO

pytestmark = pytest.mark.filterwarnings("ignore::redmax.RedmaxWarning")  # defects of the files: test_robot_files.py


def _erd_file(rel: str) -> str:
    """The file ``rel`` of example-robot-data's robots folder, found independently of redmax.io.robots."""
    hits = [f for f in metadata.files("example-robot-data") if f.as_posix().endswith("/robots/" + rel)]
    assert len(hits) == 1, (rel, hits)
    return str(hits[0].locate())


@pytest.fixture
def not_installed(monkeypatch):
    """example-robot-data missing: its distribution lookup fails as importlib.metadata does for a missing one."""
    def missing(name):
        assert name == "example-robot-data"
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(robots.metadata, "distribution", missing)


def test_panda_by_name_is_its_urdf():
    path = _erd_file("panda_description/urdf/panda.urdf")
    assert rm.robot_path("panda") == path and os.path.isfile(path)
    assert rm.load_robot("panda").ndof == rm.load_urdf(path).ndof == 9


def test_every_installed_name_is_listed_and_every_listed_name_installed():
    """The table is the installed distribution's (example-robot-data 6.0.0): a renamed file fails here."""
    avail = rm.available_robots()
    assert list(avail) == sorted(ROBOTS) and set(avail) == set(ROBOTS) and len(avail) >= 50
    assert {"ur3", "ur5", "ur10", "panda", "kinova", "double_pendulum", "z1", "solo12", "anymal", "talos", "go1",
            "tiago", "icub", "a1"} <= set(avail)
    assert avail["panda"] == "Franka Emika Panda with its two-finger gripper (arm, 9 DOF)"
    assert len({r.path for r in ROBOTS.values()}) == len(ROBOTS)  # one URDF per name, no two names for one file
    assert rm.available_robots(installed=False) == avail


@pytest.mark.parametrize("name", list(ROBOTS))
def test_load_robot_is_load_urdf_of_its_file(name):
    entry = ROBOTS[name]
    model = rm.load_robot(name)
    ref = rm.load_urdf(_erd_file(entry.path))
    assert model.ndof == ref.ndof == entry.ndof, "the DOF count of the table (and of the docs) is the file's"
    assert model.nb == ref.nb and model.dof_names == ref.dof_names and model.meta["robot"] == ref.meta["robot"]
    rng = np.random.default_rng(len(name))
    q, qd, qdd = rng.uniform(-1.0, 1.0, size=(3, model.ndof))
    np.testing.assert_array_equal(rm.rnea(model, q, qd, qdd), rm.rnea(ref, q, qd, qdd))


def test_keywords_pass_through_to_load_urdf():
    assert rm.load_robot("ur5", floating_base=True).ndof == 12
    assert rm.load_robot("panda", mimic=True).ndof == 8  # the second finger follows the first
    m = rm.load_robot("double_pendulum", gravity=(0.0, 0.0, 0.0))
    assert not np.any(rm.rnea(m, np.ones(2), np.zeros(2), np.zeros(2)))
    with pytest.raises(rm.ModelError, match="unknown keyword argument 'floating'; load_urdf takes: floating_base"):
        rm.load_robot("panda", floating=True)


def test_names_are_case_insensitive():
    assert rm.robot_path(" Panda ") == rm.robot_path("PANDA") == rm.robot_path("panda")
    assert rm.robot_path("double-pendulum") == rm.robot_path("double_pendulum")


def test_unknown_name_suggests_and_lists():
    with pytest.raises(rm.ModelError) as e:
        rm.load_robot("pnda")
    msg = str(e.value)
    assert msg.startswith("unknown robot 'pnda'; did you mean 'panda'? available robots: a1, ")
    assert "\n" not in msg and all(n in msg for n in ROBOTS)
    with pytest.raises(rm.ModelError, match="did you mean 'solo8' or 'solo12'"):
        rm.robot_path("solo")
    with pytest.raises(rm.ModelError, match=r"^unknown robot 'xyzzy'; available robots: a1, "):
        rm.robot_path("xyzzy")
    with pytest.raises(rm.ModelError, match="a robot name is a string such as 'panda', got 3"):
        rm.load_robot(3)


def test_not_installed_names_the_package(not_installed):
    assert robots.robots_folder() is None
    with pytest.raises(rm.ModelError) as e:
        rm.load_robot("panda")
    msg = str(e.value)
    assert "robot 'panda'" in msg and "example-robot-data package, which is not installed" in msg
    assert "pip install example-robot-data" in msg and all(n in msg for n in ROBOTS) and "\n" not in msg
    with pytest.raises(rm.ModelError, match="did you mean 'panda'.*pip install example-robot-data"):
        rm.load_robot("pnda")
    assert rm.available_robots() == {}
    assert list(rm.available_robots(installed=False)) == sorted(ROBOTS)


def test_file_missing_from_the_installed_version(monkeypatch, tmp_path):
    monkeypatch.setattr(robots, "robots_folder", lambda: str(tmp_path))
    assert rm.available_robots() == {}
    with pytest.raises(rm.ModelError, match=r"robot 'ur5': .*ur5_robot.urdf is missing from example-robot-data "):
        rm.load_robot("ur5")


def test_the_library_does_not_import_redmax_testing():
    """Robots are found by the library itself; redmax.testing (tests and benchmarks) builds on it, not the reverse."""
    root = Path(rm.__file__).parent
    for p in root.rglob("*.py"):
        if "testing" in p.relative_to(root).parts:
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.ImportFrom) and node.module == "redmax":
                names = [f"redmax.{a.name}" for a in node.names]
            assert not any(n == "redmax.testing" or n.startswith("redmax.testing.") for n in names), p
    from redmax.testing.robots import ROBOTS as table
    from redmax.testing.robots import robot_urdf, robots_root

    assert robots_root() == robots.robots_folder() and robot_urdf("talos") == rm.robot_path("talos")
    assert table["panda"] == "panda_description/urdf/panda.urdf" and set(table) == set(ROBOTS)


def test_scene_of_a_robot_by_name():
    s = rm.scenes.load("robot:panda")
    assert s.name == "robot:panda" and s.model.ndof == 9 and s.dt == 1e-3 and s.duration == 1.0
    assert s.integrator == "euler" and s.description == "URDF robot (fixed base) panda"
    with pytest.raises(rm.ModelError, match="did you mean 'ur5'"):
        rm.scenes.load("robot:ur6")


def _cli(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_info_and_run_a_robot_by_name(capsys):
    code, out, _ = _cli(["info", "robot:panda"], capsys)
    assert code == 0 and out.startswith("scene robot:panda: URDF robot (fixed base) panda")
    assert "9 bodies, 9 DOFs (joints: 7 revolute, 2 prismatic)" in out
    code, out, err = _cli(["run", "robot:panda", "--duration", "0.01"], capsys)
    assert code == 0 and out.startswith("robot:panda: 10 steps of euler (dt 0.001) to t = 0.01 s"), (out, err)


def test_cli_lists_robots_and_mentions_them_in_scenes(capsys):
    code, out, _ = _cli(["robots"], capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == len(ROBOTS) + 1
    assert lines[0].split()[0] == "a1" and any(ln.split()[0] == "panda" and "(arm, 9 DOF)" in ln for ln in lines)
    assert lines[-1].startswith(f"({len(ROBOTS)} robots of example-robot-data in ")
    code, out, _ = _cli(["scenes"], capsys)
    assert code == 0 and out.splitlines()[-1].startswith("robot:NAME") and "redmax robots" in out


def test_cli_errors_are_one_line_with_status_2(capsys, not_installed):
    code, out, err = _cli(["info", "robot:panda"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("redmax: error: robot 'panda':") and "pip install example-robot-data" in err
    code, out, _ = _cli(["robots"], capsys)
    assert code == 0 and out.splitlines()[-1] == "(example-robot-data is not installed: pip install example-robot-data)"
    assert len(out.splitlines()) == len(ROBOTS) + 1


def test_cli_unknown_robot(capsys):
    code, out, err = _cli(["run", "robot:pnda", "--duration", "0.01"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("redmax: error: unknown robot 'pnda'; did you mean 'panda'? available robots: a1, ")


def test_docs_table_lists_every_robot_with_its_dofs():
    text = (REPO / "docs" / "robots.md").read_text()
    for name, entry in ROBOTS.items():
        assert f"`{name}` ({entry.ndof}" in text, name


def test_example_runs_from_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runpy.run_path(str(REPO / "examples" / "robot_by_name.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "panda has 9 DOFs" in out and "floating base: 15 DOFs" in out
    m = rm.load_robot("panda")
    tau = rm.rnea(m, m.q0, np.zeros(9), np.zeros(9))
    shown = out.split("gravity torque at q0: [")[1].split("]")[0].split()
    np.testing.assert_allclose([float(v) for v in shown], tau, atol=5e-5)
    assert abs(tau[1]) > 1.0  # the shoulder holds the arm up
