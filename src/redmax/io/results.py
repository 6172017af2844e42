"""Results files: the trajectory as ``.npz`` and a JSON summary."""

from __future__ import annotations

import json

import numpy as np

__all__ = ["save_npz", "save_summary", "summary"]


def _meta(result) -> dict:
    from redmax._version import __version__

    m = result.meta
    return {"scene": str(m.get("scene", "")), "integrator": str(m.get("integrator", "")),
            "dt": float(m.get("dt", np.nan)), "method": str(m.get("method", "")), "version": __version__}


def save_npz(result, path) -> str:
    """Write t, q, qdot, jstate, every energy component (``energy_<name>``), the constraint violations and
    reactions (``violation_<name>``, ``reaction_<name>``) and metadata (scene, integrator, dt, method, redmax
    version) to a compressed ``.npz``."""
    arrays = {"t": result.t, "q": result.q, "qdot": result.qdot, "jstate": result.jstate}
    for k, v in result.energy.items():
        arrays[f"energy_{k}"] = np.asarray(v)
    for k, v in (getattr(result, "constraint_violation", None) or {}).items():
        arrays[f"violation_{k}"] = np.asarray(v)
    for k, v in (getattr(result, "reactions", None) or {}).items():
        arrays[f"reaction_{k}"] = np.asarray(v)
    for k, v in _meta(result).items():
        arrays[k] = np.array(v)
    np.savez_compressed(path, **arrays)
    return str(path)


def summary(result) -> dict:
    """The JSON summary: scene, integrator, dt, steps, t_final, q_final, qdot_final, energy_initial/final."""
    m = _meta(result)
    return {
        "scene": m["scene"], "integrator": m["integrator"], "dt": m["dt"], "steps": int(result.t.size - 1),
        "t_final": float(result.t[-1]), "q_final": result.q[-1].tolist(), "qdot_final": result.qdot[-1].tolist(),
        "energy_initial": {k: float(v[0]) for k, v in result.energy.items()},
        "energy_final": {k: float(v[-1]) for k, v in result.energy.items()},
        "method": m["method"], "version": m["version"],
    }


def save_summary(result, path) -> str:
    """Write :func:`summary` as JSON."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(summary(result), fh, indent=2)
        fh.write("\n")
    return str(path)
