"""The campaign's sites and groups, as use cases: import a file, list them, check the codes
an update or a subscription names."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from bot.audiences.codes import check_code
from bot.audiences.files import SiteFile, check_address, check_name
from bot.clock import Clock, utcnow
from bot.errors import Conflict, InvalidInput, NotFound
from bot.i18n.sentences import localized_error
from bot.models import Actor, Audience, Site, SiteGroup, Update
from bot.plugins.admins import AdminList
from bot.store import Store, Tx
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


_INDEX_STEP = 100  # updates read at a time for the sites index


def _newer(update: Update, than: Update) -> bool:
    """Published after `than` (ties by id), the order of the public lists."""
    mine = (update.published_at, update.id)
    theirs = (than.published_at, than.id)
    return mine > theirs


class Sites:
    """Sites and groups, bound to a store, who counts as admin and a clock."""

    def __init__(
        self,
        store: Store,
        admins: AdminList,
        clock: Clock = utcnow,
        *,
        languages: Sequence[str] = (),
    ) -> None:
        self.store = store
        self.admins = admins
        self.clock = clock
        self.languages = tuple(languages)  # the campaign's (names are in them); first: main

    def _names(self, names: Mapping[str, str], *, adding: bool) -> dict[str, str]:
        """Names by language, each checked as an import checks it: the campaign's languages
        only, and the main one's when a place is added."""
        checked = {}
        for language, name in names.items():
            if self.languages and language not in self.languages:
                raise InvalidInput(
                    f"names: {language[:16]!r} is not a campaign language; the campaign's "
                    f"are {', '.join(self.languages)}."
                )
            checked[language] = check_name(name.strip(), f"names.{language}")
        main = self.languages[0] if self.languages else None
        if adding and main is not None and main not in checked:
            raise InvalidInput(f"names: give the name in {main!r}, the campaign's first language.")
        return checked

    async def import_file(self, actor: Actor, found: SiteFile) -> Imported:
        """Add or change every group and site of a file, in one transaction: importing it
        again changes nothing; a row left out of it is kept."""
        self.admins.require(actor, "change sites")
        now = self.clock()
        counts: dict[str, Counter[str]] = {"group": Counter(), "site": Counter()}
        async with self.store.write() as tx:
            await _check(tx, found, "Nothing was imported: ")
            for group in found.groups:
                counts["group"][await tx.save_group(group, now)] += 1
            for site in found.sites:
                counts["site"][await tx.save_site(site, now)] += 1
            summary = {kind: dict(c) for kind, c in counts.items()}
            if any(c["added"] or c["changed"] for c in counts.values()):
                tx.touch_public()  # the site pages and the API's list show them
            await tx.audit(now, actor.id, "sites.import", "sites", None, summary)
        return Imported(summary)

    async def add(self, actor: Actor, place: Site | SiteGroup) -> Site | SiteGroup:
        """Add one site or group, with the checks of an import; `Conflict` when its code is
        taken already (by a site or a group)."""
        self.admins.require(actor, "change sites")
        place = replace(
            place, code=check_code(place.code), names=self._names(place.names, adding=True)
        )
        if isinstance(place, Site):
            place = replace(
                place, group=check_code(place.group), address=check_address(place.address.strip())
            )
        now = self.clock()
        async with self.store.write() as tx:
            taken = await tx.get_site(place.code) or await tx.get_group(place.code)
            if taken is not None:
                kind = "site" if isinstance(taken, Site) else "group"
                raise Conflict(
                    f"{place.code!r} is already a {kind}'s code; choose another, or change "
                    "that one instead."
                )
            await _check(tx, _file_of(place), "Nothing was added: ")
            await _save(tx, place, now)
            tx.touch_public()
            await tx.audit(now, actor.id, "sites.add", f"{_kind(place)}:{place.code}", None,
                           _json(place))  # fmt: skip
        return place

    async def change(
        self,
        actor: Actor,
        code: str,
        *,
        names: Mapping[str, str] | None = None,
        group: str | None = None,
        address: str | None = None,
    ) -> Site | SiteGroup:
        """Rename a site or a group (`names`: the languages given, the others kept), move a
        site to another group, or change its address; with the checks of an import."""
        self.admins.require(actor, "change sites")
        code = check_code(code)
        now = self.clock()
        async with self.store.write() as tx:
            before: Site | SiteGroup | None = await tx.get_site(code) or await tx.get_group(code)
            if before is None:
                raise localized_error(NotFound, "audiences.unknown_site", code=code)
            renamed = {**before.names, **self._names(names or {}, adding=False)}
            after: Site | SiteGroup
            if isinstance(before, Site):
                after = replace(
                    before,
                    names=renamed,
                    group=before.group if group is None else check_code(group),
                    address=before.address if address is None else check_address(address.strip()),
                )
            else:
                if group is not None or address is not None:
                    raise InvalidInput(
                        f"{code!r} is a group: a group has no group or address of its own."
                    )
                after = replace(before, names=renamed)
            await _check(tx, _file_of(after), "Nothing was changed: ")
            if await _save(tx, after, now) != "same":
                tx.touch_public()
                await tx.audit(now, actor.id, "sites.change", f"{_kind(after)}:{code}",
                               _json(before), _json(after))  # fmt: skip
        return after

    async def remove(self, actor: Actor, code: str) -> Site | SiteGroup:
        """Remove a site or a group nobody follows (a group once it has no sites); updates
        addressed to it keep their audience."""
        self.admins.require(actor, "change sites")
        code = check_code(code)
        now = self.clock()
        async with self.store.write() as tx:
            place: Site | SiteGroup | None = await tx.get_site(code) or await tx.get_group(code)
            if place is None:
                raise localized_error(NotFound, "audiences.unknown_site", code=code)
            kind = _kind(place)
            if isinstance(place, SiteGroup):
                inside = await tx.list_sites(group=code)
                if inside:
                    raise Conflict(
                        f"Group {code!r} still has {len(inside)} site(s) "
                        f"({', '.join(s.code for s in inside[:5])}); move them to another "
                        "group or remove them first."
                    )
            followers = await tx.following(kind, code)
            if followers:
                raise Conflict(
                    f"{followers} channel(s) or people follow {kind} {code!r}; removing it "
                    "would leave them following everything. Change what they follow first "
                    "(`strikebot subscriptions list` shows them)."
                )
            await tx.remove_place(code)
            tx.touch_public()
            await tx.audit(now, actor.id, "sites.remove", f"{kind}:{code}", _json(place), None)
        return place

    async def all(self) -> tuple[list[SiteGroup], list[Site]]:
        """Every group and every site (by group, then code)."""
        async with self.store.read() as tx:
            return await tx.list_groups(), await tx.list_sites()

    async def index(self, now: datetime) -> SiteIndex:
        """Every group with its sites, each with the latest update its readers got at `now`
        (for everyone, for it, for its group or its sites), in one read: the latest for
        everyone, then each newer update for some sites, newest first, given to the places
        whose pages show it (`places_showing`) that have none yet."""
        async with self.store.read() as tx:
            groups, sites = await tx.list_groups(), await tx.list_sites()
            current = await tx.latest_update(now)
            everyone = await tx.latest_update(now, place=())
            latest: dict[str, Update] = {}
            after: int | None = None
            places = len(groups) + len(sites)
            while len(latest) < places:
                page = await tx.visible_updates(now, limit=_INDEX_STEP, after=after)
                newer = [u for u in page if everyone is None or _newer(u, everyone)]
                for update in newer:
                    if update.retracted or update.audience.everyone:
                        continue
                    codes, _ = await tx.places_showing([update.id])
                    for code in codes - latest.keys():
                        latest[code] = update
                if len(newer) < len(page) or len(page) < _INDEX_STEP:
                    break
                after = page[-1].id
        listed = tuple(
            (
                PlaceLatest(group, latest.get(group.code, everyone)),
                tuple(
                    PlaceLatest(site, latest.get(site.code, everyone))
                    for site in sites
                    if site.group == group.code
                ),
            )
            for group in groups
        )
        return SiteIndex(listed, current)

    async def followed(self) -> tuple[list[SiteGroup], list[Site], dict[tuple[str, str], int]]:
        """Every group and site, and (kind, code) -> how many active subscriptions follow it
        (what an admin sees before removing one)."""
        async with self.store.read() as tx:
            return await tx.list_groups(), await tx.list_sites(), await tx.follower_counts()

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


