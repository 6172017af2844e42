"""The examples in examples/ run to completion."""

import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, capsys):
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()


README = Path(__file__).parent.parent / "README.md"


def test_readme_python_examples_run(capsys, monkeypatch):
    import re

    monkeypatch.chdir(README.parent)  # the blocks use paths relative to the repository
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2
    ns: dict = {}
    for code in blocks:
        code = code.replace('rm.scenes.save(scene, "mine.toml"); rm.scenes.load("mine.toml")', "pass")
        exec(compile(code, "README.md", "exec"), ns)


def test_readme_scene_file_example_loads(tmp_path):
    import re

    from redmax import scenes

    toml = re.findall(r"```toml\n(.*?)```", README.read_text(), re.S)[0]
    p = tmp_path / "readme.toml"
    p.write_text(toml)
    s = scenes.load(p)
    assert s.model.forces[0].name == "tether" and s.simulate(duration=0.1).t.size == 11
