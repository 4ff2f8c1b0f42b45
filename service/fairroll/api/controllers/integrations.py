"""``GET /integrations/...``: the VTT integrations fairroll ships, served by the GM's own
server, so that one pasted URL installs each and it talks to the server it came from.

- Foundry VTT: ``/integrations/foundry/module.json`` is the module's manifest with its
  ``manifest`` and ``download`` URLs pointing back at this server and the server's URL
  in ``flags.fairroll.server`` (the module's default *fairroll server* setting); the
  ``download`` is ``/integrations/foundry/fairroll.zip``, the module folder (that same
  ``module.json``, ``fairroll.css``, ``dist/fairroll.js``) as Foundry's installer unpacks
  it. A GM pastes the manifest's URL into *Install Module*.
- Owlbear Rodeo: ``/integrations/owlbear/manifest.json`` (its icon and popover as URLs of
  this server) and the extension's files beside it, the popover naming this server in a
  ``<meta name="fairroll-server">``, which it offers the GM as the room's server. A GM
  pastes the manifest's URL into *Add Extension*. Owlbear's site reads the manifest from
  its own origin, so every integration file allows any origin to read it; its popover is
  framed by Owlbear, so ``/integrations/owlbear/`` may be framed by Owlbear's origins
  (``integration_headers``).

The server's URL is ``FAIRROLL_PUBLIC_URL`` when set (a server behind a proxy that
rewrites the scheme, host or path), else the request's own origin. The files are the
built bundles (``clients/vtt``, ``npm run build``): packaged into the wheel by the
build hook (``hatch_build.py``) when they were built before ``pip install .``, else read
from the checkout beside an editable install. Where they are not built, the answer is a
404 problem that says how to build them. Each answer carries an entity tag and
``Cache-Control: no-cache``: an installer revalidates, and a rebuilt bundle is seen at
once.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from functools import cache
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get
from litestar.datastructures import ResponseHeader
from litestar.exceptions import NotFoundException
from litestar.params import Parameter

from fairroll.api.caching import CACHE_HEADERS, NOT_MODIFIED, cached
from fairroll.api.problems import problem_responses

__all__ = [
    "FoundryManifest",
    "IntegrationsController",
    "OwlbearManifest",
    "foundry_folder",
    "integration_headers",
    "owlbear_folder",
]

#: Owlbear Rodeo's origins, which frame an extension's popover.
OWLBEAR_ORIGINS = "https://www.owlbear.rodeo https://*.owlbear.rodeo"
#: The files of the Foundry module's folder, as its manifest names them.
FOUNDRY_FILES = ("module.json", "fairroll.css", "dist/fairroll.js")
#: Content types of the files the integrations are made of.
TYPES = {
    ".json": "application/json",
    ".js": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".svg": "image/svg+xml",
}
BUILD = (
    "build the integrations with `npm ci && npm run build` in clients/typescript, then in "
    "clients/vtt, before `pip install .` (docs/operations.md, 'VTT integrations')"
)

FileName = Annotated[
    str,
    Parameter(
        pattern=r"^[a-z][a-z0-9-]{0,40}\.(json|js|css|html|svg)$",
        description="A file of the extension, as its manifest names it.",
    ),
]
_ANY_ORIGIN = ResponseHeader(
    name="Access-Control-Allow-Origin",
    description="`*`: the VTT's own site reads the file.",
    documentation_only=True,
)
_HEADERS = [*CACHE_HEADERS, _ANY_ORIGIN]
_RESPONSES = {**problem_responses(404), **NOT_MODIFIED}


class FoundryCompatibility(msgspec.Struct):
    """The Foundry VTT generations the module runs on, and the one it was verified on."""

    minimum: str
    verified: str


class FoundryAuthor(msgspec.Struct):
    name: str


class FoundryServer(msgspec.Struct):
    """The fairroll server the module was installed from: its default server."""

    server: str


class FoundryFlags(msgspec.Struct):
    fairroll: FoundryServer


class FoundryManifest(msgspec.Struct, kw_only=True):
    """The Foundry VTT module's manifest (``module.json``), as this server serves it."""

    id: str
    title: str
    description: str
    version: str
    compatibility: FoundryCompatibility
    authors: list[FoundryAuthor]
    esmodules: list[str]
    styles: list[str]
    socket: bool
    manifest: str
    download: str
    url: str
    flags: FoundryFlags


