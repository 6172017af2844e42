"""The Numba cache guard: cached kernels are dropped when any kernel source changes, kept otherwise."""

from redmax import _kernel_cache as kc


def _fake_cache(d, stamp=None):
    d.mkdir()
    for name in ("minv.minv_kernel-29.py311.nbi", "minv.minv_kernel-29.py311.1.nbc"):
        (d / name).write_bytes(b"compiled")
    (d / "other.pyc").write_bytes(b"bytecode")
    if stamp is not None:
        (d / kc.STAMP).write_text(stamp)


def test_refresh_clears_only_on_a_different_digest(tmp_path):
    same, stale, fresh = tmp_path / "same", tmp_path / "stale", tmp_path / "fresh"
    _fake_cache(same, "abc")
    _fake_cache(stale, "old")
    _fake_cache(fresh)
    cleared = kc.refresh("abc", dirs=[same, stale, fresh])
    assert cleared == [fresh, stale]
    assert len(list(same.glob("*.nb?"))) == 2
    for d in (stale, fresh):
        assert not list(d.glob("*.nb?")) and (d / "other.pyc").exists() and (d / kc.STAMP).read_text() == "abc"
    assert kc.refresh("abc", dirs=[same, stale, fresh]) == []


def test_digest_follows_kernel_sources_only(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "k.py").write_text("from numba import njit\n")
    (tmp_path / "plain.py").write_text("x = 1\n")
    d0 = kc.sources_digest(tmp_path)
    (tmp_path / "plain.py").write_text("x = 2\n")
    assert kc.sources_digest(tmp_path) == d0
    (tmp_path / "sub" / "k.py").write_text("from numba import njit  # edited\n")
    assert kc.sources_digest(tmp_path) != d0


def test_the_installed_package_is_stamped():
    import redmax  # noqa: F401  (importing runs the guard)

    digest = kc.sources_digest()
    dirs = kc.cache_dirs()
    assert dirs
    assert all((d / kc.STAMP).read_text() == digest for d in dirs if (d / kc.STAMP).exists())
