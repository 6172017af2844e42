"""The plan of a sweep: which scene, which runs, what each run sets, and the layout of the dataset, all checked in
the calling process before anything runs.

A sweep key is one of three kinds:

* a **scene parameter** (``redmax.scenes.parameters(name)``), passed to ``redmax.scenes.load(name, **params)``;
* a **simulate option** (a keyword of :meth:`redmax.scenes.Scene.simulate` other than ``state`` and ``progress``);
* an **initial-state offset** ``"q0[<dof name>]"`` or ``"qd0[<dof name>]"`` (a number added to the initial
  coordinate or rate of that DOF, ``model.dof_names``).

The plan loads the scene once per distinct combination of scene parameters (a model build, milliseconds for the
built-in scenes) to learn its DOF names, its default step and duration, and to check the offsets; a combination
that fails to load is still sent to the workers, where the run records the error.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import numbers
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from redmax.errors import SceneError, SimulationError
from redmax.scene import Scene

__all__ = ["RECORDS", "Plan", "Run", "make_plan", "simulate_keywords", "value_from_text"]

RECORDS = ("H", "final_state", "trajectory")  # what a sweep may record (``record=``)
RESULT_NAMES = ("H", "q_final", "qdot_final", "status", "error", "t", "q", "qdot")  # the dataset's variables
DIMENSIONS = ("case", "dof", "time")  # the dataset's own dimensions
META = ("scene", "record", "sweep_id", "runs_total", "runs_done", "runs_error", "redmax_version")  # attributes
_OFFSET = re.compile(r"^(q0|qd0)\[(.+)\]$")
_SETTINGS = ("dt", "duration", "integrator", "method", "rtol", "atol", "symmetrize", "coriolis", "gravity",
             "baumgarte", "baumgarte_acc", "constraint_solver", "on_instability", "solver", "friction_solver",
             "compat")  # the Scene fields a reload by name must reproduce


def simulate_keywords() -> tuple[str, ...]:
    """The keywords of :meth:`redmax.scenes.Scene.simulate` a sweep may set (all but ``state`` and ``progress``)."""
    names = inspect.signature(Scene.simulate).parameters
    return tuple(n for n in names if n not in ("self", "state", "progress"))


@dataclass(frozen=True)
class Run:
    """One run of a sweep.

    Attributes:
        index: its position in the dataset's run dimensions (one int per grid key, or ``(case,)``).
        params: the scene parameters of ``redmax.scenes.load(source, **params)``.
        options: the keywords of ``scene.simulate(**options)``.
        offsets: ``((kind, dof, value), ...)`` with kind ``"q0"`` or ``"qd0"``: added to the initial state.
    """

    index: tuple
    params: dict
    options: dict
    offsets: tuple

    def task(self, source: str, record: tuple) -> tuple:
        """The arguments of :func:`redmax.sweeps.worker.run_one` for this run."""
        return (source, self.params, self.options, self.offsets, record)


@dataclass
class Plan:
    """A checked sweep.

    Attributes:
        source: the scene name, or the absolute path of a scene file, that every worker loads.
        dims: the run dimensions: the grid keys in order, or ``("case",)``.
        coords: dimension -> coordinate values (the grid values; ``0..n-1`` for ``case``).
        runs: every run, in C order of ``dims``.
        record: what is recorded (a subset of :data:`RECORDS`).
        dof_names: the ``dof`` coordinate: every DOF name of the loaded scenes, in order of first appearance.
        samples: trajectory samples per run (``record`` with "trajectory"), else None.
        case_columns: ``cases=`` only: key -> (n_cases,) values each case ran with (the scene's default where the
            case did not set it; NaN or "" where unknown).
        attrs: the dataset's attributes: ``scene``, ``record``, ``sweep_id`` and every setting common to all runs.
        sweep_id: a digest of the scene, the runs and ``record``: a store holds exactly one sweep.
    """

    source: str
    dims: tuple
    coords: dict
    runs: list
    record: tuple
    dof_names: tuple
    samples: int | None
    case_columns: dict
    attrs: dict
    sweep_id: str

    @property
    def shape(self) -> tuple[int, ...]:
        """The run dimensions' sizes."""
        return tuple(len(self.coords[d]) for d in self.dims)


