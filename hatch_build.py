"""The wheel's build hook: the VTT integrations (``clients/vtt``) go into the wheel as
package data under ``fairroll/integrations/``, where ``fairroll serve`` finds them
(``fairroll.api.controllers.integrations``), so ``pip install . && fairroll serve`` serves
them at once. Where they were not built and ``npm`` is on the PATH, the hook bundles them
first (``npm ci`` and esbuild, as ``npm run build`` does without its type checks, which CI
runs); ``FAIRROLL_BUILD_INTEGRATIONS=0`` skips that. Without npm, or where the build fails,
the wheel is built without them and the server answers their URLs with a 404 problem that
says how to build them: node is not needed to install fairroll."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

CLIENTS = Path(__file__).resolve().parent / "clients"
VTT = CLIENTS / "vtt"
#: What each integration is made of: its folder in the checkout, and the files it needs.
BUILT = {
    "foundry": (VTT / "foundry", ("module.json", "fairroll.css", "dist/fairroll.js")),
    "owlbear": (VTT / "owlbear" / "dist", ("manifest.json", "popover.html", "popover.js")),
}


class IntegrationsHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return  # an editable install reads them from the checkout
        if not all(_built(folder, needed) for folder, needed in BUILT.values()):
            _bundle()
        for name, (folder, needed) in BUILT.items():
            if not _built(folder, needed):
                continue
            files = (
                needed
                if name == "foundry"
                else tuple(
                    p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()
                )
            )
            for file in files:
                build_data["force_include"][str(folder / file)] = (
                    f"fairroll/integrations/{name}/{file}"
                )


def _built(folder: Path, needed: tuple[str, ...]) -> bool:
    return all((folder / file).is_file() for file in needed)


def _bundle() -> None:
    """Bundle the integrations where npm can: the npm client first (the integrations import
    its build), then esbuild. A failure only leaves them out of the wheel, said on stderr."""
    npm = shutil.which("npm")
    if os.environ.get("FAIRROLL_BUILD_INTEGRATIONS") == "0" or npm is None or not VTT.is_dir():
        return
    steps = [
        ([npm, "ci", "--no-audit", "--no-fund"], CLIENTS / "typescript"),
        ([npm, "run", "build"], CLIENTS / "typescript"),
        ([npm, "ci", "--no-audit", "--no-fund"], VTT),
        (["node", "build.mjs"], VTT),
    ]
    if (CLIENTS / "typescript" / "dist" / "index.js").is_file():
        steps = steps[2:]
    for command, folder in steps:
        done = subprocess.run(  # noqa: S603  (fixed commands: npm and node on our own files)
            command, cwd=folder, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            sys.stderr.write(
                f"fairroll: the VTT integrations were not bundled ({' '.join(command[1:])} in "
                f"{folder.name} failed); the server answers their URLs 404 until they are:\n"
                f"{done.stderr[-2000:]}\n"
            )
            return
