"""The scripts in examples/ run to completion and print what they are about.

Each example runs in this process (``runpy``) and its standard output is checked: the numbers each script exists to
show (an identity to round-off, a gradient against differences, a convergence, an energy behaviour). The README's
and the docs' code blocks are checked by tests/house/test_docs.py.
"""

import importlib.util
import re
import runpy

import pytest

from paths import EXAMPLES as EXAMPLE_DIR

EXAMPLES = sorted(EXAMPLE_DIR.glob("*.py"))


def _numbers(pattern: str, out: str) -> list[float]:
    """The numbers captured by ``pattern`` (a regex with groups) in the first line that matches it."""
    m = re.search(pattern, out)
    assert m, f"no line matches {pattern!r} in:\n{out}"
    return [float(g) for g in m.groups()]


_NUM = r"([-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?)"


def _custom_model(out):
    euler, rk45 = _numbers(rf"Euler vs RK45 final cart position: {_NUM} {_NUM}", out)
    assert abs(euler - rk45) < 1e-3  # first-order Euler at h = 1 ms against an accurate run
    assert "final q:" in out and "energies at the end:" in out


def _deformable_bodies(out):
    assert _numbers(r"DOFs: (\d+)", out) == [181.0]  # 1 joint, 6 rope nodes, 54 free tail nodes (9 eliminated)
    assert _numbers(rf"rope's attachment rows held to: {_NUM}", out)[0] < 1e-6
    assert _numbers(rf"'deformable': {_NUM}", out)[0] > 0.0


def _forces_and_maximal(out):
    (height,) = _numbers(rf"box height \(rests at 2 on the ground\): {_NUM}", out)
    assert abs(height - 2.0) < 0.05
    gaps = [float(g) for g in re.findall(rf"maximal vs reduced body positions differ by {_NUM} cm", out)]
    assert len(gaps) == 3 and gaps[0] > gaps[1] > gaps[2]  # the two formulations converge as h shrinks


def _motion_transition(out):
    (rel,) = _numbers(rf"gradient vs complex step, largest relative difference: {_NUM}", out)
    assert rel < 1e-8
    before, after = _numbers(rf"torque integral {_NUM} -> {_NUM}", out)
    assert after < before


def _quickstart(out):
    drifts = [float(g) for g in re.findall(rf"dop853/\w+ .*\|dE\| = {_NUM}", out)]
    assert len(drifts) == 2 and max(drifts) < 1e-4  # DOP853 keeps the energy of the undamped chain
    assert re.search(r"^euler\s+T\(end\)", out, re.M)


def _recursive_algorithms(out):
    assert _numbers(rf"ABA\(RNEA\(qdd\)\) - qdd: {_NUM}", out)[0] < 1e-10
    assert "M symmetric positive definite: True True" in out
    assert _numbers(rf"M\^-1 M - I: {_NUM}", out)[0] < 1e-10
    assert _numbers(rf"RedMax J\^T Mm J - CRBA: {_NUM}", out)[0] < 1e-8
    assert "hybrid reproduces tau and qdd: True True" in out


def _robot_by_name(out):
    assert "panda has 9 DOFs" in out
    assert _numbers(r"floating base: (\d+) DOFs", out) == [15.0]


def _time_step(out):
    assert _numbers(rf"max \|q - q_simulate\| = {_NUM}", out)[0] < 1e-10
    assert "symmetric: True" in out and "matches euler_step: True" in out
    (explicit,) = _numbers(r"coriolis='explicit'\s+undamped chain: .*\(([-+]\d+\.\d+)%\)", out)
    (implicit,) = _numbers(r"coriolis='implicit'\s+undamped chain: .*\(([-+]\d+\.\d+)%\)", out)
    assert explicit > 0 > implicit  # the reference scheme gains energy, coriolis="implicit" loses some


def _trajectory_optimization(out):
    pairs = re.findall(rf"gradient \. d = {_NUM}\s+central difference = {_NUM}", out)
    assert len(pairs) == 3
    for g, fd in pairs:
        assert abs(float(g) - float(fd)) <= 1e-5 * abs(float(fd))
    first, last = _numbers(rf"objective {_NUM} -> {_NUM} in", out)
    assert last < 0.01 * first


def _urdf_robot(out):
    assert _numbers(rf"ABA\(RNEA\(qdd\)\) - qdd: {_NUM}", out)[0] < 1e-10
    assert _numbers(rf"M\^-1 M - I: {_NUM}", out)[0] < 1e-10
    if importlib.util.find_spec("pinocchio") is None:  # a test extra: without it the script says how to get it
        assert "to compare with Pinocchio" in out
    else:  # the script's point: the same torques as Pinocchio's
        assert _numbers(rf"Pinocchio rnea - redmax rnea: {_NUM}", out)[0] < 1e-9


CHECKS = {
    "custom_model.py": _custom_model,
    "deformable_bodies.py": _deformable_bodies,
    "forces_and_maximal.py": _forces_and_maximal,
    "motion_transition.py": _motion_transition,
    "quickstart.py": _quickstart,
    "recursive_algorithms.py": _recursive_algorithms,
    "robot_by_name.py": _robot_by_name,
    "time_step.py": _time_step,
    "trajectory_optimization.py": _trajectory_optimization,
    "urdf_robot.py": _urdf_robot,
}


def test_every_example_has_a_check():
    assert sorted(CHECKS) == [p.name for p in EXAMPLES]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, capsys):
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert out.strip()
    CHECKS[path.name](out)
