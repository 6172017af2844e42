"""A deterministic generator of malformed scene files and URDFs (for the fuzz tests).

Every case is built to be invalid -- deleted required keys, wrong types, NaN/inf/negative/zero physical values,
unknown references, cycles, duplicates, truncated and binary files, huge values -- so loading it must raise a
:class:`redmax.RedmaxError` subclass (never another exception, a hang or a crash).  Cases are mutations of two
built-in scenes and of a small handmade URDF; the random parts use a seeded generator, so the list is the same on
every run.  ``scene_cases()`` and ``urdf_cases()`` return ``(label, kind, payload)`` with kind "text" (str),
"bytes" or, for URDF loader options, "strict" (text loaded with ``strict=True``).  ``misuse_cases()`` returns
``(label, call)``: API misuses (a Scene, None, a name or a path where a Model belongs; a State of None; arrays of
booleans or long doubles; overflowing inputs; chart words that do not go with q; unwritable paths), each a
callable of a :class:`MisuseContext` that must raise a RedmaxError subclass (or, for long doubles, give the
float64 result).
"""

from __future__ import annotations

import copy
import tomllib

import numpy as np

from redmax.io.toml_write import dumps

__all__ = ["URDF_BASE", "MisuseContext", "misuse_cases", "scene_cases", "urdf_cases"]

_TABLES = frozenset({"scene", "bodies", "bodies.joint", "forces"})
_BASES = ("reference/23", "diff/14")  # a 4-link chain with point springs; a chain with a joint limit and torques


def _base(name: str) -> dict:
    from redmax.scenes import builtin_path

    with open(builtin_path(name), "rb") as fh:
        return tomllib.load(fh)


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def _set(doc, path, value):
    _get(doc, path[:-1])[path[-1]] = value


def _delete(doc, path):
    del _get(doc, path[:-1])[path[-1]]


