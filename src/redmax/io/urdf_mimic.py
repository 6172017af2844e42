"""URDF mimic joints as hyper-reduced coordinates.

A URDF ``<mimic joint="J" multiplier="m" offset="o"/>`` inside joint D means ``q_D = m q_J + o``.  The URDF loader
records these as ``model.meta["mimic"]`` (a list of ``{"joint": D, "mimic": J, "multiplier": m, "offset": o}``);
:func:`couple_mimic_joints` turns them into couplings (``ModelBuilder.couple``), so the
model's DOFs no longer include D.  :func:`mimic_records` reads the records from a file (for loaders that do not
record them) and :func:`load_urdf_with_mimic` does both steps.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from redmax.errors import ModelError
from redmax.io.urdf import couple_mimic_joints, load_urdf

__all__ = ["couple_mimic_joints", "load_urdf_with_mimic", "mimic_records"]


def mimic_records(path) -> list[dict]:
    """The ``<mimic>`` elements of a URDF file as ``meta["mimic"]`` records (ModelError naming the joint)."""
    p = os.fspath(path)
    try:
        with open(p, encoding="utf-8") as fh:
            root = ET.fromstring(fh.read().lstrip())
    except (OSError, ET.ParseError, UnicodeDecodeError) as e:
        raise ModelError(f"{p}: cannot read URDF ({e})") from None
    out = []
    for j in root.iter("joint"):
        m = j.find("mimic")
        if m is None:
            continue
        name = j.get("name")
        try:
            rec = {"joint": name, "mimic": m.get("joint"), "multiplier": float(m.get("multiplier", 1.0)),
                   "offset": float(m.get("offset", 0.0))}
        except ValueError:
            raise ModelError(f"{p}: joint '{name}' <mimic>: multiplier and offset must be numbers") from None
        if not rec["mimic"]:
            raise ModelError(f"{p}: joint '{name}' <mimic>: missing 'joint'")
        out.append(rec)
    return out


def load_urdf_with_mimic(path, **kwargs):
    """``load_urdf(path, **kwargs)`` with its mimic joints coupled (hyper-reduced coordinates); the same as
    ``load_urdf(path, mimic=True, **kwargs)``, also for models whose loader did not record ``meta["mimic"]``."""
    model = load_urdf(path, **kwargs)
    if "mimic" not in model.meta:
        model.meta["mimic"] = mimic_records(path)
    return couple_mimic_joints(model)
