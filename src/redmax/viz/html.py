"""Self-contained HTML replays: one file that plays a result in any browser, with no server and no network.

The file inlines meshcat's viewer bundle (three.js and the viewer, shipped with the ``meshcat`` package: the
``viz`` extra), the bodies' geometry (their visuals: robot meshes decimated as in :mod:`redmax.viz.geometry`,
primitives, or the inertia box) as flat-shaded triangles in each body's frame, and the body poses of the sampled
frames.  A small player moves the bodies: play/pause, a time slider, the speed; ``#t=SECONDS`` at the end of the
file's URL shows that instant, paused, from the first frame drawn (for links and screenshots); ``&frames`` and
``&names`` there switch on the joint frames and names.  Reaction forces of maximal constraints are drawn as arrows
at their bodies and friction contact points as small crosses.  The scene is scaled
to about two units (its first configuration) so that the viewer's camera and grid fit any model's units.
"""

from __future__ import annotations

import json
import os

import numpy as np

from redmax.errors import RedmaxError

__all__ = ["replay_html", "viewer_bundle"]

DIGITS = 5  # significant digits of the poses written to the file


def viewer_bundle() -> str:
    """The text of meshcat's viewer bundle (``main.min.js``); RedmaxError when meshcat is not installed."""
    try:
        import meshcat
    except ImportError:
        raise RedmaxError("HTML replays need the meshcat package (pip install redmax[viz])") from None
    path = os.path.join(os.path.dirname(meshcat.__file__), "viewer", "dist", "main.min.js")
    if not os.path.isfile(path):
        raise RedmaxError(f"HTML replays: meshcat's viewer bundle is missing ({path})")
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _triangles(g) -> tuple[np.ndarray, np.ndarray]:
    """Flat-shaded triangles of a body geometry: positions and normals (3 m, 3), a fan per polygon."""
    tris = []
    for grp in g.groups:
        for k in range(1, grp.shape[1] - 1):
            tris.append(np.stack([grp[:, 0], grp[:, k], grp[:, k + 1]], axis=1))
    if not tris:
        return np.zeros((0, 3)), np.zeros((0, 3))
    T = np.vstack(tris)
    P = g.V[T]  # (m, 3, 3)
    n = np.cross(P[:, 1] - P[:, 0], P[:, 2] - P[:, 0])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    return P.reshape(-1, 3), np.repeat(n, 3, axis=0)


def _round(a) -> list:
    a = np.asarray(a, dtype=float)
    return [float(f"{x:.{DIGITS}g}") for x in a.ravel()]


