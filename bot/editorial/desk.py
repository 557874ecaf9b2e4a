"""The editorial desk: the one flow every admin surface goes through.

A surface turns what the admin gave into a `Proposal` (`Desk.read` parses raw text);
`Desk.preview` checks it, merges it over the update it changes, renders it in each
language, counts who it reaches and keeps it as a draft that any instance can confirm;
`Desk.confirm` carries the draft out, `Desk.cancel` drops it, and `Desk.commit` does both
steps at once (the CLI, the HTTP API, a typed command). docs/desk.md states the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

from bot import i18n
from bot.audiences import parse_audience
from bot.clock import Clock, utcnow
from bot.editorial.admin import Admin, Changes, Draft, kept_next_step
from bot.editorial.parsing import (
    is_off,
    parse_language,
    parse_status,
    parse_update_id,
    parse_urgency,
    parse_when,
)
from bot.editorial.reach import Reach, reach
from bot.editorial.rules import check_reason, check_reasons, check_update_text, check_year
from bot.editorial.translations import StaleText, update_target
from bot.errors import Conflict, InvalidInput, NotAllowed, NotFound, StrikebotError
from bot.i18n.sentences import in_every_language, invalid, localized_error
from bot.messages.compose import local_zone, update_message
from bot.models import (
    EVERYONE,
    Actor,
    Audience,
    Site,
    SiteGroup,
    Status,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
)
from bot.plugins import Plugins, Section
from bot.plugins.outbound import OutboundMessage, Pacing
from bot.store import Store

DRAFT_KIND = "desk"
TEXT_FIELDS = ("headline", "body", "next_step")
_WORDS = i18n.Words("desk")


class Action(StrEnum):
    POST = "post"
    EDIT = "edit"
    CORRECT = "correct"  # an edit that also posts a visible correction note
    RETRACT = "retract"
    APPROVE = "approve"


@dataclass(frozen=True, slots=True)
class TextPatch:
    """One language's wording, field by field; None leaves a field as it is."""

    headline: str | None = None
    body: str | None = None
    next_step: str | None = None

    def over(self, base: UpdateText | None) -> UpdateText:
        """This patch applied to `base` (an empty wording when there is none)."""
        base = base or UpdateText("")
        return UpdateText(
            base.headline if self.headline is None else self.headline,
            base.body if self.body is None else self.body,
            base.next_step if self.next_step is None else self.next_step,
        )


@dataclass(frozen=True, slots=True)
class Proposal:
    """What an admin asks for, in the desk's terms. Times are aware; `clear_next_step`
    removes the next step's time (an edit), where None keeps it; a post that says nothing of
    its next step keeps the one still ahead unless `clear_next_step`. `reason` is the main
    language's, `reasons` the other languages'."""

    action: Action
    update_id: int | None = None
    texts: Mapping[str, TextPatch] = field(default_factory=dict)
    status: Status | None = None
    urgency: Urgency | None = None
    next_step_at: datetime | None = None
    clear_next_step: bool = False
    publish_at: datetime | None = None
    reason: str = ""
    reasons: Mapping[str, str] = field(default_factory=dict)  # other languages' reasons
    history: bool = False  # a next step's time in the past is what happened
    # Whom a post addresses (some sites, some groups; default everyone). An edit, a
    # correction or a retraction goes where its post went, so it names none.
    audience: Audience = EVERYONE

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action.value,
            "update_id": self.update_id,
            "texts": {
                lang: {k: getattr(p, k) for k in TEXT_FIELDS} for lang, p in self.texts.items()
            },
            "status": None if self.status is None else self.status.value,
            "urgency": None if self.urgency is None else self.urgency.value,
            "next_step_at": _iso(self.next_step_at),
            "clear_next_step": self.clear_next_step,
            "publish_at": _iso(self.publish_at),
            "reason": self.reason,
            "reasons": dict(self.reasons),
            "history": self.history,
            "audience": self.audience.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Proposal:
        return cls(
            action=Action(data["action"]),
            update_id=data.get("update_id"),
            texts={lang: TextPatch(**p) for lang, p in (data.get("texts") or {}).items()},
            status=None if data.get("status") is None else Status(data["status"]),
            urgency=None if data.get("urgency") is None else Urgency(data["urgency"]),
            next_step_at=_from_iso(data.get("next_step_at")),
            clear_next_step=bool(data.get("clear_next_step")),
            publish_at=_from_iso(data.get("publish_at")),
            reason=str(data.get("reason") or ""),
            reasons=dict(data.get("reasons") or {}),
            history=bool(data.get("history")),
            audience=Audience.from_json(data.get("audience")),
        )

    def with_texts(self, texts: Mapping[str, TextPatch]) -> Proposal:
        """This proposal with some languages' wording added or replaced."""
        return replace(self, texts={**self.texts, **texts})


