"""rm.viz.plot(result, path, what=...) (issue 55 item 4): energy, violation, reactions, iterations."""

import pytest

import redmax as rm


@pytest.mark.parametrize("scene, what, options", [
    ("reference/05", "energy", {}),
    ("reference/04", "violation", {}),
    ("reference/04", "reactions", {}),
    ("reference/23", "iterations", {"solver": "pcg"}),
    ("diff/00", "iterations", {"integrator": "bdf1"}),
    ("reference/27", "iterations", {}),
])
def test_every_kind_of_plot_is_written(tmp_path, scene, what, options):
    r = rm.scenes.load(scene).simulate(duration=0.2, **options)
    out = rm.viz.plot(r, tmp_path / f"{what}.png", what=what)
    assert (tmp_path / f"{what}.png").stat().st_size > 5000 and str(out).endswith(".png")


def test_what_the_result_lacks_is_named(tmp_path):
    r = rm.scenes.load("reference/05").simulate(duration=0.1)
    with pytest.raises(rm.RedmaxError, match="no constraints"):
        rm.viz.plot(r, tmp_path / "v.png", what="violation")
    with pytest.raises(rm.RedmaxError, match="no iteration counts"):
        rm.viz.plot(r, tmp_path / "i.png", what="iterations")
    with pytest.raises(rm.RedmaxError, match="what must be one of"):
        rm.viz.plot(r, tmp_path / "x.png", what="speed")
