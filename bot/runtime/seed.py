"""Load the campaign file into the store, idempotently.

Seeded updates are keyed by their `key`, demands by theirs, subscriptions by address: what
exists already is left alone, so restarting never duplicates anything and edits made
through the bot are never overwritten by the file. Seeded updates are history, not news:
they queue no deliveries.

The database is the record, so an entry edited in the file after it was seeded changes
nothing. To say so, the store keeps a fingerprint of each entry as the database last agreed
with it (meta `seeded_file`); `file_differences` names each entry whose fingerprint has
moved while the database still says something else, field by field, with the command that
makes the database say what the file says (docs/configuration.md).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from datetime import datetime, time

from sqlalchemy import select

from bot.clock import Clock
from bot.config import DemandEntry, StrikeConfig, SubscriptionEntry, UpdateEntry
from bot.errors import ConfigError
from bot.models import (
    ALL_URGENCIES,
    Actor,
    Audience,
    Demand,
    DemandEvent,
    DemandText,
    QuietHours,
    Site,
    SiteGroup,
    Subscription,
    Update,
)
from bot.store import Store
from bot.store import schema as t
from bot.store.repo import Tx

SEED_ACTOR_PLATFORM = "cli"
CAMPAIGN_META_KEY = "campaign_slug"
FINGERPRINTS_META_KEY = "seeded_file"
# Text longer than this is not written into a suggested command: it names the file instead.
COMMAND_TEXT_MAX = 200


def _seed_actor(author: str) -> Actor:
    return Actor(platform=SEED_ACTOR_PLATFORM, user_id="cli", display_name=f"config: {author}")


async def _seeded(tx: Tx, config: StrikeConfig, slug: str) -> bool:
    """True when the file's campaign, demands and subscriptions are all in the store
    already: a command then writes nothing (and waits for no writer)."""
    if await tx.get_meta(CAMPAIGN_META_KEY) != slug:
        return False
    demands = set(await tx.demand_keys(include_retired=True))
    if any(entry.key not in demands for entry in config.demands):
        return False
    for sub in config.subscriptions:
        found = await tx.find_subscription(
            sub.platform, sub.workspace, sub.channel, active_only=False
        )
        if not found:
            return False
    if config.sites or config.site_groups:
        unknown = await tx.unknown_codes(
            Audience.of([s.code for s in config.sites], [g.code for g in config.site_groups])
        )
        if any(unknown):
            return False
    return True


async def _unseeded_updates(tx: Tx, config: StrikeConfig) -> list[UpdateEntry]:
    """The file's updates not in the store yet (by their keys, in one query)."""
    if not config.updates:
        return []
    keys = [u.key for u in config.updates]
    query = select(t.updates.c.seed_key).where(t.updates.c.seed_key.in_(keys))
    stored = set((await tx.conn.scalars(query)).all())
    return [u for u in config.updates if u.key not in stored]


async def apply_seed(store: Store, config: StrikeConfig, clock: Clock) -> None:
    """What the file adds that the store lacks; on a seeded store, one read finds nothing."""
    async with store.read() as tx:
        seeded = await _seeded(tx, config, config.campaign.slug)
        missing = await _unseeded_updates(tx, config)
    if not seeded:
        await _seed_tables(store, config, clock)
    if missing:
        await _seed_updates(store, config, clock, missing)
    await record_agreement(store, config, clock)


