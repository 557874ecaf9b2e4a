"""Admins keep the demands current from chat, with the same use cases as the CLI and the API:

    /strike demand pay offer="6% over two years" source="District proposal" date=2019-01-11
    /strike demand nurses lang=es title="Una enfermera en cada escuela" reason="wording"
    /strike demand add charter-cap title="Cap on charter schools" union="A cap" reason="new"
    /strike demand retire testing "settled before the strike" announce

`source=` records an offer (and/or `status=`) dated `date=` (default now, never later);
otherwise field options (`title=`, `summary=`, `union=`, `offer=`, `facts="a; b"`) re-word
the demand in `lang=` (default the campaign's first) with a `reason=`. Nothing reaches
members unless `announce` is given. `/strike demand pay` alone still shows the demand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.commands._context import Asker, Reply
from bot.commands._questions import Questions
from bot.editorial.admin import DemandResult
from bot.editorial.demands import FIELD_ALIASES, DemandWording, split_facts
from bot.editorial.parsing import parse_demand_status, parse_flag, parse_language, parse_when
from bot.i18n.sentences import invalid, say
from bot.plugins.outbound import OutboundMessage

# The words that name an action instead of a demand, when more follows them.
DEMAND_ACTIONS = {"add": "add", "agregar": "add", "añadir": "add",
                  "retire": "retire", "retirar": "retire"}  # fmt: skip
DEMAND_OPTIONS = {
    "source": "source", "fuente": "source",
    "date": "at", "at": "at", "fecha": "at",
    "status": "status", "estado": "status",
    "lang": "language", "language": "language", "idioma": "language",
    "reason": "reason", "motivo": "reason",
    "note": "note", "nota": "note",
    "announce": "announce", "anunciar": "announce",
} | FIELD_ALIASES  # fmt: skip
DEMAND_FLAGS = frozenset({"announce", "anunciar"})
EXAMPLES = {
    "record": '/strike demand pay offer="…" source="…" date=2019-01-11',
    "edit": '/strike demand pay title="…" reason="…"',
    "add": '/strike demand add key title="…"',
    "retire": '/strike demand retire key reason="…"',
}


def wants_change(positional: Sequence[str], options: Mapping[str, Any]) -> bool:
    """Whether typed `demand ...` arguments ask for a change rather than a look."""
    if options:
        return True
    return len(positional) > 1 and positional[0].lower() in DEMAND_ACTIONS


class DemandOrders(Questions):
    """The demand changes admins may order from chat."""

    async def _change_demand(
        self, a: Asker, positional: Sequence[str], options: Mapping[str, Any]
    ) -> Reply:
        actor = a.ctx.actor
        self.admin.admins.require(actor, "change demands")
        action = DEMAND_ACTIONS.get(positional[0].lower()) if len(positional) > 1 else None
        if action is None:
            action = "record" if "source" in options else "edit"
            rest = positional
        else:
            rest = positional[1:]
        if not rest:
            raise invalid("missing_demand_key", example=EXAMPLES[action])
        key, extra = rest[0].strip().lower(), rest[1:]
        reason = str(options.get("reason") or " ".join(extra))
        if extra and action not in ("retire",) and not options.get("reason"):
            raise invalid("too_many_args", command="demand", example=EXAMPLES[action])
        announce = parse_flag(options.get("announce", False))
        language = self.campaign.default_language
        if options.get("language"):
            language = parse_language(options["language"], self.campaign.languages)
        status = parse_demand_status(options["status"]) if options.get("status") else None
        result: DemandResult
        if action == "record":
            offer = options.get("employer_offer")
            at = parse_when(options["at"], a.zone) if options.get("at") else None
            result = await self.admin.record_demand(
                actor,
                key,
                status=status,
                offer={language: str(offer)} if offer is not None else None,
                source=str(options.get("source", "")),
                note=str(options.get("note", "")),
                at=at,
                announce=announce,
            )
        elif action == "add":
            result = await self.admin.add_demand(
                actor,
                key,
                {language: _wording(options)},
                status=status or parse_demand_status("open"),
                reason=reason,
                announce=announce,
            )
        elif action == "retire":
            result = await self.admin.retire_demand(actor, key, reason=reason, announce=announce)
        else:
            result = await self.admin.edit_demand(
                actor,
                key,
                {language: _wording(options)},
                reason=reason,
                status=status,
                announce=announce,
            )
        lang = a.language
        told = (
            say(lang, "demand_announced", id=result.announced.id)
            if result.announced is not None
            # A retired demand leaves the page: the reply says so, not that it stays there.
            else say(lang, f"demand_{'retired_' if action == 'retire' else ''}not_announced")
        )
        card = (
            await self._demand(a, result.demand.key) if result.demand.retired_at is None else None
        )
        return Reply(
            OutboundMessage(
                title=say(lang, f"demand_{action}_title", key=result.demand.key),
                body=told,
                language=lang,
            ),
            ephemeral=True,
            extra=() if card is None else (card.message,),
        )


def _wording(options: Mapping[str, Any]) -> DemandWording:
    facts = options.get("facts")
    return DemandWording(
        title=_text(options.get("title")),
        summary=_text(options.get("summary")),
        union_position=_text(options.get("union_position")),
        employer_offer=_text(options.get("employer_offer")),
        facts=None if facts is None else split_facts(str(facts)),
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)