class Problems(InvalidInput):
    """What is wrong with a proposal, field by field ("headline", "texts.es.headline",
    "publish_at", "reason"...), each a sentence in every language. The message is the
    first problem's."""

    def __init__(self, problems: Mapping[str, StrikebotError]) -> None:
        first = next(iter(problems.values()))
        super().__init__(first.message, translations=dict(first.translations))
        self.problems = dict(problems)

    def localized_problems(self, language: str) -> dict[str, str]:
        return {name: exc.localized(language) for name, exc in self.problems.items()}


@dataclass(frozen=True, slots=True)
class Preview:
    """A proposal as it will go out: the update after it (id 0 for a new post), the message
    in each of its languages as members will see it, who it reaches, what is wrong with
    it (`problems`: nothing is done while there are any) and the stored draft's token."""

    proposal: Proposal
    update: Update
    before: Update | None
    messages: Mapping[str, OutboundMessage]
    reach: Reach
    problems: Mapping[str, StrikebotError]
    missing: tuple[str, ...]  # campaign languages without a wording of their own
    token: str | None = None
    # The sites and groups a post is addressed to (none: everyone), for the sentence.
    addressed: tuple[Site | SiteGroup, ...] = ()

    @property
    def ready(self) -> bool:
        return not self.problems

    def sentence(self, language: str, zone: ZoneInfo | None = None) -> str:
        """What confirming will do, in `language`: "It will go to 3 chat channels and 1,204
        e-mails.", "It will be published on Monday at 06:00 to ...", "Its 12 copies will
        be edited in place."."""
        lang = i18n.pick(language)
        w = _WORDS[lang]
        action = self.proposal.action
        holders = self.reach.channels
        if action is Action.POST:
            if self.update.state is UpdateState.PENDING_APPROVAL:
                return self._for(lang, w["preview_post_approval"])
            if self.proposal.publish_at is not None:
                when = i18n.format_datetime(self.proposal.publish_at.astimezone(zone), lang)
                return self._for(lang, w["preview_post_scheduled"].format(when=when))
            return self._for(lang, self.reach.sentence(lang))
        if action is Action.APPROVE:
            return self._for(lang, self.reach.sentence(lang))
        if not holders:
            return w["preview_no_copies"]
        count = i18n.format_number(holders, lang)
        key = {
            Action.EDIT: "preview_edit",
            Action.CORRECT: "preview_correct",
            Action.RETRACT: "preview_retract",
        }[action]
        return i18n.plural(lang, f"desk.{key}", holders).format(n=count)

    def _for(self, language: str, sentence: str) -> str:
        """`sentence`, after whom a post is addressed to when not everyone."""
        if self.update.audience.everyone:
            return sentence
        names = [place.name(language) for place in self.addressed]
        named = i18n.format_list(names or [self.update.audience.describe()], language)
        return f"{i18n.text(language, 'audiences.preview_for').format(names=named)} {sentence}"

    def problems_in(self, language: str) -> dict[str, str]:
        return {name: exc.localized(language) for name, exc in self.problems.items()}

    def intro(self, language: str, zone: ZoneInfo | None = None) -> str:
        """The line above a preview: how members will see it, and what confirming does."""
        return f"{_WORDS[i18n.pick(language)]['preview_lead']} {self.sentence(language, zone)}"

    def shown(self, first: str) -> list[str]:
        """The preview's languages, `first` (the asker's, or the one edited) leading."""
        return sorted(self.messages, key=lambda code: code != first)


@dataclass(frozen=True, slots=True)
class Done:
    """What confirming did: the update after it, and how many copies are queued (a post,
    an approval) or were already out (an edit, a correction, a retraction)."""

    action: Action
    update: Update
    copies: int
    reach: Reach | None = None


