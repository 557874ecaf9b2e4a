"""Admin use cases: post, edit, retract, approve, demands and subscriptions.

Each is one write transaction holding the change, its outbox rows and its audit entry,
so a crash at any moment either keeps all three or none. Channels on platforms that take
events (`bot.events`: webhook endpoints) get an event document per change instead of a
message, demand changes included.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot import events
from bot.auth import AdminList
from bot.clock import Clock, utcnow
from bot.errors import Conflict, InvalidInput, NotAllowed, NotFound
from bot.models import (
    Actor,
    Campaign,
    DeliveryAction,
    Demand,
    DemandEvent,
    DemandStatus,
    Revision,
    Status,
    Subscription,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
)
from bot.outbox import plan_events, plan_followups, plan_posts, split_by_audience
from bot.plugins import installed_plugins
from bot.store import NewDelivery, Store, Tx
from bot.store.codecs import demand_texts_to_json, texts_to_json

HEADLINE_MAX = 150  # Slack's header block limit; Discord's embed title allows 256
BODY_MAX = 20_000
NEXT_STEP_MAX = 300
REASON_MAX = 500
YEARS = (1970, 2200)  # dates outside these are typos


@dataclass(frozen=True, slots=True)
class Draft:
    """What an admin writes. `texts` holds at least the campaign's default language."""

    status: Status
    texts: Mapping[str, UpdateText]
    urgency: Urgency = Urgency.ROUTINE
    next_step_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Changes:
    """An edit: only the fields given change. `texts` merges per language."""

    texts: Mapping[str, UpdateText] | None = None
    status: Status | None = None
    urgency: Urgency | None = None
    next_step_at: datetime | None = None
    clear_next_step_at: bool = False


def parse_status(value: str) -> Status:
    try:
        return Status(value.strip().lower())
    except ValueError:
        raise InvalidInput(
            f"Unknown status {value!r}. Use one of: {', '.join(s.value for s in Status)}."
        ) from None


def parse_urgency(value: str) -> Urgency:
    try:
        return Urgency(value.strip().lower())
    except ValueError:
        raise InvalidInput(
            f"Unknown urgency {value!r}. Use one of: {', '.join(u.value for u in Urgency)}."
        ) from None


def parse_demand_status(value: str) -> DemandStatus:
    try:
        return DemandStatus(value.strip().lower())
    except ValueError:
        raise InvalidInput(
            f"Unknown demand status {value!r}. "
            f"Use one of: {', '.join(s.value for s in DemandStatus)}."
        ) from None


