"""Load the campaign file into the store, idempotently.

Seeded updates are keyed by their `key`, demands by theirs, subscriptions by address: what
exists already is left alone, so restarting never duplicates anything and edits made
through the bot are never overwritten by the file. Seeded updates are history, not news:
they queue no deliveries.
"""

from __future__ import annotations

from datetime import time

from bot.clock import Clock
from bot.config import StrikeConfig
from bot.errors import ConfigError
from bot.models import (
    ALL_URGENCIES,
    Actor,
    Demand,
    DemandEvent,
    DemandText,
    QuietHours,
    Subscription,
)
from bot.store import Store

SEED_ACTOR_PLATFORM = "cli"
CAMPAIGN_META_KEY = "campaign_slug"


def _seed_actor(author: str) -> Actor:
    return Actor(platform=SEED_ACTOR_PLATFORM, user_id="cli", display_name=f"config: {author}")


async def _seeded(store: Store, config: StrikeConfig, slug: str) -> bool:
    """True when the file's campaign, demands and subscriptions are all in the store
    already: a command then writes nothing (and waits for no writer)."""
    async with store.read() as tx:
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
    return True


async def apply_seed(store: Store, config: StrikeConfig, clock: Clock) -> None:
    campaign = config.to_campaign()
    if not await _seeded(store, config, campaign.slug):
        await _seed_tables(store, config, clock)
    await _seed_updates(store, config, clock)


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
                ),
                now,
            )
            await tx.audit(now, "config", "subscription.seed", f"subscription:{sub_id}")


async def _seed_updates(store: Store, config: StrikeConfig, clock: Clock) -> None:
    campaign = config.to_campaign()
    now = clock()
    # Updates go through the same use case as any post (validation, revision, audit); those
    # already in the store are left alone, so a command on a seeded database writes nothing
    # here (and loads no use case).
    async with store.read() as tx:
        missing = [u for u in config.updates if await tx.get_update_by_seed(u.key, now) is None]
    if not missing:
        return
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
