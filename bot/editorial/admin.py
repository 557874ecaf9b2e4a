"""Admin use cases: post, edit, retract, approve, demands and subscriptions.

Each is one write transaction holding the change, its outbox rows and its audit entry,
so a crash at any moment either keeps all three or none. Channels on platforms that take
events (`bot.delivery.events`: webhook endpoints) get an event document per change instead of a
message, demand changes included.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot import i18n
from bot.clock import Clock, utcnow
from bot.delivery import events
from bot.delivery.planning import plan_events, plan_followups, plan_posts, split_by_audience
from bot.editorial.demands import (
    DemandWording,
    announcement,
    apply_wording,
    check_key,
    check_offer_date,
    check_wording,
)
from bot.editorial.parsing import parse_timezone
from bot.editorial.rules import (
    LABEL_MAX,
    NOTE_MAX,
    OFFER_MAX,
    SOURCE_MAX,
    Reasons,
    check_field,
    check_language,
    check_reason,
    check_reasons,
    check_texts,
    check_year,
)
from bot.editorial.translations import demand_target, mark_edited, update_target
from bot.errors import Conflict, InvalidInput, NotAllowed, NotFound
from bot.i18n.sentences import in_every_language, invalid, localized_error
from bot.messages.kinds import statuses
from bot.models import (
    EVERYONE,
    Actor,
    Audience,
    Campaign,
    Delivery,
    DeliveryAction,
    DeliveryState,
    Demand,
    DemandChange,
    DemandEvent,
    DemandStatus,
    DemandText,
    Revision,
    Status,
    Subscription,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
)
from bot.plugins import installed_plugins
from bot.plugins.admins import AdminList
from bot.store import NewDelivery, Store, Tx, outbox_queries
from bot.store.codecs import demand_texts_to_json, texts_to_json


@dataclass(frozen=True, slots=True)
class Draft:
    """What an admin writes. `texts` holds at least the campaign's default language.

    A draft with no next step (no wording, no time) keeps the one still ahead from the
    latest update unless `clear_next_step`; a next step's time in the past is refused unless
    `history` (the update tells what already happened)."""

    status: Status
    texts: Mapping[str, UpdateText]
    urgency: Urgency = Urgency.ROUTINE
    next_step_at: datetime | None = None
    clear_next_step: bool = False
    history: bool = False
    audience: Audience = EVERYONE  # whom it addresses (bot.audiences)

    @property
    def has_next_step(self) -> bool:
        return self.next_step_at is not None or any(
            t.next_step.strip() for t in self.texts.values()
        )


@dataclass(frozen=True, slots=True)
class Changes:
    """An edit: only the fields given change. `texts` merges per language."""

    texts: Mapping[str, UpdateText] | None = None
    status: Status | None = None
    urgency: Urgency | None = None
    next_step_at: datetime | None = None
    clear_next_step_at: bool = False
    history: bool = False  # a next step's time in the past is what happened, not a mistake


def update_snapshot(update: Update) -> dict[str, Any]:
    """What the audit log records of an update."""
    return {
        "status": str(update.status),
        "urgency": str(update.urgency),
        "state": str(update.state),
        "texts": texts_to_json(update.texts),
        "next_step_at": update.next_step_at,
        "publish_at": update.publish_at,
        "revision": update.revision,
        "retraction_reason": update.retraction_reason,
        "retraction_reasons": dict(update.retraction_reasons) or None,
        "audience": update.audience.to_json(),
    }


class Admin:
    """The admin use cases, bound to a store, a campaign, who counts as admin and a clock."""

    def __init__(
        self,
        store: Store,
        campaign: Campaign,
        admins: AdminList,
        clock: Clock = utcnow,
        *,
        event_platforms: Collection[str] | None = None,
    ) -> None:
        self.store = store
        self.campaign = campaign
        self.admins = admins
        self.clock = clock
        # Platforms whose channels take event documents (default: the installed plugins').
        self.event_platforms = frozenset(
            installed_plugins().taking_events if event_platforms is None else event_platforms
        )

    # -- updates ---------------------------------------------------------------

    async def post(
        self,
        actor: Actor,
        draft: Draft,
        *,
        publish_at: datetime | None = None,
        seed_key: str | None = None,
        created_at: datetime | None = None,
    ) -> Update:
        """Post now, or at `publish_at` (embargo). Needs a second admin if approval is on."""
        self.admins.require(actor, "post updates")
        now = self.clock()
        draft = replace(draft, texts=self._check_texts(draft.texts, require_default=True))
        self.check_status(draft.status)
        check_year(draft.next_step_at)
        check_year(publish_at)
        if publish_at is not None and publish_at <= now and seed_key is None:
            raise self.past_refusal("admin.embargo_past", publish_at, now)
        if seed_key is None and not draft.history:
            self._check_ahead(draft.next_step_at, now)
        async with self.store.write() as tx:
            if seed_key is not None:
                existing = await tx.get_update_by_seed(seed_key, now)
                if existing is not None:
                    return existing
            await _check_audience(tx, draft.audience)
            if seed_key is None and not draft.has_next_step and not draft.clear_next_step:
                draft = await self._keep_next_step(tx, draft, now)
            return await self._insert(
                tx, actor, draft, now, publish_at=publish_at, seed_key=seed_key,
                created_at=created_at,
            )  # fmt: skip

    async def _insert(
        self,
        tx: Tx,
        actor: Actor,
        draft: Draft,
        now: datetime,
        *,
        publish_at: datetime | None = None,
        seed_key: str | None = None,
        created_at: datetime | None = None,
    ) -> Update:
        """Insert a checked draft with its outbox rows and audit entry, inside `tx`."""
        default = self.campaign.default_language
        needs_approval = self.campaign.require_approval and seed_key is None
        state = UpdateState.PENDING_APPROVAL if needs_approval else UpdateState.PUBLISHED
        update_id = await tx.insert_update(
            {
                "seed_key": seed_key,
                "status": str(draft.status),
                "urgency": str(draft.urgency),
                "state": str(state),
                # The campaign's main language first: translations fall back to it.
                "texts": texts_to_json(
                    dict(sorted(draft.texts.items(), key=lambda kv: kv[0] != default))
                ),
                "next_step_at": draft.next_step_at,
                "author": actor.id,
                "created_at": created_at or now,
                "publish_at": publish_at,
                "published_at": None if needs_approval else (publish_at or now),
                "revision": 1,
                "audience": draft.audience.to_json(),
            }
        )
        update = await self._get(tx, update_id, now)
        if not needs_approval and seed_key is None:
            await tx.enqueue(await self._plan_posts(tx, update, now), now)
        action = "update.submit" if needs_approval else "update.post"
        if seed_key is not None:
            action = "update.seed"
        await tx.audit(now, actor.id, action, f"update:{update_id}", None, update_snapshot(update))
        return update

    async def approve(self, actor: Actor, update_id: int) -> Update:
        self.admins.require(actor, "approve updates")
        now = self.clock()
        async with self.store.write() as tx:
            update = await self._get(tx, update_id, now)
            if update.state is not UpdateState.PENDING_APPROVAL:
                raise localized_error(
                    Conflict, "admin.not_pending", update_id=update_id, state=update.state
                )
            if update.author == actor.id:
                raise localized_error(NotAllowed, "admin.own_update")
            published_at = (
                update.publish_at if update.publish_at and update.publish_at > now else now
            )
            await tx.set_update(
                update_id,
                {
                    "state": UpdateState.PUBLISHED,
                    "published_at": published_at,
                    "approved_by": actor.id,
                },
            )
            after = await self._get(tx, update_id, now)
            await tx.enqueue(await self._plan_posts(tx, after, now), now)
            await tx.audit(
                now,
                actor.id,
                "update.approve",
                f"update:{update_id}",
                update_snapshot(update),
                update_snapshot(after),
            )
            return after

    async def edit(
        self,
        actor: Actor,
        update_id: int,
        changes: Changes,
        *,
        reason: Reasons,
        correction: bool = False,
        translating: bool = False,
    ) -> Update:
        """Edit in place, keeping the previous text as a revision. A correction also posts a
        short visible note, because edits notify nobody. Changing some languages' wording
        marks the others stale (`bot.editorial.translations`), unless `translating`: the new wording
        follows the others (an imported translation), so it is only made current. `reason`
        is the main language's, or a reason per language (`check_reasons`)."""
        self.admins.require(actor, "edit updates")
        now = self.clock()
        reasons = check_reasons(reason, self.campaign.languages)
        reason = reasons[self.campaign.default_language]
        if changes.texts is not None:
            changes = replace(
                changes, texts=self._check_texts(changes.texts, require_default=False)
            )
        check_year(changes.next_step_at)
        if not changes.history:
            self._check_ahead(changes.next_step_at, now)
        if changes.status is not None:
            self.check_status(changes.status)
        async with self.store.write() as tx:
            before = await self._get(tx, update_id, now)
            if before.retracted:
                raise localized_error(Conflict, "admin.retracted_no_edit", update_id=update_id)
            texts = dict(before.texts)
            if changes.texts is not None:
                texts.update(changes.texts)
            values: dict[str, Any] = {
                "texts": texts_to_json(texts),
                "revision": before.revision + 1,
            }
            if changes.status is not None:
                values["status"] = str(changes.status)
            if changes.urgency is not None:
                values["urgency"] = str(changes.urgency)
            if changes.clear_next_step_at:
                values["next_step_at"] = None
            elif changes.next_step_at is not None:
                values["next_step_at"] = changes.next_step_at
            await tx.insert_revision(
                update_id,
                Revision(
                    number=before.revision,
                    texts=before.texts,
                    status=before.status,
                    urgency=before.urgency,
                    next_step_at=before.next_step_at,
                    editor=actor.id,
                    reason=reason,
                    created_at=now,
                    reasons=reasons if len(reasons) > 1 else {},
                ),
            )
            await tx.set_update(update_id, values)
            after = await self._get(tx, update_id, now)
            changed = [
                lang
                for lang, text in (changes.texts or {}).items()
                if before.texts.get(lang) != text
            ]
            await mark_edited(
                tx,
                update_target(update_id),
                written=() if translating else texts,
                changed=changed,
                editor=actor.id,
                now=now,
            )
            if after.state in (UpdateState.PUBLISHED, UpdateState.SCHEDULED):
                people, machines = self._audiences(await self._holders(tx, update_id))
                rows = []
                if after.state is UpdateState.PUBLISHED:  # a post under embargo renders late
                    rows += plan_followups(after, DeliveryAction.EDIT, people, now)
                    if correction:
                        rows += plan_followups(after, DeliveryAction.CORRECTION, people, now)
                # An event is a snapshot: one under embargo is followed by the edit.
                kind = (
                    events.EventType.UPDATE_CORRECTED
                    if correction
                    else events.EventType.UPDATE_EDITED
                )
                event = events.update_event(
                    kind, after, self.campaign, now, reason=reason, reasons=reasons
                )
                rows += plan_followups(after, DeliveryAction.EDIT, machines, now, event=event)
                await tx.enqueue(rows, now)
            await tx.audit(
                now,
                actor.id,
                "update.correct" if correction else "update.edit",
                f"update:{update_id}",
                update_snapshot(before),
                update_snapshot(after) | {"reason": reason, "reasons": reasons},
            )
            return after

    async def retract(self, actor: Actor, update_id: int, *, reason: Reasons) -> Update:
        """Keep the update visible as retracted, with its reason, everywhere it went.
        `reason` is the main language's, or a reason per language (`check_reasons`)."""
        self.admins.require(actor, "retract updates")
        now = self.clock()
        reasons = check_reasons(reason, self.campaign.languages)
        reason = reasons[self.campaign.default_language]
        async with self.store.write() as tx:
            before = await self._get(tx, update_id, now)
            if before.retracted:
                raise localized_error(Conflict, "admin.already_retracted", update_id=update_id)
            holders = await self._holders(tx, update_id)
            await tx.set_update(
                update_id,
                {
                    "state": UpdateState.RETRACTED,
                    "retracted_at": now,
                    "retracted_by": actor.id,
                    "retraction_reason": reason,
                    "retraction_reasons": reasons if len(reasons) > 1 else None,
                    # Never published (pending approval or under embargo): nothing went out.
                    "published_at": before.published_at
                    if before.state is UpdateState.PUBLISHED
                    else None,
                },
            )
            after = await self._get(tx, update_id, now)
            await tx.cancel_pending(
                update_id=update_id, actions=[DeliveryAction.EDIT, DeliveryAction.CORRECTION]
            )
            # Posts that never left are cancelled; one that was attempted or claimed may be
            # up already, so it stays for the dispatcher to settle before the retraction.
            await outbox_queries.withdraw_posts(tx, update_id)
            # Rows for copies whose post was still queued become no-ops in the dispatcher.
            people, machines = self._audiences(holders)
            event = events.update_event(
                events.EventType.UPDATE_RETRACTED,
                after,
                self.campaign,
                now,
                reason=reason,
                reasons=reasons,
            )
            rows = plan_followups(after, DeliveryAction.RETRACT, people, now)
            rows += plan_followups(after, DeliveryAction.RETRACT, machines, now, event=event)
            await tx.enqueue(rows, now)
            await tx.audit(
                now,
                actor.id,
                "update.retract",
                f"update:{update_id}",
                update_snapshot(before),
                update_snapshot(after),
            )
            return after

    # -- demands ---------------------------------------------------------------

    async def record_demand(
        self,
        actor: Actor,
        key: str,
        *,
        status: DemandStatus | None = None,
        offer: Mapping[str, str] | None = None,
        source: str,
        note: str = "",
        at: datetime | None = None,
        announce: bool = False,
    ) -> DemandResult:
        """Record an employer offer and/or a status change, with its source, dated `at`
        (when it was made: earlier than now is fine, later is refused). A backdated entry
        joins the history in its place; the demand's current offer and status change only
        if it is the latest. `announce` also posts an update about it to every channel."""
        self.admins.require(actor, "change demands")
        now = self.clock()
        if status is None and not offer:
            raise InvalidInput("Give a new status, a new offer, or both.")
        source = check_field(source, SOURCE_MAX, required=True, what="source")
        note = check_field(note, NOTE_MAX, what="note")
        when = check_offer_date(check_year(at), now)
        if offer:
            offer = {
                check_language(lang, self.campaign.languages): check_field(
                    text, OFFER_MAX, required=True, what="offer"
                )
                for lang, text in offer.items()
            }
        async with self.store.write() as tx:
            before = await self._demand(tx, key)
            latest = max((e.at for e in before.history if e.kind is DemandChange.OFFER),
                         default=None)  # fmt: skip
            current = latest is None or when >= latest
            texts = dict(before.texts)
            if offer and current:
                for lang, text in offer.items():
                    own = before.texts.get(lang) or DemandText(title="")  # the rest falls back
                    texts[lang] = replace(own, employer_offer=text.strip())
            change = DemandEvent(
                at=when,
                status=status or before.status,
                offer={k: v.strip() for k, v in (offer or {}).items()},
                source=source,
                recorded_by=actor.id,
                note=note,
                recorded_at=now,
            )
            if current:
                # An offer in some languages leaves the others' wording of it stale.
                await mark_edited(tx, demand_target(key), written=texts, changed=offer or (),
                                  editor=actor.id, now=now)  # fmt: skip
            values: dict[str, Any] = {"texts": demand_texts_to_json(texts), "updated_at": now}
            if current and status is not None:
                values["status"] = str(status)
            return await self._demand_changed(
                tx, actor, before, change, values, now, "demand.record", announce=announce
            )

    async def edit_demand(
        self,
        actor: Actor,
        key: str,
        wordings: Mapping[str, DemandWording],
        *,
        reason: str,
        status: DemandStatus | None = None,
        announce: bool = False,
    ) -> DemandResult:
        """Re-word any field of a demand, per language, with a reason kept in its history."""
        self.admins.require(actor, "change demands")
        now = self.clock()
        why = check_reason(reason)
        checked = check_wording(wordings, self.campaign.languages)
        if not checked and status is None:
            raise InvalidInput(
                "Say what to change: a title, summary, union position, offer or facts (in a "
                "language), or a status."
            )
        async with self.store.write() as tx:
            before = await self._demand(tx, key)
            if before.retired_at is not None:
                raise localized_error(Conflict, "demands.is_retired", key=key)
            texts, changes = apply_wording(before, checked)
            if not changes and (status is None or status == before.status):
                raise localized_error(Conflict, "demands.unchanged")
            change = DemandEvent(
                at=now,
                status=status or before.status,
                offer={},
                source="",
                recorded_by=actor.id,
                note=why,
                kind=DemandChange.EDIT,
                changes=changes,
                recorded_at=now,
            )
            # Re-wording some languages leaves the others stale until updated or confirmed.
            await mark_edited(tx, demand_target(key), written=texts, changed=changes,
                              editor=actor.id, now=now)  # fmt: skip
            values: dict[str, Any] = {"texts": demand_texts_to_json(texts), "updated_at": now}
            if status is not None:
                values["status"] = str(status)
            return await self._demand_changed(
                tx, actor, before, change, values, now, "demand.edit", announce=announce
            )

    async def add_demand(
        self,
        actor: Actor,
        key: str,
        wordings: Mapping[str, DemandWording],
        *,
        status: DemandStatus = DemandStatus.OPEN,
        reason: str = "",
        announce: bool = False,
    ) -> DemandResult:
        """Add a demand at the end of the list; it needs a title in the first language."""
        self.admins.require(actor, "change demands")
        now = self.clock()
        key = check_key(key)
        note = check_field(reason, NOTE_MAX, what="reason")
        checked = check_wording(wordings, self.campaign.languages)
        default = self.campaign.default_language
        if checked.get(default) is None or checked[default].title is None:
            raise localized_error(InvalidInput, "demands.needs_title", language=default)
        async with self.store.write() as tx:
            if await tx.get_demand(key) is not None:
                raise localized_error(Conflict, "demands.key_taken", key=key)
            empty = Demand(key, await tx.next_demand_position(), status, {}, now)
            texts, changes = apply_wording(empty, checked)
            demand = replace(empty, texts=texts)
            await tx.insert_demand(demand)
            change = DemandEvent(
                at=now,
                status=status,
                offer={},
                source="",
                recorded_by=actor.id,
                note=note,
                kind=DemandChange.ADDED,
                changes=changes,
                recorded_at=now,
            )
            return await self._demand_changed(
                tx, actor, None, change, {}, now, "demand.add", announce=announce, key=key
            )

    async def retire_demand(
        self, actor: Actor, key: str, *, reason: str, announce: bool = False
    ) -> DemandResult:
        """Take a demand off the list; it keeps its history and stays readable by key."""
        self.admins.require(actor, "change demands")
        now = self.clock()
        why = check_reason(reason)
        async with self.store.write() as tx:
            before = await self._demand(tx, key)
            if before.retired_at is not None:
                raise localized_error(Conflict, "demands.already_retired", key=key)
            change = DemandEvent(
                at=now,
                status=before.status,
                offer={},
                source="",
                recorded_by=actor.id,
                note=why,
                kind=DemandChange.RETIRED,
                recorded_at=now,
            )
            return await self._demand_changed(
                tx, actor, before, change, {"retired_at": now, "updated_at": now}, now,
                "demand.retire", announce=announce,
            )  # fmt: skip

    async def _demand(self, tx: Tx, key: str) -> Demand:
        demand = await tx.get_demand(key)
        if demand is None:
            known = ", ".join(await tx.demand_keys())
            raise localized_error(NotFound, "demands.unknown", key=key, known=known)
        return demand

    async def _demand_changed(
        self,
        tx: Tx,
        actor: Actor,
        before: Demand | None,
        change: DemandEvent,
        values: Mapping[str, Any],
        now: datetime,
        action: str,
        *,
        announce: bool,
        key: str | None = None,
    ) -> DemandResult:
        """The rest of every demand change, in its transaction: the row, the history entry,
        the event for machines, the audit entry, and the announcement if asked for."""
        key = key or (before.key if before else "")
        if values:
            await tx.set_demand(key, values)
        change_id = await tx.insert_demand_event(key, change)
        after = await tx.get_demand(key)
        assert after is not None
        _, machines = self._audiences(await tx.list_subscriptions())
        event = events.demand_event(after, change, self.campaign, now)
        await tx.enqueue(plan_events(event, machines, now, key=f"demand:{change_id}"), now)
        announced = None
        if announce:
            announced = await self._announce(tx, actor, after, change, now)
        await tx.audit(
            now,
            actor.id,
            action,
            f"demand:{key}",
            None if before is None else _demand_snapshot(before),
            _demand_snapshot(after)
            | {
                "change": str(change.kind),
                "at": change.at,
                "source": change.source,
                "note": change.note,
                "announced_as": None if announced is None else f"update:{announced.id}",
            },
        )
        return DemandResult(after, announced)

    async def _announce(
        self, tx: Tx, actor: Actor, demand: Demand, change: DemandEvent, now: datetime
    ) -> Update:
        """The update telling every channel about a demand change (only when asked)."""
        self.admins.require(actor, "post updates")
        latest = await tx.latest_update(now)
        labels = {
            lang: i18n.demand_status_label(demand.status, lang) for lang in self.campaign.languages
        }
        texts = announcement(demand, change, self.campaign.languages, labels)
        draft = Draft(
            latest.status if latest is not None else Status.BARGAINING,
            self._check_texts(texts, require_default=True),
        )
        return await self._insert(tx, actor, draft, now)

    # -- translations ----------------------------------------------------------

    async def translate_demand(
        self, actor: Actor, key: str, language: str, fields: Mapping[str, str]
    ) -> Demand:
        """Write `language`'s wording of some of a demand's fields (a translation of the
        others, so nothing else becomes stale); `language` is current again."""
        self.admins.require(actor, "change demands")
        language = check_language(language, self.campaign.languages)
        now = self.clock()
        values: dict[str, Any] = {}
        for name, text in fields.items():
            if name == "facts":
                values[name] = tuple(f.strip() for f in text.splitlines() if f.strip())
            elif name in ("title", "summary", "union_position", "employer_offer"):
                limit = LABEL_MAX if name == "title" else OFFER_MAX
                values[name] = check_field(text, limit, required=name == "title", what=name)
            else:
                raise InvalidInput(f"A demand has no field {name!r}.")
        async with self.store.write() as tx:
            before = await tx.get_demand(key)
            if before is None:
                known = ", ".join(await tx.demand_keys())
                raise NotFound(f"No demand with key {key!r}. Known keys: {known}.")
            texts = dict(before.texts)
            base = texts.get(language) or DemandText(title="")
            texts[language] = replace(base, **values)
            await tx.set_demand(key, {"texts": demand_texts_to_json(texts), "updated_at": now})
            await tx.clear_stale(demand_target(key), [language])
            after = await tx.get_demand(key)
            assert after is not None
            await tx.audit(
                now,
                actor.id,
                "demand.translate",
                demand_target(key),
                {"texts": demand_texts_to_json(before.texts)},
                {"texts": demand_texts_to_json(after.texts), "language": language},
            )
            return after

    async def confirm_translation(
        self, actor: Actor, target: str, language: str, *, note: str = ""
    ) -> bool:
        """Say that `language`'s wording of `target` ("update:12", "demand:pay") still says
        what the edited language says now: it is no longer stale. False if it was not."""
        self.admins.require(actor, "confirm translations")
        language = check_language(language, self.campaign.languages)
        note = check_field(note, NOTE_MAX, what="note")
        now = self.clock()
        async with self.store.write() as tx:
            marks = [s for s in await tx.stale_texts(target) if s.language == language]
            if not marks:
                return False
            await tx.clear_stale(target, [language])
            await tx.audit(
                now,
                actor.id,
                "translation.confirm",
                target,
                {"language": language, "stale_since": marks[0].since.isoformat()},
                {"language": language, "note": note},
            )
            return True

    # -- subscriptions ---------------------------------------------------------

    async def subscribe(self, actor: Actor, sub: Subscription) -> Subscription:
        self.admins.require(actor, "subscribe channels")
        now = self.clock()
        parse_timezone(sub.timezone)
        check_language(sub.language, self.campaign.languages)
        sub = replace(sub, label=check_field(sub.label, LABEL_MAX, what="label"))
        if not sub.urgencies:
            raise InvalidInput("Choose at least one urgency: routine, important, urgent.")
        async with self.store.write() as tx:
            await _check_audience(tx, sub.follows)
            before = await tx.find_subscription(sub.platform, sub.workspace, sub.channel)
            sub_id = await tx.save_subscription(replace(sub, broken_reason=None), now)
            after = await tx.get_subscription(sub_id)
            assert after is not None
            await tx.audit(
                now,
                actor.id,
                "subscription.save",
                f"subscription:{sub_id}",
                _sub_snapshot(before) if before else None,
                _sub_snapshot(after),
            )
            return after

    async def unsubscribe(self, actor: Actor, sub_id: int) -> Subscription:
        self.admins.require(actor, "unsubscribe channels")
        now = self.clock()
        async with self.store.write() as tx:
            sub = await tx.get_subscription(sub_id)
            if sub is None:
                raise NotFound(
                    f"No subscription #{sub_id}. List them with `strikebot subscriptions list`."
                )
            await tx.deactivate_subscription(sub_id)
            await tx.audit(
                now,
                actor.id,
                "subscription.remove",
                f"subscription:{sub_id}",
                _sub_snapshot(sub),
                None,
            )
            return sub

    # -- deliveries --------------------------------------------------------------

    async def retry(self, actor: Actor, ids: Sequence[str] | None = None) -> Retried:
        """Queue dead deliveries again (`ids`, or every dead one), and resume the channels
        they paused: the admin fixed the cause (usually the bot's access to the channel)."""
        self.admins.require(actor, "retry deliveries")
        now = self.clock()
        async with self.store.write() as tx:
            if ids is not None:
                ids = list(dict.fromkeys(ids))
                found = {d.id: d for d in await outbox_queries.deliveries_by_id(tx, ids)}
                missing = [i for i in ids if i not in found]
                if missing:
                    raise localized_error(NotFound, "admin.no_delivery", id=missing[0])
                alive = [found[i] for i in ids if found[i].state is not DeliveryState.DEAD]
                if alive:
                    raise localized_error(
                        Conflict, "admin.not_dead", id=alive[0].id, state=alive[0].state
                    )
            requeued = await outbox_queries.requeue_dead(tx, now=now, ids=ids)
            resumed: list[Subscription] = []
            for sub_id in sorted({d.subscription_id for d in requeued}):
                sub = await tx.get_subscription(sub_id)
                if sub is not None and sub.broken_reason is not None:
                    await tx.mark_subscription_broken(sub_id, None)
                    await tx.audit(
                        now, actor.id, "subscription.resume", f"subscription:{sub_id}",
                        {"broken_reason": sub.broken_reason}, {"broken_reason": None},
                    )  # fmt: skip
                    resumed.append(sub)
            for d in requeued:
                before = {"state": str(d.state), "attempts": d.attempts, "last_error": d.last_error}
                after = {"state": str(DeliveryState.PENDING)}
                await tx.audit(now, actor.id, "delivery.retry", f"delivery:{d.id}", before, after)
        return Retried(tuple(requeued), tuple(resumed))

    # -- helpers ---------------------------------------------------------------

    async def _get(self, tx: Tx, update_id: int, now: datetime) -> Update:
        update = await tx.get_update(update_id, now)
        if update is None:
            raise localized_error(NotFound, "admin.no_update", update_id=update_id)
        return update

    async def _plan_posts(self, tx: Tx, update: Update, now: datetime) -> list[NewDelivery]:
        """POST rows for every channel the update's audience reaches (one query, the
        preview's count's): a message for people, an event for machines."""
        recipients = await tx.recipients(update.audience, str(update.urgency))
        people, machines = self._audiences(recipients)
        event = events.update_event(events.EventType.UPDATE_PUBLISHED, update, self.campaign, now)
        return plan_posts(update, people, now) + plan_posts(update, machines, now, event=event)

    def _audiences(self, subs: list[Subscription]) -> tuple[list[Subscription], list[Subscription]]:
        return split_by_audience(subs, self.event_platforms)

    async def _holders(self, tx: Tx, update_id: int) -> list[Subscription]:
        return await tx.subscriptions_by_id(await tx.posted_subscriptions(update_id))

    def past_refusal(self, context: str, moment: datetime, now: datetime) -> InvalidInput:
        """A time in the past refused, said in the campaign's zone (never UTC)."""
        zone = ZoneInfo(self.campaign.timezone)
        today = now.astimezone(zone).date()
        when = i18n.datetime_term(moment.astimezone(zone), today)
        return in_every_language(InvalidInput, lambda lang: i18n.say(lang, context, when=when))

    def _check_ahead(self, next_step_at: datetime | None, now: datetime) -> None:
        """A next step is ahead: its time in the past is refused (a typo, or an old date)."""
        if next_step_at is not None and next_step_at < now:
            raise self.past_refusal("admin.next_step_past", next_step_at, now)

    async def _keep_next_step(self, tx: Tx, draft: Draft, now: datetime) -> Draft:
        return kept_next_step(draft, await tx.latest_update(now), now, self.campaign)

    def check_status(self, status: Status) -> None:
        """A status the campaign offers (`[campaign] statuses`; every one by default)."""
        offered = statuses(self.campaign)
        if status not in offered:
            raise invalid(
                "bad_status", value=status.value, statuses=", ".join(s.value for s in offered)
            )

    def _check_texts(
        self, texts: Mapping[str, UpdateText], *, require_default: bool
    ) -> dict[str, UpdateText]:
        default = self.campaign.default_language
        return check_texts(
            texts, self.campaign.languages, require=default if require_default else None
        )