def replay_html(model, result, path, *, max_frames: int = 600, title: str | None = None) -> dict:
    """Write the replay of ``result`` to ``path`` (one HTML file).

    Args:
        model: the :class:`redmax.Model` of the result.  result: a Result (``t``, ``q``, optional ``jstate``).
        path: the ``.html`` file.  max_frames: at most this many frames, evenly spread, the first and last included.
        title: shown in the page (default the scene's or the model's name).
    Returns:
        ``{"path", "frames", "bytes"}``.
    """
    from redmax.kinematics import forward_kinematics
    from redmax.viz.animate import frame_indices
    from redmax.viz.plots import COLORS, _body_geometry, _bounds, _mpl

    path = os.fspath(path)
    t = np.asarray(result.t, dtype=float).reshape(-1)
    q = np.asarray(result.q, dtype=float)
    if t.size == 0 or q.shape != (t.size, model.ndof):
        raise RedmaxError(f"replay_html: result.q must have shape ({t.size}, {model.ndof}) for model "
                          f"{model.name!r}, got {q.shape}")
    if isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 2:
        raise RedmaxError(f"replay_html: max_frames must be an integer >= 2, got {max_frames!r}")
    js = getattr(result, "jstate", None)
    idx = frame_indices(t, max_frames)
    poses = [forward_kinematics(model, q[k], None if js is None else js[k])[1] for k in idx]
    nodes = {int(b) for d in model.deformables for b in d.node_body}
    mpl = _mpl()
    bodies, drawn, pts = [], [], []
    for i in range(model.nb):
        if i in nodes:
            continue
        g = _body_geometry(model, i)
        P, N = _triangles(g)
        if P.shape[0] == 0:
            continue
        rgba = next((v.rgba for v in model.visuals if v.body == model.body_names[i] and v.rgba), None)
        rgb = rgba[:3] if rgba is not None else mpl.to_rgb(COLORS[i % len(COLORS)])
        r8, g8, b8 = (round(255 * float(c)) for c in rgb[:3])
        color = (r8 << 16) | (g8 << 8) | b8
        bodies.append({"name": model.body_names[i], "p": _round(P), "n": _round(N), "c": color})
        drawn.append(i)
        E = poses[0][i]  # the scene is framed on the first configuration
        pts.append(P @ E[:3, :3].T + E[:3, 3])
    if not drawn:
        raise RedmaxError(f"replay_html: model {model.name!r} has nothing to draw")
    lo, hi = _bounds(pts)
    scale = 2.0 / max(float(np.max(hi - lo)), 1e-12)
    centre = 0.5 * (lo + hi)
    root = np.eye(4) * scale
    root[3, 3] = 1.0
    root[:3, 3] = -scale * np.array([centre[0], centre[1], lo[2]])  # the model's lowest point on the grid
    frames = [[_round(E[i].T) for i in drawn] for E in poses]  # column-major 4x4, as three.js reads them
    name = title or (getattr(result, "meta", None) or {}).get("scene") or model.name
    data = {"title": str(name), "t": _round(t[idx]), "bodies": bodies, "poses": frames, "root": _round(root.T)}
    data.update(_extras(model, result, idx, poses, drawn, 1.0 / scale))
    text = _PAGE.replace("%TITLE%", _escape(str(name))).replace("%BUNDLE%", viewer_bundle())
    text = text.replace("%DATA%", json.dumps(data, separators=(",", ":")).replace("<", "\\u003c"))
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise RedmaxError(f"replay_html: cannot write {path!r}: {e.strerror}") from None
    return {"path": path, "frames": len(idx), "bytes": len(text.encode("utf-8"))}


def _extras(model, result, idx, poses, drawn, size: float) -> dict:
    """The overlays shown on demand: each drawn body's joint frame (its offset from the body frame, ``inv(E_jb)``)
    and name, the friction contact points (joint frames), and the reaction forces of the maximal constraints as
    arrows at their bodies' centres (one unit-x segment per arrow, placed and scaled per frame; the longest arrow
    is a fifth of the model)."""
    from redmax.viz.animate import contact_points

    joints = [{"name": model.joint_names[i], "off": _round(np.linalg.inv(model.E_jb[i]).T)} for i in drawn]
    slot = {i: k for k, i in enumerate(drawn)}
    contacts = [{"b": slot[i], "p": _round(P)} for i, P in contact_points(model) if i in slot]
    arrows, tracks = [], []
    reactions = getattr(result, "reactions", None) or {}
    for c in getattr(model, "constraints", ()):
        body = getattr(c, "react_body", None)
        R = reactions.get(c.name)
        if body is None or body < 0 or R is None or np.asarray(R).shape[-1] != 6:
            continue
        F = np.asarray(R, dtype=float)[idx][:, 3:]  # body-frame forces at the sampled instants
        track = []
        for k, E in enumerate(poses):
            f = E[body][:3, :3] @ F[k]
            track.append((E[body][:3, 3].copy(), f))
        arrows.append(c.name)
        tracks.append(track)
    big = max((float(np.linalg.norm(f)) for tr in tracks for _, f in tr), default=0.0)
    arrow_frames = []
    if arrows and big > 0:
        s = 0.2 * size / big
        for k in range(len(poses)):
            row = []
            for tr in tracks:
                p, f = tr[k]
                row.append(_round(_arrow(p, s * f).T))
            arrow_frames.append(row)
    else:
        arrows = []
    return {"joints": joints, "axis": 0.08 * size, "contacts": contacts, "arrows": arrows, "arrow_poses": arrow_frames}


