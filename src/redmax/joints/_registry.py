"""The joint table: every joint family once, for scene files, the maximal-coordinate mode and the reports.

The primitive families are registered in :data:`redmax.joints.primitive.PRIMITIVES` (one entry each: the compiled
dispatchers are written from it); the composite families (a chain of primitive joints) follow.
"""

from __future__ import annotations

from redmax.joints.base import Joint
from redmax.joints.composite import Composite, Free2D, Free3D
from redmax.joints.primitive import PRIMITIVES

__all__ = ["FAMILIES", "JOINTS", "family"]

FAMILIES: tuple[type[Joint], ...] = (*PRIMITIVES, Composite, Free2D, Free3D)
JOINTS: dict[str, type[Joint]] = {cls.kind: cls for cls in FAMILIES}


def family(kind: str) -> type[Joint]:
    """The Joint class of a family name (KeyError for an unknown one)."""
    return JOINTS[kind]
