"""How pages and static files leave the server: compressed for the browser that asks, static files under hashed URLs
kept a year, the session page's scripts as one bundle, and the page token masked on every page (BREACH).

In-process, Starlette's test client against the real app; the compression middleware alone against small ASGI apps
of the test's own (a streamed body, an answer already coded)."""

from __future__ import annotations

import gzip
import re
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import brotli  # type: ignore[import-untyped]
import pytest
from starlette.exceptions import StarletteDeprecationWarning
from starlette.responses import Response, StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from tests.support.html import parse
from tests.support.urls import URLS
from webclient.config import Settings
from webclient.web.access.page_token import masked, token_matches, unmasked
from webclient.web.app import STATIC_DIR, create_app
from webclient.web.delivery.assets import IMMUTABLE, STALE, UNVERSIONED, StaticAssets
from webclient.web.delivery.bundles import BUNDLES, SESSION_SCRIPTS, BundleError, bundled
from webclient.web.delivery.compression import Compression

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

TOKEN = "test-token"
BROWSER = {"Accept": "text/html", "Accept-Encoding": "gzip, deflate, br"}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """The real app (token mode, no store, the demo agent), signed in as a browser is: by the cookie."""
    settings = Settings(workspace=tmp_path, token=TOKEN, store=False, demo_remote=False)
    with TestClient(create_app(settings), base_url="http://localhost", follow_redirects=False) as http:
        http.get("/", params={"token": TOKEN}, headers=BROWSER)
        yield http


def static_urls(html: str) -> list[str]:
    return [
        value
        for element in parse(html).elements
        for name, value in element.attr_list
        if name in ("src", "href") and value.startswith(URLS.static(""))
    ]


def version_in(url: str) -> str:
    found = re.search(r"\?v=([0-9a-f]+)$", url)
    assert found is not None, f"{url} names no version"
    return found.group(1)


def test_a_page_comes_in_brotli_gzip_or_as_it_is_as_the_browser_asks(client: TestClient) -> None:
    for accept, coding in (("gzip, deflate, br", "br"), ("gzip", "gzip"), ("identity", None), ("br;q=0, gzip", "gzip")):
        page = client.get("/", headers={**BROWSER, "Accept-Encoding": accept})
        assert page.status_code == 200
        assert page.headers.get("content-encoding") == coding, accept
        assert "accept-encoding" in page.headers.get("vary", "").lower() or coding is None
        assert "<main" in page.text  # decoded by the client: the page itself
    raw = client.get("/", headers=BROWSER)
    assert raw.num_bytes_downloaded * 2 < len(raw.content)  # the page on the wire, not its text


def test_every_static_url_of_the_pages_is_hashed_and_kept_a_year(client: TestClient) -> None:
    session = client.post("/sessions", data={"csrf": csrf_of(client.get("/", headers=BROWSER).text)}, headers=BROWSER)
    assert session.status_code == 303, session.text
    for path in ("/", session.headers["location"]):
        urls = static_urls(client.get(path, headers=BROWSER).text)
        assert len(urls) >= 5, urls
        for url in urls:
            answer = client.get(url, headers=BROWSER)
            assert answer.status_code == 200, url
            assert answer.headers["cache-control"] == IMMUTABLE, url
            assert answer.headers["etag"] == f'W/"{version_in(url)}"'


def test_the_session_page_loads_its_modules_as_one_bundle_and_the_index_only_what_it_uses(client: TestClient) -> None:
    session = client.post("/sessions", data={"csrf": csrf_of(client.get("/", headers=BROWSER).text)}, headers=BROWSER)
    page = parse(client.get(session.headers["location"], headers=BROWSER).text)
    modules = [e.attrs["src"] for e in page.elements if e.tag == "script" and e.attrs.get("type") == "module"]
    assert [url.split("?")[0] for url in modules] == [URLS.static(SESSION_SCRIPTS)]
    index = parse(client.get("/", headers=BROWSER).text)
    scripts = {e.attrs["src"].split("?")[0] for e in index.elements if e.tag == "script"}
    assert scripts == {URLS.static("vendor/htmx.min.js"), URLS.static("js/diff-layout.js")}  # no web socket there


