"""The wheel's build hook: the VTT integrations (``clients/vtt``), where they were built
before ``pip install .`` (``npm run build``), go into the wheel as package data under
``fairroll/integrations/``, where ``fairroll serve`` finds them
(``fairroll.api.controllers.integrations``). Where they were not built, the wheel is
built without them and the server answers their URLs with a 404 problem that says how
to build them: node is not needed to install fairroll."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

VTT = Path(__file__).resolve().parent / "clients" / "vtt"
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
        for name, (folder, needed) in BUILT.items():
            if not all((folder / file).is_file() for file in needed):
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