def scene_cases() -> list[tuple[str, str, object]]:
    """Malformed scene files: (label, "text" | "bytes", content)."""
    rng = np.random.default_rng(11)
    out = []

    def add(label, doc):
        out.append((label, "text", dumps(doc, _TABLES)))

    for base in _BASES:
        ref = _base(base)
        nb = len(ref["bodies"])

        def mutate(label, path, value=None, delete=False, base=base, ref=ref):
            d = copy.deepcopy(ref)
            (_delete if delete else _set)(d, path, *(() if delete else (value,)))
            add(f"{base}: {label}", d)

        # deleted required keys
        for path in (("format",), ("version",), ("scene",), ("bodies",), ("scene", "name"), ("bodies", 0, "name"),
                     ("bodies", 0, "joint"), ("bodies", 1, "joint", "type"), ("bodies", 0, "shape", "type"),
                     ("bodies", 0, "shape", "sides"), ("bodies", nb - 1, "name")):
            mutate(f"delete {'.'.join(map(str, path))}", path, delete=True)
        if "forces" in ref:
            f0 = ref["forces"][0]
            required = ("points", "k", "ks", "joint", "lower") + (("stiffness",) if f0["type"] == "joint_limit" else ())
            for key in ("type", *[k for k in required if k in f0]):
                mutate(f"delete forces[0].{key}", ("forces", 0, key), delete=True)
        # wrong types
        wrong = {"a string": "1.0", "a boolean": True, "a table": {"x": 1}, "an array": [1.0, 2.0], "a list of "
                 "strings": ["0", "0", "-9.8"]}
        for what, v in wrong.items():
            mutate(f"scene.dt is {what}", ("scene", "dt"), v)
            mutate(f"gravity is {what}", ("scene", "gravity"), v)
            mutate(f"sides is {what}", ("bodies", 0, "shape", "sides"), v)
            mutate(f"joint type is {what}", ("bodies", 0, "joint", "type"), v if what != "a string" else "hinge")
            mutate(f"body name is {what}", ("bodies", 1, "name"), v if what != "a string" else 12)
        mutate("density is a numeric string", ("bodies", 0, "shape", "density"), "1")
        mutate("axis is a numeric string list", ("bodies", 0, "joint", "axis"), ["0", "1", "0"])
        mutate("integrator is a number", ("scene", "integrator"), 3)
        # NaN / inf / negative / zero / huge physical values
        for v in (float("nan"), float("inf"), -1.0, 0.0, 1e300):
            if v != 1e300:  # a huge density is a (heavy) valid body
                mutate(f"density {v}", ("bodies", 0, "shape", "density"), v)
            mutate(f"sides[1] {v}", ("bodies", 0, "shape", "sides"), [10.0, v, 1.0])
        for v in (float("nan"), float("inf"), -0.01, 0.0):
            mutate(f"dt {v}", ("scene", "dt"), v)
        for v in (float("nan"), float("inf"), -1.0):
            mutate(f"duration {v}", ("scene", "duration"), v)
            mutate(f"damping {v}", ("bodies", 0, "damping"), v)
        for key in ("rtol", "atol"):
            for v in (0.0, -1.0, float("nan")):
                mutate(f"{key} {v}", ("scene", key), v)
        mutate("gravity NaN", ("scene", "gravity"), [0.0, float("nan"), -9.81])
        mutate("dt longer than duration", ("scene", "dt"), 50.0)
        mutate("dt 10**400", ("scene", "dt"), 10**400)
        mutate("axis zero", ("bodies", 0, "joint", "axis"), [0.0, 0.0, 0.0])
        mutate("axis 2 values", ("bodies", 0, "joint", "axis"), [0.0, 1.0])
        mutate("q wrong length", ("bodies", 0, "joint", "q"), [0.1, 0.2])
        mutate("stiffness negative", ("bodies", 1, "joint", "stiffness"), [-5.0])
        mutate("rotation not orthonormal", ("bodies", 1, "joint", "placement"),
               {"rotation": [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]]})
        mutate("rotation a reflection", ("bodies", 1, "joint", "placement"),
               {"rotation": [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]})
        mutate("unknown shape", ("bodies", 0, "shape"), {"type": "torus", "radius": 1.0})
        mutate("mass and inertia negative", ("bodies", 0), {"name": "link", "mass": -1.0, "inertia": [1.0, 1.0, 1.0],
                                                            "joint": ref["bodies"][0]["joint"]})
        mutate("inertia violates the triangle inequality", ("bodies", 0),
               {"name": ref["bodies"][0]["name"], "mass": 1.0, "inertia": [1.0, 1.0, 5.0],
                "joint": ref["bodies"][0]["joint"]})
        # unknown references, cycles, duplicates
        mutate("unknown parent", ("bodies", 1, "parent"), "nowhere")
        mutate("self parent", ("bodies", 1, "parent"), ref["bodies"][1]["name"])
        d = copy.deepcopy(ref)
        d["bodies"][0]["parent"] = d["bodies"][1]["name"]
        add(f"{base}: two-body cycle", d)
        d = copy.deepcopy(ref)
        d["bodies"][1]["name"] = d["bodies"][0]["name"]
        add(f"{base}: duplicate body name", d)
        d = copy.deepcopy(ref)
        d["bodies"][1]["joint"]["name"] = d["bodies"][0]["joint"].get("name", d["bodies"][0]["name"])
        add(f"{base}: duplicate joint name", d)
        d = copy.deepcopy(ref)
        d["bodies"][1]["name"] = "world"
        for b in d["bodies"]:
            if b.get("parent") == ref["bodies"][1]["name"]:
                b["parent"] = "world"
        add(f"{base}: a body named world", d)
        if "forces" in ref:
            d = copy.deepcopy(ref)
            d["forces"].append(copy.deepcopy(d["forces"][0]))
            d["forces"][-1]["name"] = d["forces"][0].get("name", "f")
            d["forces"][0]["name"] = d["forces"][-1]["name"]
            add(f"{base}: duplicate force name", d)
            d = copy.deepcopy(ref)
            f0 = d["forces"][0]
            if "points" in f0:
                f0["points"][0]["body"] = "nowhere"
            else:
                f0["joint"] = "nowhere"
            add(f"{base}: force on an unknown element", d)
            mutate("unknown force type", ("forces", 0, "type"), "magnet")
            mutate("force type is a list", ("forces", 0, "type"), [1, "a"])
        mutate("unknown top-level key", ("extra",), 1)
        mutate("unknown scene key", ("scene", "colour"), "red")
        mutate("bodies is a table", ("bodies",), {"name": "x"})
        mutate("no bodies", ("bodies",), [])
        mutate("format wrong", ("format",), "urdf")
        mutate("version 2", ("version",), 2)
        # truncated: cut right after "=" of a random assignment (the value is missing: never valid TOML)
        text = dumps(ref, _TABLES)
        eqs = [i for i in range(len(text)) if text[i] == "="]
        for i in sorted(rng.choice(len(eqs), size=6, replace=False)):
            out.append((f"{base}: truncated after '=' at {eqs[i]}", "text", text[: eqs[i] + 1]))
        # deep nesting and duplicated tables
        out.append((f"{base}: array nested 600 deep", "text", text.replace("density = 1.0", "density = "
                                                                            + "[" * 600 + "]" * 600, 1)))
        out.append((f"{base}: duplicate [scene] table", "text", text + "\n[scene]\nname = 'x'\n"))
    # binary and encoding damage
    for k in range(8):
        out.append((f"binary garbage {k}", "bytes", rng.integers(0, 256, 512 * (k + 1), dtype=np.uint8).tobytes()))
    good = dumps(_base("reference/23"), _TABLES).encode()
    out.append(("latin-1 byte in a comment", "bytes", b"# caf\xe9\n" + good))
    out.append(("NUL in the middle", "bytes", good[:200] + b"\0" + good[200:]))
    out.append(("UTF-16 encoded", "bytes", good.decode().encode("utf-16")))
    out.append(("empty file", "bytes", b""))
    out.append(("whitespace only", "bytes", b"   \n\t\n"))
    out.append(("BOM then garbage", "bytes", b"\xef\xbb\xbf\x00\x01\x02"))
    return out