class Desk:
    """The editorial desk, bound to a store, the admin use cases and the installed plugins."""

    def __init__(
        self,
        store: Store,
        admin: Admin,
        *,
        plugins: Plugins,
        cost_sections: Mapping[str, Section | None] | None = None,
        clock: Clock = utcnow,
        paces: Mapping[str, Pacing] | None = None,
    ) -> None:
        self.store = store
        self.admin = admin
        self.campaign = admin.campaign
        self.plugins = plugins
        self.cost_sections = dict(cost_sections or {})
        self.paces = dict(paces or {})  # each platform's pace, for the time a send takes
        self.clock = clock

    # -- reading what a surface was given -----------------------------------------

    def read(
        self,
        action: Action | str,
        *,
        update_id: object = None,
        texts: Mapping[str, Mapping[str, object]] | None = None,
        status: object = None,
        urgency: object = None,
        next_step_at: object = None,
        publish_at: object = None,
        reason: object = None,
        reasons: Mapping[str, object] | None = None,
        history: bool = False,
        clear_next_step: bool = False,
        zone: ZoneInfo | str | None = None,
        sites: object = None,
        groups: object = None,
    ) -> Proposal:
        """A proposal from what a person typed: ids, statuses, urgencies and times as text
        (a time without an offset is in `zone`, default the campaign's; "off" clears the
        next step's time), `texts` by language code with any of headline, body and
        next_step, `sites` and `groups` as codes (comma-separated or listed). Raises
        `Problems` naming each field that cannot be read."""
        where = zone if isinstance(zone, ZoneInfo) else local_zone(zone, self.campaign)
        problems: dict[str, StrikebotError] = {}

        def read(name: str, parse: Any, value: object) -> Any:
            if value is None or (isinstance(value, str) and not value.strip()):
                return None
            try:
                return parse(value)
            except StrikebotError as exc:
                problems[name] = exc
                return None

        chosen = Action(action)
        patches: dict[str, TextPatch] = {}
        for code, given in (texts or {}).items():
            language = read("language", lambda v: parse_language(v, self.campaign.languages), code)
            if language is None:
                continue
            if language in patches:
                problems[f"texts.{language}"] = localized_error(
                    InvalidInput, "text_twice", language=language
                )
            values = {k: given.get(k) for k in TEXT_FIELDS}
            if any(v is not None for v in values.values()):
                patches[language] = TextPatch(
                    **{k: None if v is None else str(v) for k, v in values.items()}
                )
        clear = clear_next_step or (next_step_at is not None and is_off(next_step_at))
        others: dict[str, str] = {}
        for code, text in (reasons or {}).items():
            language = read("language", lambda v: parse_language(v, self.campaign.languages), code)
            if language is not None and text is not None and str(text).strip():
                others[language] = str(text)
        proposal = Proposal(
            action=chosen,
            update_id=read("update_id", parse_update_id, update_id),
            texts=patches,
            status=read("status", parse_status, status),
            urgency=read("urgency", parse_urgency, urgency),
            next_step_at=None if clear else read("next_step_at", _when(where), next_step_at),
            clear_next_step=clear,
            publish_at=read("publish_at", _when(where), publish_at),
            reason="" if reason is None else str(reason),
            reasons=others,
            history=history,
            audience=read("audience", lambda v: parse_audience(*v), (sites, groups)) or EVERYONE,
        )
        if chosen is not Action.POST and proposal.update_id is None and "update_id" not in problems:
            problems["update_id"] = localized_error(InvalidInput, "desk.needs_update_id")
        if problems:
            raise Problems(problems)
        return proposal

    # -- preview, confirm, cancel ------------------------------------------------

    async def preview(
        self,
        actor: Actor,
        proposal: Proposal,
        *,
        keep: bool = True,
        keep_unready: bool = False,
        token: str | None = None,
    ) -> Preview:
        """The proposal checked and rendered, its reach counted and (with `keep`, when it
        has no problems or with `keep_unready` anyway: a form that adds a language later)
        stored as a draft: under `token` when revising one, else under a new token. Only
        admins may preview."""
        self.admin.admins.require(actor, _doing(proposal.action))
        now = self.clock()
        problems: dict[str, StrikebotError] = {}
        proposal = await self._sorted_codes(proposal)
        before = await self._before(proposal, now)
        latest = None
        if proposal.action is Action.POST:
            async with self.store.read() as tx:
                latest = await tx.latest_update(now)
            if proposal.status is None:
                proposal = replace(proposal, status=self._current_status(latest, problems))
        update = self._after(actor, proposal, before, now, problems)
        await self._check_audience(proposal, problems)
        if proposal.action is Action.POST and not proposal.clear_next_step:
            update = self._keep_next_step(update, latest, now)
        if proposal.action in (Action.EDIT, Action.CORRECT, Action.RETRACT):
            found = Reach(channels=await self._holders(update.id), _plugins=self.plugins)
        else:
            found = await reach(
                self.store,
                self.campaign,
                update,
                sections=self.cost_sections,
                plugins=self.plugins,
                paces=self.paces,
            )
        messages = {code: update_message(update, code, self.campaign) for code in update.texts}
        missing = tuple(code for code in self.campaign.languages if code not in update.texts)
        if keep and (keep_unready or not problems):
            token = await self._keep(actor, proposal, now, token)
        addressed = await self._addressed(update.audience)
        return Preview(
            proposal, update, before, messages, found, problems, missing, token, addressed
        )

    async def draft(self, actor: Actor, token: str) -> Proposal:
        """The stored draft behind `token`, left in place, if `actor` wrote it."""
        async with self.store.write() as tx:
            payload = await tx.take_draft(DRAFT_KIND, token)
            if payload is not None:
                await tx.keep_draft(DRAFT_KIND, token, payload, _from_iso(payload["saved_at"]))
        return self._owned(actor, payload)

    async def confirm(self, actor: Actor, token: str) -> Done:
        """Carry out the draft behind `token`, once: it is taken from the store in the same
        step, so a double click or a second instance cannot do it twice."""
        async with self.store.write() as tx:
            payload = await tx.take_draft(DRAFT_KIND, token)
            if payload is not None and payload.get("actor") != actor.id:
                await tx.keep_draft(DRAFT_KIND, token, payload, _from_iso(payload["saved_at"]))
        return await self.commit(actor, self._owned(actor, payload))

    async def cancel(self, actor: Actor, token: str) -> bool:
        """Drop the draft behind `token`; False when it was already gone."""
        async with self.store.write() as tx:
            payload = await tx.take_draft(DRAFT_KIND, token)
            if payload is not None and payload.get("actor") != actor.id:
                await tx.keep_draft(DRAFT_KIND, token, payload, _from_iso(payload["saved_at"]))
                raise localized_error(NotAllowed, "desk.not_yours")
        return payload is not None

    async def commit(self, actor: Actor, proposal: Proposal) -> Done:
        """Check and carry out `proposal` at once; `Problems` says what to fix."""
        preview = await self.preview(actor, proposal, keep=False)
        for problem in preview.problems.values():
            if not isinstance(problem, InvalidInput):
                raise problem  # the update's state or who asks, not what was written
        if preview.problems:
            raise Problems(preview.problems)
        return await self._carry_out(actor, preview)

    async def current(self, update_id: int) -> tuple[Update | None, list[StaleText]]:
        """An update as members see it now (for an edit form to show), and which of its
        languages are stale; None when there is no such update."""
        async with self.store.read() as tx:
            update = await tx.get_update(update_id, self.clock())
            stale = await tx.stale_texts(update_target(update_id)) if update else []
        return update, list(stale)

    async def current_status(self) -> Status | None:
        """Where the dispute stands now (the latest update's status), for a post form to
        start from; None before the first update."""
        async with self.store.read() as tx:
            latest = await tx.latest_update(self.clock())
        return None if latest is None else latest.status

    # -- a surface's form in progress --------------------------------------------

    async def keep_form(self, kind: str, key: str, state: Mapping[str, Any]) -> None:
        """Keep a surface's form in progress (a chat's step-by-step form, a modal's state)
        under a key the surface chose, so the next step may land on any instance."""
        async with self.store.write() as tx:
            await tx.keep_draft(kind, key, state, self.clock())

    async def form(self, kind: str, key: str, *, take: bool = False) -> dict[str, Any] | None:
        """The form kept under `key` (removed with `take`); None when there is none."""
        async with self.store.write() as tx:
            state = await tx.take_draft(kind, key)
            if state is not None and not take:
                await tx.keep_draft(kind, key, state, self.clock())
        return state

    # -- helpers -----------------------------------------------------------------

    async def _addressed(self, audience: Audience) -> tuple[Site | SiteGroup, ...]:
        if audience.everyone:
            return ()
        found: list[Site | SiteGroup] = []
        async with self.store.read() as tx:
            for code in audience.sites:
                if (site := await tx.get_site(code)) is not None:
                    found.append(site)
            for code in audience.groups:
                if (group := await tx.get_group(code)) is not None:
                    found.append(group)
        return tuple(found)

    async def _sorted_codes(self, proposal: Proposal) -> Proposal:
        """A group's code given as a site's (a form has one input for both: "east") is the
        group's, and a site's given as a group's the site's."""
        audience = proposal.audience
        if audience.everyone:
            return proposal
        async with self.store.read() as tx:
            sites, groups = await tx.unknown_codes(audience)
            swapped = await tx.unknown_codes(Audience(tuple(groups), tuple(sites)))
        as_groups = [c for c in sites if c not in swapped[1]]  # unknown sites that are groups
        as_sites = [c for c in groups if c not in swapped[0]]
        if not as_groups and not as_sites:
            return proposal
        moved = Audience.of(
            [c for c in audience.sites if c not in as_groups] + as_sites,
            [c for c in audience.groups if c not in as_sites] + as_groups,
        )
        return replace(proposal, audience=moved)

    async def _check_audience(
        self, proposal: Proposal, problems: dict[str, StrikebotError]
    ) -> None:
        """A post's sites and groups must exist; anything else goes where its post went."""
        if proposal.audience.everyone:
            return
        if proposal.action is not Action.POST:
            problems["audience"] = localized_error(InvalidInput, "audiences.follows_post")
            return
        async with self.store.read() as tx:
            sites, groups = await tx.unknown_codes(proposal.audience)
        if sites:
            problems["audience"] = invalid("audiences.unknown_site", code=sites[0])
        elif groups:
            problems["audience"] = invalid("audiences.unknown_group", code=groups[0])

    async def _before(self, proposal: Proposal, now: datetime) -> Update | None:
        if proposal.action is Action.POST:
            return None
        assert proposal.update_id is not None
        async with self.store.read() as tx:
            update = await tx.get_update(proposal.update_id, now)
        if update is None:
            raise localized_error(NotFound, "desk.no_update", id=proposal.update_id)
        return update

    def _after(
        self,
        actor: Actor,
        proposal: Proposal,
        before: Update | None,
        now: datetime,
        problems: dict[str, StrikebotError],
    ) -> Update:
        """The update as it will stand once the proposal is carried out; each rule that
        fails adds its problem (under the field to fix)."""
        action = proposal.action
        if before is None:
            texts = self._texts(proposal, None, problems)
            if self.campaign.default_language not in proposal.texts:
                problems[f"texts.{self.campaign.default_language}.headline"] = in_every_language(
                    InvalidInput,
                    lambda lang: i18n.text(lang, "commands.missing_language_text").format(
                        language=i18n.language_name(self.campaign.default_language, lang)
                    ),
                )
            if proposal.status is not None:
                _check(problems, "status", self.admin.check_status, proposal.status)
            self._check_next_step(proposal, now, problems)
            _check(problems, "publish_at", check_year, proposal.publish_at)
            if proposal.publish_at is not None and proposal.publish_at <= now:
                problems["publish_at"] = self.admin.past_refusal(
                    "admin.embargo_past", proposal.publish_at, now
                )
            pending = self.campaign.require_approval
            state = (
                UpdateState.PENDING_APPROVAL
                if pending
                else UpdateState.SCHEDULED
                if proposal.publish_at
                else UpdateState.PUBLISHED
            )
            return Update(
                id=0,
                status=proposal.status or Status.BARGAINING,
                urgency=proposal.urgency or Urgency.ROUTINE,
                texts=_main_first(texts, self.campaign.default_language),
                author="",
                created_at=now,
                state=state,
                next_step_at=proposal.next_step_at,
                publish_at=proposal.publish_at,
                published_at=None if pending else proposal.publish_at or now,
                audience=proposal.audience,
            )
        if action is Action.APPROVE:
            if before.state is not UpdateState.PENDING_APPROVAL:
                problems["update_id"] = localized_error(
                    Conflict, "admin.not_pending", update_id=before.id, state=before.state
                )
            elif before.author == actor.id:
                problems["update_id"] = localized_error(NotAllowed, "admin.own_update")
            return replace(before, state=UpdateState.PUBLISHED, published_at=now)
        if before.retracted:
            key = (
                "admin.already_retracted" if action is Action.RETRACT else "admin.retracted_no_edit"
            )
            problems["update_id"] = localized_error(Conflict, key, update_id=before.id)
        reasons = self._reasons(proposal, problems)
        if action is Action.RETRACT:
            main = self.campaign.default_language
            return replace(
                before,
                state=UpdateState.RETRACTED,
                retraction_reason=reasons.get(main, proposal.reason),
                retraction_reasons=reasons,
                retracted_at=now,
            )
        texts = {**before.texts, **self._texts(proposal, before, problems)}
        self._check_next_step(proposal, now, problems)
        after = replace(
            before,
            texts=texts,
            status=proposal.status or before.status,
            urgency=proposal.urgency or before.urgency,
            next_step_at=None
            if proposal.clear_next_step
            else proposal.next_step_at or before.next_step_at,
            revision=before.revision + 1,
        )
        if (after.texts, after.status, after.urgency, after.next_step_at) == (
            before.texts,
            before.status,
            before.urgency,
            before.next_step_at,
        ) and not problems:
            problems["texts"] = localized_error(InvalidInput, "desk.nothing_to_change")
        return after

    def _check_next_step(
        self, proposal: Proposal, now: datetime, problems: dict[str, StrikebotError]
    ) -> None:
        """A plausible year, and still ahead unless the update tells what happened."""
        moment = proposal.next_step_at
        _check(problems, "next_step_at", check_year, moment)
        if moment is not None and moment < now and not proposal.history:
            problems.setdefault(
                "next_step_at", self.admin.past_refusal("admin.next_step_past", moment, now)
            )

    def _reasons(self, proposal: Proposal, problems: dict[str, StrikebotError]) -> dict[str, str]:
        """The reason in each language it is given in (the main language's first)."""
        main = self.campaign.default_language
        given = {main: proposal.reason, **proposal.reasons}
        if check_reason_or_none(proposal.reason, problems) is None:
            return {}
        found: dict[str, str] = _check(
            problems, "reason", lambda v: check_reasons(v, self.campaign.languages), given
        )
        return found if "reason" not in problems else {}

    def _texts(
        self, proposal: Proposal, before: Update | None, problems: dict[str, StrikebotError]
    ) -> dict[str, UpdateText]:
        """Each language's patch over the wording it changes, checked. A language the
        update has no wording in yet is added, and needs its headline: no wording is ever
        borrowed from another language."""
        texts: dict[str, UpdateText] = {}
        for lang, patch in proposal.texts.items():
            if lang not in self.campaign.languages:
                problems[f"texts.{lang}"] = localized_error(
                    InvalidInput,
                    "bad_language",
                    value=lang[:20],
                    languages=", ".join(self.campaign.languages),
                )
                continue
            base = None if before is None else before.texts.get(lang)
            if base is None and patch.headline is None:
                key = "desk.needs_headline" if before is None else "desk.new_language_headline"
                problems[f"texts.{lang}.headline"] = _in_language(key, lang, proposal.update_id)
                continue
            merged = patch.over(base)
            found = {}
            for name, parts in (
                ("headline", (merged.headline,)),
                ("body", ("-", merged.body)),
                ("next_step", ("-", "", merged.next_step)),
            ):
                try:
                    check_update_text(*parts)
                except StrikebotError as exc:
                    main = lang == self.campaign.default_language
                    found[f"texts.{lang}.{name}"] = exc if main else _in_language(exc, lang)
            if found:
                problems.update(found)
                continue
            texts[lang] = check_update_text(merged.headline, merged.body, merged.next_step)
        return texts

    async def _holders(self, update_id: int) -> int:
        async with self.store.read() as tx:
            return len(await tx.posted_subscriptions(update_id))

    async def _queued(self, update_id: int) -> int:
        async with self.store.read() as tx:
            counts = await tx.delivery_counts(update_id)
        return sum(n for (_platform, state), n in counts.items() if state in ("pending", "sent"))

    async def _keep(
        self, actor: Actor, proposal: Proposal, now: datetime, token: str | None
    ) -> str:
        payload = {"actor": actor.id, "saved_at": now.isoformat(), **proposal.to_json()}
        async with self.store.write() as tx:
            if token is None:
                return await tx.save_draft(DRAFT_KIND, payload, now)
            await tx.keep_draft(DRAFT_KIND, token, payload, now)
            return token

    def _owned(self, actor: Actor, payload: Mapping[str, Any] | None) -> Proposal:
        if payload is None:
            raise localized_error(Conflict, "desk.draft_gone")
        if payload.get("actor") != actor.id:
            raise localized_error(NotAllowed, "desk.not_yours")
        return Proposal.from_json(payload)

    async def _carry_out(self, actor: Actor, preview: Preview) -> Done:
        proposal, admin = preview.proposal, self.admin
        action = proposal.action
        if action is Action.POST:
            update = await admin.post(
                actor,
                Draft(
                    status=preview.update.status,
                    texts=preview.update.texts,
                    urgency=preview.update.urgency,
                    next_step_at=preview.update.next_step_at,
                    clear_next_step=proposal.clear_next_step,
                    history=proposal.history,
                    audience=proposal.audience,
                ),
                publish_at=proposal.publish_at,
            )
            return Done(action, update, await self._queued(update.id), preview.reach)
        assert proposal.update_id is not None
        uid = proposal.update_id
        if action is Action.APPROVE:
            update = await admin.approve(actor, uid)
            return Done(action, update, await self._queued(uid), preview.reach)
        if action is Action.RETRACT:
            update = await admin.retract(actor, uid, reason=self._reason_of(proposal))
            return Done(action, update, await self._holders(uid))
        changed = {lang: preview.update.texts[lang] for lang in proposal.texts}
        update = await admin.edit(
            actor,
            uid,
            Changes(
                texts=changed or None,
                status=proposal.status,
                urgency=proposal.urgency,
                next_step_at=proposal.next_step_at,
                clear_next_step_at=proposal.clear_next_step,
                history=proposal.history,
            ),
            reason=self._reason_of(proposal),
            correction=action is Action.CORRECT,
        )
        return Done(action, update, await self._holders(uid))

    def _keep_next_step(self, update: Update, latest: Update | None, now: datetime) -> Update:
        """A post that says nothing of its next step keeps the one still ahead."""
        if update.next_step_at is not None or any(t.next_step for t in update.texts.values()):
            return update
        draft = Draft(update.status, update.texts, update.urgency)
        kept = kept_next_step(draft, latest, now, self.campaign)
        return replace(update, texts=kept.texts, next_step_at=kept.next_step_at)

    def _reason_of(self, proposal: Proposal) -> str | dict[str, str]:
        if not proposal.reasons:
            return proposal.reason
        return {self.campaign.default_language: proposal.reason, **proposal.reasons}

    def _current_status(
        self, latest: Update | None, problems: dict[str, StrikebotError]
    ) -> Status | None:
        """A post that names no status keeps the current one; the first post must name it."""
        if latest is None:
            problems["status"] = localized_error(
                InvalidInput, "desk.needs_status", statuses=", ".join(s.value for s in Status)
            )
            return None
        return latest.status


