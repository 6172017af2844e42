"""URDF mimic joints as hyper-reduced coordinates.

A URDF ``<mimic joint="J" multiplier="m" offset="o"/>`` inside joint D means ``q_D = m q_J + o``.  The URDF loader
records these as ``model.meta["mimic"]`` (a list of ``{"joint": D, "mimic": J, "multiplier": m, "offset": o}``);
:func:`couple_mimic_joints` turns them into couplings (``ModelBuilder.couple``), so the
model's DOFs no longer include D.  :func:`mimic_records` reads the records from a file (for loaders that do not
record them) and :func:`load_urdf_with_mimic` does both steps.
"""

from __future__ import annotations

import dataclasses
import os
import xml.etree.ElementTree as ET

from redmax.errors import ModelError

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
    """``load_urdf(path, **kwargs)`` with its mimic joints coupled (hyper-reduced coordinates)."""
    from redmax.io.urdf import load_urdf

    model = load_urdf(path, **kwargs)
    if "mimic" not in model.meta:
        model.meta["mimic"] = mimic_records(path)
    return couple_mimic_joints(model)


def couple_mimic_joints(model, strict: bool = True):
    """The model with its URDF mimic joints as hyper-reduced couplings.

    Reads ``model.meta["mimic"]``: a list of ``{"joint": dependent, "mimic": independent, "multiplier": m,
    "offset": o}`` (``q_joint = m q_mimic + o``, URDF ``<mimic>``); the model must come from a builder record
    (``model.source``, as ``load_urdf`` makes).  Returns the model unchanged when it has no mimic joints.
    """
    from redmax.model.builder import ModelBuilder

    mimic = model.meta.get("mimic") or []
    if not mimic:
        return model
    src = model.source
    if not src or "bodies" not in src:
        raise ModelError(f"{model.name}: mimic joints need the builder record (model.source)")
    b = ModelBuilder(src["name"], src["gravity"])
    b._bodies = [dataclasses.replace(r) for r in src["bodies"]]
    b._forces = list(src.get("forces", []))
    b._constraints = list(src.get("constraints", []))
    b._couplings = list(src.get("couplings", []))
    for rec in mimic:
        try:
            dep, on = rec["joint"], rec["parent"] if "parent" in rec else rec["mimic"]  # load_urdf writes 'parent'
        except (KeyError, TypeError):
            raise ModelError(f"{model.name}: meta['mimic'] entries need 'joint' and 'parent' (the mimicked joint), "
                             f"got {rec!r}") from None
        if strict or (dep in model.joint_names and on in model.joint_names):
            b.couple(dep, on, rec.get("multiplier", 1.0), rec.get("offset", 0.0))
    # the robot-file reader already warned about (or refused) non-physical inertias and checked regularity
    out = b.build(allow_massless=bool(model.meta.get("allow_massless", True)), check_inertia=False,
                  check_regular=False)
    meta = {**model.meta, "mimic_coupled": [dict(r) for r in mimic]}
    return dataclasses.replace(out, meta=meta, uncoupled=dataclasses.replace(out.uncoupled, meta=meta))