def test_a_static_file_without_its_hash_comes_cached_briefly_and_with_a_wrong_one_never_kept(
    client: TestClient,
) -> None:
    url = URLS.static("app.css")
    plain = client.get(url, headers=BROWSER)
    assert plain.headers["cache-control"] == UNVERSIONED
    wrong = client.get(url + "?v=0123456789ab", headers=BROWSER)
    assert wrong.status_code == 200 and wrong.headers["cache-control"] == STALE
    assert wrong.content == plain.content == (STATIC_DIR / "app.css").read_bytes()
    again = client.get(url, headers={**BROWSER, "If-None-Match": plain.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["cache-control"] == UNVERSIONED
    assert client.get(URLS.static("nothing.css")).status_code == 404
    assert client.get(URLS.static("../pyproject.toml")).status_code == 404
    assert client.post(url).status_code in (403, 405)


def test_static_files_come_compressed_once_tiny_ones_as_they_are(client: TestClient) -> None:
    css = client.get(URLS.static("app.css"), headers={"Accept-Encoding": "br"})
    assert css.headers["content-encoding"] == "br" and css.headers["vary"] == "Accept-Encoding"
    assert css.content == (STATIC_DIR / "app.css").read_bytes()
    assert int(css.headers["content-length"]) * 3 < len(css.content)
    zipped = client.get(URLS.static("vendor/htmx.min.js"), headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.content == (STATIC_DIR / "vendor/htmx.min.js").read_bytes()
    icon = client.get(URLS.static("favicon.svg"), headers={"Accept-Encoding": "br"})
    assert "content-encoding" not in icon.headers  # 242 bytes
    assert icon.headers["content-type"] == "image/svg+xml"


def test_a_module_imports_another_by_its_hashed_url(client: TestClient) -> None:
    assets = StaticAssets(STATIC_DIR)
    served = client.get(URLS.static("js/tab-title.js")).text
    assert f'from "./notify.js?v={assets.versions["js/notify.js"]}";' in served
    assert served.replace(f"?v={assets.versions['js/notify.js']}", "") == (STATIC_DIR / "js/tab-title.js").read_text()


def test_a_changed_import_changes_the_importers_hash(tmp_path: Path) -> None:
    (tmp_path / "js").mkdir()
    (tmp_path / "js/a.js").write_text('import { b } from "./b.js";\nb();\n')
    (tmp_path / "js/b.js").write_text("export function b() {}\n")
    before = StaticAssets(tmp_path, bundles={}).versions
    (tmp_path / "js/b.js").write_text("export function b() { return 1; }\n")
    after = StaticAssets(tmp_path, bundles={}).versions
    assert before["js/b.js"] != after["js/b.js"] and before["js/a.js"] != after["js/a.js"]


def test_a_bundle_joins_modules_in_order_their_imports_first_each_in_its_own_block() -> None:
    members = ("js/a.js", "js/b.js")
    sources = {
        "js/a.js": b'import { shared as own } from "./c.js";\nconst root = own();\n',
        "js/b.js": b"const root = 2;\nexport const two = root;\n",
        "js/c.js": b"export function shared() { return 1; }\n",
    }
    text = bundled("js/test-bundle.js", members, sources).decode()
    assert text.index("// --- js/c.js") < text.index("// --- js/a.js") < text.index("// --- js/b.js")
    assert "const {shared: own} = __bundled['js/c.js'];" in text
    assert "__bundled['js/b.js'] = {two};" in text and "export" not in text.split("\n", 1)[1]
    assert text.count("try {") == 3
    with pytest.raises(BundleError, match="js/b.js"):
        bundled("js/test-bundle.js", members, {**sources, "js/b.js": b"export default 2;\n"})
    with pytest.raises(BundleError, match="not in static"):
        bundled("js/test-bundle.js", members, {"js/a.js": sources["js/a.js"], "js/b.js": sources["js/b.js"]})


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf-token" content="([0-9a-f]+)"', page)
    assert found is not None
    return found.group(1)


def test_a_page_that_reflects_a_query_next_to_the_page_token_carries_it_masked_afresh(client: TestClient) -> None:
    pages = [client.get("/", params={"q": "csrf-token"}, headers=BROWSER) for _ in range(2)]
    assert all(page.headers["content-encoding"] == "br" and "csrf-token" in page.text for page in pages)
    first, second = (csrf_of(page.text) for page in pages)
    assert first != second and unmasked(first) == unmasked(second)
    token = client.app.state.access.csrf  # type: ignore[attr-defined]
    assert unmasked(first) == token and token not in pages[0].text
    # The guard takes the masked token (a browser that sends neither Origin nor Sec-Fetch-Site).
    assert client.post("/sessions", data={"csrf": second}, headers=BROWSER).status_code == 303
    assert client.post("/sessions", data={"csrf": masked("x" * len(token))}, headers=BROWSER).status_code == 403


def test_a_masked_token_matches_only_its_token() -> None:
    token = "ab" * 32
    assert token_matches(masked(token), token) and token_matches(token, token)
    assert not token_matches(masked(token)[:-2] + "00", token)
    assert not token_matches("zz" * 64, token) and not token_matches("", token)
    assert unmasked("abc") is None and unmasked("0" * 5000) is None


async def run(app: Any, headers: list[tuple[bytes, bytes]], method: str = "GET") -> list[Message]:
    """The messages ``app`` sends through the compression middleware for one request."""
    sent: list[Message] = []
    scope: Scope = {"type": "http", "method": method, "path": "/", "headers": headers, "query_string": b""}

    requested = False

    async def receive() -> Message:
        nonlocal requested
        if requested:
            await anyio.sleep_forever()  # the browser stays
        requested = True
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await Compression(app)(scope, receive, send)
    return sent


@pytest.mark.anyio
async def test_a_streamed_answer_stays_streamed_each_piece_readable_when_it_comes() -> None:
    pieces = [f"line {n} ".encode() * 100 for n in range(3)]

    async def stream() -> Any:
        for piece in pieces:
            yield piece

    app = StreamingResponse(stream(), media_type="text/markdown")
    sent = await run(app, [(b"accept-encoding", b"gzip")])
    start, *bodies = sent
    assert (b"content-encoding", b"gzip") in start["headers"]
    assert not any(name == b"content-length" for name, _ in start["headers"])
    unpacker = zlib.decompressobj(31)
    read = [unpacker.decompress(body["body"]) for body in bodies if body["body"]]
    assert read[: len(pieces)] == pieces  # each piece whole as soon as it was sent
    assert bodies[-1]["more_body"] is False


@pytest.mark.anyio
async def test_what_is_coded_tiny_not_text_or_a_head_goes_as_it_is() -> None:
    text = b"<p>" + b"words " * 500 + b"</p>"
    cases = {
        "coded": Response(gzip.compress(text), media_type="text/html", headers={"content-encoding": "gzip"}),
        "tiny": Response(b"<p>hi</p>", media_type="text/html"),
        "image": Response(b"\x89PNG" * 500, media_type="image/png"),
        "no-transform": Response(text, media_type="text/html", headers={"cache-control": "no-transform"}),
    }
    for name, app in cases.items():
        start, body = await run(app, [(b"accept-encoding", b"br, gzip")])
        assert body["body"] == app.body, name
        assert dict(start["headers"]).get(b"content-encoding") in (None, b"gzip"), name
    start, body = await run(Response(text, media_type="text/html"), [(b"accept-encoding", b"br")], method="HEAD")
    assert b"content-encoding" not in dict(start["headers"])
    start, body = await run(Response(text, media_type="text/html"), [(b"accept-encoding", b"br")])
    assert brotli.decompress(body["body"]) == text
    assert dict(start["headers"])[b"content-length"] == str(len(body["body"])).encode()


@pytest.mark.anyio
async def test_a_web_socket_passes_the_compression_by() -> None:
    seen: list[Scope] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope)

    scope: Scope = {"type": "websocket", "path": "/", "headers": [(b"accept-encoding", b"gzip")]}

    async def nothing() -> Message:
        return {}

    async def ignore(message: Message) -> None:
        return None

    await Compression(app)(scope, nothing, ignore)
    assert seen == [scope]  # the same scope, its send untouched


def test_the_root_path_and_the_sign_in_page_name_hashed_urls(tmp_path: Path) -> None:
    settings = Settings(workspace=tmp_path, token=TOKEN, store=False, demo_remote=False, root_path="/agents")
    with TestClient(create_app(settings), base_url="http://localhost", follow_redirects=False) as http:
        signin = http.get("/agents/", headers=BROWSER)
        assert signin.status_code == 401
        urls = static_urls(signin.text.replace('"/agents/static/', '"/static/'))
        assert urls and all(version_in(url) for url in urls)
        answer = http.get("/agents" + urls[0], headers=BROWSER)
        assert answer.status_code == 200 and answer.headers["cache-control"] == IMMUTABLE


def test_every_bundle_of_the_static_folder_is_made() -> None:
    assets = StaticAssets(STATIC_DIR)
    for name, members in BUNDLES.items():
        text = assets.assets[name].body.decode()
        assert all(f"// --- {member}\n" in text for member in members), name