async def _seed_tables(store: Store, config: StrikeConfig, clock: Clock) -> None:
    """The campaign's slug, demands and subscriptions, each added if missing."""
    campaign = config.to_campaign()
    now = clock()
    async with store.write() as tx:
        slug = await tx.get_meta(CAMPAIGN_META_KEY)
        if slug is None:
            await tx.set_meta(CAMPAIGN_META_KEY, campaign.slug)
        elif slug != campaign.slug:
            raise ConfigError(
                f"This database belongs to campaign {slug!r}, but the config is for "
                f"{campaign.slug!r}. Point STRIKEBOT_DATABASE_URL at that campaign's database, "
                "or fix [campaign] slug."
            )
        existing = set(await tx.demand_keys(include_retired=True))
        for position, entry in enumerate(config.demands):
            if entry.key in existing:
                continue
            texts = {
                lang: DemandText(
                    title=title,
                    summary=entry.summary.get(lang, ""),
                    union_position=entry.union_position.get(lang, ""),
                    employer_offer=entry.employer_offer.get(lang, ""),
                    facts=tuple(entry.facts.get(lang, ())),
                )
                for lang, title in entry.title.items()
            }
            as_of = entry.as_of or now
            history: tuple[DemandEvent, ...] = ()
            if entry.employer_offer or entry.source:
                history = (
                    DemandEvent(
                        at=as_of,
                        status=entry.status,
                        offer=dict(entry.employer_offer),
                        source=entry.source or "config/strike.toml",
                        recorded_by="config",
                    ),
                )
            await tx.insert_demand(
                Demand(
                    key=entry.key,
                    position=position,
                    status=entry.status,
                    texts=texts,
                    updated_at=as_of,
                    history=history,
                )
            )
            await tx.audit(now, "config", "demand.seed", f"demand:{entry.key}", None,
                           {"status": str(entry.status)})  # fmt: skip
        for sub in config.subscriptions:
            platform = sub.platform
            if await tx.find_subscription(platform, sub.workspace, sub.channel, active_only=False):
                continue
            quiet = None
            if sub.quiet_start and sub.quiet_end:
                quiet = QuietHours(
                    time.fromisoformat(sub.quiet_start), time.fromisoformat(sub.quiet_end)
                )
            sub_id = await tx.save_subscription(
                Subscription(
                    id=0,
                    platform=platform,
                    workspace=sub.workspace,
                    channel=sub.channel,
                    label=sub.label,
                    language=sub.language or campaign.default_language,
                    urgencies=frozenset(sub.urgencies) or ALL_URGENCIES,
                    briefing_time=time.fromisoformat(sub.briefing_time)
                    if sub.briefing_time
                    else None,
                    timezone=sub.timezone or campaign.timezone,
                    briefing_days=frozenset(sub.briefing_days),
                    quiet_hours=quiet,
                    follows=Audience.of(sub.sites, sub.groups),
                ),
                now,
            )
            await tx.audit(now, "config", "subscription.seed", f"subscription:{sub_id}")
        await _seed_sites(tx, config, now)


async def _seed_sites(tx: Tx, config: StrikeConfig, now: datetime) -> None:
    """The file's groups and sites that the store lacks (those stored are left alone)."""
    unknown_sites, unknown_groups = await tx.unknown_codes(
        Audience.of([s.code for s in config.sites], [g.code for g in config.site_groups])
    )
    for group in config.site_groups:
        if group.code in unknown_groups:
            await tx.save_group(SiteGroup(group.code, dict(group.name), group.example), now)
    for site in config.sites:
        if site.code in unknown_sites:
            await tx.save_site(
                Site(site.code, dict(site.name), site.group, site.address, site.example), now
            )
    if unknown_sites or unknown_groups:
        tx.touch_public()
        added = {"groups": len(unknown_groups), "sites": len(unknown_sites)}
        await tx.audit(now, "config", "sites.seed", "sites", None, added)


async def _seed_updates(
    store: Store, config: StrikeConfig, clock: Clock, missing: list[UpdateEntry]
) -> None:
    """Each missing update posted through the same use case as any post (validation,
    revision, audit): those already in the store are left alone, so a command on a seeded
    database posts nothing (and loads no use case)."""
    campaign = config.to_campaign()
    from bot.editorial.admin import Admin, Draft  # here: most commands never need it

    admin = Admin(store, campaign, config.to_admins(), clock)
    for seeded in missing:
        await admin.post(
            _seed_actor(seeded.author),
            Draft(seeded.status, seeded.texts(), seeded.urgency, seeded.next_step_at),
            publish_at=seeded.published_at,
            seed_key=seeded.key,
            created_at=seeded.published_at,
        )


# -- the file against the database -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Difference:
    """One campaign-file entry the database does not follow: which (`target`, as people
    name it), the fields that differ, and the commands that make the database say what the
    file says (or "change the file back" when no command can)."""

    target: str
    fields: tuple[str, ...]
    commands: tuple[str, ...]

    def sentence(self) -> str:
        fix = "; ".join(self.commands) if self.commands else "change the file back to match"
        return (
            f"the campaign file's {self.target} differs from the database in "
            f"{', '.join(self.fields)}; the database is what people see. To apply the file: "
            f"{fix}"
        )