class OwlbearAction(msgspec.Struct):
    """The extension's toolbar action: its popover page and size."""

    title: str
    icon: str
    popover: str
    height: int
    width: int


class OwlbearManifest(msgspec.Struct, kw_only=True):
    """The Owlbear Rodeo extension's manifest, as this server serves it."""

    name: str
    version: str
    manifest_version: int
    author: str
    description: str
    icon: str
    action: OwlbearAction


class IntegrationsController(Controller):
    path = "/integrations"
    tags = ("integrations",)

    @get(
        "/foundry/module.json",
        operation_id="getFoundryManifest",
        summary="The Foundry VTT module's manifest: paste its URL into Install Module",
        description="The fairroll module's `module.json`, its `manifest` and `download` "
        "pointing at this server and `flags.fairroll.server` naming it (the module's "
        "default server). 404 where the module is not built on this server.",
        media_type="application/json",
        responses=_RESPONSES,
        response_headers=_HEADERS,
    )
    async def foundry_manifest(
        self, request: Request[Any, Any, Any]
    ) -> Response[FoundryManifest]:  # sent as the bytes it hashed for its entity tag
        return _served(request, _foundry_manifest(_server(request)), "application/json")

    @get(
        "/foundry/fairroll.zip",
        operation_id="getFoundryModule",
        summary="The Foundry VTT module, zipped: the manifest's download",
        description="The module's folder as Foundry unpacks it: `module.json` (as served "
        "at `/integrations/foundry/module.json`), `fairroll.css`, `dist/fairroll.js`.",
        media_type="application/zip",
        responses=_RESPONSES,
        response_headers=_HEADERS,
    )
    async def foundry_zip(self, request: Request[Any, Any, Any]) -> Response[bytes]:
        server = _server(request)
        body = _foundry_zip(server, _stamp(foundry_folder(), FOUNDRY_FILES))
        response = _served(request, body, "application/zip")
        response.headers["Content-Disposition"] = 'attachment; filename="fairroll.zip"'
        return response

    @get(
        "/owlbear/manifest.json",
        operation_id="getOwlbearManifest",
        summary="The Owlbear Rodeo extension's manifest: paste its URL into Add Extension",
        description="The extension's `manifest.json`, its icon and popover as URLs of "
        "this server. 404 where the extension is not built on this server.",
        media_type="application/json",
        responses=_RESPONSES,
        response_headers=_HEADERS,
    )
    async def owlbear_manifest(
        self, request: Request[Any, Any, Any]
    ) -> Response[OwlbearManifest]:  # sent as the bytes it hashed for its entity tag
        return _served(request, _owlbear_manifest(_server(request)), "application/json")

    @get(
        "/owlbear/{name:str}",
        operation_id="getOwlbearFile",
        summary="A file of the Owlbear Rodeo extension (its popover, script, style, icon)",
        description='`popover.html` names this server (`<meta name="fairroll-server">`): '
        "the GM's default fairroll server for the room.",
        media_type="application/octet-stream",
        responses={**problem_responses(400, 422), **_RESPONSES},
        response_headers=_HEADERS,
    )
    async def owlbear_file(
        self, request: Request[Any, Any, Any], name: FileName
    ) -> Response[bytes]:
        folder = owlbear_folder()
        if not (folder / name).is_file():
            raise NotFoundException(f"the Owlbear extension has no file {name!r}")
        body = (folder / name).read_bytes()
        if name == "popover.html":
            body = _naming_server(body, _server(request))
        return _served(request, body, TYPES[Path(name).suffix])


def foundry_folder() -> Path:
    """The built Foundry module's folder (``FOUNDRY_FILES``); a 404 problem if it is not."""
    return _built("foundry", Path("foundry"), FOUNDRY_FILES, "The Foundry VTT module")


def owlbear_folder() -> Path:
    """The built Owlbear extension's site; a 404 problem if it is not."""
    needed = ("manifest.json", "popover.html", "popover.js")
    return _built("owlbear", Path("owlbear") / "dist", needed, "The Owlbear Rodeo extension")


