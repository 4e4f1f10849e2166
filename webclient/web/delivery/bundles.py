"""The session page's scripts as one file: 26 small modules are 26 requests (each with half a kilobyte of headers),
which a browser on a first visit makes six at a time; one file is one request, and compresses better.

:data:`BUNDLES` names each bundle (a file of ``static/`` that does not exist on disk) and its modules, in the order
they run. :func:`bundled` joins them into one module that behaves as the modules loaded one by one did: each runs in
a block of its own (its names are its own), in the order given, a module imported by another before it (as the
browser evaluates imports first), once; one that throws is reported and the next ones still run. The modules may
use the forms of ``import``/``export`` our scripts use (``import { a, b } from "./x.js";``, ``export function``,
``export const``, ``export class``, ``export { a, b };``); anything else is refused when the server starts, naming
the file and line, rather than bundled wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

SESSION_SCRIPTS = "js/session-page.js"

BUNDLES: dict[str, tuple[str, ...]] = {
    # Nearly every behaviour of static/js/ is the session page's. They run in this order, after the page is parsed,
    # and react to a message from the server in this order: show-earlier.js puts back what the message moved before
    # follow-scroll.js looks at the bottom.
    SESSION_SCRIPTS: (
        "js/socket-status.js",
        "js/live-text.js",
        "js/turn-state.js",
        "js/notify.js",
        "js/tab-title.js",
        "js/copy-code.js",
        "js/keep-open.js",
        "js/card-status.js",
        "js/terminal-scroll.js",
        "js/show-earlier.js",
        "js/follow-scroll.js",
        "js/sticky-heights.js",
        "js/side-panel.js",
        "js/changes-refresh.js",
        "js/review-keys.js",
        "js/follow-agent.js",
        "js/diff-layout.js",
        "js/permission-answer.js",
        "js/question-link.js",
        "js/elapsed.js",
        "js/prompt-menus.js",
        "js/commands.js",
        "js/mentions.js",
        "js/composer-keys.js",
        "js/prompt-send.js",
        "js/attachments.js",
        "js/queue.js",
        "js/session-keys.js",
        "js/sign-in-terminal.js",
        "js/checkpoints.js",
    ),
}
"""Bundle (a ``static/`` name, served as one module) → its modules, in the order they run."""

IMPORT = re.compile(r"""^import\s*\{([^}]*)\}\s*from\s*(["'])\./([\w.-]+\.js)\2\s*;?[ \t]*$""", re.MULTILINE)
EXPORT_DECLARATION = re.compile(r"^export\s+((?:async\s+)?function\*?|const|class)\s+([\w$]+)", re.MULTILINE)
EXPORT_LIST = re.compile(r"^export\s*\{([^}]*)\}\s*;?[ \t]*$", re.MULTILINE)
ANY_IMPORT_OR_EXPORT = re.compile(r"^[ \t]*(import|export)\b(?![ \t]*[(.])", re.MULTILINE)
"""Any other static import or export at the start of a line: a form :func:`bundled` does not take."""

EXPORTS = "__bundled"
"""The bundle's own name: each module's exports, by file, for the modules that import them."""


class BundleError(ValueError):
    """A module the bundler cannot join (a form of import or export it does not take, an import of a missing file)."""


def bundled(name: str, members: Sequence[str], sources: Mapping[str, bytes]) -> bytes:
    """The modules ``members`` of bundle ``name`` (read from ``sources``: file → bytes) joined as one module.

    Raises:
        BundleError: naming the file and the line the bundler does not take.
    """
    done: set[str] = set()
    parts = [f"// {name}: {len(members)} modules of static/ joined (webclient/web/delivery/bundles.py).\n"]
    parts.append(f"const {EXPORTS} = {{}};\n")

    def add(member: str, importers: tuple[str, ...]) -> None:
        if member in done:
            return
        if member not in sources:
            raise BundleError(f"{importers[-1] if importers else name} needs {member}, which is not in static/")
        text = sources[member].decode("utf-8")
        folder = member.rsplit("/", 1)[0] + "/" if "/" in member else ""
        imports = [(names, folder + file) for names, _, file in IMPORT.findall(text)]
        for _, imported in imports:
            if imported in (*importers, member):
                raise BundleError(f"{member} and {imported} import each other: not bundled")
            add(imported, (*importers, member))
        done.add(member)
        parts.append(_block(member, text, imports))

    for member in members:
        add(member, ())
    return "".join(parts).encode("utf-8")


def _block(member: str, text: str, imports: list[tuple[str, str]]) -> str:
    """One module as a block of the bundle: its imports read from the modules before, its exports kept for after."""
    exported = [match.group(2) for match in EXPORT_DECLARATION.finditer(text)]
    for match in EXPORT_LIST.finditer(text):
        exported += [part.strip() for part in match.group(1).split(",") if part.strip()]
    body = EXPORT_LIST.sub("", EXPORT_DECLARATION.sub(lambda match: f"{match.group(1)} {match.group(2)}", text))
    body = IMPORT.sub("", body)
    leftover = ANY_IMPORT_OR_EXPORT.search(body)
    if leftover is not None:
        line = body[leftover.start() :].splitlines()[0].strip()
        raise BundleError(f"{member}: a form of import or export the bundler does not take: {line}")
    if any(" as " in name or not re.fullmatch(r"[\w$]+", name) for name in exported):
        raise BundleError(f"{member}: exports renamed (`as`): not bundled")
    bindings = [(names.replace(" as ", ": ").strip(), imported) for names, imported in imports]  # {a as b} → {a: b}
    head = "".join(f"  const {{{names}}} = {EXPORTS}[{imported!r}];\n" for names, imported in bindings)
    tail = f"  {EXPORTS}[{member!r}] = {{{', '.join(exported)}}};\n" if exported else ""
    return f"// --- {member}\ntry {{\n{head}{body}\n{tail}}} catch (error) {{\n  reportError(error);\n}}\n"
