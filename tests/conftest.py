"""Shared by every test folder: the helper modules of tests/ (tolerances, paths, derivative_models,
constraint_models) importable by name, and the fixtures that several modules use."""

import os
import sys
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:  # the helpers sit next to this file; test modules live one folder down
    sys.path.insert(0, _TESTS)

# One variant of every kernel for the whole suite (CI time): models are packed for the full kernels, here and in
# the processes the tests start (docs blocks, examples, the command line); the tests of lean packing turn it on
# with the ``lean_kernels`` fixture or in their subprocess's environment.
os.environ["REDMAX_LEAN_KERNELS"] = "0"

import redmax.model.layout as _layout  # noqa: E402

from paths import ARM_URDF  # noqa: E402

_layout.LEAN_KERNELS = False  # (as the environment says, should redmax have been imported before)


@pytest.fixture
def lean_kernels(monkeypatch):
    """Lean packing on (``redmax.model.layout.LEAN_KERNELS``), as outside the test suite."""
    monkeypatch.setattr(_layout, "LEAN_KERNELS", True)


@pytest.fixture(scope="module")
def arm():
    """The example arm (``examples/data/arm.urdf``, fixed base, 4 DOFs, model name 'arm')."""
    import redmax as rm

    return rm.load_urdf(ARM_URDF)