def _doing(action: Action) -> str:
    return {
        Action.POST: "post updates",
        Action.EDIT: "edit updates",
        Action.CORRECT: "edit updates",
        Action.RETRACT: "retract updates",
        Action.APPROVE: "approve updates",
    }[action]


def check_reason_or_none(reason: str, problems: dict[str, StrikebotError]) -> str | None:
    """The main language's reason checked (required, one paragraph); None when it fails."""
    try:
        return check_reason(reason)
    except StrikebotError as exc:
        problems["reason"] = exc
        return None


def _check(problems: dict[str, StrikebotError], name: str, check: Any, value: Any) -> Any:
    try:
        return check(value)
    except StrikebotError as exc:
        problems[name] = exc
        return value


def _in_language(
    problem: str | StrikebotError, language: str, update_id: int | None = None
) -> InvalidInput:
    """A problem with one language's wording, said in every language: a catalogue key
    ("desk.needs_headline") or another error, prefixed with the language it is about."""
    if isinstance(problem, str):
        key = problem
        return in_every_language(
            InvalidInput,
            lambda ui: i18n.text(ui, key).format(
                language=i18n.language_name(language, ui), id=update_id
            ),
        )
    return in_every_language(
        InvalidInput,
        lambda ui: i18n.text(ui, "desk.in_language").format(
            language=i18n.language_name(language, ui), problem=problem.localized(ui)
        ),
    )


def _main_first(texts: Mapping[str, UpdateText], main: str) -> dict[str, UpdateText]:
    return dict(sorted(texts.items(), key=lambda kv: kv[0] != main))


def _when(zone: ZoneInfo) -> Any:
    return lambda value: parse_when(value, zone)


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _from_iso(text: object) -> Any:
    return None if not text else datetime.fromisoformat(str(text))
