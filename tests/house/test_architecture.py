"""Package structure: the layering rules, no import cycles (module- or function-level), module names and sizes, one
joint table, imports write nothing."""

import ast
from pathlib import Path

import numpy as np
import pytest

import redmax
import redmax.joints as jt
from redmax.errors import SceneError
from redmax.joints._registry import FAMILIES, JOINTS
from redmax.joints.base import Joint
from redmax.joints.primitive import COMPOSITE, primitive_calc

_ROOT = Path(redmax.__file__).resolve().parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(_ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _import_graph() -> dict:
    modules = {_module_name(p): p for p in _ROOT.rglob("*.py")}
    graph = {m: set() for m in modules}
    for m, p in modules.items():
        pkg = m if p.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(p.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(pkg.split(".")[: len(pkg.split(".")) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                if t in modules and t != m:
                    graph[m].add(t)
    return graph


def test_no_import_cycles():
    """Every explicit import counts, at module level or inside functions (lazy imports hide cycles, they do not
    remove them)."""
    graph = _import_graph()
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycles.append([*stack[stack.index(t):], t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def _room(m: str) -> str:
    """The room of a module: a top-level module or first-level subpackage of redmax ("face" for the package's
    ``__init__``, "cli" for the command line's modules)."""
    parts = m.split(".")
    if len(parts) == 1:
        return "face"
    if parts[1] in ("cli", "cli_optimize", "cli_sweep", "cli_view"):
        return "cli"
    return parts[1]


# (room, rooms it must never import, why); every explicit import counts, lazy ones inside functions included
NEVER = [
    ("model", {"dynamics", "derivatives", "integrators", "forces", "constraints", "io", "cli", "viz", "face"},
     "the model is data below the algorithms"),
    ("dynamics", {"derivatives", "integrators", "io", "cli", "viz", "face"}, "algorithms know no stepper or file"),
    ("forces", {"integrators", "face"}, "forces give f, K, D; the stepper linearises"),
    ("constraints", {"integrators", "face"}, "constraint rows know no stepper"),
    ("joints", {"model", "dynamics", "integrators", "face"}, "joints know no model"),
    ("io", {"cli", "face"}, "formats know no command line or package face"),
]


def _edges():
    graph = _import_graph()
    return [(a, b) for a, targets in graph.items() for b in targets]


def test_layering_rules():
    """The "never" rules of the house, each checked on every import (module level or lazy)."""
    broken = []
    for a, b in _edges():
        ra, rb = _room(a), _room(b)
        for room, never, why in NEVER:
            if ra == room and rb in never:
                broken.append(f"{a} imports {b} ({room} never imports {rb}: {why})")
    assert broken == [], "\n".join(broken)


def test_base_modules_import_only_the_compile_settings():
    """``spatial`` and ``errors`` import nothing of redmax but its compile settings (``_jit``)."""
    bad = [(a, b) for a, b in _edges() if a in ("redmax.spatial", "redmax.errors") and b != "redmax._jit"]
    assert bad == []


def test_only_the_entry_points_import_the_command_line():
    bad = [(a, b) for a, b in _edges() if _room(b) == "cli" and _room(a) != "cli" and a != "redmax.__main__"]
    assert bad == []


def test_the_library_never_imports_its_test_harnesses_or_benchmarks():
    bad = [(a, b) for a, b in _edges() if _room(b) == "testing" and _room(a) != "testing"]
    assert bad == []
    for p in _ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n == "benchmarks" or n.startswith("benchmarks.") for n in names), p


def test_module_names_say_their_role_and_sizes_stay_small():
    """No module named after experiment machinery or an abbreviation (probe, held, aligned, regs; fo, so as a
    word); ``dynamics/`` holds at most 15 modules; no module over 600 lines without a reason written at its top
    (a line of its docstring starting "Size:")."""
    import re

    names = [p.relative_to(_ROOT).with_suffix("").as_posix() for p in _ROOT.rglob("*.py")]
    bad = [n for n in names if re.search(r"probe|held|aligned|regs|(?:^|[/_])(?:fo|so)(?:$|[/_])", n)]
    assert bad == []
    assert len(list((_ROOT / "dynamics").rglob("*.py"))) <= 15
    big = [p.relative_to(_ROOT).as_posix() for p in _ROOT.rglob("*.py")
           if len(p.read_text().splitlines()) > 600
           and "\nSize:" not in "\n" + (ast.get_docstring(ast.parse(p.read_text())) or "")]
    assert big == []


def test_every_joint_family_is_registered_once_and_dispatches():
    subclasses, todo = set(), [Joint]
    while todo:
        for c in todo.pop().__subclasses__():
            subclasses.add(c)
            todo.append(c)
    public = {getattr(jt, n) for n in jt.__all__ if isinstance(getattr(jt, n), type)}
    assert {c for c in subclasses if c in public} == set(FAMILIES)
    assert len(JOINTS) == len(FAMILIES)
    rng = np.random.default_rng(0)
    from redmax.testing.models import all_joint_kinds

    kinds = {j.kind: j for j in all_joint_kinds(rng)}
    assert set(kinds) == set(JOINTS)
    for kind, j in kinds.items():
        assert type(j) is JOINTS[kind]
        if j.code == COMPOSITE:
            continue
        p = np.asarray(j.params("test"), dtype=float)
        q = rng.uniform(0.1, 0.9, j.nq)
        Q = np.zeros((4, 4))
        S = np.zeros((6, j.nq))
        primitive_calc(j.code, p, q, np.zeros(j.nq), j.jstate(), Q, S, np.zeros((6, j.nq)))
        assert Q[3, 3] == 1.0 and np.allclose(Q[:3, :3] @ Q[:3, :3].T, np.eye(3)), kind  # the kernel ran


def test_scene_files_read_every_family_from_the_table(tmp_path):
    from redmax.io.scene_file import scene_from_dict, scene_to_dict
    from redmax.testing.models import all_joint_kinds

    b = redmax.ModelBuilder("all kinds", gravity=(0, 0, -9.81))
    kinds = all_joint_kinds(np.random.default_rng(1))
    del kinds[13]  # Composite(Universal, SphericalExp, Prismatic) repeats rotations: M would be singular
    for k, j in enumerate(kinds):
        b.add_body(f"b{k}", redmax.Cuboid(1, 1, 1), j, q=np.full(j.nq, 0.3))
    scene = redmax.scene.Scene("all", b.build())
    back = scene_from_dict(scene_to_dict(scene, str(tmp_path)))
    assert [j.describe() for j in back.model.joints] == [j.describe() for j in scene.model.joints]
    doc = scene_to_dict(scene, str(tmp_path))
    doc["bodies"][0]["joint"] = {"type": "hinge"}
    with pytest.raises(SceneError, match="unknown joint type 'hinge' .expected one of fixed, revolute, prismatic"):
        scene_from_dict(doc)
