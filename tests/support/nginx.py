"""A real proxy in front of a test server: Debian's nginx (``scripts/ensure-nginx``), started as its own process.

It does what a company's portal does for ``WEBCLIENT_AUTH=trusted-header``: it signs people in itself (HTTP basic
sign-in against its own password file) and names them to the server in headers it sets, overwriting whatever the
browser sent: ``X-Forwarded-User`` (the name the person signed in with), ``X-Forwarded-Email`` and
``X-Forwarded-Groups`` (from a ``map`` of names, as a portal reads its directory). Web sockets are proxied too.

nginx reaches the server as docs/deployment.md says: on the server's unix socket (``upstream=``
:func:`unix_upstream`, the server started with ``WEBCLIENT_UDS``: only the socket's owner and group may connect), or,
the alternative for a proxy on another machine, over TCP from :data:`PROXY_ADDRESS` (``proxy_bind``, an address of
its own) sending the shared secret (``secret=``, the server reading it from ``WEBCLIENT_PROXY_SECRET_FILE``). An
address alone proves nothing: any program on this machine may connect from ``127.0.0.2`` too.

Without members it signs nobody in (token or OpenID mode behind it). Under a path prefix (``root="/agents"``) it
serves the app at ``/agents/`` only (anything else is nginx's 404), either passing the path whole (the server is
told the prefix: ``WEBCLIENT_ROOT_PATH``) or stripping it and naming it in ``X-Forwarded-Prefix``
(``strip=True``; the server believes that from the proxy's address). With ``tls=True`` it speaks HTTPS with a
self-signed certificate for ``127.0.0.1`` and ``localhost`` made here (``cryptography``) and says so in
``X-Forwarded-Proto``. docs/deployment.md shows the ``location`` block :func:`location` writes.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.support.servers import free_port

PROXY_ADDRESS = "127.0.0.2"
"""The address nginx connects to the server from: the one a test trusts."""


SECRET_HEADER = "X-Webclient-Proxy-Secret"
POOL = "http://webclient"
"""The upstream of several instances (``balanced=``)."""


def behind_proxy(
    port: int, tls: bool = False, auth: str = "trusted-header", uds: Path | None = None, secret_file: Path | None = None
) -> dict[str, str]:
    """The environment of a server behind the proxy that will listen on ``port``: it believes the proxy's headers from
    the proxy only, and so takes the origin the proxy forwards for its own (no ``WEBCLIENT_ALLOWED_ORIGINS``). The
    proxy proves itself by connecting on ``uds`` (the server listens there) or, over TCP from :data:`PROXY_ADDRESS`,
    by the secret in ``secret_file``. ``auth="token"``: nginx signs nobody in, and the server asks for its token."""
    env = {"WEBCLIENT_AUTH": auth}
    if uds is not None:
        env["WEBCLIENT_UDS"] = str(uds)
    else:
        env["WEBCLIENT_TRUSTED_PROXIES"] = PROXY_ADDRESS
    if secret_file is not None:
        env["WEBCLIENT_PROXY_SECRET_FILE"] = str(secret_file)
    if auth == "trusted-header":
        env |= {
            "WEBCLIENT_TRUSTED_EMAIL_HEADER": "X-Forwarded-Email",
            "WEBCLIENT_TRUSTED_GROUPS_HEADER": "X-Forwarded-Groups",
        }
    return env


def unix_upstream(path: Path) -> str:
    """nginx's name for the server on the unix socket ``path`` (``proxy_pass`` adds the path after it)."""
    return f"http://unix:{path}:"


@contextmanager
def socket_folder() -> Iterator[Path]:
    """Where a test server's unix socket goes: a short path (a socket's may be 107 bytes), in a folder that every user
    may enter, so that only the socket's own mode keeps anyone out."""
    folder = Path(tempfile.mkdtemp(prefix="wc-"))
    os.chmod(folder, 0o755)
    try:
        yield folder / "webclient.sock"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class Member:
    """A person the proxy knows: the name they sign in with, their password, email and groups."""

    name: str
    password: str
    email: str = ""
    groups: Sequence[str] = ()


TEAM = (
    Member("alice", "alice-password", "alice@example.com", ("admins", "dev")),
    Member("bob", "bob-password", "bob@example.com", ("dev",)),
)
"""Two people the proxy signs in: Alice, an admin, and Bob."""


