"""The quickstart's first command serves the VTT integrations on a fresh checkout.

``pip install . && fairroll serve`` on a checkout where nothing was built: the wheel's
build hook (``hatch_build.py``) bundles the integrations itself where npm is on the PATH,
so the URL a GM pastes answers at once. Runs npm on a copy of the tracked files (it fetches
from the npm registry, as CI's own builds do), hence slow.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _checkout(to: Path) -> None:
    """The tracked files only, as a fresh clone holds them: no bundle, no node_modules."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
    ).stdout.split(b"\0")
    for name in filter(None, tracked):
        source = ROOT / name.decode()
        if source.is_file():
            (to / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name.decode())


def _wheel(checkout: Path, out: Path, **env: str) -> set[str]:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, checkout],
        check=True,
        capture_output=True,
        timeout=900,
        env={**os.environ, **env},
    )
    (wheel,) = out.glob("fairroll-*.whl")
    return {n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("fairroll/integr")}


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not on the PATH")
def test_a_fresh_checkout_installs_with_its_integrations_bundled(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    _checkout(checkout)
    assert not (checkout / "clients" / "vtt" / "foundry" / "dist").exists()

    skipped = _wheel(checkout, tmp_path / "skipped", FAIRROLL_BUILD_INTEGRATIONS="0")
    assert "fairroll/integrations/foundry/dist/fairroll.js" not in skipped

    names = _wheel(checkout, tmp_path / "bundled")
    assert {
        "fairroll/integrations/foundry/module.json",
        "fairroll/integrations/foundry/dist/fairroll.js",
        "fairroll/integrations/owlbear/manifest.json",
        "fairroll/integrations/owlbear/popover.js",
    } <= names, sorted(names)