def _fingerprint(entry: DemandEntry | UpdateEntry | SubscriptionEntry) -> str:
    data = json.dumps(entry.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def _entries(config: StrikeConfig) -> dict[str, DemandEntry | UpdateEntry | SubscriptionEntry]:
    found: dict[str, DemandEntry | UpdateEntry | SubscriptionEntry] = {}
    for demand in config.demands:
        found[f"demand:{demand.key}"] = demand
    for update in config.updates:
        found[f"update:{update.key}"] = update
    for sub in config.subscriptions:
        found[f"subscription:{sub.platform}:{sub.workspace}/{sub.channel}"] = sub
    return found


async def _fingerprints(tx: Tx) -> dict[str, str]:
    raw = await tx.get_meta(FINGERPRINTS_META_KEY)
    try:
        found = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


async def record_agreement(store: Store, config: StrikeConfig, clock: Clock) -> None:
    """Remember each file entry the database agrees with now (run after seeding): a later
    edit of that entry in the file is then noticed, and one the database follows is not."""
    campaign = config.to_campaign()
    now = clock()
    async with store.read() as tx:
        known = await _fingerprints(tx)
        wanted = dict(known)
        for name, entry in _entries(config).items():
            fingerprint = _fingerprint(entry)
            if known.get(name) == fingerprint:
                continue
            if not await _differs(tx, entry, campaign.default_language, now):
                wanted[name] = fingerprint
    if wanted != known:
        async with store.write() as tx:
            await tx.set_meta(FINGERPRINTS_META_KEY, json.dumps(wanted, sort_keys=True))


async def file_differences(store: Store, config: StrikeConfig, clock: Clock) -> list[Difference]:
    """The campaign file's entries edited since the database last agreed with them, and
    still different there: what differs, and the command that changes the database."""
    default = config.campaign.languages[0]
    now = clock()
    found: list[Difference] = []
    async with store.read() as tx:
        known = await _fingerprints(tx)
        for name, entry in _entries(config).items():
            if known.get(name) == _fingerprint(entry):
                continue
            difference = await _differs(tx, entry, default, now)
            if difference is not None:
                found.append(difference)
    return found


async def _differs(
    tx: Tx, entry: DemandEntry | UpdateEntry | SubscriptionEntry, default: str, now: datetime
) -> Difference | None:
    if isinstance(entry, DemandEntry):
        demand = await tx.get_demand(entry.key)
        return None if demand is None else _demand_difference(entry, demand)
    if isinstance(entry, UpdateEntry):
        update = await tx.get_update_by_seed(entry.key, now)
        return None if update is None else _update_difference(entry, update)
    active = await tx.find_subscription(entry.platform, entry.workspace, entry.channel)
    if active is None:
        stored = await tx.find_subscription(
            entry.platform, entry.workspace, entry.channel, active_only=False
        )
        if stored is None:
            return None
        address = stored.address
        return Difference(
            f"subscription {address}", ("subscribed (removed in the database)",),
            (f"strikebot subscriptions add {shlex.quote(address)}",),
        )  # fmt: skip
    return _subscription_difference(entry, active, default)


def _quote(text: str, where: str) -> str:
    if len(text) > COMMAND_TEXT_MAX or "\n" in text:
        return f"'<the file's {where}>'"
    return shlex.quote(text)


def _demand_difference(entry: DemandEntry, demand: Demand) -> Difference | None:
    fields: list[str] = []
    commands: list[str] = []
    key = shlex.quote(entry.key)
    if demand.retired_at is not None:
        return Difference(
            f"demand {entry.key}", ("retired (in the database)",),
            (f"strikebot demand add {key} --title ... (a retired demand stays retired; add it "
             "again under a new key)",),
        )  # fmt: skip
    status_differs = demand.status is not entry.status
    if status_differs:
        fields.append("status")
    flags = {"summary": "--summary", "union_position": "--union",
             "employer_offer": "--employer-offer"}  # fmt: skip
    for lang, title in entry.title.items():
        have = demand.texts.get(lang)
        want = DemandText(
            title=title,
            summary=entry.summary.get(lang, ""),
            union_position=entry.union_position.get(lang, ""),
            employer_offer=entry.employer_offer.get(lang, ""),
            facts=tuple(entry.facts.get(lang, ())),
        )
        parts: list[str] = []
        if have is None or have.title != want.title:
            fields.append(f"title ({lang})")
            parts.append(f"--title {_quote(want.title, f'title in {lang}')}")
        for name, flag in flags.items():
            if have is None or getattr(have, name) != getattr(want, name):
                fields.append(f"{name} ({lang})")
                value = getattr(want, name)
                parts.append(f"{flag} {_quote(value, f'{name} in {lang}')}")
        if have is None or have.facts != want.facts:
            fields.append(f"facts ({lang})")
            parts += [f"--fact {_quote(f, f'facts in {lang}')}" for f in want.facts] or [
                "--fact ''"
            ]
        if parts:
            commands.append(
                f"strikebot demand edit {key} --language {lang} {' '.join(parts)}"
                + (f" --status {entry.status}" if status_differs and not commands else "")
                + " --reason 'as in the campaign file'"
            )
    if status_differs and not commands:
        commands.append(
            f"strikebot demand edit {key} --status {entry.status} "
            "--reason 'as in the campaign file'"
        )
    if not fields:
        return None
    return Difference(f"demand {entry.key}", tuple(fields), tuple(commands))


def _update_difference(entry: UpdateEntry, update: Update) -> Difference | None:
    target = f"update {entry.key} (#{update.id})"
    if update.retracted_at is not None:
        return Difference(target, ("retracted (in the database)",), ())
    fields: list[str] = []
    flags: list[str] = []
    if update.status is not entry.status:
        fields.append("status")
        flags.append(f"--status {entry.status}")
    if update.urgency is not entry.urgency:
        fields.append("urgency")
        flags.append(f"--urgency {entry.urgency}")
    if update.next_step_at != entry.next_step_at:
        fields.append("next_step_at")
        flags.append(
            f"--next-step-at {entry.next_step_at.isoformat()}"
            if entry.next_step_at
            else "--clear-next-step-at"
        )
    for lang, text in entry.texts().items():
        have = update.texts.get(lang)
        for name in ("headline", "body", "next_step"):
            want = getattr(text, name)
            if have is None or getattr(have, name) != want:
                fields.append(f"{name} ({lang})")
                flags.append(f"--text {lang} {name} {_quote(want, f'{name} in {lang}')}")
    if not fields:
        return None
    command = f"strikebot edit {update.id} {' '.join(flags)} --reason 'as in the campaign file'"
    return Difference(target, tuple(fields), (command,))


def _subscription_difference(
    entry: SubscriptionEntry, sub: Subscription, default: str
) -> Difference | None:
    fields: list[str] = []
    flags: list[str] = []
    language = entry.language or default
    if sub.language != language:
        fields.append("language")
        flags.append(f"--language {language}")
    urgencies = frozenset(entry.urgencies) or ALL_URGENCIES
    if sub.urgencies != urgencies:
        fields.append("urgencies")
        flags.append(f"--urgency {','.join(sorted(urgencies))}")
    briefing = time.fromisoformat(entry.briefing_time) if entry.briefing_time else None
    if sub.briefing_time != briefing:
        fields.append("briefing_time")
        flags.append(f"--briefing-time {entry.briefing_time or 'none'}")
    if entry.timezone is not None and sub.timezone != entry.timezone:
        fields.append("timezone")
        flags.append(f"--timezone {entry.timezone}")
    if sub.briefing_days != frozenset(entry.briefing_days):
        fields.append("briefing_days")
        days = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
        flags.append(f"--days {','.join(days[d] for d in sorted(set(entry.briefing_days)))}")
    quiet = None
    if entry.quiet_start and entry.quiet_end:
        quiet = QuietHours(
            time.fromisoformat(entry.quiet_start), time.fromisoformat(entry.quiet_end)
        )
    if sub.quiet_hours != quiet:
        fields.append("quiet hours")
        flags.append(f"--quiet {entry.quiet_start}-{entry.quiet_end}" if quiet else "--quiet none")
    if entry.label and sub.label != entry.label:
        fields.append("label")
        flags.append(f"--label {shlex.quote(entry.label)}")
    if not fields:
        return None
    address = shlex.quote(sub.address)
    return Difference(
        f"subscription {sub.address}", tuple(fields),
        (f"strikebot subscriptions add {address} {' '.join(flags)}",),
    )  # fmt: skip
