"""Input checks shared by the builder, joints and bodies; each raises ModelError naming the element."""

from __future__ import annotations

import numpy as np

from redmax.errors import ModelError

__all__ = ["all_finite", "check_finite", "check_model", "check_nonneg", "check_transform", "check_vector",
           "describe_model_arg", "plain"]


def all_finite(a: np.ndarray) -> bool:
    """Whether every entry of the array ``a`` is finite (the per-call check of the public entry points)."""
    return bool(np.isfinite(a).all())


def check_transform(E, owner: str) -> np.ndarray:
    """Return E as a (4, 4) float array after checking it is a finite rigid transform."""
    try:
        T = np.asarray(E, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: must be a 4x4 numeric transform") from None
    if T.shape != (4, 4):
        raise ModelError(f"{owner}: must be a 4x4 transform, got shape {T.shape}")
    if not np.all(np.isfinite(T)):
        raise ModelError(f"{owner}: transform contains NaN or inf")
    R = T[:3, :3]
    if np.abs(R.T @ R - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0.0:
        raise ModelError(f"{owner}: rotation part is not a proper rotation (orthonormal, det +1)")
    if np.abs(T[3] - np.array([0.0, 0.0, 0.0, 1.0])).max() > 0.0:
        raise ModelError(f"{owner}: last row of a rigid transform must be [0 0 0 1]")
    return T.copy()


def check_vector(v, n: int, owner: str) -> np.ndarray:
    """Return v as a finite float vector of length n."""
    try:
        a = np.asarray(v, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: must be numeric, got {v!r}") from None
    if a.size != n:
        raise ModelError(f"{owner}: expected {n} value(s), got {a.size}")
    if not np.all(np.isfinite(a)):
        raise ModelError(f"{owner}: contains NaN or inf: {a.tolist()}")
    return a.copy()


def check_finite(x, owner: str) -> float:
    """Return x as a finite float."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: must be a number, got {x!r}") from None
    if not np.isfinite(v):
        raise ModelError(f"{owner}: must be finite, got {v}")
    return v


def check_nonneg(x, owner: str) -> float:
    """Return x as a finite float >= 0."""
    v = check_finite(x, owner)
    if v < 0.0:
        raise ModelError(f"{owner}: must be >= 0, got {v}")
    return v


def describe_model_arg(obj) -> str:
    """What was passed where a Model belongs, with the hint that fits (for error messages): a Scene ("pass
    scene.model or use scene.simulate()"), a name or path ("load it first"), None or the type's name."""
    import os

    if hasattr(getattr(obj, "model", None), "packed"):
        return f"{type(obj).__name__} (a Scene: pass scene.model or use scene.simulate())"
    if isinstance(obj, str | bytes | os.PathLike):
        text = obj if isinstance(obj, str) else os.fsdecode(obj)
        return (f"{type(obj).__name__} {text!r} (a name or path: load it first with redmax.scenes.load(...) for a "
                "scene or redmax.load_urdf(...) for a robot)")
    return type(obj).__name__


def check_model(model, fn: str):
    """``model`` when it is a :class:`redmax.Model` (duck-typed: this module sits below the model package); a
    ModelError naming ``fn`` and what was passed otherwise."""
    if hasattr(model, "packed") and hasattr(model, "dofs") and hasattr(model, "uncoupled"):
        return model
    raise ModelError(f"{fn}: expected a redmax.Model as first argument, got {describe_model_arg(model)}")


def plain(v):
    """``v`` with NumPy scalars and arrays turned into Python numbers and lists (for messages: ``[10.0, nan]``,
    never ``(np.float64(10.0), ...)``)."""
    if isinstance(v, np.generic | np.ndarray):
        return v.tolist()
    if isinstance(v, list | tuple):
        return type(v)(plain(x) for x in v)
    return v