@dataclass
class Proxy:
    """A running nginx: its URL (what the browser opens) and the people it signs in."""

    url: str
    """nginx's origin (``http://127.0.0.1:PORT``, ``https://`` with TLS)."""
    process: subprocess.Popen[bytes]
    prefix: Path
    """nginx's own folder (``nginx -p``): its config, logs and certificate."""
    members: Mapping[str, Member]
    root: str = ""
    """The path prefix the app is served under (``/agents``), or "" at the top."""

    @property
    def app_url(self) -> str:
        """The app's index as a browser opens it: ``https://127.0.0.1:PORT/agents/``."""
        return f"{self.url}{self.root}/"

    @property
    def portal_url(self) -> str:
        """The portal's page (``portal=``), by a host name of another site than the app's: ``localhost``."""
        return self.url.replace("127.0.0.1", "localhost") + "/portal.html"

    def credentials(self, name: str) -> dict[str, str]:
        """Playwright's ``http_credentials`` for a browser context signed in to the proxy as ``name``."""
        return {"username": name, "password": self.members[name].password}

    def signed_in(self, name: str) -> dict[str, str]:
        """The ``Authorization`` header of a browser or script already signed in to the proxy as ``name`` (sent on
        every request, a frame of another site's included, where a browser answers no challenge)."""
        basic = base64.b64encode(":".join(self.auth(name)).encode()).decode()
        return {"Authorization": f"Basic {basic}"}

    def auth(self, name: str) -> tuple[str, str]:
        """httpx's ``auth`` for a script signed in to the proxy as ``name``."""
        return name, self.members[name].password

    def log(self) -> str:
        """nginx's error log (put in an assertion's message when something goes wrong)."""
        path = self.prefix / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""


def nginx_binary() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if found is None:
        raise RuntimeError("nginx is missing: run scripts/ensure-nginx (make test does)")
    return found


def _quoted(value: str) -> str:
    """A string as an nginx config token: quoted, with quotes and backslashes escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def location(
    upstream: str, root: str = "", strip: bool = False, signs_in: bool = False, secret: str | None = None
) -> str:
    """The ``location`` block that passes the app's requests to ``upstream``, under ``root`` ("" for the top): on a
    unix socket (:func:`unix_upstream`), or over TCP from :data:`PROXY_ADDRESS`; with the proxy's ``secret``."""
    if root and strip:  # the path below the prefix, and the prefix named (the server believes it from the proxy)
        target, prefix = upstream + "/", f"proxy_set_header X-Forwarded-Prefix {root};"
    else:  # the path whole; a prefix a browser sent is dropped
        target, prefix = upstream, 'proxy_set_header X-Forwarded-Prefix "";'
    people = (
        """
      proxy_set_header X-Forwarded-User $remote_user;
      proxy_set_header X-Forwarded-Email $member_email;
      proxy_set_header X-Forwarded-Groups $member_groups;
      proxy_set_header Authorization "";"""
        if signs_in
        else ""
    )
    bind = "" if upstream.startswith("http://unix:") else f"\n      proxy_bind {PROXY_ADDRESS};"
    if secret is not None:
        people += f"\n      proxy_set_header {SECRET_HEADER} {_quoted(secret)};"
    return f"""location {root}/ {{
      proxy_pass {target};{bind}
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      {prefix}{people}
      proxy_buffering off;
      proxy_read_timeout 300s;
    }}"""


