"""Sites, their groups, what subscriptions follow, and who an audience reaches. A mixin of
`Tx`.

`audience_clause` is the one rule of who receives an update addressed to an audience, used
by the preview's count (`audience_counts`) and by the fan-out (`recipients`) alike, so the
preview's reach is what is delivered:

- an update for everyone reaches every subscription;
- an update for some sites or groups reaches the subscriptions that follow everything, a
  site it names or one in a group it names, or the group of a site it names.

Both are one statement whatever the number of subscriptions: the follows are looked up by
`ix_subscription_follows_code`, a subscription's own follows by the table's primary key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Text,
    cast,
    delete,
    exists,
    func,
    insert,
    or_,
    select,
    true,
    union,
    union_all,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.models import Audience, Site, SiteGroup, Subscription
from bot.store import schema as t
from bot.store.codecs import subscription_from_row

SITE = "site"
GROUP = "group"


def audience_clause(audience: Audience) -> ColumnElement[bool]:
    """Which rows of `subscriptions` an update addressed to `audience` reaches."""
    if audience.everyone:
        return true()
    s, f, site = t.subscriptions.c, t.subscription_follows.c, t.sites.c
    follows_something = exists().where(f.subscription_id == s.id)
    # Each part on its own index (a UNION, not an OR the planners would scan for).
    sites_named = union(
        select(site.code).where(site.code.in_(audience.sites)),
        select(site.code).where(site.group_code.in_(audience.groups)),
    )
    groups_of_sites = select(site.group_code).where(site.code.in_(audience.sites))
    followers = union_all(
        select(f.subscription_id).where(f.kind == SITE, f.code.in_(sites_named)),
        select(f.subscription_id).where(f.kind == GROUP, f.code.in_(audience.groups)),
        select(f.subscription_id).where(f.kind == GROUP, f.code.in_(groups_of_sites)),
    )
    return or_(~follows_something, s.id.in_(followers))


def for_place(codes: Sequence[str]) -> ColumnElement[bool]:
    """The updates a site's or a group's readers see: those for everyone and those naming
    one of `codes` (`place_codes`: the site and its group, or the group and its sites).
    Codes are unique across sites and groups, so a quoted code in the stored audience is
    that code."""
    audience = t.updates.c.audience
    stored = cast(audience, Text)
    named = [stored.like(f'%"{_escaped(code)}"%', escape="\\") for code in codes]
    return or_(audience.is_(None), stored == "null", *named)


def _escaped(code: str) -> str:
    return code.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def receives(urgency: str) -> list[ColumnElement[bool]]:
    """A working subscription that takes updates of `urgency` (`planning.wants`)."""
    s = t.subscriptions.c
    return [
        s.active.is_(True),
        s.broken_reason.is_(None),
        s.urgencies.contains(urgency),  # "important,routine,urgent": no name in another
    ]


class SiteStore:
    conn: AsyncConnection

    # -- sites and groups --------------------------------------------------------

    async def save_group(self, group: SiteGroup, now: datetime) -> str:
        """Add or change a group; "added", "changed" or "same"."""
        g = t.site_groups.c
        values = {"names": dict(group.names), "example": group.example}
        before = (
            await self.conn.execute(select(t.site_groups).where(g.code == group.code))
        ).first()
        if before is None:
            await self.conn.execute(
                insert(t.site_groups).values(code=group.code, updated_at=now, **values)
            )
            return "added"
        if (dict(before.names), bool(before.example)) == (values["names"], values["example"]):
            return "same"
        await self.conn.execute(
            update(t.site_groups).where(g.code == group.code).values(updated_at=now, **values)
        )
        return "changed"

    async def save_site(self, site: Site, now: datetime) -> str:
        """Add or change a site (its group must exist); "added", "changed" or "same"."""
        c = t.sites.c
        values: dict[str, Any] = {
            "group_code": site.group,
            "names": dict(site.names),
            "address": site.address,
            "example": site.example,
        }
        before = (await self.conn.execute(select(t.sites).where(c.code == site.code))).first()
        if before is None:
            await self.conn.execute(
                insert(t.sites).values(code=site.code, updated_at=now, **values)
            )
            return "added"
        was = {
            "group_code": before.group_code,
            "names": dict(before.names),
            "address": before.address,
            "example": bool(before.example),
        }
        if was == values:
            return "same"
        await self.conn.execute(
            update(t.sites).where(c.code == site.code).values(updated_at=now, **values)
        )
        return "changed"

    async def list_groups(self) -> list[SiteGroup]:
        rows = await self.conn.execute(select(t.site_groups).order_by(t.site_groups.c.code))
        return [SiteGroup(r.code, dict(r.names), bool(r.example)) for r in rows]

    async def list_sites(self, *, group: str | None = None) -> list[Site]:
        query = select(t.sites).order_by(t.sites.c.group_code, t.sites.c.code)
        if group is not None:
            query = query.where(t.sites.c.group_code == group)
        return [_site(r) for r in await self.conn.execute(query)]

    async def get_site(self, code: str) -> Site | None:
        row = (await self.conn.execute(select(t.sites).where(t.sites.c.code == code))).first()
        return None if row is None else _site(row)

    async def get_group(self, code: str) -> SiteGroup | None:
        g = t.site_groups
        row = (await self.conn.execute(select(g).where(g.c.code == code))).first()
        return None if row is None else SiteGroup(row.code, dict(row.names), bool(row.example))

    async def place_codes(self, code: str) -> list[str] | None:
        """The codes whose updates a place's readers see: a site and its group, or a group
        and its sites; None when `code` is neither."""
        site = await self.get_site(code)
        if site is not None:
            return [site.code, site.group]
        if await self.get_group(code) is None:
            return None
        sites = await self.conn.scalars(select(t.sites.c.code).where(t.sites.c.group_code == code))
        return [code, *sites]

    async def remove_place(self, code: str) -> None:
        """Delete the site, or else the group, with this code (callers check it is unused)."""
        await self.conn.execute(delete(t.sites).where(t.sites.c.code == code))
        await self.conn.execute(delete(t.site_groups).where(t.site_groups.c.code == code))

    async def following(self, kind: str, code: str) -> int:
        """How many subscriptions (active or not) follow this site or group."""
        f = t.subscription_follows.c
        query = select(func.count()).where(f.kind == kind, f.code == code)
        return int(await self.conn.scalar(query) or 0)

    async def place_count(self) -> int:
        """How many sites and groups the campaign has (0: no site pages)."""
        sites = await self.conn.scalar(select(func.count()).select_from(t.sites))
        groups = await self.conn.scalar(select(func.count()).select_from(t.site_groups))
        return int(sites or 0) + int(groups or 0)

    async def place_codes_all(self) -> list[str]:
        """Every group's and site's code (each has a page)."""
        groups = await self.conn.scalars(
            select(t.site_groups.c.code).order_by(t.site_groups.c.code)
        )
        sites = await self.conn.scalars(select(t.sites.c.code).order_by(t.sites.c.code))
        return [*groups, *sites]

    async def places_showing(self, update_ids: Sequence[int]) -> tuple[set[str], bool]:
        """The codes of the sites and groups whose pages show any of these updates (the
        inverse of `place_codes`: a site addressed and its group, a group addressed and its
        sites), and whether one is for everyone (then every place's page shows it)."""
        if not update_ids:
            return set(), False
        u = t.updates.c
        sites: set[str] = set()
        groups: set[str] = set()
        for start in range(0, len(update_ids), 900):
            chunk = list(update_ids[start : start + 900])
            for (stored,) in await self.conn.execute(select(u.audience).where(u.id.in_(chunk))):
                audience = Audience.from_json(stored)
                if audience.everyone:
                    return set(), True
                sites.update(audience.sites)
                groups.update(audience.groups)
        found = sites | groups
        c = t.sites.c
        if sites:
            found.update(await self.conn.scalars(select(c.group_code).where(c.code.in_(sites))))
        if groups:
            found.update(await self.conn.scalars(select(c.code).where(c.group_code.in_(groups))))
        return found, False

    async def unknown_codes(self, audience: Audience) -> tuple[list[str], list[str]]:
        """The site codes and group codes of `audience` that name no site or group."""
        sites = set(audience.sites)
        groups = set(audience.groups)
        if sites:
            found = await self.conn.scalars(select(t.sites.c.code).where(t.sites.c.code.in_(sites)))
            sites -= set(found)
        if groups:
            g = t.site_groups.c
            groups -= set(await self.conn.scalars(select(g.code).where(g.code.in_(groups))))
        return sorted(sites), sorted(groups)

    # -- following ----------------------------------------------------------------

    async def set_follows(self, subscription_id: int, follows: Audience) -> None:
        """What a subscription follows, one row a code (none: everything)."""
        f = t.subscription_follows
        await self.conn.execute(delete(f).where(f.c.subscription_id == subscription_id))
        rows = [
            {"subscription_id": subscription_id, "kind": SITE, "code": c} for c in follows.sites
        ]
        rows += [
            {"subscription_id": subscription_id, "kind": GROUP, "code": c} for c in follows.groups
        ]
        if rows:
            await self.conn.execute(insert(f), rows)

    async def recipients(self, audience: Audience, urgency: str) -> list[Subscription]:
        """The working subscriptions an update of `urgency` addressed to `audience` goes to,
        in one statement (the fan-out's; `audience_counts` counts the same rows)."""
        query = (
            select(t.subscriptions)
            .where(*receives(urgency), audience_clause(audience))
            .order_by(t.subscriptions.c.id)
        )
        return [subscription_from_row(r) for r in await self.conn.execute(query)]

    async def reached(self, audiences: Sequence[Audience], ids: Iterable[int]) -> list[set[int]]:
        """For each of `audiences`, which of the subscriptions `ids` an update addressed to
        it reaches (`audience_clause`; activity and urgency aside): a briefing's rule is the
        delivery's. One statement per audience and 900 ids."""
        wanted = sorted(set(ids))
        found: list[set[int]] = []
        for audience in audiences:
            reached: set[int] = set()
            for start in range(0, len(wanted), 900):  # SQLite's bound-parameter limit
                chunk = wanted[start : start + 900]
                query = select(t.subscriptions.c.id).where(
                    t.subscriptions.c.id.in_(chunk), audience_clause(audience)
                )
                reached.update(int(i) for i in await self.conn.scalars(query))
            found.append(reached)
        return found

    async def subscriptions_by_id(self, ids: Iterable[int]) -> list[Subscription]:
        """These subscriptions (active or not), by id, in id order."""
        wanted: Sequence[int] = sorted(set(ids))
        found: list[Subscription] = []
        for start in range(0, len(wanted), 900):  # SQLite's bound-parameter limit
            chunk = wanted[start : start + 900]
            query = select(t.subscriptions).where(t.subscriptions.c.id.in_(chunk))
            found += [subscription_from_row(r) for r in await self.conn.execute(query)]
        return sorted(found, key=lambda sub: sub.id)

    async def follower_counts(self) -> dict[tuple[str, str], int]:
        """(kind, code) -> how many active subscriptions follow it."""
        f, s = t.subscription_follows.c, t.subscriptions.c
        query = (
            select(f.kind, f.code, func.count())
            .join_from(t.subscription_follows, t.subscriptions, f.subscription_id == s.id)
            .where(s.active.is_(True))
            .group_by(f.kind, f.code)
        )
        return {(kind, code): int(n) for kind, code, n in await self.conn.execute(query)}


def _site(row: Any) -> Site:
    return Site(row.code, dict(row.names), row.group_code, row.address or "", bool(row.example))
