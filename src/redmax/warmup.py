"""Compile ahead of time: run each feature's kernels once on small models, so that first use is fast.

redmax's kernels are compiled by Numba on first use and cached on disk (``__pycache__`` beside the sources, or
``NUMBA_CACHE_DIR``); a cached kernel loads in milliseconds.  First use of a feature therefore pays its compile
once per installation (and again after an upgrade).  :func:`warm_up` pays it ahead, feature by feature, in
parallel processes; ``redmax compile [FEATURE ...] [--all]`` is the same from the command line.

Each feature calls the public functions the way a user does (float64 vectors, the models' own packed arrays), so
the cache receives exactly the specialisations a user's calls look up: for a lean model (fixed, revolute and
prismatic joints only, most robot arms) and for a general one, with and without forces (``redmax.model.layout``,
``redmax.forces.program``: each compiles its own, smaller, kernels).  Shared kernels are compiled once: a
feature that finds them cached loads them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

import numpy as np

__all__ = ["FEATURES", "warm_up"]


def _arm(floating: bool = False, euler: bool = False, lean: bool = False):
    """A small model with a chain, a branch, and the common joint kinds (SI units); ``lean``: revolute and
    prismatic joints only."""
    from redmax import joints as jt
    from redmax.bodies import Cuboid, Sphere
    from redmax.builder import ModelBuilder
    from redmax.spatial import trans

    b = ModelBuilder("warm-up", gravity=(0, 0, -9.81))
    b.add_body("base", Cuboid(0.2, 0.2, 0.1), jt.Free3D() if floating else jt.Revolute((0, 0, 1)))
    b.add_body("upper", Cuboid(0.4, 0.05, 0.05), jt.Revolute((0, 1, 0)), parent="base",
               joint_placement=trans(0, 0, 0.05), body_placement=trans(0.2, 0, 0), q=[0.3])
    b.add_body("slide", Cuboid(0.3, 0.04, 0.04), jt.Prismatic((1, 0, 0)), parent="upper",
               joint_placement=trans(0.4, 0, 0), body_placement=trans(0.15, 0, 0))
    hand = jt.Revolute((1, 0, 0)) if lean else jt.SphericalEuler("XYZ") if euler else jt.SphericalExp()
    b.add_body("hand", Sphere(0.05), hand, parent="slide",
               joint_placement=trans(0.3, 0, 0), body_placement=trans(0.05, 0, 0))
    return b.build()


def _simulate() -> None:
    from redmax import scenes

    scenes.load("reference/05").simulate(duration=0.1)  # lean, no forces
    scenes.load("diff/14").simulate(duration=0.01)  # lean, forces
    scenes.load("diff/11").simulate(duration=0.01)  # general joints, forces


def _simulator() -> None:
    from redmax.simulator import Simulator

    for m in (_arm(lean=True), _arm()):
        sim = Simulator(m, dt=1e-3)
        sim.step(np.zeros(m.ndof))


def _dynamics() -> None:
    from redmax.dynamics import aba, crba, minv, rnea

    for m in (_arm(lean=True), _arm(), _arm(euler=True)):  # lean model; the lean and the checked paths (charts)
        q, qd, x = m.q0.copy(), np.ones(m.ndof), np.ones(m.ndof)
        js = m.jstate0 if m.chart_joints.size else None
        rnea(m, q, qd, x, jstate=js)
        aba(m, q, qd, x, jstate=js)
        crba(m, q, jstate=js)
        minv(m, q, jstate=js)
        rnea(m, q, qd, x, f_ext=np.zeros((m.nb, 6)), jstate=js)
        aba(m, q, qd, x, f_ext=np.zeros((m.nb, 6)), jstate=js)


def _batched() -> None:
    from redmax.dynamics import aba, crba, minv, rnea

    for m in (_arm(lean=True), _arm()):
        Q = np.tile(m.q0, (8, 1))
        X = np.ones((8, m.ndof))
        rnea(m, Q, X, X)
        aba(m, Q, X, X)
        crba(m, Q)
        minv(m, Q)


def _derivatives() -> None:
    from redmax.derivatives.aba_second_order import aba_second_order_derivatives
    from redmax.derivatives.first_order import aba_derivatives, rnea_derivatives
    from redmax.derivatives.rnea_second_order import rnea_second_order_derivatives

    for m in (_arm(lean=True), _arm(floating=True)):
        q, qd, x = m.q0.copy(), np.ones(m.ndof), np.zeros(m.ndof)
        rnea_derivatives(m, q, qd, x)
        aba_derivatives(m, q, qd, x)
        rnea_second_order_derivatives(m, q, qd, x)
        aba_second_order_derivatives(m, q, qd, x)


def _implicit() -> None:
    from redmax import scenes

    sc = scenes.load("diff/100")
    sc.simulate(integrator="bdf2", duration=0.05)
    sc.objective(sc.parameters)


def _constraints() -> None:
    from redmax import scenes

    scenes.load("reference/06").simulate(duration=0.05)  # inequality rows: the QP
    scenes.load("paper/hand").simulate(duration=0.01)  # equality rows (KKT) and coupled coordinates


def _large() -> None:
    from redmax import scenes

    scenes.load("paper/tree", levels=2).simulate(duration=0.02, solver="pcg")  # PCG in the compiled loop
    scenes.load("paper/simple_bridge", n_deck=8).simulate(duration=0.02, solver="pcg")  # PCG with loop rows
    scenes.load("paper/chain_pcg", n=4).simulate(duration=0.01, solver="sparse")


def _ode() -> None:
    from redmax import scenes

    scenes.load("reference/03").simulate(integrator="rk45", duration=0.05)


# name -> (what it covers, the warm-up)
FEATURES: dict[str, tuple[str, Callable[[], None]]] = {
    "simulate": ("redmax run, rm.simulate and Scene.simulate with the linearly implicit Euler loop", _simulate),
    "simulator": ("rm.Simulator.step (controller loops)", _simulator),
    "dynamics": ("rnea, aba, crba, minv on one state (robots from URDF/MJCF)", _dynamics),
    "batched": ("rnea, aba, crba, minv on many states at once", _batched),
    "derivatives": ("first- and second-order derivatives of inverse and forward dynamics", _derivatives),
    "implicit": ("bdf1, sdirk2, bdf2 and adjoint gradients", _implicit),
    "constraints": ("scenes with constraints (KKT and QP steps)", _constraints),
    "large": ("the solvers of large models: PCG (solver='pcg', 'auto' from 200 DOFs) and sparse", _large),
    "ode": ("rk45, dop853 and SciPy's other integrators", _ode),
}


def _run_one(name: str) -> float:
    import warnings

    from redmax._jit import compile_seconds

    c0 = compile_seconds()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        FEATURES[name][1]()
    return compile_seconds() - c0


def warm_up(features: Iterable[str] | None = None, *, processes: int | None = None,
            progress: Callable[[str, float, int, int], None] | None = None) -> dict[str, float]:
    """Compile (or load from the cache) the kernels of ``features`` (names of :data:`FEATURES`; default all).

    Args:
        features: feature names; None for all of them.
        processes: worker processes (default: the number of CPUs, at most the number of features); 1 runs them
            here, one after the other.
        progress: called as ``progress(name, seconds, done, total)`` when a feature is ready.
    Returns:
        seconds of compiling (or cache loading) per feature, as measured in its process.
    Raises:
        ValueError: an unknown feature name.
    """
    names = list(FEATURES) if features is None else list(features)
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise ValueError(f"unknown feature {unknown[0]!r}; expected one of {', '.join(FEATURES)}")
    procs = min(len(names), processes or os.cpu_count() or 1)
    out: dict[str, float] = {}
    if procs <= 1:
        for k, n in enumerate(names):
            out[n] = _run_one(n)
            if progress:
                progress(n, out[n], k + 1, len(names))
        return out
    import concurrent.futures as cf
    import multiprocessing as mp

    with cf.ProcessPoolExecutor(max_workers=procs, mp_context=mp.get_context("spawn")) as ex:
        futures = {ex.submit(_run_one, n): n for n in names}
        for k, f in enumerate(cf.as_completed(futures)):
            n = futures[f]
            out[n] = f.result()
            if progress:
                progress(n, out[n], k + 1, len(names))
    return {n: out[n] for n in names}