def _config(
    port: int,
    upstream: str,
    members: Mapping[str, Member],
    prefix: Path,
    root: str,
    strip: bool,
    tls: bool,
    secret: str | None,
    balanced: Sequence[str] = (),
) -> str:
    emails = "\n".join(f"    {_quoted(m.name)} {_quoted(m.email)};" for m in members.values())
    groups = "\n".join(f"    {_quoted(m.name)} {_quoted(','.join(m.groups))};" for m in members.values())
    temp = "\n".join(
        f"  {kind}_temp_path {prefix / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    sign_in = f'auth_basic "webclient";\n    auth_basic_user_file {prefix / "htpasswd"};' if members else ""
    listen = f"listen 127.0.0.1:{port}" + (" ssl" if tls else "") + ";"
    if tls:
        listen += f"\n    ssl_certificate {prefix / 'cert.pem'};\n    ssl_certificate_key {prefix / 'key.pem'};"
    outside = "location / { return 404; }" if root else ""
    pool = ""
    if balanced:  # several instances of one service: nginx's round robin, and which one answered in a header
        pool = "upstream webclient {\n" + "".join(f"    server {server};\n" for server in balanced) + "  }"
        outside += "\n    add_header X-Upstream $upstream_addr always;"
    if (prefix / "portal.html").exists():  # a portal's page that frames the app (open it by another host name)
        outside += f"\n    location = /portal.html {{ root {prefix}; }}"
    return f"""
daemon off;
master_process off;
pid {prefix / "nginx.pid"};
error_log {prefix / "error.log"} info;
events {{ worker_connections 256; }}
http {{
  access_log {prefix / "access.log"};
{temp}
  map $http_upgrade $connection_upgrade {{ default upgrade; "" close; }}
  {pool}
  map $remote_user $member_email {{
    default "";
{emails}
  }}
  map $remote_user $member_groups {{
    default "";
{groups}
  }}
  server {{
    {listen}
    {sign_in}
    {outside}
    {location(upstream, root, strip, bool(members), secret)}
  }}
}}
"""


def self_signed(folder: Path) -> None:
    """``cert.pem`` and ``key.pem`` in ``folder``: a certificate for ``127.0.0.1`` and ``localhost``, a day long."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(key, hashes.SHA256())
    )
    (folder / "cert.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )


def _htpasswd(members: Mapping[str, Member]) -> str:
    """nginx's password file, in the ``{SHA}`` scheme it reads (base64 of SHA-1: fine for a throw-away test)."""
    lines = []
    for member in members.values():
        digest = base64.b64encode(hashlib.sha1(member.password.encode()).digest()).decode()
        lines.append(f"{member.name}:{{SHA}}{digest}")
    return "\n".join(lines) + "\n"


def start_proxy(
    upstream: str,
    members: Sequence[Member],
    port: int | None = None,
    root: str = "",
    strip: bool = False,
    tls: bool = False,
    portal: str | None = None,
    secret: str | None = None,
    balanced: Sequence[str] = (),
) -> Proxy:
    """Start nginx on ``port`` (a free loopback port by default) in front of ``upstream`` (:func:`unix_upstream`, or
    ``http://127.0.0.1:PORT``), under the path prefix ``root`` (see the module's docstring), sending ``secret`` if
    given; wait until it answers. Stop it with :func:`stop_proxy`.

    ``portal``: the HTML of a portal's page nginx serves at ``/portal.html``, outside the prefix. Opened as
    ``localhost`` while the app is opened as ``127.0.0.1`` (:attr:`Proxy.portal_url`), it is another site's page.

    ``balanced``: the ``host:port`` of several instances of one service, taken in turn (``upstream`` must then be
    :data:`POOL`); each answer says which one gave it in ``X-Upstream``."""
    prefix = Path(tempfile.mkdtemp(prefix="webclient-nginx-"))
    people = {m.name: m for m in members}
    port = port or free_port()
    (prefix / "htpasswd").write_text(_htpasswd(people))
    if portal is not None:
        (prefix / "portal.html").write_text(portal)
    if tls:
        self_signed(prefix)
    (prefix / "nginx.conf").write_text(_config(port, upstream, people, prefix, root, strip, tls, secret, balanced))
    args = [nginx_binary(), "-p", str(prefix), "-e", str(prefix / "error.log"), "-c", str(prefix / "nginx.conf")]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    proxy = Proxy(f"{'https' if tls else 'http'}://127.0.0.1:{port}", process, prefix, people, root)
    deadline = time.monotonic() + 10
    while True:
        if process.poll() is not None:
            said = process.stderr.read().decode(errors="replace") if process.stderr else ""
            shutil.rmtree(prefix, ignore_errors=True)
            raise RuntimeError(f"nginx exited early ({process.returncode}):\n{said}\n{proxy.log()}")
        try:
            httpx.get(proxy.url + "/", timeout=1, verify=False)  # any answer (its 401 too) means it is up
            return proxy
        except httpx.TransportError:
            if time.monotonic() > deadline:
                stop_proxy(proxy)
                raise
            time.sleep(0.05)


def stop_proxy(proxy: Proxy) -> None:
    """A fast shutdown (SIGTERM; SIGKILL after 5 s), and its folder removed."""
    proxy.process.send_signal(signal.SIGTERM)
    try:
        proxy.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proxy.process.kill()
        proxy.process.wait()
    if proxy.process.stderr:
        proxy.process.stderr.close()
    shutil.rmtree(proxy.prefix, ignore_errors=True)


@contextmanager
def proxy_in_front(
    upstream: str,
    members: Sequence[Member],
    port: int | None = None,
    root: str = "",
    strip: bool = False,
    tls: bool = False,
    portal: str | None = None,
    secret: str | None = None,
    balanced: Sequence[str] = (),
) -> Iterator[Proxy]:
    proxy = start_proxy(upstream, members, port, root, strip, tls, portal, secret, balanced)
    try:
        yield proxy
    finally:
        stop_proxy(proxy)