def _arrow(p, v) -> np.ndarray:
    """The 4x4 that maps the unit x segment to the segment from ``p`` along ``v``."""
    n = float(np.linalg.norm(v))
    A = np.eye(4)
    A[:3, 3] = p
    if n == 0.0:
        A[:3, :3] = 0.0
        return A
    x = v / n
    h = np.array([0.0, 0.0, 1.0]) if abs(x[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    y = np.cross(h, x)
    y /= np.linalg.norm(y)
    A[:3, :3] = np.column_stack([x * n, y, np.cross(x, y)])
    return A


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>%TITLE% - redmax</title>
<style>
html, body { margin: 0; height: 100%; overflow: hidden; background: #ffffff; font-family: sans-serif; }
#pane { position: absolute; inset: 0; }
#bar { position: absolute; left: 0; right: 0; bottom: 0; padding: 6px 10px; background: rgba(255,255,255,0.85);
       display: flex; gap: 10px; align-items: center; font-size: 13px; }
#slider { flex: 1; }
</style></head>
<body><div id="pane"></div>
<div id="bar"><button id="play">pause</button><input id="slider" type="range" min="0" value="0" step="1">
<span id="time"></span><select id="speed"><option>0.25</option><option>0.5</option><option selected>1</option>
<option>2</option><option>4</option></select>
<label><input id="frames" type="checkbox">frames</label><label><input id="names" type="checkbox">names</label>
<label><input id="forces" type="checkbox" checked>forces</label><span>%TITLE%</span></div>
<div id="labels" style="position:absolute;inset:0;pointer-events:none;font-size:11px"></div>
<script>%BUNDLE%</script>
<script type="application/json" id="redmax-data">%DATA%</script>
<script>
(function () {
  const D = JSON.parse(document.getElementById("redmax-data").textContent);
  const viewer = new MeshCat.Viewer(document.getElementById("pane"));
  viewer.handle_command({type: "set_transform", path: "/redmax", matrix: D.root});
  D.bodies.forEach(function (b, k) {
    viewer.handle_command({type: "set_object", path: "/redmax/b" + k, object: {
      metadata: {version: 4.5, type: "Object"},
      geometries: [{uuid: "g" + k, type: "BufferGeometry", data: {attributes: {
        position: {itemSize: 3, type: "Float32Array", array: b.p, normalized: false},
        normal: {itemSize: 3, type: "Float32Array", array: b.n, normalized: false}}}}],
      materials: [{uuid: "m" + k, type: "MeshLambertMaterial", color: b.c, side: 2}],
      object: {uuid: "o" + k, type: "Mesh", geometry: "g" + k, material: "m" + k, name: b.name}}});
  });
  function lines(k, path, pts, cols) {
    viewer.handle_command({type: "set_object", path: path, object: {
      metadata: {version: 4.5, type: "Object"},
      geometries: [{uuid: "lg" + k, type: "BufferGeometry", data: {attributes: {
        position: {itemSize: 3, type: "Float32Array", array: pts, normalized: false},
        color: {itemSize: 3, type: "Float32Array", array: cols, normalized: false}}}}],
      materials: [{uuid: "lm" + k, type: "LineBasicMaterial", vertexColors: 2, linewidth: 2}],
      object: {uuid: "lo" + k, type: "LineSegments", geometry: "lg" + k, material: "lm" + k}}});
  }
  const a = D.axis;
  D.joints.forEach(function (j, k) {
    lines("f" + k, "/redmax/frames/f" + k, [0, 0, 0, a, 0, 0, 0, 0, 0, 0, a, 0, 0, 0, 0, 0, 0, a],
          [1, 0, 0, 1, 0, 0, 0, 0.7, 0, 0, 0.7, 0, 0, 0, 1, 0, 0, 1]);
  });
  D.contacts.forEach(function (c, k) {
    const pts = [], cols = [];
    for (let i = 0; i < c.p.length; i += 3) {
      for (let d = 0; d < 3; d++) {
        const e = [0, 0, 0]; e[d] = 0.3 * a;
        pts.push(c.p[i] - e[0], c.p[i + 1] - e[1], c.p[i + 2] - e[2]);
        pts.push(c.p[i] + e[0], c.p[i + 1] + e[1], c.p[i + 2] + e[2]);
        cols.push(1, 0, 1, 1, 0, 1);
      }
    }
    lines("c" + k, "/redmax/contacts/c" + k, pts, cols);
  });
  D.arrows.forEach(function (name, k) {
    lines("a" + k, "/redmax/forces/a" + k, [0, 0, 0, 1, 0, 0], [0.8, 0, 0.8, 0.8, 0, 0.8]);
  });
  function mul(A, B) {  // column-major 4x4 product A B
    const C = new Array(16).fill(0);
    for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
      let s = 0; for (let k = 0; k < 4; k++) s += A[k * 4 + r] * B[c * 4 + k]; C[c * 4 + r] = s;
    }
    return C;
  }
  const labels = document.getElementById("labels");
  const tags = D.joints.map(function (j) {
    const e = document.createElement("span"); e.textContent = j.name; e.style.position = "absolute";
    labels.appendChild(e); return e;
  });
  const boxes = {frames: document.getElementById("frames"), names: document.getElementById("names"),
                 forces: document.getElementById("forces")};
  function overlays() {
    viewer.handle_command({type: "set_property", path: "/redmax/frames", property: "visible",
                           value: boxes.frames.checked});
    viewer.handle_command({type: "set_property", path: "/redmax/forces", property: "visible",
                           value: boxes.forces.checked});
    labels.style.display = boxes.names.checked ? "block" : "none";
  }
  Object.values(boxes).forEach(function (b) { b.onchange = overlays; });
  function place() {  // the joint names at their frames' origins, projected by the viewer's own camera
    if (!boxes.names.checked || !viewer.camera) return;
    const W = labels.clientWidth, H = labels.clientHeight, THREE = MeshCat.THREE;
    viewer.scene.updateMatrixWorld(true);
    viewer.camera.updateMatrixWorld(true);
    D.joints.forEach(function (j, k) {
      const node = viewer.scene_tree.find(["redmax", "frames", "f" + k]);
      const v = node.object.getWorldPosition(new THREE.Vector3()).project(viewer.camera), s = tags[k].style;
      if (v.z > 1) { s.display = "none"; return; }
      s.display = "block";
      s.left = ((v.x + 1) / 2 * W) + "px"; s.top = ((1 - v.y) / 2 * H) + "px";
    });
  }
  const T = D.t, n = T.length, slider = document.getElementById("slider");
  const label = document.getElementById("time"), button = document.getElementById("play");
  slider.max = n - 1;
  function frameAt(t) {
    let lo = 0, hi = n - 1;
    if (t <= T[0]) return 0;
    if (t >= T[hi]) return hi;
    while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (T[mid] <= t) lo = mid; else hi = mid; }
    return (t - T[lo] <= T[hi] - t) ? lo : hi;
  }
  function show(f) {
    D.poses[f].forEach(function (m, k) {
      viewer.handle_command({type: "set_transform", path: "/redmax/b" + k, matrix: m});
    });
    const jointWorld = D.poses[f].map(function (m, k) { return mul(m, D.joints[k].off); });
    jointWorld.forEach(function (m, k) {
      viewer.handle_command({type: "set_transform", path: "/redmax/frames/f" + k, matrix: m});
    });
    D.contacts.forEach(function (c, k) {
      viewer.handle_command({type: "set_transform", path: "/redmax/contacts/c" + k, matrix: jointWorld[c.b]});
    });
    if (D.arrow_poses.length) D.arrow_poses[f].forEach(function (m, k) {
      viewer.handle_command({type: "set_transform", path: "/redmax/forces/a" + k, matrix: m});
    });
    place();
    slider.value = f;
    label.textContent = "t = " + T[f].toFixed(3) + " s";
  }
  let playing = true, clock = T[0], last = null;
  function setPlaying(p) { playing = p; button.textContent = p ? "pause" : "play"; last = null; }
  button.onclick = function () { if (!playing && frameAt(clock) === n - 1) clock = T[0]; setPlaying(!playing); };
  slider.oninput = function () { setPlaying(false); clock = T[+slider.value]; show(+slider.value); };
  function tick(now) {
    if (playing) {
      if (last !== null) clock += (now - last) / 1000 * parseFloat(document.getElementById("speed").value);
      last = now;
      if (clock > T[n - 1]) clock = T[0];
      show(frameAt(clock));
    }
    requestAnimationFrame(tick);
  }
  // the camera in front of the x-z plane, a little from above (meshcat's camera frame is rotated: y up)
  viewer.handle_command({type: "set_property", path: "/Cameras/default/rotated/<object>", property: "position",
                         value: [1.2, 1.2, 3.2]});
  ["frames", "names"].forEach(function (k) { if (location.hash.indexOf(k) >= 0) boxes[k].checked = true; });
  const m = location.hash.match(/t=([-+0-9.eE]+)/);
  if (m) { setPlaying(false); clock = parseFloat(m[1]); }
  overlays();
  show(frameAt(clock));
  setInterval(place, 100);
  requestAnimationFrame(tick);
})();
</script></body></html>
"""
