"""The code base is ruff clean (configuration in pyproject.toml)."""

import shutil
import subprocess
import sys

from paths import REPO


def test_ruff_clean():
    exe = shutil.which("ruff")
    cmd = [exe, "check", "."] if exe else [sys.executable, "-m", "ruff", "check", "."]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
