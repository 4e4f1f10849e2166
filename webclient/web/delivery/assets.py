"""The files of ``static/`` under content-hashed URLs (``/static/app.css?v=HASH``), kept for a year by the browser.

Read once when the app is made: each file's version is a hash of what is served, so a page that names
``?v=HASH`` names those exact bytes, and the answer is ``Cache-Control: public, max-age=31536000, immutable``: the
browser does not ask again, not even to revalidate (a reload included). Without ``?v`` (an old bookmark, a script
that imports another) a file still comes, cached for a few minutes; with a hash that is not the file's (a page
rendered before a deploy) it comes as it is now, to be revalidated each time (``no-cache``), never kept under a name
it does not match. Every answer has an ``ETag`` (the version), so a revalidation is a 304.

The scripts are modules, and a module imports another by a relative URL (``import ... from "./notify.js"``): the
import is rewritten to the imported file's hashed URL, and the importing file's hash covers the imported one's, so
one module is loaded once (under one URL) and a change anywhere below it changes its URL too.

Text files (CSS, JavaScript, SVG) are compressed when a browser first asks for that coding (brotli, or gzip), and
kept: quickly for that browser, then at the coding's best off the event loop for the next ones. The static files
are about 550 kB, 150 kB compressed.

A file changed on disk while the server runs is served as it was read: ``webclient --reload`` restarts the server
when ``static/`` changes.
"""

from __future__ import annotations

import asyncio
import hashlib
import mimetypes
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from urllib.parse import parse_qs

import anyio.to_thread
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from webclient.render.urls import VERSION_PARAM
from webclient.web.delivery.bundles import BUNDLES, BundleError, bundled
from webclient.web.delivery.encodings import MIN_SIZE, Coding, chosen_coding, compressed, compressible

IMMUTABLE = "public, max-age=31536000, immutable"
"""A hashed URL's bytes never change: a year, and no revalidation."""
UNVERSIONED = "public, max-age=300"
"""A URL without a version: its bytes change with the next deploy, so a short while."""
STALE = "no-cache"
"""A version that is not the file's: the bytes are the file's now, not what that version named."""

RELATIVE_IMPORT = re.compile(r"""(\bimport\s*(?:[\w*{}\s,$]+\s*from\s*)?|\bfrom\s*)(["'])(\.\.?/[^"'?#\s]+)\2""")
"""A module's static import of a file beside it (``import { x } from "./notify.js"``, ``import "./a.js"``)."""

MEDIA_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


def media_type(name: str) -> str:
    suffix = PurePosixPath(name).suffix.lower()
    guessed = MEDIA_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    return f"{guessed}; charset=utf-8" if guessed.startswith("text/") else guessed


@dataclass
class Asset:
    """One file of ``static/`` as it is served."""

    body: bytes
    media_type: str
    version: str
    coded: dict[Coding, bytes] = field(default_factory=dict)
    """The body in each coding asked for so far (the body itself when compressing did not make it smaller)."""

    @property
    def compressible(self) -> bool:
        return len(self.body) >= MIN_SIZE and compressible(self.media_type)


def version_of(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:12]