def integration_headers(
    headers_for: Callable[[str], list[tuple[bytes, bytes]]], frame_ancestors: str
) -> Callable[[str], list[tuple[bytes, bytes]]]:
    """``headers_for`` (the security headers of every response), except that Owlbear's
    origins, and those ``frame_ancestors`` allows, may frame the extension's popover:
    Owlbear shows it in an iframe of its own site."""
    sources = OWLBEAR_ORIGINS
    if frame_ancestors.strip() != "'none'":
        sources = f"{sources} {frame_ancestors.strip()}"

    def framed(header: tuple[bytes, bytes]) -> tuple[bytes, bytes] | None:
        name, value = header
        if name == b"x-frame-options":
            return None
        if name == b"content-security-policy":
            policy, _, _ = value.decode().partition("; frame-ancestors ")
            return name, f"{policy}; frame-ancestors {sources}".encode()
        return header

    owlbear = [
        header
        for header in (framed(h) for h in headers_for("/integrations/owlbear/"))
        if header is not None
    ]

    def for_path(path: str) -> list[tuple[bytes, bytes]]:
        return owlbear if path.startswith("/integrations/owlbear/") else headers_for(path)

    return for_path


def _server(request: Request[Any, Any, Any]) -> str:
    """This server's URL as the VTT reaches it: the configured public URL, or the
    request's own origin."""
    public: str | None = getattr(request.app.state, "public_url", None)
    if public:
        return public.rstrip("/")
    return str(request.base_url).rstrip("/")


def _served(request: Request[Any, Any, Any], body: bytes, media_type: str) -> Response[Any]:
    response: Response[Any] = cached(request, body, media_type)
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


def _foundry_manifest(server: str) -> bytes:
    """The module's manifest, pointing at ``server``, as it is served and zipped."""
    manifest: dict[str, Any] = json.loads((foundry_folder() / "module.json").read_text())
    manifest["manifest"] = f"{server}/integrations/foundry/module.json"
    manifest["download"] = f"{server}/integrations/foundry/fairroll.zip"
    manifest["url"] = server
    manifest["flags"] = {"fairroll": {"server": server}}
    return _encoded(manifest, FoundryManifest)


def _encoded(value: dict[str, Any], kind: type[msgspec.Struct]) -> bytes:
    """``value`` as the schema ``kind`` says it (a field the spec does not name is left
    out), indented for the people who read a manifest."""
    return msgspec.json.format(msgspec.json.encode(msgspec.convert(value, kind)), indent=2)


@cache
def _foundry_zip(server: str, stamp: tuple[tuple[str, int, int], ...]) -> bytes:
    """The module's folder as a zip, its ``module.json`` this server's (kept per server
    and per build: ``stamp`` changes when a file does)."""
    folder = foundry_folder()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in FOUNDRY_FILES:
            # A fixed date: the same build and server give the same bytes (and entity tag).
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            if name == "module.json":
                data = _foundry_manifest(server)
            else:
                data = (folder / name).read_bytes()
            archive.writestr(info, data)
    return buffer.getvalue()


def _stamp(folder: Path, names: tuple[str, ...]) -> tuple[tuple[str, int, int], ...]:
    return tuple(
        (name, (folder / name).stat().st_mtime_ns, (folder / name).stat().st_size) for name in names
    )


#: Where an editable install finds the integrations: the checkout's build output.
CHECKOUT = Path(__file__).resolve().parents[4] / "clients" / "vtt"


def _built(name: str, in_checkout: Path, needed: tuple[str, ...], what: str) -> Path:
    packaged = Path(str(files("fairroll"))) / "integrations" / name
    checkout = CHECKOUT / in_checkout
    for folder in (packaged, checkout):
        if all((folder / file).is_file() for file in needed):
            return folder
    raise NotFoundException(f"{what} is not built on this server: {BUILD}")


def _naming_server(page: bytes, server: str) -> bytes:
    meta = f'<meta name="fairroll-server" content="{escape(server)}" />'
    return page.replace(b"<head>", b"<head>\n    " + meta.encode(), 1)


def _owlbear_manifest(server: str) -> bytes:
    manifest: dict[str, Any] = json.loads((owlbear_folder() / "manifest.json").read_text())
    base = f"{server}/integrations/owlbear"
    manifest["icon"] = base + manifest["icon"]
    action = manifest.get("action", {})
    for key in ("icon", "popover"):
        if key in action:
            action[key] = base + action[key]
    return _encoded(manifest, OwlbearManifest)
