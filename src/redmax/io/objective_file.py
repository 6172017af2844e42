"""Scene-file tables of an optimisation problem: ``[objective]`` and ``[[parameters]]``.

    [objective]
    type = "point_target"          # or "state_target"
    body = "link2"
    point = [5.0, 0.0, 0.0]        # body frame
    target = [10.0, 0.0, -10.0]    # world
    time = 1.0                     # sample time (default: the end of the run)
    weight = 100.0                 # (weight/2) |x - target|^2
    regularization = 0.01          # (regularization/2) |p|^2
    # or both at once: weights = [100.0, 0.01]   (the state term's weight, then the regularization)

    [[parameters]]
    type = "torque"                # torque, torque_sequence, initial_q, initial_qd, stiffness, damping, mass
    joints = ["joint1", "joint2"]  # one parameter per joint (forces = [...] for stiffness/damping of forces,
    scale = 1e5                    #   bodies = [...] for mass); scale: torques only

``state_target`` takes ``q``, ``qd``, ``dofs``, ``time``, ``weight``, ``weight_qd``.
"""

from __future__ import annotations

from redmax import params as pm
from redmax.objectives import Objective, PointTarget, StateTarget

__all__ = ["objective_from", "objective_to"]

_OBJ_KEYS = {"point_target": {"type", "body", "point", "target", "time", "weight", "regularization", "weights"},
             "state_target": {"type", "q", "qd", "dofs", "time", "weight", "weight_qd", "regularization", "weights"}}
_PARAM_TYPES = {"torque": pm.Torque, "torque_sequence": pm.TorqueSequence, "initial_q": pm.InitialQ,
                "initial_qd": pm.InitialQd, "stiffness": pm.Stiffness, "damping": pm.Damping, "mass": pm.Mass}


def objective_to(objective, parameters) -> tuple[dict, list]:
    """``([objective] table, [[parameters]] tables)`` of a scene's problem."""
    if len(objective.terms) != 1:
        from redmax.errors import SceneError

        raise SceneError("a scene file stores an objective of one term (plus regularization)")
    obj = objective.terms[0].to_dict()
    if objective.regularization:
        obj["regularization"] = objective.regularization
    out = []
    for p in parameters:
        d = {"type": p.kind}
        if isinstance(p, (pm.Torque, pm.TorqueSequence)):
            d["joints"] = [p.target]
            d["scale"] = p.scale
        elif isinstance(p, pm.Mass):
            d["bodies"] = [p.target]
        elif p.target is not None:
            d["targets"] = [p.target]
        out.append(d)
    return obj, out


def objective_from(doc: dict, ctx):
    """``(Objective, [parameters])`` from the document's ``objective`` and ``parameters`` entries (ctx: the scene
    file reader, for messages naming the field)."""
    od = doc["objective"]
    if not isinstance(od, dict):
        raise ctx.err("objective", f"expected a table, got {type(od).__name__}")
    kind = ctx.string(od.get("type", ""), "objective.type")
    if kind not in _OBJ_KEYS:
        raise ctx.err("objective.type", f"expected one of {', '.join(map(repr, _OBJ_KEYS))}, got {kind!r}")
    ctx.table(od, "objective", _OBJ_KEYS[kind], {"type"} | ({"body", "target"} if kind == "point_target" else set()))
    time = ctx.number(od["time"], "objective.time") if "time" in od else None
    if "weights" in od:
        if "weight" in od or "regularization" in od:
            raise ctx.err("objective.weights", "give either weights = [weight, regularization] or weight and "
                          "regularization, not both")
        od = dict(od)
        od["weight"], od["regularization"] = (float(w) for w in ctx.vec(od["weights"], "objective.weights", 2))
    reg = ctx.number(od.get("regularization", 0.0), "objective.regularization")
    if kind == "point_target":
        term = PointTarget(ctx.string(od["body"], "objective.body"), ctx.vec(od.get("point", [0, 0, 0]),
                           "objective.point", 3), ctx.vec(od["target"], "objective.target", 3), time,
                           ctx.number(od.get("weight", 1.0), "objective.weight"))
    else:
        term = StateTarget(ctx.vec(od["q"], "objective.q") if "q" in od else None,
                           ctx.vec(od["qd"], "objective.qd") if "qd" in od else None, time,
                           ctx.number(od.get("weight", 1.0), "objective.weight"),
                           ctx.number(od.get("weight_qd", 1.0), "objective.weight_qd"),
                           [int(x) for x in ctx.vec(od["dofs"], "objective.dofs")] if "dofs" in od else None)
    plist = doc.get("parameters", [])
    if not isinstance(plist, list):
        raise ctx.err("parameters", "expected an array of [[parameters]] tables")
    out = []
    for k, pd in enumerate(plist):
        f = f"parameters[{k}]"
        ctx.table(pd, f, {"type", "joints", "targets", "bodies", "scale"}, {"type"})
        kind = ctx.string(pd["type"], f"{f}.type")
        if kind not in _PARAM_TYPES:
            raise ctx.err(f"{f}.type", f"expected one of {', '.join(map(repr, _PARAM_TYPES))}, got {kind!r}")
        cls = _PARAM_TYPES[kind]
        names = pd.get("joints", pd.get("targets", pd.get("bodies")))
        if names is None:
            if kind in ("initial_q", "initial_qd"):
                out.append(cls(None))
                continue
            raise ctx.err(f, "give the joints (or targets, bodies) the parameter acts on")
        if not isinstance(names, list) or not names:
            raise ctx.err(f, "joints/targets/bodies must be a non-empty array of names")
        for j, nm in enumerate(names):
            nm = ctx.string(nm, f"{f}.joints[{j}]")
            if kind in ("torque", "torque_sequence"):
                out.append(cls(nm, scale=ctx.number(pd.get("scale", 1.0), f"{f}.scale")))
            else:
                if "scale" in pd:
                    raise ctx.err(f"{f}.scale", f"only torque parameters have a scale (type {kind!r})")
                out.append(cls(nm))
    return Objective(term, regularization=reg), out
