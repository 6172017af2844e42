"""Friction coefficients of a model: ``{"joint": mu1, "world": mu2}`` (RedMax paper §5; spec defaults 0.6)."""

from __future__ import annotations

import numpy as np

from redmax.errors import ModelError

__all__ = ["DEFAULT_MU", "check_friction", "joint_mu", "world_mu"]

DEFAULT_MU = 0.6


def check_friction(table, owner: str) -> dict | None:
    """The checked table (None stays None: joints with a contact then use 0.6, floors are frictionless)."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ModelError(f"{owner}: friction must be a table {{ joint = mu1, world = mu2 }}, got {table!r}")
    extra = sorted(set(table) - {"joint", "world"})
    if extra:
        raise ModelError(f"{owner}: friction has unknown key(s) {extra}; valid: ['joint', 'world']")
    out = {}
    for k in ("joint", "world"):
        v = table.get(k, DEFAULT_MU)
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise ModelError(f"{owner}: friction.{k} must be a number, got {v!r}") from None
        if isinstance(v, bool) or not (np.isfinite(x) and x >= 0.0):
            raise ModelError(f"{owner}: friction.{k} must be a finite number >= 0, got {v!r}")
        out[k] = x
    return out


def joint_mu(model) -> float:
    """mu1 of the joints and loops with a contact."""
    f = getattr(model, "friction", None)
    return DEFAULT_MU if f is None else f["joint"]


def world_mu(model) -> float | None:
    """mu2 of the floors, None when the model declared no friction table (frictionless floors)."""
    f = getattr(model, "friction", None)
    return None if f is None else f["world"]
