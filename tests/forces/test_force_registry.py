"""The compiled force registry: the kernel dispatch is written from it, scene files read and write its types
through their own hooks, other packages register types through entry points (group ``redmax.forces``), and a
type the program cannot serve is refused by name.  The worked example of a new type (a cubic joint spring,
registered by an entry point) runs in the docs test (``docs/extending.md``): against the same law in Python, energy
under DOP853, a scene file."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from redmax.errors import ModelError
from redmax.forces.base import Force
from redmax.forces.builtin import JointSpring, kernel_joint_damping, kernel_joint_spring
from redmax.forces.maximal import Cable, SpringDamper
from redmax.forces.registry import FORCE_TYPES, SCENE_TYPES, check_registry, force_kernel


def _type(name, code, kernel=kernel_joint_spring, **attrs):
    return type(name, (Force,), {"code": code, "kernel": kernel, **attrs})


def test_the_registry_is_the_dispatch_and_the_scene_files_table():
    text = force_kernel.py_func.__redmax_source__
    for c in FORCE_TYPES:
        assert f"if code == {c.code}:" in text
    assert text.count(f"if code == {SpringDamper.code}:") == 1 and Cable.kernel is SpringDamper.kernel  # shared
    assert list(SCENE_TYPES) == ["world_point_force", "point_spring", "spring_damper", "cable", "ground_contact",
                                 "joint_limit"]
    assert SCENE_TYPES["cable"] is Cable


def test_the_registry_refuses_what_the_program_cannot_serve():
    check_registry((*FORCE_TYPES, _type("Free", 100)))
    check_registry((*FORCE_TYPES, _type("Alias", JointSpring.code)))  # same code, same kernel: one law
    with pytest.raises(ModelError, match="force type Other: code 2 is taken by JointSpring with another kernel"):
        check_registry((*FORCE_TYPES, _type("Other", JointSpring.code, kernel_joint_damping)))
    with pytest.raises(ModelError, match="force type Bare: kernel must be a compiled force kernel"):
        check_registry((_type("Bare", 100, None),))
    with pytest.raises(ModelError, match="force type Neg: code -1 must be a positive integer"):
        check_registry((_type("Neg", -1),))
    with pytest.raises(ModelError, match="a scene-file type is used twice"):
        check_registry((*FORCE_TYPES, _type("Twin", 100, scene_type="cable")))
    with pytest.raises(ModelError, match="is not a Force class"):
        check_registry((int,))


def test_a_broken_type_is_left_out_with_a_warning(tmp_path):
    (tmp_path / "bad_force.py").write_text(textwrap.dedent("""
        from redmax.forces.builtin import JointDamping, kernel_joint_spring
        class Bad(JointDamping):  # the damping's code with the spring's kernel
            kernel = kernel_joint_spring
        """))
    info = tmp_path / "bad_force-1.0.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[redmax.forces]\nbad = bad_force:Bad\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    code = ("import redmax; from redmax.forces.registry import FORCE_TYPES; "
            "print(any(c.__name__ == 'Bad' for c in FORCE_TYPES))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr[-2000:]
    assert "redmax.forces entry point 'bad' (bad_force:Bad) is not used: force type Bad: code 3 is taken" in proc.stderr


def test_a_scene_type_without_its_hooks_is_a_named_error():
    from redmax.errors import SceneError
    from redmax.io.scene_elements import _force_to

    half = type("Half", (JointSpring,), {"scene_type": "half"})()
    with pytest.raises(SceneError, match="force 'joint_spring' .Half. declares scene_type 'half' but no to_scene"):
        _force_to(half)
    with pytest.raises(SceneError, match="force type Half declares scene_type 'half' but no from_scene"):
        type(half).from_scene(None)