class StaticAssets:
    """The files of a folder, read once and served from memory under hashed URLs (an ASGI app, mounted at
    ``/static``), and ``bundles`` (`webclient.web.delivery.bundles`) made of them."""

    def __init__(self, directory: Path, bundles: Mapping[str, tuple[str, ...]] = BUNDLES) -> None:
        self.directory = directory
        sources = tuple(
            (path.relative_to(directory).as_posix(), path.read_bytes())
            for path in sorted(directory.rglob("*"))
            if path.is_file() and not any(part.startswith(".") for part in path.relative_to(directory).parts)
        )
        hidden = sorted(set(bundles) & {name for name, _ in sources})
        if hidden:
            raise BundleError(f"the bundle {hidden[0]} would hide the file of that name in {directory}")
        served = _served(sources, tuple(bundles.items()))
        self.assets: dict[str, Asset] = {name: Asset(body, media_type(name), version) for name, body, version in served}
        self._compressing: set[asyncio.Task[None]] = set()
        self.versions: Mapping[str, str] = {name: asset.version for name, asset in self.assets.items()}
        """File (``js/notify.js``) → its version: what `webclient.render.urls.Urls.static` puts in a URL."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.response(scope)
        await response(scope, receive, send)

    async def response(self, scope: Scope) -> Response:
        if scope["method"] not in ("GET", "HEAD"):
            return PlainTextResponse("Method Not Allowed", status_code=405, headers={"allow": "GET, HEAD"})
        root, path = scope.get("root_path", ""), scope["path"]
        name = (path[len(root) :] if path.startswith(root) else path).lstrip("/")
        asset = self.assets.get(name)
        if asset is None:
            return PlainTextResponse("Not Found", status_code=404)
        given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get(VERSION_PARAM)
        cache = UNVERSIONED if not given else IMMUTABLE if given[0] == asset.version else STALE
        headers = Headers(scope=scope)
        etag = f'W/"{asset.version}"'  # weak: one version, sent in several codings
        answer = {"cache-control": cache, "etag": etag}
        if asset.compressible:
            answer["vary"] = "Accept-Encoding"
        known = [tag.strip().removeprefix("W/") for tag in headers.get("if-none-match", "").split(",")]
        if f'"{asset.version}"' in known:
            return Response(status_code=304, headers=answer)
        body = asset.body
        coding = chosen_coding(headers.get("accept-encoding", "")) if asset.compressible else None
        if coding is not None:
            body = self._coded(asset, coding)
            if body is not asset.body:
                answer["content-encoding"] = coding
        return Response(body, media_type=asset.media_type, headers=answer)

    def _coded(self, asset: Asset, coding: Coding) -> bytes:
        """The asset's body in ``coding``: the first time quickly (brotli's level 5 takes about 1 ms for 50 kB), and
        meanwhile at the coding's best in a worker thread (40 ms to 400 ms: brotli's level 11, 10 % smaller), which
        the browsers after have."""
        if coding not in asset.coded:
            asset.coded[coding] = _smaller(asset.body, compressed(asset.body, coding, best=False))
            task = asyncio.get_running_loop().create_task(self._best(asset, coding), name="compress a static file")
            self._compressing.add(task)
            task.add_done_callback(self._compressing.discard)
        return asset.coded[coding]

    @staticmethod
    async def _best(asset: Asset, coding: Coding) -> None:
        packed = await anyio.to_thread.run_sync(lambda: compressed(asset.body, coding, best=True))
        asset.coded[coding] = _smaller(asset.body, packed)


@lru_cache(maxsize=4)
def _served(
    sources: tuple[tuple[str, bytes], ...], bundles: tuple[tuple[str, tuple[str, ...]], ...]
) -> tuple[tuple[str, bytes, str], ...]:
    """Each file (by name) as it is served, imports rewritten, with its version; then each bundle. Kept for the
    same files: another app of this process (the tests make hundreds) would only rewrite and hash them again."""
    files = dict(sources)
    served: dict[str, tuple[bytes, str]] = {}

    def load(name: str, importers: tuple[str, ...]) -> tuple[bytes, str]:
        """The file ``name`` as served and its version, the files it imports first."""
        if name not in served:
            body = files[name]
            if name.endswith((".js", ".mjs")):
                body = rewritten(name, body, (*importers, name))
            served[name] = (body, version_of(body))
        return served[name]

    def rewritten(name: str, body: bytes, importers: tuple[str, ...]) -> bytes:
        folder = PurePosixPath(name).parent

        def hashed(match: re.Match[str]) -> str:
            target = _joined(folder, match.group(3))
            if target is None or target not in files or target in importers:  # outside, missing, or a cycle
                return match.group(0)
            version = load(target, importers)[1]
            return f"{match.group(1)}{match.group(2)}{match.group(3)}?{VERSION_PARAM}={version}{match.group(2)}"

        text = body.decode("utf-8", "surrogateescape")
        return RELATIVE_IMPORT.sub(hashed, text).encode("utf-8", "surrogateescape")

    for name in files:
        load(name, ())
    for name, members in bundles:  # files that are not on disk: several modules joined
        body = bundled(name, members, files)
        served[name] = (body, version_of(body))
    return tuple((name, body, version) for name, (body, version) in served.items())


def _smaller(body: bytes, packed: bytes) -> bytes:
    """``packed``, unless compressing did not make ``body`` smaller."""
    return packed if len(packed) < len(body) else body


def _joined(folder: PurePosixPath, relative: str) -> str | None:
    """``relative`` from ``folder``, as a file name of the static folder; None when it leaves the folder."""
    parts: list[str] = list(folder.parts) if str(folder) != "." else []
    for part in relative.split("/"):
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)
