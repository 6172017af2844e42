"""The built-in scenes reproduce the pinned wave-one values (themselves checked against the original MATLAB
implementation under Octave) with linearly implicit Euler: the README's central claim, as a test."""

import json
from pathlib import Path

import numpy as np
import pytest

import redmax as rm

from tolerances import REFERENCE_H_REL

_PINNED = json.loads((Path(__file__).parent / "reference" / "euler_pinned.json").read_text())["scenes"]


@pytest.mark.parametrize("name", sorted(_PINNED))
def test_euler_reproduces_the_pinned_final_energy_and_state(name):
    ref = _PINNED[name]
    r = rm.scenes.load(name).simulate(integrator="euler")
    assert r.meta["steps"] == ref["steps"]
    assert abs(r.H - ref["H"]) <= REFERENCE_H_REL * abs(ref["H"])
    assert np.abs(r.q[-1] - np.array(ref["q_final"])).max() < 1e-9
    assert np.abs(r.qdot[-1] - np.array(ref["qdot_final"])).max() < 1e-7 * max(1.0, np.abs(ref["qdot_final"]).max())
