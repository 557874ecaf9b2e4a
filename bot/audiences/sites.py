"""The campaign's sites and groups, as use cases: import a file, list them, check the codes
an update or a subscription names."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from bot.audiences.files import SiteFile
from bot.clock import Clock, utcnow
from bot.errors import InvalidInput, NotFound
from bot.i18n.sentences import localized_error
from bot.models import Actor, Audience, Site, SiteGroup, Update
from bot.plugins.admins import AdminList
from bot.store import Store
from bot.store.public import RevisionNote


@dataclass(frozen=True, slots=True)
class SiteNews:
    """What a site's (or a group's) page shows: the place, a site's group or a group's
    sites, the campaign's latest update (where the strike stands), and the updates its
    readers got, newest first (for everyone, for it, for its group or its sites)."""

    place: Site | SiteGroup
    group: SiteGroup | None
    sites: tuple[Site, ...]
    current: Update | None
    updates: tuple[Update, ...]
    # Which revisions of each edited update were published as corrections (feeds say so).
    notes: Mapping[int, RevisionNote] = field(default_factory=dict)

    @property
    def latest(self) -> Update | None:
        return self.updates[0] if self.updates else None


@dataclass(frozen=True, slots=True)
class PlaceLatest:
    """A site (or a group) on the sites index, with the latest word its readers got."""

    place: Site | SiteGroup
    latest: Update | None


@dataclass(frozen=True, slots=True)
class SiteIndex:
    """The sites index page: every group (by code) with its sites, each with its latest
    word, and the campaign's latest update (where the strike stands)."""

    groups: tuple[tuple[PlaceLatest, tuple[PlaceLatest, ...]], ...]
    current: Update | None


@dataclass(frozen=True, slots=True)
class Imported:
    """What an import did: per kind ("group", "site"), how many rows were added, changed or
    already the same."""

    counts: dict[str, dict[str, int]]

    def count(self, kind: str, outcome: str) -> int:
        return self.counts.get(kind, {}).get(outcome, 0)


class Sites:
    """Sites and groups, bound to a store, who counts as admin and a clock."""

    def __init__(self, store: Store, admins: AdminList, clock: Clock = utcnow) -> None:
        self.store = store
        self.admins = admins
        self.clock = clock

    async def import_file(self, actor: Actor, found: SiteFile) -> Imported:
        """Add or change every group and site of a file, in one transaction: importing it
        again changes nothing; a row left out of it is kept."""
        self.admins.require(actor, "change sites")
        now = self.clock()
        counts: dict[str, Counter[str]] = {"group": Counter(), "site": Counter()}
        async with self.store.write() as tx:
            groups = {g.code for g in await tx.list_groups()} | {g.code for g in found.groups}
            stored_sites = {s.code for s in await tx.list_sites()}
            for group in found.groups:
                if group.code in stored_sites:
                    raise InvalidInput(
                        f"Nothing was imported: {group.code!r} is a site's code already; a "
                        "group needs a code of its own."
                    )
            for site in found.sites:
                if site.group not in groups:
                    raise InvalidInput(
                        f"Nothing was imported: site {site.code!r} is in group {site.group!r}, "
                        "which is neither in the file nor stored. Add a `group` line for it."
                    )
                if site.code in groups:
                    raise InvalidInput(
                        f"Nothing was imported: {site.code!r} is a group's code; a site needs "
                        "a code of its own."
                    )
            for group in found.groups:
                counts["group"][await tx.save_group(group, now)] += 1
            for site in found.sites:
                counts["site"][await tx.save_site(site, now)] += 1
            summary = {kind: dict(c) for kind, c in counts.items()}
            if any(c["added"] or c["changed"] for c in counts.values()):
                tx.touch_public()  # the site pages and the API's list show them
            await tx.audit(now, actor.id, "sites.import", "sites", None, summary)
        return Imported(summary)

    async def all(self) -> tuple[list[SiteGroup], list[Site]]:
        """Every group and every site (by group, then code)."""
        async with self.store.read() as tx:
            return await tx.list_groups(), await tx.list_sites()

    async def index(self, now: datetime) -> SiteIndex:
        """Every group with its sites, each with the latest update its readers got at `now`
        (for everyone, for it, for its group or its sites: `place_codes`); one read."""
        async with self.store.read() as tx:
            sites = await tx.list_sites()
            groups = []
            for group in await tx.list_groups():
                listed = []
                for site in (s for s in sites if s.group == group.code):
                    latest = await tx.latest_update(now, place=[site.code, site.group])
                    listed.append(PlaceLatest(site, latest))
                codes = await tx.place_codes(group.code) or [group.code]
                own = PlaceLatest(group, await tx.latest_update(now, place=codes))
                groups.append((own, tuple(listed)))
            current = await tx.latest_update(now)
        return SiteIndex(tuple(groups), current)

    async def find(self, code: str) -> Site | SiteGroup | None:
        """The site, else the group, with this code (lower-cased); None when neither."""
        code = code.strip().lower()
        async with self.store.read() as tx:
            return await tx.get_site(code) or await tx.get_group(code)

    async def news(
        self, code: str, now: datetime, *, limit: int = 10, history: bool = False
    ) -> SiteNews | None:
        """A site's or a group's news at `now` (`SiteNews`); None for an unknown code.
        `history`: each update with its revisions and correction notes (a feed's)."""
        code = code.strip().lower()
        async with self.store.read() as tx:
            place: Site | SiteGroup | None = await tx.get_site(code)
            group = sites = None
            if isinstance(place, Site):
                group = await tx.get_group(place.group)
            else:
                place = await tx.get_group(code)
                sites = await tx.list_sites(group=code) if place is not None else None
            codes = await tx.place_codes(code)
            if place is None or codes is None:
                return None
            updates = await tx.visible_updates(now, limit=limit, place=codes)
            current = await tx.latest_update(now)
            notes = {}
            if history:
                updates = await tx.with_revisions(updates)
                notes = await tx.revision_notes([u.id for u in updates if u.revision > 1])
        return SiteNews(place, group, tuple(sites or ()), current, tuple(updates), notes)

    async def events(self, code: str, now: datetime) -> list[Update] | None:
        """The updates naming a next step that a site's or a group's readers got, with
        their revisions (its calendar); None for an unknown code."""
        async with self.store.read() as tx:
            codes = await tx.place_codes(code.strip().lower())
            if codes is None:
                return None
            return await tx.with_revisions(await tx.scheduled_events(now, place=codes))

    async def check(self, audience: Audience) -> Audience:
        """`audience` if every code it names is a stored site or group; else `NotFound`
        naming the first unknown one, in every language."""
        if audience.everyone:
            return audience
        async with self.store.read() as tx:
            sites, groups = await tx.unknown_codes(audience)
        if sites:
            raise localized_error(NotFound, "audiences.unknown_site", code=sites[0])
        if groups:
            raise localized_error(NotFound, "audiences.unknown_group", code=groups[0])
        return audience
