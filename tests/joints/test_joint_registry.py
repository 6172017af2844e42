"""The joint registry: the compiled dispatch is written from it, other packages register families through entry
points (group ``redmax.joints``), and a family the dispatch could not serve is refused by name.

The worked example of a new family (a helical joint, registered by an entry point) runs in the docs test
(``docs/extending.md``): dynamics, simulation, derivatives against central differences, scene files.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from redmax.errors import ModelError
from redmax.joints.base import Joint, JointKernels
from redmax.joints.primitive import COMPOSITE, PRIMITIVES, check_registry, primitive_calc
from redmax.joints.simple import Revolute, calc_revolute, expand_revolute, layout_screw


def _family(name, code, nq=1, **kernels):
    return type(name, (Joint,), {"kind": name.lower(), "code": code, "nq": nq, "kernels": JointKernels(**kernels)})


def test_the_registry_refuses_what_the_dispatch_cannot_serve():
    full = {"calc": calc_revolute, "layout": layout_screw, "expand": expand_revolute}
    check_registry((*PRIMITIVES, _family("Free", 50, **full)))  # a free code, every kernel: accepted
    with pytest.raises(ModelError, match="Twice: type code 1 is not free"):
        check_registry((*PRIMITIVES, _family("Twice", Revolute.code, **full)))
    with pytest.raises(ModelError, match=f"Comp: type code {COMPOSITE} is not free"):
        check_registry((*PRIMITIVES, _family("Comp", COMPOSITE, **full)))
    with pytest.raises(ModelError, match="NoExpand has 1 DOFs but no layout/expand"):
        check_registry((_family("NoExpand", 50, calc=calc_revolute, layout=layout_screw),))
    with pytest.raises(ModelError, match="Half: reparam and event come together"):
        check_registry((_family("Half", 50, reparam=calc_revolute, **full),))
    with pytest.raises(ModelError, match="Bare: kernels must be a JointKernels"):
        check_registry((type("Bare", (Joint,), {"kind": "bare", "code": 51}),))


def test_the_dispatch_calls_each_family_by_its_code():
    for cls in PRIMITIVES:
        n = cls.nq
        assert cls.kernels.calc is not None and (n == 0 or cls.kernels.expand is not None)
    Q, S = np.zeros((4, 4)), np.zeros((6, 1))
    primitive_calc(Revolute.code, np.array([0.0, 0.0, 1.0]), np.array([0.5]), np.zeros(1), 0, Q, S, np.zeros((6, 1)))
    assert np.allclose(Q[:2, :2], [[np.cos(0.5), -np.sin(0.5)], [np.sin(0.5), np.cos(0.5)]]) and S[2, 0] == 1.0
    Q[:] = 7.0
    primitive_calc(99, np.zeros(3), np.zeros(1), np.zeros(1), 0, Q, S, np.zeros((6, 1)))  # no family: untouched
    assert (Q == 7.0).all()


_PLUGIN = '''
import numpy as np
from numba import njit
from redmax.joints.base import Joint, JointKernels
from redmax.joints.simple import calc_revolute, expand_revolute, layout_screw

@njit(cache=True)
def calc_twin(p, q, qd, js, Q, S, Sdot):
    calc_revolute(p, q, qd, js, Q, S, Sdot)

class Twin(Joint):  # the revolute joint's kinematics under a code of its own
    kind = "twin"
    code = CODE
    nq = 1
    dof_labels = ("",)
    kernels = JointKernels(calc_twin, layout_screw, EXPAND)

    def params(self, owner):
        return np.array([0.0, 1.0, 0.0])
'''


def _run_with_plugin(tmp_path, code, expand, script):
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "twin_joint.py").write_text(_PLUGIN.replace("CODE", str(code)).replace("EXPAND", expand))
    info = tmp_path / "twin_joint-1.0.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[redmax.joints]\ntwin = twin_joint:Twin\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)


def test_a_family_registered_by_an_entry_point_is_dispatched_and_stamps_the_cache(tmp_path):
    proc = _run_with_plugin(tmp_path, 60, "expand_revolute", """
        import numpy as np, redmax as rm
        from redmax import _kernel_cache as kc
        from redmax.joints._registry import JOINTS
        from redmax.dynamics._world_pass import world_pass
        from twin_joint import Twin
        assert JOINTS["twin"] is Twin
        def arm(joint):
            b = rm.ModelBuilder("arm", gravity=(0, 0, -9.81))
            b.add_body("a", rm.Cuboid(0.4, 0.04, 0.04), joint, body_placement=rm.spatial.trans(0.2, 0, 0))
            b.add_body("b", rm.Cuboid(0.4, 0.04, 0.04), joint, parent="a",
                       joint_placement=rm.spatial.trans(0.4, 0, 0), body_placement=rm.spatial.trans(0.2, 0, 0))
            return b.build()
        ours, ref = arm(Twin()), arm(rm.Revolute((0, 1, 0)))
        q, qd, qdd = np.array([0.3, -0.4]), np.array([1.0, 2.0]), np.array([0.5, -1.5])
        assert np.allclose(rm.rnea(ours, q, qd, qdd), rm.rnea(ref, q, qd, qdd), rtol=1e-13)
        for a, b in zip(rm.rnea_derivatives(ours, q, qd, qdd), rm.rnea_derivatives(ref, q, qd, qdd)):
            assert np.allclose(a, b, rtol=1e-12, atol=1e-12)
        assert np.allclose(rm.simulate(ours, dt=1e-3, duration=0.2).q, rm.simulate(ref, dt=1e-3, duration=0.2).q,
                           rtol=0, atol=1e-12)
        files, consts = kc.dependencies(world_pass.py_func)
        print(any(f.endswith("twin_joint.py") for f in files),
              any(name.endswith("primitive_calc") and b"code == 60:  # twin" in c for name, c in consts))
        """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the kernels that dispatch to the family are stamped with its file and with the dispatch that names it: an
    # edit of the plugin, or registering it, recompiles them (a cached kernel without its branch is never served)
    assert proc.stdout.split() == ["True", "True"]


def test_a_broken_family_is_left_out_with_a_warning(tmp_path):
    proc = _run_with_plugin(tmp_path / "a", 1, "expand_revolute", """
        import warnings
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as w:
            import redmax
        from redmax.joints._registry import JOINTS
        print("twin" in JOINTS, [str(x.message) for x in w if "twin" in str(x.message)])
        """)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith('False ["redmax.joints entry point \'twin\' (twin_joint:Twin) is not used: joint '
                                  'family Twin: type code 1 is not free'), proc.stdout
    proc = _run_with_plugin(tmp_path / "b", 61, "None", """
        import redmax
        from redmax.joints._registry import JOINTS
        print("twin" in JOINTS)
        """)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr[-3000:]
    assert "Twin has 1 DOFs but no layout/expand kernels" in proc.stderr
