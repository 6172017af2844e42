"""The constraint registry: the compiled row dispatch is written from it, scene files read its types, other
packages register types through entry points (group ``redmax.constraints``), and a type the compiled program
cannot serve is refused by name.  The worked example of a new type (a circle between two coordinates, registered
by an entry point) runs in the docs test (``docs/extending.md``): Euler and DOP853 runs, its reaction, against the
pendulum's own equation."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import redmax as rm
from redmax.constraints._compiled import F_DRIVES, F_REACT_DOFS, F_REACT_WORLD, F_VARYING, flags
from redmax.constraints.base import Constraint
from redmax.constraints.equalities import rows_linear
from redmax.constraints.registry import CONSTRAINT_TYPES, CONSTRAINTS, check_registry, constraint_rows
from redmax.errors import ModelError


def _type(name, code, typ=None, rows=rows_linear, **attrs):
    return type(name, (Constraint,), {"type": typ or name.lower(), "code": code, "rows": rows, **attrs})


def test_the_registry_is_the_scene_files_table_and_the_dispatch():
    assert CONSTRAINTS == {c.type: c for c in CONSTRAINT_TYPES} and set(CONSTRAINTS) >= {"loop", "limit", "floor"}
    text = constraint_rows.py_func.__redmax_source__
    for c in CONSTRAINT_TYPES:
        assert f"if code == {c.code}:  # {c.type}" in text
    assert flags(rm.constraints.SelfCollision) == F_VARYING | F_REACT_WORLD
    assert flags(rm.constraints.PrescribedJoint) == F_REACT_DOFS | F_DRIVES
    assert flags(rm.constraints.Loop) == 0 and flags(rm.constraints.Limit) == F_REACT_DOFS


def test_the_registry_refuses_what_the_program_cannot_serve():
    check_registry((*CONSTRAINT_TYPES, _type("Free", 100)))
    with pytest.raises(ModelError, match="constraint type Twice: code 1 is not free"):
        check_registry((*CONSTRAINT_TYPES, _type("Twice", 1)))
    with pytest.raises(ModelError, match="constraint type Named: scene-file type 'loop' is taken"):
        check_registry((*CONSTRAINT_TYPES, _type("Named", 100, "loop")))
    with pytest.raises(ModelError, match="constraint type Bare: rows must be a compiled row function"):
        check_registry((_type("Bare", 100, rows=None),))
    with pytest.raises(ModelError, match="constraint type Odd: reaction 'joints' is not dofs, body or world"):
        check_registry((_type("Odd", 100, reaction="joints"),))
    with pytest.raises(ModelError, match="is not a Constraint class"):
        check_registry((int,))


def test_a_broken_type_is_left_out_with_a_warning(tmp_path):
    (tmp_path / "dup_constraint.py").write_text(textwrap.dedent("""
        from redmax.constraints.equalities import Linear
        class Dup(Linear):  # a second type under the loop's code
            type = "dup"
            code = 1
        """))
    info = tmp_path / "dup_constraint-1.0.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[redmax.constraints]\ndup = dup_constraint:Dup\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", "import redmax as rm; print('dup' in rm.constraints.CONSTRAINTS)"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr[-2000:]
    assert "redmax.constraints entry point 'dup' (dup_constraint:Dup) is not used: constraint type Dup: code 1" in (
        proc.stderr)
