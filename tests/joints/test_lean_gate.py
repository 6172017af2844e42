"""Lean models: a model whose joints are all fixed, revolute or prismatic compiles no other joint family.

``redmax.model.layout.pack`` leaves such a model's packed ints writeable (every other model's are read-only), and
the calls gated by ``redmax._kernels.dispatch.lean_gate`` compile the other families only for the read-only type.
These tests check the tag (built, pickled, copied, re-packed), that the gate picks by type, and, in a fresh
process with an empty Numba cache, that the first rnea/aba/crba of a lean model compiles nothing of the other
families while the results equal those of the same model packed as general.
"""

import copy
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import njit

import redmax as rm
from redmax._kernels.dispatch import lean_gate
from redmax.model.layout import is_lean, pack
from redmax.spatial import trans


def _chain(joint, n=3):
    b = rm.ModelBuilder("chain", gravity=(0, 0, -9.81))
    for k in range(n):
        b.add_body(f"l{k}", rm.Cuboid(0.2, 0.02, 0.02, density=1000), joint(),
                   parent=f"l{k - 1}" if k else None, joint_placement=trans(0.2, 0, 0) if k else None,
                   body_placement=trans(0.1, 0, 0))
    return b.build()


def test_pack_tags_lean_models_by_their_joint_kinds(lean_kernels):
    lean = _chain(lambda: rm.Revolute((0, 1, 0)))
    general = _chain(lambda: rm.SphericalExp())
    assert is_lean(lean.jtype) and lean.packed[0].flags.writeable
    assert not is_lean(general.jtype) and not general.packed[0].flags.writeable
    assert not lean.packed[1].flags.writeable and not general.packed[1].flags.writeable
    for m in (lean, general):  # a pickled or copied model keeps its tag (Dask workers, deepcopy)
        for back in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
            assert back.packed[0].flags.writeable == m.packed[0].flags.writeable
            assert not back.q_rest.flags.writeable  # every other array read-only again
        Ii, _ = pack(m.tree, m.gravity, m.jstate0)
        assert Ii.flags.writeable == m.packed[0].flags.writeable and np.array_equal(Ii, m.packed[0])


@njit(cache=False)
def _real(Ii, x):
    return x + 1.0


@njit(cache=False)
def _stub(Ii, x):
    return x - 1.0


_gated = lean_gate(_real, "_gated", stub=_stub)


@njit(cache=False)
def _call(Ii, x):
    return _gated(Ii, x)


def test_gate_chooses_by_the_type_of_the_packed_ints():
    ro = np.zeros(3, dtype=np.int64)
    ro.flags.writeable = False
    assert _call(ro, 1.0) == 2.0  # read-only: the real function
    assert _call(np.zeros(3, dtype=np.int64), 1.0) == 0.0  # writeable (lean): the stub
    assert _gated(ro, 1.0) == 2.0  # from Python: the real one
    assert _gated.__redmax_source__.startswith("def _gated(Ii, x):")


def test_gate_default_stub_names_the_packing_error():
    gated = lean_gate(_real, "_gated_default")

    @njit(cache=False)
    def call(Ii, x):
        return gated(Ii, x)

    with pytest.raises(ValueError, match="the model was packed without"):
        call(np.zeros(3, dtype=np.int64), 1.0)


_ARM = textwrap.dedent("""
    def _arm():
        b = rm.ModelBuilder("arm", gravity=(0, 0, -9.81))
        b.add_body("a", rm.Cuboid(0.2, 0.02, 0.02, density=1000), rm.Revolute((0, 0, 1)),
                   body_placement=trans(0.1, 0, 0))
        b.add_body("b", rm.Cuboid(0.2, 0.02, 0.02, density=1000), rm.Prismatic((1, 0, 0)), parent="a",
                   joint_placement=trans(0.2, 0, 0), body_placement=trans(0.1, 0, 0))
        b.add_body("c", rm.Cuboid(0.2, 0.02, 0.02, density=1000), rm.Revolute((0, 1, 0)), parent="b",
                   joint_placement=trans(0.2, 0, 0), body_placement=trans(0.1, 0, 0))
        return b.build()
""")
_NS = {"rm": rm, "trans": trans}
exec(_ARM, _NS)  # the arm of this file and of the fresh process below: one text
_arm = _NS["_arm"]

_FRESH = textwrap.dedent("""
    import json, sys
    import numpy as np
    from numba.core import event as ev
    import redmax as rm
    from redmax.spatial import trans
""") + _ARM + textwrap.dedent("""
    compiled = []

    class Listener(ev.Listener):
        def on_start(self, e):
            f = e.data["dispatcher"].py_func
            compiled.append(f"{f.__module__}.{f.__qualname__}")

        def on_end(self, e):
            pass

    ev.register("numba:compile", Listener())
    m = _arm()
    q, qd = np.array([0.3, 0.1, -0.4]), np.array([0.5, -0.2, 1.0])
    out = [rm.rnea(m, q, qd, np.zeros(3)).tolist(), rm.aba(m, q, qd, np.zeros(3)).tolist(), rm.crba(m, q).tolist()]
    print(json.dumps({"compiled": compiled, "out": out, "lean": bool(m.packed[0].flags.writeable)}))
""")


def test_a_lean_model_compiles_no_other_joint_family(tmp_path):
    """In a fresh process with an empty cache, the first rnea, aba and crba of a revolute-prismatic arm compile
    their recursions (the check is not vacuous) and nothing of the joint families beyond fixed, revolute and
    prismatic; the results equal those of the same arm packed as a general model."""
    import json

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), REDMAX_LEAN_KERNELS="1")  # (the default)
    run = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    res = json.loads(run.stdout.strip().splitlines()[-1])
    assert res["lean"]
    compiled = res["compiled"]
    assert any(c.endswith("rnea_into") for c in compiled) and any(c.endswith("world_pass") for c in compiled)
    families = ("redmax.joints.composite", "redmax.joints.spline", "redmax.joints.spherical",
                "redmax.joints.core_expansion", "redmax.joints.primitive", "redmax.joints.dispatch")
    assert not [c for c in compiled if c.startswith(families)], compiled
    # the same arm, packed as a general model (read-only ints): the same numbers (to rounding: another compile)
    m = _arm()
    Ii, Ff = m.packed
    ro = Ii.copy()
    ro.flags.writeable = False
    general = _repacked(m, ro, Ff)
    q, qd = np.array([0.3, 0.1, -0.4]), np.array([0.5, -0.2, 1.0])
    assert not general.packed[0].flags.writeable
    np.testing.assert_allclose(rm.rnea(general, q, qd, np.zeros(3)), res["out"][0], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(rm.aba(general, q, qd, np.zeros(3)), res["out"][1], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(rm.crba(general, q), res["out"][2], rtol=1e-13, atol=1e-13)


def _repacked(m, Ii, Ff):
    import dataclasses

    return dataclasses.replace(m, tree=dataclasses.replace(m.tree, packed=(Ii, Ff)))
