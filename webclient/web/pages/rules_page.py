"""The rules settings page: a person's permission rules (and the admins' for everyone, locked to all but admins),
listed, added and deleted. The server's `webclient.people.rules.RuleBook` is kept in step with the store."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from webclient.people.rules import DECISIONS, Rule, RuleBook, rule_from
from webclient.web.access import server_audit
from webclient.web.context import base_context, manager, person, render, session_of, urls
from webclient.web.page_context import SignedInContext

if TYPE_CHECKING:
    from webclient.store.store import Store

TOOL_KINDS = ("read", "edit", "delete", "move", "search", "execute", "fetch", "think", "other")
"""ACP's tool kinds: what a rule may be limited to."""
MAX_PATTERN = 500


@dataclass(frozen=True, kw_only=True)
class RulesContext(SignedInContext):
    """``rules.html``: this person's permission rules, those for everyone, and the form that adds one."""

    template = "rules.html"
    agents: list[str]
    """The catalogue's agents, a rule may be limited to one."""
    workspaces: list[str]
    """The folders of this person's sessions, a rule may be limited to one."""
    everyone: list[Rule]
    """The rules for everyone (an admin's)."""
    own: list[Rule]
    """This person's own rules."""
    may_lock: bool
    """This person may make a rule for everyone (an admin)."""
    tool_kinds: tuple[str, ...]
    """ACP's tool kinds, a rule may be limited to one."""
    problem: str | None
    """Why the last rule was not made, if it was not."""


async def load_rules(store: Store | None) -> RuleBook:
    """Every rule the store keeps (none without a store: rules then last as long as the server)."""
    if store is None:
        return RuleBook()
    from webclient.store import rules as stored  # here: as the store itself, imported only with a store

    return RuleBook(await stored.load_all(store.engine))


def book(request: Request) -> RuleBook:
    rules: RuleBook = request.app.state.rules
    return rules


async def keep(request: Request, rule: Rule) -> Rule:
    """Store ``rule`` and put it in the server's book; returns it with its id."""
    store: Store | None = request.app.state.store
    rules = book(request)
    if store is not None:
        from webclient.store import rules as stored

        rule = await stored.add(store.engine, rule, person(request).id)
    else:
        rule = replace(rule, id=max((r.id for r in rules.all()), default=0) + 1)
    rules.add(rule)
    server_audit.record(request.scope, person(request), "rule", server_audit.rule_detail(rule), rule.session_id)
    return rule


def _field(form: Any, name: str) -> str | None:
    value = form.get(name)
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:MAX_PATTERN]


async def rules_settings(request: Request) -> Response:
    """GET: the person's rules and everyone's; POST: add one from the form."""
    who = person(request)
    problem = None
    if request.method == "POST":
        form = await request.form()
        decision = form.get("decision")
        tool_kind = _field(form, "tool_kind")
        everyone = form.get("everyone") == "1"
        if decision not in DECISIONS:
            problem = "Choose allow, ask or deny."
        elif tool_kind is not None and tool_kind not in TOOL_KINDS:
            problem = "That is not a tool kind."
        elif everyone and not who.admin:
            problem = "Only an admin sets rules for everyone."
        else:
            rule = Rule(
                id=0,
                owner=None if everyone else who.id,
                decision=decision,
                tool_kind=tool_kind,
                path_pattern=_field(form, "path_pattern"),
                command_pattern=_field(form, "command_pattern"),
                workspace=_field(form, "workspace"),
                agent=_field(form, "agent"),
            )
            await keep(request, rule)
            return RedirectResponse(urls(request).for_("rules"), status_code=303)
    rules = book(request).for_person(who.id)
    sessions = manager(request).sessions.values()
    context = RulesContext(
        **base_context(request),
        agents=list(manager(request).catalogue.entries),
        workspaces=sorted({str(s.spec.cwd) for s in sessions if s.owner == who.id}),
        everyone=[rule for rule in rules if rule.for_everyone],
        own=[rule for rule in rules if not rule.for_everyone],
        may_lock=who.admin,
        tool_kinds=TOOL_KINDS,
        problem=problem,
    )
    return render(request, context)


async def delete_rule(request: Request) -> Response:
    """Delete the form's ``rule_id`` if it is one of the person's rules (an admin's: also one for everyone); any other
    (another person's, one gone already) is left as it is, with the same answer: back to the rules page."""
    who = person(request)
    rules = book(request)
    rule_id = (await request.form()).get("rule_id")
    rule = rules.get(int(rule_id)) if isinstance(rule_id, str) and rule_id.isdigit() and len(rule_id) < 10 else None
    if rule is not None and (rule.owner == who.id or (rule.for_everyone and who.admin)):
        store: Store | None = request.app.state.store
        if store is not None:
            from webclient.store import rules as stored

            await stored.delete_rule(store.engine, rule.id)
        rules.remove(rule.id)
        server_audit.record(request.scope, who, "delete-rule", server_audit.rule_detail(rule), rule.session_id)
    return RedirectResponse(urls(request).for_("rules"), status_code=303)


async def always_allow(request: Request) -> Response:
    """A card's "Always allow as your rule: in this session" / "in this workspace": an allow rule made of the
    question (its tool kind and paths, or its command), kept as the person's, and the question answered by it. The
    card shows it through the session's socket; this answers 204, or 200 saying so for a question no longer open
    (nothing done)."""
    session = await session_of(request, "drive")
    who = person(request)
    form = await request.form()
    request_id, scope = str(form.get("request_id", "")), form.get("scope")
    call = session.thread.tool_call_for_permission(request_id)
    prompt = call.permission if call is not None else None
    if call is None or prompt is None or prompt.request_id != request_id or prompt.state != "pending":
        return Response("That question is no longer open.")
    where: Literal["session", "workspace"] = "session" if scope == "session" else "workspace"
    rule = await keep(request, rule_from(session.rules.facts(call, prompt), who.id, where))
    if prompt.state == "pending":  # still: another person or the turn's end may have answered while it was stored
        session.rules.answer(prompt, "allow", rule)
    return Response(status_code=204)