URDF_BASE = """<?xml version="1.0"?>
<robot name="fuzz">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0 0" rpy="0 0.2 0"/><mass value="1.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="c"><inertial><mass value="0.2"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <link name="tool"><inertial><mass value="0.1"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.1" rpy="0 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/><dynamics damping="0.1"/></joint>
  <joint name="j2" type="continuous"><parent link="a"/><child link="b"/><origin xyz="0.2 0 0"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="j3" type="prismatic"><parent link="b"/><child link="c"/><origin xyz="0.2 0 0"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.1" effort="1" velocity="1"/></joint>
  <joint name="weld" type="fixed"><parent link="c"/><child link="tool"/><origin xyz="0.05 0 0"/></joint>
</robot>
"""


def urdf_cases() -> list[tuple[str, str, object]]:
    """Malformed URDFs: (label, "text" | "bytes" | "strict", content)."""
    rng = np.random.default_rng(12)
    t = URDF_BASE
    out = []

    def sub(label, old, new, kind="text"):
        assert old in t, old
        out.append((label, kind, t.replace(old, new, 1)))

    j2 = '<joint name="j2" type="continuous"><parent link="a"/><child link="b"/>'
    sub("joint without parent", '<parent link="a"/><child link="b"/>', '<child link="b"/>')
    sub("joint without child", '<parent link="a"/><child link="b"/>', '<parent link="a"/>')
    sub("unknown child link", '<child link="b"/>', '<child link="nowhere"/>')
    sub("unknown parent link", '<parent link="a"/><child link="b"/>', '<parent link="nowhere"/><child link="b"/>')
    sub("cycle", j2, '<joint name="j2" type="continuous"><parent link="c"/><child link="b"/>')
    sub("self loop", j2, '<joint name="j2" type="continuous"><parent link="b"/><child link="b"/>')
    sub("second parent", "</robot>", '<joint name="j9" type="fixed"><parent link="base"/><child link="c"/></joint>'
        "</robot>")
    sub("duplicate link", '<link name="base"/>', '<link name="base"/><link name="base"/>')
    sub("duplicate joint", 'name="j3"', 'name="j2"')
    sub("orphan link", '<link name="base"/>', '<link name="base"/><link name="orphan"/>')
    sub("link without name", '<link name="base"/>', '<link name="base"/><link/>')
    sub("joint without name", 'name="j3"', "")
    for jt in ("ball", "spherical", "screw", ""):
        sub(f"unknown joint type {jt!r}", 'type="continuous"', f'type="{jt}"')
    for ax in ("0 0 0", "nan 0 1", "1 0", "a b c", "1e-13 0 0", "inf 0 0"):
        sub(f"axis {ax!r}", '<axis xyz="0 1 0"/>', f'<axis xyz="{ax}"/>')
    for v in ("nan", "inf", "x", "1 2"):
        sub(f"origin xyz {v!r}", '<origin xyz="0.2 0 0"/>\n    <axis xyz="0 1 0"/>',
            f'<origin xyz="{v} 0 0"/>\n    <axis xyz="0 1 0"/>')
        sub(f"origin rpy {v!r}", 'rpy="0 0.2 0"', f'rpy="0 {v} 0"')
    for v in ("nan", "-1", "inf", "heavy", ""):
        sub(f"mass {v!r}", '<mass value="0.5"/>', f'<mass value="{v}"/>')
    for v in ("nan", "inf", "x", ""):
        sub(f"inertia ixx {v!r}", 'ixx="0.005"', f'ixx="{v}"')
    sub("inertia ixx missing", 'ixx="0.005" ', "")
    sub("no <mass>", '<mass value="0.5"/>', "")
    sub("no <inertia>", '<inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>', "")
    for v in ("nan", "-0.5", "x"):
        sub(f"damping {v!r}", 'damping="0.1"', f'damping="{v}"')
    for v in ("nan", "x"):
        sub(f"limit lower {v!r}", 'lower="-1"', f'lower="{v}"')
    sub("mimic of an unknown joint, strict", '<axis xyz="1 0 0"/>', '<axis xyz="1 0 0"/><mimic joint="nope"/>',
        "strict")
    sub("mimic with NaN multiplier", '<axis xyz="1 0 0"/>', '<axis xyz="1 0 0"/><mimic joint="j1" multiplier="nan"/>')
    sub("mimic without joint", '<axis xyz="1 0 0"/>', '<axis xyz="1 0 0"/><mimic/>')
    sub("reversed limits, strict", 'lower="0" upper="0.1"', 'lower="0.1" upper="0"', "strict")
    sub("triangle inequality, strict", 'ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"',
        'ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.05"', "strict")
    sub("negative principal moment, strict", 'ixx="0.005"', 'ixx="-0.005"', "strict")
    sub("zero mass with inertia, strict", '<mass value="0.2"/>', '<mass value="0"/>', "strict")
    massless = t.replace('<link name="c"><inertial><mass value="0.2"/>', '<link name="c"><inertial><mass value="0"/>')
    massless = massless.replace('<link name="tool"><inertial><mass value="0.1"/>\n    <inertia ixx="0.001" ixy="0" '
                                'ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>', '<link name="tool"/>')
    massless = massless.replace('<mass value="0"/>\n    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" '
                                'izz="0.001"/>', '<mass value="0"/>\n    <inertia ixx="0" ixy="0" ixz="0" iyy="0" '
                                'iyz="0" izz="0"/>')
    assert massless.count('<mass value="0"/>') == 1 and '<link name="tool"/>' in massless
    out.append(("a moving joint that carries no mass", "text", massless))
    sub("root is <model>", "<robot", "<model")
    sub("namespaced root", '<robot name="fuzz">', '<robot xmlns="http://example.com/r" name="fuzz">')
    out.append(("empty <robot/>", "text", '<robot name="e"/>'))
    out.append(("no root element", "text", '<?xml version="1.0"?>'))
    out.append(("empty file", "bytes", b""))
    out.append(("billion laughs", "text", '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
                + "".join(f'<!ENTITY {chr(98 + k)} "' + f"&{chr(97 + k)};" * 10 + '">' for k in range(8))
                + ']><robot name="&i;"><link name="x"/></robot>'))
    out.append(("external entity", "text", '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                '<robot name="&e;"><link name="x"/></robot>'))
    out.append(("UTF-16 with a bad joint", "bytes", t.replace('type="continuous"', 'type="ball"').encode("utf-16")))
    out.append(("latin-1 byte", "bytes", t.encode().replace(b'name="fuzz"', b'name="caf\xe9"')))
    for _ in range(10):  # truncated inside the document
        cut = int(rng.integers(10, len(t) - 12))
        out.append((f"truncated at {cut}", "text", t[:cut]))
    for k in range(8):
        out.append((f"binary garbage {k}", "bytes", rng.integers(0, 256, 256 * (k + 1), dtype=np.uint8).tobytes()))
    deep = "<a>" * 5000 + "</a>" * 5000
    out.append(("5000 nested elements", "text", f'<robot name="d">{deep}</robot>'))
    for _ in range(12):  # random damage of one attribute value: a quote removed (never well-formed)
        quotes = [i for i, c in enumerate(t) if c == '"']
        i = quotes[int(rng.integers(0, len(quotes)))]
        out.append((f"quote removed at {i}", "text", t[:i] + t[i + 1:]))
    return out


class MisuseContext:
    """The models the misuse cases work on: the example arm (``examples/data/arm.urdf``: 3 revolute joints and a
    prismatic one), the built-in scene reference/05, a two-joint SphericalEuler("XYZ") chain, and a folder for
    output files."""

    def __init__(self, arm_path: str, tmp_dir: str):
        import redmax as rm

        self.rm = rm
        self.arm = rm.load_urdf(arm_path)
        self.scene = rm.scenes.load("reference/05")
        b = rm.ModelBuilder("euler-xyz")
        b.add_body("a", rm.Cuboid(1.0, 2.0, 3.0), rm.SphericalEuler("XYZ"))
        b.add_body("b", rm.Cuboid(1.0, 2.0, 3.0), rm.SphericalEuler("XYZ"), parent="a")
        self.euler = b.build()
        self.tmp = tmp_dir


def misuse_cases() -> list[tuple[str, object]]:
    """API misuses, each ``(label, call(ctx))`` (see the module docstring).  The first twelve (labels L1-L8) pass
    None, a Scene, a name or a path where a model or state belongs, long doubles, or a path that cannot be written."""
    import os
    from pathlib import Path

    def z(n=4, dtype=float):
        return np.zeros(n, dtype=dtype)

    def zero_charts(c, call):
        m = c.euler
        st = c.rm.State(z(6), z(6), 0.0, np.zeros(2, dtype=np.int64))
        return call(c.rm, m, st)

    return [
        ("L1 simulate(Scene)", lambda c: c.rm.simulate(c.scene)),
        ("L1 simulate(None)", lambda c: c.rm.simulate(None)),
        ("L1 simulate(name)", lambda c: c.rm.simulate("reference/05")),
        ("L1 simulate(path)", lambda c: c.rm.simulate(Path("scene.toml"))),
        ("L2 Simulator(None)", lambda c: c.rm.Simulator(None)),
        ("L3 euler_step(None)", lambda c: c.rm.euler_step(None, c.arm.initial_state(), 1e-3)),
        ("L4 forward_kinematics(None)", lambda c: c.rm.forward_kinematics(None, z())),
        ("L5 forward_kinematics(longdouble)", lambda c: c.rm.forward_kinematics(c.arm, z(4, np.longdouble))),
        ("L6 simulate(State(None, None))", lambda c: c.rm.simulate(c.arm, c.rm.State(None, None))),
        ("L7 scenes.save(None)", lambda c: c.rm.scenes.save(None, os.path.join(c.tmp, "x.toml"))),
        ("L8 scenes.save(missing folder)", lambda c: c.rm.scenes.save(c.scene, "/nonexistent/x.toml")),
        ("L8 scenes.save(directory)", lambda c: c.rm.scenes.save(c.scene, c.tmp)),
        ("Simulator(Scene)", lambda c: c.rm.Simulator(c.scene)),
        ("euler_step(Scene)", lambda c: c.rm.euler_step(c.scene, c.arm.initial_state(), 1e-3)),
        ("linearized_step(Scene)", lambda c: c.rm.linearized_step(c.scene, c.arm.initial_state(), 1e-3)),
        ("evaluate_kinematics(Scene)", lambda c: c.rm.evaluate_kinematics(c.scene, z(3))),
        ("forward_kinematics(Scene)", lambda c: c.rm.forward_kinematics(c.scene, z(3))),
        ("energies(None)", lambda c: c.rm.energies(None, z(), z())),
        ("redmax_system(name)", lambda c: c.rm.redmax_system("arm", z(), z())),
        ("scenes.save(Model)", lambda c: c.rm.scenes.save(c.arm, os.path.join(c.tmp, "x.toml"))),
        ("forward_kinematics(bool q)", lambda c: c.rm.forward_kinematics(c.arm, z(4, bool))),
        ("forward_kinematics(q None)", lambda c: c.rm.forward_kinematics(c.arm, None)),
        ("State(text)", lambda c: c.rm.State("abc", z(3))),
        ("State(t text)", lambda c: c.rm.State(z(3), z(3), "0")),
        ("simulate(state text)", lambda c: c.rm.simulate(c.arm, "rk45")),
        ("simulate(on_instability)", lambda c: c.rm.simulate(c.arm, on_instability="loud")),
        ("crba(q 1e155)", lambda c: c.rm.crba(c.arm, np.full(4, 1e155))),
        ("crba(q 1e300)", lambda c: c.rm.crba(c.arm, np.full(4, 1e300))),
        ("minv(q 1e155)", lambda c: c.rm.minv(c.arm, np.full(4, 1e155))),
        ("crba(batch q 1e155)", lambda c: c.rm.crba(c.arm, np.full((2, 4), 1e155))),
        ("minv_product(q 1e155)", lambda c: c.rm.minv_product(c.arm, np.full(4, 1e155), np.ones(4))),
        ("redmax_accelerations(q 1e155)", lambda c: c.rm.redmax_accelerations(c.arm, np.full(4, 1e155), z())),
        ("simulate(zero chart words)", lambda c: zero_charts(c, lambda rm, m, st: rm.simulate(m, st, duration=0.02))),
        ("euler_step(zero chart words)", lambda c: zero_charts(c, lambda rm, m, st: rm.euler_step(m, st, 1e-3))),
        ("Simulator(zero chart words)", lambda c: zero_charts(c, lambda rm, m, st: rm.Simulator(m, st))),
        ("rk45(zero chart words)", lambda c: zero_charts(c, lambda rm, m, st: rm.simulate(m, st, integrator="rk45",
                                                                                        duration=0.02))),
        ("forward_kinematics(zero chart words)", lambda c: c.rm.forward_kinematics(c.euler, z(6), np.zeros(2))),
    ]