async def _check_audience(tx: Tx, audience: Audience) -> None:
    """Every site and group an update names exists (the desk says so first, per field)."""
    if audience.everyone:
        return
    sites, groups = await tx.unknown_codes(audience)
    if sites:
        raise localized_error(NotFound, "audiences.unknown_site", code=sites[0])
    if groups:
        raise localized_error(NotFound, "audiences.unknown_group", code=groups[0])


def kept_next_step(draft: Draft, latest: Update | None, now: datetime, campaign: Campaign) -> Draft:
    """`draft` with the next step still ahead from the `latest` update (its time and, in
    each language of the draft, its wording): a post that says nothing of the next step
    does not take it off the page and the briefings."""
    if latest is None or latest.next_step_at is None or latest.next_step_at <= now:
        return draft
    texts = {
        lang: replace(text, next_step=latest.texts[lang].next_step)
        if lang in latest.texts
        else text
        for lang, text in draft.texts.items()
    }
    main = campaign.default_language
    if main in texts and not texts[main].next_step:  # the main language's, at least
        texts[main] = replace(texts[main], next_step=latest.text(main, main).next_step)
    return replace(draft, texts=texts, next_step_at=latest.next_step_at)


@dataclass(frozen=True, slots=True)
class Retried:
    """Dead deliveries queued again, and the channels that were paused and now resume."""

    requeued: tuple[Delivery, ...]
    resumed: tuple[Subscription, ...]


@dataclass(frozen=True, slots=True)
class DemandResult:
    """A demand after a change, and the update that announced it (if the admin asked)."""

    demand: Demand
    announced: Update | None = None


def _demand_snapshot(demand: Demand) -> dict[str, Any]:
    return {
        "status": str(demand.status),
        "texts": demand_texts_to_json(demand.texts),
        "retired_at": demand.retired_at,
    }


def _sub_snapshot(sub: Subscription) -> dict[str, Any]:
    return {
        "address": sub.address,
        "language": sub.language,
        "urgencies": sorted(str(u) for u in sub.urgencies),
        "briefing_time": sub.briefing_time,
        "timezone": sub.timezone,
        "briefing_days": sorted(sub.briefing_days),
        "quiet_hours": [sub.quiet_hours.start, sub.quiet_hours.end] if sub.quiet_hours else None,
        "follows": sub.follows.to_json(),
    }