# -- values ---------------------------------------------------------------------------------------------------------
def _plain(v):
    """A NumPy scalar as the Python scalar of the same value (bitwise), anything else unchanged."""
    return v.item() if isinstance(v, np.generic) else v


def column(values) -> np.ndarray:
    """Values as one array: bool, int64, float64 (None as NaN), text (None as ""), or their repr as text."""
    vals = [_plain(v) for v in values]
    given = [v for v in vals if v is not None]
    if given and len(given) == len(vals) and all(isinstance(v, bool) for v in given):
        return np.array(vals, dtype=bool)
    if given and len(given) == len(vals) and all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                                                 for v in given):
        return np.array(vals, dtype=np.int64)
    if given and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in given):
        return np.array([math.nan if v is None else float(v) for v in vals], dtype=np.float64)
    text = [("" if v is None else v if isinstance(v, str) else repr(v)) for v in vals]
    return np.array(text, dtype=object)


def _attr(v):
    """A setting as a JSON value of a store's attributes (its repr when it is not a bool, number or text)."""
    v = _plain(v)
    if v is None or isinstance(v, bool | int | str) or (isinstance(v, float) and math.isfinite(v)):
        return v
    return repr(v)


def value_from_text(scene: str, key: str, text: str, where: str = "sweep"):
    """A command-line value of sweep key ``key`` of scene ``scene`` with the type the key takes.

    Scene parameters take the type of their default (``redmax.scenes.parameters``); simulate options the type of
    the Scene field of the same name (dt, duration, rtol, atol, baumgarte: float; integrator, solver, ...: text),
    other options a number when the text reads as one; offsets ``q0[...]``/``qd0[...]`` a float.  Raises
    SceneError starting with ``where`` (e.g. "--grid") and naming the key.
    """
    from redmax.scenes import _coerce

    text = text.strip()
    defaults = _parameters(scene)
    try:
        if key in defaults:
            return _coerce(scene, key, text, defaults[key])
        if _OFFSET.match(key):
            return _float(key, text)
    except SceneError as e:
        raise SceneError(f"{where}: {e}") from None
    if key not in simulate_keywords():
        raise SceneError(f"{where}: {_unknown(key, scene, defaults)}")
    default = getattr(Scene, key, None) if key in Scene.__dataclass_fields__ else None
    if isinstance(default, bool):
        if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise SceneError(f"{where}: {key}: expected true or false, got {text!r}")
        return text.lower() in ("true", "1", "yes")
    if isinstance(default, float):
        try:
            return _float(key, text)
        except SceneError as e:
            raise SceneError(f"{where}: {e}") from None
    if isinstance(default, str):
        return text
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return None if text.lower() == "none" else text


