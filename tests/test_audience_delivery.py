"""Targeting and following, through the desk, on SQLite and PostgreSQL: a site-targeted
update reaches exactly the followers of that site, of its group and of everything — no one
else — and its correction and retraction the same set; the preview's reach is what is
delivered; a group's follower gets the news of a site added to it later."""

from __future__ import annotations

import pytest

from bot.audiences import Sites, read_sites_csv
from bot.clock import FixedClock
from bot.editorial.admin import Admin
from bot.editorial.desk import Action, Desk, Problems, Proposal, TextPatch
from bot.errors import NotFound
from bot.models import EVERYONE, Audience, DeliveryAction, Status, Subscription, Urgency
from bot.plugins import installed_plugins
from bot.store import Store
from tests.support import ADMIN, ADMINS

SITES = """kind,code,group,name,name_es
group,east,,Local District East,Distrito Local Este
group,west,,Local District West,Distrito Local Oeste
site,roosevelt,east,Roosevelt High School,Preparatoria Roosevelt
site,garfield,east,Garfield High School,Preparatoria Garfield
site,venice,west,Venice High School,Preparatoria Venice
"""
# channel -> what it follows
FOLLOWING = {
    "everything": EVERYONE,
    "roosevelt": Audience.of(["roosevelt"]),
    "east": Audience.of([], ["east"]),
    "garfield": Audience.of(["garfield"]),
    "venice": Audience.of(["venice"]),
    "west": Audience.of([], ["west"]),
    "venice-and-roosevelt": Audience.of(["venice", "roosevelt"]),
}
EN = {"en": TextPatch("Roosevelt: picket moves to the north gate", "From 6:30 AM.")}


@pytest.fixture
def desk(store: Store, admin: Admin, clock: FixedClock) -> Desk:
    return Desk(store, admin, plugins=installed_plugins(), clock=clock)


@pytest.fixture
async def followers(store: Store, admin: Admin, clock: FixedClock) -> dict[str, int]:
    sites = Sites(store, ADMINS, clock)
    await sites.import_file(ADMIN, read_sites_csv(SITES, ("en", "es"), "en"))
    ids = {}
    for channel, follows in FOLLOWING.items():
        sub = await admin.subscribe(
            ADMIN, Subscription(0, "console", "local", channel, "en", follows=follows)
        )
        assert sub.follows == follows
        ids[channel] = sub.id
    # A person by e-mail following Roosevelt, one following the west, one everything.
    for key, follows in (
        ("p1", FOLLOWING["roosevelt"]),
        ("p2", FOLLOWING["west"]),
        ("p3", EVERYONE),
    ):
        sub = await admin.subscribe(
            ADMIN, Subscription(0, "email", "people", key, "en", follows=follows)
        )
        ids[key] = sub.id
    return ids


async def delivered(store: Store, update_id: int, action: DeliveryAction) -> set[int]:
    async with store.read() as tx:
        rows = await tx.list_deliveries(update_id=update_id, limit=None)
    return {d.subscription_id for d in rows if d.action is action}


def named(followers: dict[str, int], *channels: str) -> set[int]:
    return {followers[c] for c in channels}


async def post(desk: Desk, audience: Audience) -> tuple[int, int, int]:
    """(update id, chat channels previewed, people previewed)."""
    proposal = Proposal(
        Action.POST, texts=EN, status=Status.STRIKE_ON, urgency=Urgency.IMPORTANT, audience=audience
    )
    preview = await desk.preview(ADMIN, proposal, keep=False)
    assert preview.ready, preview.problems_in("en")
    done = await desk.commit(ADMIN, proposal)
    assert done.update.audience == audience
    return done.update.id, preview.reach.channels, preview.reach.people


async def test_a_site_targeted_update_its_correction_and_retraction_reach_the_same_followers(
    desk: Desk, store: Store, followers: dict[str, int], clock: FixedClock
) -> None:
    update_id, channels, people = await post(desk, Audience.of(["roosevelt"]))
    expected = named(
        followers, "everything", "roosevelt", "east", "venice-and-roosevelt", "p1", "p3"
    )
    got = await delivered(store, update_id, DeliveryAction.POST)
    assert got == expected
    assert (channels, people) == (4, 2)  # the preview counted exactly these
    clock.advance(minutes=5)
    await desk.commit(
        ADMIN,
        Proposal(
            Action.CORRECT,
            update_id=update_id,
            texts={"en": TextPatch("Roosevelt: picket at the north gate, 7 AM")},
            reason="the time was wrong",
        ),
    )
    assert await delivered(store, update_id, DeliveryAction.CORRECTION) == expected
    assert await delivered(store, update_id, DeliveryAction.EDIT) == expected
    clock.advance(minutes=5)
    await desk.commit(ADMIN, Proposal(Action.RETRACT, update_id=update_id, reason="wrong school"))
    assert await delivered(store, update_id, DeliveryAction.RETRACT) == expected


