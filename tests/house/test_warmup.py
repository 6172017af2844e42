"""Compiling ahead of time: ``rm.warm_up`` and ``redmax compile`` run every feature's kernels once."""

import pytest

import redmax as rm
from redmax.cli import _FEATURE_NAMES, main
from redmax.warmup import FEATURES


def test_every_feature_warms_up_in_this_process():
    """Each warm-up runs the public calls of its feature without error (what is already cached only loads) and
    reports its compile time; progress is reported once per feature, in order."""
    seen = []
    out = rm.warm_up(processes=1, progress=lambda name, s, k, total: seen.append((name, k, total)))
    assert list(out) == list(FEATURES)
    assert all(s >= 0.0 for s in out.values())
    assert seen == [(n, k + 1, len(FEATURES)) for k, n in enumerate(FEATURES)]


def test_unknown_features_are_refused():
    with pytest.raises(ValueError, match="unknown feature 'nosuch'"):
        rm.warm_up(["simulate", "nosuch"])


def test_command_line_compile(capsys):
    assert tuple(FEATURES) == _FEATURE_NAMES  # the CLI's help lists the same features without importing them
    assert main(["compile", "simulate", "-j", "1"]) == 0
    out = capsys.readouterr().out
    assert "[1/1] simulate:" in out and "done in" in out
    assert main(["compile", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown feature 'nosuch'" in err
    assert main(["compile", "simulate", "-j", "0"]) == 2