def _float(key: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise SceneError(f"{key}: expected a number, got {text!r}") from None


# -- the scene --------------------------------------------------------------------------------------------------
def _parameters(source: str) -> dict:
    """The parameters of a parametric scene name; {} for any other scene."""
    from redmax.scenes import _parametric

    entry = _parametric().get(source)
    return {} if entry is None else dict(entry[2])


def _builtin(name: str) -> bool:
    """Whether every worker can load ``name``: a built-in scene file, a parametric scene of redmax, or a robot."""
    from redmax.scenes import ROBOT_PREFIX, _builtin_names, _parametric

    entry = _parametric().get(name)
    if entry is not None:
        return entry[0].__module__.startswith("redmax.")
    return name in _builtin_names() or name.lower().startswith(ROBOT_PREFIX)


def resolve_scene(scene) -> tuple[str, dict]:
    """The scene name or absolute scene-file path the workers load, and the parameters a Scene object carries."""
    from redmax.scenes import _AUTHORS, ROBOT_PREFIX, _parametric

    if isinstance(scene, Scene):
        if not _builtin(scene.name):
            raise SceneError(f"sweep: scene: a Scene object is swept only when it is a built-in scene the workers "
                             f"reload by name; {scene.name!r} is not: pass the scene's name or the path of its scene "
                             "file (redmax.scenes.save(scene, 'my_scene.toml'))")
        _check_unchanged(scene)
        return scene.name, dict(scene.params)
    try:
        s = os.fspath(scene)
    except TypeError:
        raise SceneError(f"sweep: scene must be a scene name, a scene-file path or a built-in Scene, got "
                         f"{type(scene).__name__}") from None
    s = os.fsdecode(s) if isinstance(s, bytes) else s
    if s in _parametric() or s in _AUTHORS:
        if not _builtin(s):
            raise SceneError(f"sweep: scene {s!r} is registered in this process only, and the workers load scenes by "
                             "name: save it to a scene file (redmax.scenes.save) and pass the path")
        return s, {}
    if _builtin(s) or s.lower().startswith(ROBOT_PREFIX):
        return s, {}
    if s.lower().endswith((".toml", ".xml", ".urdf")) or os.path.exists(s):
        if not os.path.isfile(s):
            raise SceneError(f"sweep: scene file {s!r} does not exist")
        return os.path.abspath(s), {}
    raise SceneError(f"sweep: unknown scene {s!r}; give a scene file (.toml, .urdf, .xml) or a built-in name "
                     "(`redmax scenes` lists them)")


def _check_unchanged(scene: Scene) -> None:
    """A Scene object whose settings differ from a fresh load by name is refused (the workers could not rebuild
    it)."""
    from redmax.scenes import load

    fresh = load(scene.name, **scene.params)
    changed = [f for f in _SETTINGS if getattr(fresh, f) != getattr(scene, f)]
    m, f = scene.model, fresh.model
    if (scene.forces is None) != (fresh.forces is None) or tuple(m.dof_names) != tuple(f.dof_names) or \
            not (np.array_equal(m.q0, f.q0) and np.array_equal(m.qd0, f.qd0)):
        changed.append("model or forces")
    if changed:
        raise SceneError(f"sweep: scene: this {scene.name!r} differs from the built-in one ({', '.join(changed)}) "
                         "and the workers load scenes by name: pass the name and give the changed settings as "
                         "options (e.g. dt=...), or save it to a scene file and pass the path")


# -- keys -------------------------------------------------------------------------------------------------------
def _unknown(key, source: str, defaults: dict) -> str:
    params = ", ".join(defaults) if defaults else "none"
    return (f"unknown key {key!r}: not a parameter of scene {source!r} (its parameters: {params}), a simulate option "
            f"({', '.join(simulate_keywords())}) or an initial-state offset 'q0[<dof name>]' / 'qd0[<dof name>]'")


def _kind(key, where: str, source: str, defaults: dict) -> str:
    """``"param"``, ``"option"`` or ``"offset"``; SceneError naming an unknown or reserved key."""
    if not isinstance(key, str):
        raise SceneError(f"{where}: keys are names, got {key!r}")
    if key in RESULT_NAMES or key in DIMENSIONS or key in META:
        raise SceneError(f"{where}: key {key!r} is a name the sweep's dataset uses for its own variables")
    if key in defaults:
        return "param"
    if key in simulate_keywords():
        return "option"
    if _OFFSET.match(key):
        return "offset"
    raise SceneError(f"{where}: {_unknown(key, source, defaults)}")


def _check_value(kind: str, key: str, value, where: str, source: str, defaults: dict) -> None:
    """Scene parameters must coerce to their default's type and offsets be finite numbers (SceneError naming the
    key); simulate options are checked by the run itself."""
    from redmax.scenes import _coerce

    if kind == "param":
        try:
            _coerce(source, key, value, defaults[key])
        except SceneError as e:
            raise SceneError(f"{where}: {e}") from None
    elif kind == "offset" and (isinstance(value, bool) or not isinstance(value, numbers.Real)
                               or not math.isfinite(value)):
        raise SceneError(f"{where}: offset {key!r} must be a finite number, got {value!r}")


def _grid_values(key: str, values) -> list:
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise SceneError(f"grid[{key!r}] must be a list of values, got {values!r}")
    vals = [_plain(v) for v in (values.tolist() if isinstance(values, np.ndarray) else values)]
    if not vals:
        raise SceneError(f"grid[{key!r}] is empty")
    labels = column(vals)
    if len(set(labels.tolist())) != len(vals):
        raise SceneError(f"grid[{key!r}] repeats a value: {vals!r}")
    return vals


def _expand(grid, cases, fixed: dict):
    """``(dims, coords, settings, keys)``: the run dimensions, their coordinates, each run's ``(index, settings)``
    and the keys the grid or the cases set."""
    if (grid is None) == (cases is None):
        raise SceneError("sweep: give exactly one of grid= (a dict of key -> values) and cases= (a list of dicts)")
    if grid is not None:
        if not isinstance(grid, Mapping) or not grid:
            raise SceneError(f"grid must be a non-empty dict of key -> list of values, got {grid!r}")
        values = {k: _grid_values(k, v) for k, v in grid.items()}
        for k in values:
            if k in fixed:
                raise SceneError(f"grid: key {k!r} is also given as a keyword of the sweep (common to every run)")
        dims = tuple(values)
        coords = {k: column(v) for k, v in values.items()}
        runs = [(idx, {**fixed, **{k: values[k][i] for k, i in zip(dims, idx, strict=True)}})
                for idx in itertools.product(*(range(len(v)) for v in values.values()))]
        return dims, coords, runs, dims
    if isinstance(cases, Mapping | str) or not isinstance(cases, Iterable):
        raise SceneError(f"cases must be a list of dicts, got {cases!r}")
    cases = list(cases)
    if not cases:
        raise SceneError("cases is empty")
    keys = []
    for k, case in enumerate(cases):
        if not isinstance(case, Mapping):
            raise SceneError(f"cases[{k}] must be a dict of key -> value, got {case!r}")
        for key in case:
            if key in fixed:
                raise SceneError(f"cases[{k}]: key {key!r} is also given as a keyword of the sweep (common to every "
                                 "run)")
            if key not in keys:
                keys.append(key)
    runs = [((k,), {**fixed, **{key: _plain(v) for key, v in case.items()}}) for k, case in enumerate(cases)]
    return ("case",), {"case": np.arange(len(cases), dtype=np.int64)}, runs, tuple(keys)


def _record(record) -> tuple:
    items = (record,) if isinstance(record, str) else record
    try:
        items = tuple(items)
    except TypeError:
        raise SceneError(f"record must be a list of {', '.join(RECORDS)}, got {record!r}") from None
    bad = [r for r in items if r not in RECORDS]
    if bad:
        raise SceneError(f"record: unknown item {bad[0]!r}; expected some of {', '.join(RECORDS)}")
    return tuple(r for r in RECORDS if r in items)


# -- the plan ---------------------------------------------------------------------------------------------------
def make_plan(scene, grid, cases, fixed: dict, record) -> Plan:
    """Check a sweep and lay out its runs and dataset (SceneError naming the offending key or argument)."""
    from redmax._version import __version__

    source, base = resolve_scene(scene)
    record = _record(record)
    defaults = _parameters(source)
    fixed = {k: _plain(v) for k, v in fixed.items()}
    dims, coords, settings, case_keys = _expand(grid, cases, fixed)
    kinds = {}
    for index, run in settings:
        where = f"cases[{index[0]}]" if grid is None else "grid"
        for key, value in run.items():
            src = "sweep" if key in fixed else where
            kinds[key] = _kind(key, src, source, defaults)
            _check_value(kinds[key], key, value, src, source, defaults)
    runs = []
    for index, run in settings:
        params = {**base, **{k: v for k, v in run.items() if kinds[k] == "param"}}
        options = {k: v for k, v in run.items() if kinds[k] == "option"}
        offsets = tuple((m.group(1), m.group(2), float(v)) for k, v in run.items() if (m := _OFFSET.match(k)))
        runs.append(Run(index, params, options, offsets))
    scenes_by_params = _load_all(source, runs)
    dof_names = _dof_names(source, runs, scenes_by_params)
    samples = _samples(runs, scenes_by_params) if "trajectory" in record else None
    case_columns = {} if grid is not None else {
        key: column([_effective(key, kinds[key], run, scenes_by_params, defaults) for run in runs])
        for key in case_keys}
    sweep_id = hashlib.sha256(json.dumps(
        {"scene": source, "base": base, "dims": dims, "runs": [(r.params, r.options, r.offsets) for r in runs],
         "record": record}, sort_keys=True, default=repr).encode()).hexdigest()[:16]
    attrs = {k: _attr(v) for k, v in {**base, **fixed}.items() if k not in case_keys}
    attrs.update(scene=source, record=list(record), sweep_id=sweep_id, redmax_version=__version__)
    return Plan(source, dims, coords, runs, record, dof_names, samples, case_columns, attrs, sweep_id)


def _params_key(params: dict) -> str:
    return json.dumps(params, sort_keys=True, default=repr)


def _load_all(source: str, runs: list) -> dict:
    """params key -> the loaded Scene, or the exception its load raised."""
    from redmax.scenes import load

    out = {}
    for run in runs:
        key = _params_key(run.params)
        if key not in out:
            try:
                out[key] = load(source, **run.params)
            except Exception as e:  # the run records it (a value only the scene's factory refuses)
                out[key] = e
    return out


def _dof_names(source: str, runs: list, loaded: dict) -> tuple:
    """The union of the loaded scenes' DOF names; SceneError for an offset naming a DOF a scene does not have."""
    names = []
    for scene in loaded.values():
        if isinstance(scene, Scene):
            names += [n for n in scene.model.dof_names if n not in names]
    for run in runs:
        scene = loaded[_params_key(run.params)]
        if not isinstance(scene, Scene):
            continue
        for kind, dof, _ in run.offsets:
            have = list(scene.model.dof_names)
            if have.count(dof) != 1:
                why = "has no DOF" if dof not in have else "has more than one DOF named"
                raise SceneError(f"sweep: key '{kind}[{dof}]': scene {source!r} {why} {dof!r}; its DOFs: "
                                 f"{', '.join(have)}")
    return tuple(names)


def _samples(runs: list, loaded: dict) -> int:
    """The trajectory length every run shares; SceneError when runs would differ (before anything runs)."""
    from redmax.integrators.common import time_grid

    counts = set()
    for run in runs:
        scene = loaded[_params_key(run.params)]
        if not isinstance(scene, Scene):
            continue
        dt, duration = run.options.get("dt", scene.dt), run.options.get("duration", scene.duration)
        try:
            counts.add(time_grid(0.0, float(dt), float(duration))[0] + 1)
        except (SimulationError, TypeError, ValueError):
            continue  # an invalid step or duration: the run records its error
    if len(counts) > 1:
        raise SceneError(f"record: 'trajectory' needs the same number of samples in every run, but these runs have "
                         f"{', '.join(map(str, sorted(counts)))} (duration / dt differ): give every run the same "
                         "ratio, or record only H and final_state")
    return counts.pop() if counts else 1  # (no run can run: one NaN sample each)


def _effective(key: str, kind: str, run: Run, loaded: dict, defaults: dict):
    """The value ``key`` had in ``run``: its setting, else the scene's default (None when unknown)."""
    if kind == "param":
        return run.params.get(key, defaults.get(key))
    if kind == "offset":
        m = _OFFSET.match(key)
        return next((v for k, d, v in run.offsets if (k, d) == m.groups()), 0.0)
    if key in run.options:
        return run.options[key]
    scene = loaded[_params_key(run.params)]
    return getattr(scene, key, None) if isinstance(scene, Scene) and key in Scene.__dataclass_fields__ else None