async def _check(tx: Tx, found: SiteFile, refused: str) -> None:
    """The rules an import and every single change keep: each site's group is in the file
    or stored, and no code names both a site and a group."""
    groups = {g.code for g in await tx.list_groups()} | {g.code for g in found.groups}
    stored_sites = {s.code for s in await tx.list_sites()}
    for group in found.groups:
        if group.code in stored_sites:
            raise InvalidInput(
                f"{refused}{group.code!r} is a site's code already; a group needs a code of "
                "its own."
            )
    for site in found.sites:
        if site.group not in groups:
            raise InvalidInput(
                f"{refused}site {site.code!r} is in group {site.group!r}, which is neither in "
                "the file nor stored. Add a `group` line for it."
            )
        if site.code in groups:
            raise InvalidInput(
                f"{refused}{site.code!r} is a group's code; a site needs a code of its own."
            )


def _file_of(place: Site | SiteGroup) -> SiteFile:
    if isinstance(place, Site):
        return SiteFile((), (place,))
    return SiteFile((place,), ())


async def _save(tx: Tx, place: Site | SiteGroup, now: datetime) -> str:
    if isinstance(place, Site):
        return await tx.save_site(place, now)
    return await tx.save_group(place, now)


def _kind(place: Site | SiteGroup) -> str:
    return "site" if isinstance(place, Site) else "group"


def _json(place: Site | SiteGroup) -> dict[str, object]:
    """What the audit log keeps of a place."""
    found: dict[str, object] = {"code": place.code, "names": dict(place.names)}
    if isinstance(place, Site):
        found |= {"group": place.group, "address": place.address}
    return found