async def test_a_group_targeted_update_reaches_its_sites_followers_too(
    desk: Desk, store: Store, followers: dict[str, int]
) -> None:
    update_id, channels, people = await post(desk, Audience.of([], ["west"]))
    expected = named(followers, "everything", "west", "venice", "venice-and-roosevelt", "p2", "p3")
    assert await delivered(store, update_id, DeliveryAction.POST) == expected
    assert channels + people == len(expected)


async def test_an_update_for_everyone_reaches_every_follower(
    desk: Desk, store: Store, followers: dict[str, int]
) -> None:
    update_id, channels, people = await post(desk, EVERYONE)
    assert await delivered(store, update_id, DeliveryAction.POST) == set(followers.values())
    assert (channels, people) == (len(FOLLOWING), 3)


async def test_following_a_group_includes_its_sites_added_later(
    desk: Desk, store: Store, followers: dict[str, int], clock: FixedClock
) -> None:
    await Sites(store, ADMINS, clock).import_file(
        ADMIN, read_sites_csv("code,group,name\nlincoln,east,Lincoln High\n", ("en", "es"), "en")
    )
    update_id, _, _ = await post(desk, Audience.of(["lincoln"]))
    expected = named(followers, "everything", "east", "p3")
    assert await delivered(store, update_id, DeliveryAction.POST) == expected


async def test_an_unknown_site_or_a_follow_up_with_its_own_audience_is_a_problem(
    desk: Desk, followers: dict[str, int]
) -> None:
    proposal = Proposal(
        Action.POST, texts=EN, status=Status.STRIKE_ON, audience=Audience.of(["lincoln"])
    )
    preview = await desk.preview(ADMIN, proposal, keep=False)
    assert preview.problems_in("en") == {
        "audience": "There is no site 'lincoln'. See the sites with `strikebot sites list`."
    }
    with pytest.raises(Problems):
        await desk.commit(ADMIN, proposal)
    update_id, _, _ = await post(desk, Audience.of(["venice"]))
    edit = Proposal(
        Action.EDIT,
        update_id=update_id,
        texts={"en": TextPatch("Venice: rally at noon")},
        reason="typo",
        audience=Audience.of(["roosevelt"]),
    )
    shown = (await desk.preview(ADMIN, edit, keep=False)).problems_in("es")
    assert shown["audience"].startswith("Una edición, una corrección o una retirada")
    with pytest.raises(Problems) as caught:
        desk.read(Action.POST, texts={"en": {"headline": "x"}}, sites="no good")
    assert "audience" in caught.value.problems


async def test_the_preview_names_whom_a_post_is_for(desk: Desk, followers: dict[str, int]) -> None:
    proposal = desk.read(
        Action.POST,
        texts={"en": {"headline": "Breakfast at Roosevelt"}},
        status="strike_on",
        sites="Roosevelt",
        groups="west",
    )
    assert proposal.audience == Audience(("roosevelt",), ("west",))
    preview = await desk.preview(ADMIN, proposal, keep=False)
    assert preview.sentence("en").startswith(
        "For Roosevelt High School and Local District West only: it goes to whoever follows "
        "them or everything. It will go to "
    )
    assert preview.sentence("es").startswith(
        "Solo para Preparatoria Roosevelt y Distrito Local Oeste: "
    )


async def test_the_admin_refuses_an_unknown_site_whatever_the_surface(
    admin: Admin, followers: dict[str, int]
) -> None:
    from bot.editorial.admin import Draft
    from bot.models import UpdateText

    with pytest.raises(NotFound, match="no group 'north'"):
        await admin.post(
            ADMIN,
            Draft(Status.STRIKE_ON, {"en": UpdateText("x")}, audience=Audience.of([], ["north"])),
        )


async def test_the_recipients_query_finds_a_sites_followers_through_their_index(
    store: Store,
) -> None:
    from bench.audiences import fill, plan

    await fill(store, people=5_000, sites=500, groups=25)
    for audience in (Audience.of(["s0007"]), Audience.of([], ["g003"])):
        shown = "\n".join(await plan(store, audience))
        assert "ix_subscription_follows_code" in shown, shown


async def test_a_groups_code_given_as_a_sites_is_read_as_the_group(
    desk: Desk, store: Store, followers: dict[str, int]
) -> None:
    proposal = desk.read(
        Action.POST,
        texts={"en": {"headline": "East rally"}},
        status="strike_on",
        sites="east, venice",
    )
    preview = await desk.preview(ADMIN, proposal, keep=False)
    assert preview.ready and preview.update.audience == Audience(("venice",), ("east",))
    update_id = (await desk.commit(ADMIN, proposal)).update.id
    assert followers["east"] in await delivered(store, update_id, DeliveryAction.POST)