def check_timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InvalidInput(
            f"Unknown time zone {name!r}. Use an IANA name such as America/Los_Angeles."
        ) from None
    return name


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
        self._check_texts(draft.texts, require_default=True)
        _check_year(draft.next_step_at, "next step time")
        _check_year(publish_at, "embargo time")
        if publish_at is not None and publish_at <= now and seed_key is None:
            raise InvalidInput(
                f"The embargo time {publish_at.isoformat()} is in the past. "
                "Give a future time, or leave it out to publish now."
            )
        default = self.campaign.default_language
        needs_approval = self.campaign.require_approval and seed_key is None
        state = UpdateState.PENDING_APPROVAL if needs_approval else UpdateState.PUBLISHED
        async with self.store.write() as tx:
            if seed_key is not None:
                existing = await tx.get_update_by_seed(seed_key, now)
                if existing is not None:
                    return existing
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
                }
            )
            update = await self._get(tx, update_id, now)
            if not needs_approval and seed_key is None:
                await tx.enqueue(await self._plan_posts(tx, update, now), now)
            action = "update.submit" if needs_approval else "update.post"
            if seed_key is not None:
                action = "update.seed"
            await tx.audit(
                now, actor.id, action, f"update:{update_id}", None, update_snapshot(update)
            )
            return update

    async def approve(self, actor: Actor, update_id: int) -> Update:
        self.admins.require(actor, "approve updates")
        now = self.clock()
        async with self.store.write() as tx:
            update = await self._get(tx, update_id, now)
            if update.state is not UpdateState.PENDING_APPROVAL:
                raise Conflict(
                    f"Update #{update_id} is not waiting for approval ({update.state}).",
                    translations={
                        "es": f"La actualización #{update_id} no está esperando aprobación."
                    },
                )
            if update.author == actor.id:
                raise NotAllowed(
                    "You wrote this update, so someone else must approve it. "
                    "Ask another union admin to run approve.",
                    translations={
                        "es": "Tú escribiste esta actualización: otra persona administradora "
                        "debe aprobarla."
                    },
                )
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
        reason: str,
        correction: bool = False,
    ) -> Update:
        """Edit in place, keeping the previous text as a revision. A correction also posts a
        short visible note, because edits notify nobody."""
        self.admins.require(actor, "edit updates")
        now = self.clock()
        reason = self._check_reason(reason, "an edit")
        if changes.texts is not None:
            self._check_texts(changes.texts, require_default=False)
        _check_year(changes.next_step_at, "next step time")
        async with self.store.write() as tx:
            before = await self._get(tx, update_id, now)
            if before.retracted:
                raise Conflict(
                    f"Update #{update_id} was retracted and cannot be edited. Post a new update.",
                    translations={
                        "es": f"La actualización #{update_id} fue retirada y no se puede "
                        "editar. Publica una nueva actualización."
                    },
                )
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
                ),
            )
            await tx.set_update(update_id, values)
            after = await self._get(tx, update_id, now)
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
                event = events.update_event(kind, after, self.campaign, now, reason=reason)
                rows += plan_followups(after, DeliveryAction.EDIT, machines, now, event=event)
                await tx.enqueue(rows, now)
            await tx.audit(
                now,
                actor.id,
                "update.correct" if correction else "update.edit",
                f"update:{update_id}",
                update_snapshot(before),
                update_snapshot(after) | {"reason": reason},
            )
            return after

    async def retract(self, actor: Actor, update_id: int, *, reason: str) -> Update:
        """Keep the update visible as retracted, with its reason, everywhere it went."""
        self.admins.require(actor, "retract updates")
        now = self.clock()
        reason = self._check_reason(reason, "a retraction")
        async with self.store.write() as tx:
            before = await self._get(tx, update_id, now)
            if before.retracted:
                raise Conflict(
                    f"Update #{update_id} is already retracted.",
                    translations={"es": f"La actualización #{update_id} ya fue retirada."},
                )
            holders = await self._holders(tx, update_id)
            await tx.set_update(
                update_id,
                {
                    "state": UpdateState.RETRACTED,
                    "retracted_at": now,
                    "retracted_by": actor.id,
                    "retraction_reason": reason,
                    # Never published (pending approval or under embargo): nothing went out.
                    "published_at": before.published_at
                    if before.state is UpdateState.PUBLISHED
                    else None,
                },
            )
            after = await self._get(tx, update_id, now)
            await tx.cancel_pending(
                update_id=update_id,
                actions=[DeliveryAction.POST, DeliveryAction.EDIT, DeliveryAction.CORRECTION],
            )
            # Rows for copies whose post was still queued become no-ops in the dispatcher.
            people, machines = self._audiences(holders)
            event = events.update_event(
                events.EventType.UPDATE_RETRACTED, after, self.campaign, now, reason=reason
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
    ) -> Demand:
        """Record a new employer offer and/or a status change, with its source."""
        self.admins.require(actor, "change demands")
        now = self.clock()
        if status is None and not offer:
            raise InvalidInput("Give a new status, a new offer, or both.")
        source = source.strip()
        if not source:
            raise InvalidInput(
                "Say where this comes from (source), e.g. 'District bargaining proposal, Jan 11'."
            )
        if offer:
            self._check_languages(offer.keys())
        async with self.store.write() as tx:
            before = await tx.get_demand(key)
            if before is None:
                known = ", ".join(await tx.demand_keys())
                raise NotFound(f"No demand with key {key!r}. Known keys: {known}.")
            new_status = status or before.status
            texts = dict(before.texts)
            if offer:
                for lang, text in offer.items():
                    base = before.text(lang)
                    texts[lang] = replace(base, employer_offer=text.strip())
            await tx.set_demand(
                key,
                {
                    "status": str(new_status),
                    "texts": demand_texts_to_json(texts),
                    "updated_at": now,
                },
            )
            change = DemandEvent(
                at=now,
                status=new_status,
                offer={k: v.strip() for k, v in (offer or {}).items()},
                source=source,
                recorded_by=actor.id,
                note=note,
            )
            change_id = await tx.insert_demand_event(key, change)
            after = await tx.get_demand(key)
            assert after is not None
            _, machines = self._audiences(await tx.list_subscriptions())
            event = events.demand_event(after, change, self.campaign, now)
            await tx.enqueue(plan_events(event, machines, now, key=f"demand:{change_id}"), now)
            await tx.audit(
                now,
                actor.id,
                "demand.record",
                f"demand:{key}",
                {"status": str(before.status), "texts": demand_texts_to_json(before.texts)},
                {
                    "status": str(after.status),
                    "texts": demand_texts_to_json(after.texts),
                    "source": source,
                },
            )
            return after

    # -- subscriptions ---------------------------------------------------------

    async def subscribe(self, actor: Actor, sub: Subscription) -> Subscription:
        self.admins.require(actor, "subscribe channels")
        now = self.clock()
        check_timezone(sub.timezone)
        self._check_languages([sub.language])
        if not sub.urgencies:
            raise InvalidInput("Choose at least one urgency: routine, important, urgent.")
        async with self.store.write() as tx:
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

    # -- helpers ---------------------------------------------------------------

    async def _get(self, tx: Tx, update_id: int, now: datetime) -> Update:
        update = await tx.get_update(update_id, now)
        if update is None:
            raise NotFound(
                f"No update #{update_id}. See the numbers with `strikebot timeline`.",
                translations={"es": f"No existe la actualización #{update_id}."},
            )
        return update

    async def _plan_posts(self, tx: Tx, update: Update, now: datetime) -> list[NewDelivery]:
        """POST rows for every subscribed channel: a message for people, an event for
        machines."""
        people, machines = self._audiences(await tx.list_subscriptions())
        event = events.update_event(events.EventType.UPDATE_PUBLISHED, update, self.campaign, now)
        return plan_posts(update, people, now) + plan_posts(update, machines, now, event=event)

    def _audiences(self, subs: list[Subscription]) -> tuple[list[Subscription], list[Subscription]]:
        return split_by_audience(subs, self.event_platforms)

    async def _holders(self, tx: Tx, update_id: int) -> list[Subscription]:
        ids = set(await tx.posted_subscriptions(update_id))
        return [s for s in await tx.list_subscriptions(active_only=False) if s.id in ids]

    def _check_languages(self, languages: Any) -> None:
        unknown = [lang for lang in languages if lang not in self.campaign.languages]
        if unknown:
            raise InvalidInput(
                f"Language {unknown[0]!r} is not one of this campaign's languages "
                f"({', '.join(self.campaign.languages)}). Add it to [campaign] languages "
                "in config/strike.toml first."
            )

    def _check_texts(self, texts: Mapping[str, UpdateText], *, require_default: bool) -> None:
        self._check_languages(texts.keys())
        default = self.campaign.default_language
        if require_default and default not in texts:
            raise InvalidInput(f"Write the update in {default!r} (the campaign's main language).")
        for lang, text in texts.items():
            headline = text.headline.strip()
            if not headline:
                raise InvalidInput(f"The headline ({lang}) is empty. Write a short headline.")
            if len(headline) > HEADLINE_MAX:
                raise InvalidInput(
                    f"The headline ({lang}) is {len(headline)} characters; keep it to "
                    f"{HEADLINE_MAX} and put the rest in the body."
                )
            if len(text.body) > BODY_MAX:
                raise InvalidInput(
                    f"The body ({lang}) is {len(text.body)} characters; the limit is {BODY_MAX}. "
                    "Link to a longer document instead."
                )
            if len(text.next_step) > NEXT_STEP_MAX:
                raise InvalidInput(
                    f"The next step ({lang}) is {len(text.next_step)} characters; keep it to "
                    f"{NEXT_STEP_MAX}."
                )

    @staticmethod
    def _check_reason(reason: str, what: str) -> str:
        reason = reason.strip()
        if not reason:
            raise InvalidInput(f"Give a reason for {what}; members will see it.")
        if len(reason) > REASON_MAX:
            raise InvalidInput(f"Keep the reason for {what} to {REASON_MAX} characters.")
        return reason


def _check_year(moment: datetime | None, what: str) -> None:
    """Refuse a mistyped year (0001, 9999) before it is stored: no time zone can show it."""
    if moment is not None and not YEARS[0] <= moment.year <= YEARS[1]:
        raise InvalidInput(
            f"The {what} {moment.date().isoformat()} is not a plausible date; "
            f"check the year (between {YEARS[0]} and {YEARS[1]}).",
            translations={
                "es": f"La fecha {moment.date().isoformat()} no es plausible; revisa el año."
            },
        )


def _sub_snapshot(sub: Subscription) -> dict[str, Any]:
    return {
        "address": sub.address,
        "language": sub.language,
        "urgencies": sorted(str(u) for u in sub.urgencies),
        "briefing_time": sub.briefing_time,
        "timezone": sub.timezone,
        "briefing_days": sorted(sub.briefing_days),
        "quiet_hours": [sub.quiet_hours.start, sub.quiet_hours.end] if sub.quiet_hours else None,
    }
