from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from datetime import UTC, datetime, time

import pytest

from bot.clock import FixedClock
from bot.commands import CommandContext, Commands, Reply
from bot.commands._questions import _match_demand
from bot.config import parse_config
from bot.editorial.admin import Admin, Draft
from bot.editorial.parsing import parse_days
from bot.i18n.sentences import say
from bot.metrics import Metrics
from bot.models import (
    Actor,
    Demand,
    DemandStatus,
    DemandText,
    Platform,
    QuietHours,
    Status,
    Subscription,
    UpdateState,
    UpdateText,
    Urgency,
)
from bot.runtime.seed import apply_seed
from bot.store import Store
from tests.strike_week import strike_week
from tests.support import ADMIN, ADMINS, CAMPAIGN, FRIDAY, MEMBER, ROOT, SECOND_ADMIN

PING = re.compile(r"@(everyone|here)\b|<[@!]", re.IGNORECASE)


def ctx(
    actor: Actor = MEMBER,
    *,
    locale: str | None = None,
    timezone: str | None = None,
    channel: str = "general",
) -> CommandContext:
    platform = Platform(actor.platform)
    return CommandContext(platform, actor, "guild-1", channel, locale=locale, timezone=timezone)


def text_of(reply: Reply) -> str:
    """Everything a person reads in a reply, as one string."""
    m = reply.message
    parts = [m.title, m.body, m.status_label, m.footer]
    parts += [f"{f.name}: {f.value}" for f in m.fields]
    return "\n".join(parts)


@pytest.fixture
async def commands(sqlite_store: Store, clock: FixedClock) -> Commands:
    week = await strike_week(sqlite_store, clock)
    return Commands(sqlite_store, CAMPAIGN, week.admin, clock, metrics=Metrics())


@pytest.fixture
async def commands_any_db(store: Store, clock: FixedClock) -> Commands:
    """The same, once on SQLite and once on PostgreSQL (for the tests that write)."""
    week = await strike_week(store, clock)
    return Commands(store, CAMPAIGN, week.admin, clock, metrics=Metrics())


# ---------------------------------------------------------------------------- status


async def test_status_gives_the_state_the_day_and_the_next_step(commands_any_db: Commands) -> None:
    reply = await commands_any_db.status(ctx())
    m = reply.message
    assert reply.ok and not reply.ephemeral
    assert m.title == "Where things stand: On strike"
    assert m.body.startswith("Day 5 of the strike.\n\nDay 5: no deal yet. The strike continues")
    assert "at City Hall, hosted by the Mayor." in m.body  # the corrected text
    assert [(f.name, f.value) for f in m.fields] == [
        ("Next step", "If there is no deal, the strike resumes Monday, January 21 at 6:00 AM."),
        ("When", "Monday, January 21, 6:00 AM PST"),
    ]  # the retracted #4 is newer, but never defines where things stand
    assert m.status is Status.STRIKE_ON
    assert m.url == "https://strike.example.org/updates/3"
    assert m.footer == "Update #3 · posted Friday, January 18, 9:00 AM PST · edited"


async def test_status_in_spanish_from_the_locale(commands: Commands) -> None:
    m = (await commands.status(ctx(locale="es-ES"))).message
    assert m.language == "es"
    assert m.title == "Cómo están las cosas: En huelga"
    assert m.body.startswith("Día 5 de la huelga.\n\nDía 5: aún no hay acuerdo.")
    assert "en el Ayuntamiento, con el alcalde como anfitrión." in m.body
    assert [(f.name, f.value) for f in m.fields] == [
        (
            "Próximo paso",
            "Si no hay acuerdo, la huelga se reanuda el lunes 21 de enero a las 6:00.",
        ),
        ("Cuándo", "lunes, 21 de enero, 6:00 PST"),
    ]


async def test_status_in_the_channel_language_when_the_platform_gives_no_locale(
    commands: Commands,
) -> None:
    await commands.admin.subscribe(
        ADMIN,
        Subscription(0, "discord", "guild-1", "padres", "es", timezone=CAMPAIGN.timezone),
    )
    assert (await commands.status(ctx(channel="padres"))).message.language == "es"
    # An explicit locale the bot speaks wins over the channel's language.
    assert (await commands.status(ctx(channel="padres", locale="en-US"))).message.language == "en"
    # A locale it does not speak falls back to the channel's.
    assert (await commands.status(ctx(channel="padres", locale="fr"))).message.language == "es"


async def test_day_and_times_follow_the_askers_time_zone(
    commands: Commands, clock: FixedClock
) -> None:
    # Friday 9:30 PM in Los Angeles is already Saturday 12:30 AM in New York.
    clock.now = datetime(2019, 1, 19, 5, 30, tzinfo=UTC)
    la = (await commands.status(ctx())).message
    ny = (await commands.status(ctx(timezone="America/New_York"))).message
    assert la.body.startswith("Day 5 of the strike.")
    assert ny.body.startswith("Day 6 of the strike.")
    assert ny.fields[1].value == "Monday, January 21, 9:00 AM EST"
    # A zone the platform got wrong is ignored, not an error.
    assert (await commands.status(ctx(timezone="Nowhere/Special"))).ok


async def test_status_before_anything_is_posted(sqlite_store: Store, clock: FixedClock) -> None:
    commands = Commands(sqlite_store, CAMPAIGN, Admin(sqlite_store, CAMPAIGN, ADMINS, clock), clock)
    reply = await commands.status(ctx())
    assert reply.ok
    assert reply.message.title == "No updates yet"
    assert "https://strike.example.org/" in reply.message.body
    assert (await commands.timeline(ctx())).message.body == "No updates have been posted yet."
    nothing = await commands.demand(ctx(), "pay")
    assert not nothing.ok and "No demands are recorded yet" in nothing.message.body


# ---------------------------------------------------------------------------- demands


async def test_demands_set_each_ask_against_the_current_offer(commands: Commands) -> None:
    m = (await commands.demands(ctx())).message
    assert m.title == "What we are asking for"
    assert [f.name for f in m.fields] == [
        "Fair pay", "Smaller classes", "A nurse in every school", "Open school libraries",
        "Counselors and support staff", "Less standardized testing",
        "Charter school accountability",
    ]  # fmt: skip
    pay = m.fields[0].value
    assert "Offer on the table · key: pay" in pay
    assert "We ask: A 6.5% raise, retroactive to 2017" in pay
    assert "Los Angeles Unified School District offers: A 6% raise spread over" in pay
    assert "Open · key: testing" in m.fields[5].value
    # A demand added to the campaign file later, without an offer, seeded on the next start.
    raw = tomllib.loads((ROOT / "config" / "strike.toml").read_text(encoding="utf-8"))
    raw["demands"].append({"key": "parking", "title": {"en": "Parking"}, "status": "open"})
    await apply_seed(commands.store, parse_config(raw, source="test"), commands.clock)
    added = (await commands.demands(ctx())).message.fields[-1]
    assert added.name == "Parking" and "offers: No offer yet" in added.value
    es = (await commands.demands(ctx(locale="es"))).message
    assert es.title == "Lo que pedimos"
    assert "Pedimos: Un aumento del 6.5%, retroactivo a 2017" in es.fields[0].value
    assert "ofrece: Un aumento del 6% repartido" in es.fields[0].value


async def test_demand_details_with_facts_and_dated_offer_history(commands: Commands) -> None:
    m = (await commands.demand(ctx(), "pay")).message
    assert m.title == "Fair pay"
    assert m.status_label == "Offer on the table"
    fields = {f.name: f.value for f in m.fields}
    assert fields["Facts"] == "• Teachers have worked for 20 months without a contract."
    assert fields["Offer history"].splitlines() == [
        "Friday, January 11 — Offer on the table: A 6% raise spread over the first two years "
        "of a three-year contract. (source: Union demand as reported by ABC News; district "
        "offer as reported by the Los Angeles Times (January 2019))"
    ]
    await commands.admin.record_demand(
        ADMIN,
        "pay",
        offer={"en": "6% over two years, 3% more in year three", "es": "6% en dos años y 3% más"},
        source="District proposal, Jan 18",
    )
    m = (await commands.demand(ctx(), "pay")).message
    assert [line.split(" — ")[0] for line in m.fields[-1].value.splitlines()] == [
        "Friday, January 11",
        "Friday, January 18",
    ]  # oldest first, each dated
    es = {f.name: f.value for f in (await commands.demand(ctx(locale="es"), "pay")).message.fields}
    assert es["Historial de ofertas"].splitlines()[1] == (
        "viernes, 18 de enero — Oferta sobre la mesa: 6% en dos años y 3% más "
        "(fuente: District proposal, Jan 18)"
    )
    assert es["Datos"] == "• Los maestros llevan 20 meses trabajando sin contrato."


async def test_demand_finds_by_prefix_or_title_and_lists_keys_when_unknown(
    commands: Commands,
) -> None:
    assert (await commands.demand(ctx(), "class")).message.title == "Smaller classes"
    assert (await commands.demand(ctx(), "charter")).message.title == (
        "Charter school accountability"
    )
    assert (await commands.demand(ctx(), "  NURSES ")).message.title == "A nurse in every school"
    assert (await commands.demand(ctx(), "smaller classes")).message.title == "Smaller classes"
    unknown = await commands.demand(ctx(), "pensions")
    assert not unknown.ok and unknown.ephemeral
    assert unknown.message.body == (
        "There is no demand called “pensions”. Known demands: pay, class-size, nurses, "
        "librarians, support-staff, testing, charter-schools."
    )
    es = await commands.demand(ctx(locale="es"), "pensiones")
    assert es.message.body.startswith("No hay ninguna demanda llamada «pensiones»")
    empty = await commands.handle(ctx(), "demand")
    assert not empty.ok and "Known demands: pay, class-size, nurses," in empty.message.body


async def test_demand_keys_picker(commands: Commands) -> None:
    assert await commands.demand_keys() == [
        ("pay", "Fair pay"),
        ("class-size", "Smaller classes"),
        ("nurses", "A nurse in every school"),
        ("librarians", "Open school libraries"),
        ("support-staff", "Counselors and support staff"),
        ("testing", "Less standardized testing"),
        ("charter-schools", "Charter school accountability"),
    ]
    assert await commands.demand_keys("nu") == [("nurses", "A nurse in every school")]
    assert [key for key, _ in await commands.demand_keys("school")] == [
        "nurses", "librarians", "charter-schools"
    ]  # fmt: skip
    assert await commands.demand_keys("enfermera", "es") == [
        ("nurses", "Una enfermera en cada escuela")
    ]


# ---------------------------------------------------------------------------- timeline / next


async def test_timeline_newest_first_with_retractions_and_corrections(commands: Commands) -> None:
    m = (await commands.timeline(ctx(), 3)).message
    assert [f.name for f in m.fields] == [
        "#4 · Friday, January 18, 9:15 AM PST · Tentative agreement",
        "#3 · Friday, January 18, 9:00 AM PST · On strike",
        "#2 · Thursday, January 17, 5:00 PM PST · On strike — talks scheduled",
    ]
    assert [f.value for f in m.fields] == [
        "RETRACTED: Deal reached! — reason: No deal yet: posted by mistake",
        "Day 5: no deal yet. The strike continues; talks go on through the weekend (corrected)",
        "Day 4: only a third of students in class as talks resume",
    ]
    assert len((await commands.timeline(ctx())).message.fields) == 4  # default 5, 4 exist
    es = (await commands.handle(ctx(locale="es"), "timeline 2")).message
    assert es.fields[0].value.startswith("RETIRADA: ¡Hay acuerdo! — motivo:")
    assert es.fields[1].value == (
        "Día 5: aún no hay acuerdo. La huelga continúa; se negocia todo el fin de semana "
        "(corregida)"
    )


@pytest.mark.parametrize("n", ["0", "-1", "26", "many", "1e3", ""])
async def test_timeline_refuses_a_bad_count(commands: Commands, n: str) -> None:
    reply = await commands.timeline(ctx(), n)
    assert not reply.ok and reply.ephemeral
    assert "Ask for 1 to 25" in reply.message.body


async def test_next_step_and_when(commands: Commands) -> None:
    m = (await commands.next_step(ctx(timezone="America/Chicago"))).message
    assert m.title == "What happens next"
    assert m.body == "If there is no deal, the strike resumes Monday, January 21 at 6:00 AM."
    assert [(f.name, f.value) for f in m.fields] == [("When", "Monday, January 21, 8:00 AM CST")]
    es = (await commands.handle(ctx(locale="es"), "siguiente")).message
    assert (es.title, es.body) == (
        "Qué sigue",
        "Si no hay acuerdo, la huelga se reanuda el lunes 21 de enero a las 6:00.",
    )


# ---------------------------------------------------------------------------- help


async def test_help_shows_admin_commands_only_to_admins(commands: Commands) -> None:
    member = await commands.help(ctx())
    admin = await commands.help(ctx(ADMIN))
    assert member.ephemeral and admin.ephemeral
    assert "/strike status" in member.message.body
    assert "/strike post" not in text_of(member)
    assert "Union admins can also post" in member.message.body
    assert admin.message.fields[0].name == "For union admins"
    assert "/strike post <status>" in admin.message.fields[0].value
    assert "strike_on" in admin.message.fields[0].value
    es = await commands.handle(ctx(locale="es"), "/strike ayuda")
    assert es.message.title == "Pregúntame"
    assert (await commands.handle(ctx(), "/strike")).message.title == "Ask me"


# ---------------------------------------------------------------------------- subscriptions


async def test_admin_subscribes_this_channel_with_briefing_and_quiet_hours(
    commands_any_db: Commands,
) -> None:
    reply = await commands_any_db.subscribe(
        ctx(ADMIN),
        language="es",
        urgencies="urgent,important",
        briefing_time="07:00",
        timezone="America/Los_Angeles",
        quiet_hours="22:00-06:00",
        briefing_days="mon-fri",
    )
    assert reply.ok, reply.message.body
    async with commands_any_db.store.read() as tx:
        sub = await tx.find_subscription("discord", "guild-1", "general")
    assert sub is not None
    assert sub.language == "es"
    assert sub.urgencies == {Urgency.URGENT, Urgency.IMPORTANT}
    assert sub.briefing_time == time(7, 0)
    assert sub.briefing_days == frozenset(range(5))
    assert sub.quiet_hours == QuietHours(time(22, 0), time(6, 0))
    # The confirmation is in the asker's language (English here), not the channel's new one.
    assert dict((f.name, f.value) for f in reply.message.fields)["Morning briefing"] == (
        "07:00 on weekdays"
    )
    # Only what is given changes: turning the briefing off keeps everything else.
    off = await commands_any_db.handle(ctx(ADMIN), "subscribe briefing=off days=sat,sun")
    assert off.ok
    async with commands_any_db.store.read() as tx:
        after = await tx.find_subscription("discord", "guild-1", "general")
    assert after is not None and after.id == sub.id
    assert after.briefing_time is None
    assert after.briefing_days == frozenset({5, 6})
    assert after.quiet_hours == sub.quiet_hours and after.language == "es"


async def test_subscribe_defaults_and_spanish_confirmation(commands: Commands) -> None:
    reply = await commands.handle(ctx(ADMIN, locale="es", timezone="America/Chicago"), "subscribe")
    assert reply.ok
    fields = {f.name: f.value for f in reply.message.fields}
    assert reply.message.title == "Este canal está suscrito"
    assert fields == {
        "Idioma": "inglés",
        "Urgencias": "Rutina, Importante, Urgente",
        "Zona horaria": "America/Chicago",
        "Resumen matutino": "desactivado",
        "Horario de silencio": "ninguno",
        "Sigue": "Todo: cada actualización",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("subscribe language=fr", "“fr” is not one of this campaign's languages"),
        ("subscribe briefing=25:00", "“25:00” is not a time of day"),
        ("subscribe quiet=22:00", "“22:00” is not a quiet-hours range"),
        ("subscribe tz=America", "“America” is not a time zone"),
        ("subscribe urgencies=loud", "“loud” is not an urgency"),
        ("subscribe days=someday", "“someday” is not a list of days"),
        ("subscribe everything", "Too much after /strike subscribe"),
    ],
)
async def test_subscribe_refuses_bad_settings_saying_what_to_write(
    commands: Commands, text: str, expected: str
) -> None:
    reply = await commands.handle(ctx(ADMIN), text)
    assert not reply.ok and reply.ephemeral
    assert expected in reply.message.body


async def test_members_cannot_change_anything_and_learn_how_to_get_access(
    commands_any_db: Commands,
) -> None:
    for text in (
        "subscribe",
        "unsubscribe",
        'post strike_on "Strike over"',
        "post",
        "edit 2 reason=x body=y",
        "retract 2 because",
        "approve 2",
        "edit",
        "approve",
    ):
        reply = await commands_any_db.handle(ctx(), text)
        assert not reply.ok and reply.ephemeral, text
        assert reply.message.title == "Admins only"
        assert "Only union admins can" in reply.message.body
        assert "“5555”" in reply.message.body and "[admins.discord]" in reply.message.body
    es = await commands_any_db.handle(ctx(locale="es"), "retract 2 porque")
    assert es.message.title == "Solo para administración"
    assert es.message.body.startswith("Solo las personas administradoras")
    async with commands_any_db.store.read() as tx:
        assert await tx.count_updates() == 4
        assert (await tx.get_update(2, FRIDAY)) is not None
        assert not (await tx.get_update(2, FRIDAY)).retracted  # type: ignore[union-attr]
        assert await tx.list_subscriptions() == []


async def test_unsubscribe(commands: Commands) -> None:
    assert (await commands.subscribe(ctx(ADMIN))).ok
    reply = await commands.unsubscribe(ctx(ADMIN))
    assert reply.ok and reply.message.title == "This channel is unsubscribed"
    async with commands.store.read() as tx:
        assert await tx.list_subscriptions() == []
    again = await commands.unsubscribe(ctx(ADMIN))
    assert not again.ok
    assert again.message.body.startswith("This channel is not subscribed.")


# ---------------------------------------------------------------------------- admin actions


async def test_post_queues_deliveries_and_previews_the_update(commands_any_db: Commands) -> None:
    for channel in ("general", "picket-captains"):
        assert (await commands_any_db.subscribe(ctx(ADMIN, channel=channel))).ok
    reply = await commands_any_db.handle(
        ctx(ADMIN),
        'post strike_on "Strike continues Tuesday" "Picket lines at 6:30 AM." '
        'next="March to Grand Park" when=2019-01-22T10:00 urgency=urgent '
        'headline_es="La huelga continúa el martes" body_es="Piquetes a las 6:30."',
    )
    assert reply.ok and reply.ephemeral, reply.message.body
    assert reply.message.title == "Posted update #5"
    assert reply.message.body == "It is going out to 2 channel(s)."
    preview = reply.extra[0]
    assert preview.title == "Strike continues Tuesday"
    assert preview.fields[1].value == "Tuesday, January 22, 10:00 AM PST"
    async with commands_any_db.store.read() as tx:
        update = await tx.get_update(5, FRIDAY)
        deliveries = await tx.list_deliveries(update_id=5)
    assert update is not None
    assert update.urgency is Urgency.URGENT
    assert update.text("es").headline == "La huelga continúa el martes"
    assert update.next_step_at == datetime(2019, 1, 22, 18, 0, tzinfo=UTC)
    assert len(deliveries) == 2
    assert (await commands_any_db.status(ctx())).message.title == "Where things stand: On strike"


async def test_post_with_an_embargo_and_the_errors_around_it(
    commands: Commands, clock: FixedClock
) -> None:
    scheduled = await commands.post(
        ctx(ADMIN), "strike_on", "Monday: strike resumes", publish_at="2019-01-20T18:00"
    )
    assert scheduled.ok and scheduled.message.title == "Scheduled update #5"
    assert "Sunday, January 20, 6:00 PM PST" in scheduled.message.body
    assert (await commands.status(ctx())).message.footer.startswith("Update #3")  # not yet
    past = await commands.post(ctx(ADMIN), "strike_on", "x", publish_at="2019-01-01T00:00")
    assert not past.ok and "is in the past" in past.message.body
    bad_status = await commands.post(ctx(ADMIN), "on_holiday", "x")
    assert not bad_status.ok and "“on_holiday” is not a status" in bad_status.message.body
    empty = await commands.handle(ctx(ADMIN, locale="es"), 'post strike_on "   "')
    assert not empty.ok and empty.message.body.startswith("El titular está vacío")
    long = await commands.post(ctx(ADMIN), "strike_on", "x" * 151)
    assert not long.ok and "The headline is 151 characters; keep it to 150" in long.message.body
    spanish_only_body = await commands.handle(ctx(ADMIN), 'post strike_on "Hi" body_es="Hola"')
    assert not spanish_only_body.ok and "Spanish headline" in spanish_only_body.message.body
    missing = await commands.handle(ctx(ADMIN), "post strike_on")
    assert not missing.ok and "needs a status and a headline" in missing.message.body
    async with commands.store.read() as tx:
        assert await tx.count_updates() == 5


async def test_a_year_no_time_zone_can_show_is_refused_not_stored(commands: Commands) -> None:
    # Year 1 in UTC is still year 0 in Los Angeles: stored, it broke every status reply.
    for when in ("0001-01-01T00:00Z", "9999-12-31T23:59Z"):
        reply = await commands.handle(ctx(ADMIN), f'post strike_on "Typo" next="x" when={when}')
        assert not reply.ok and f"“{when}” is not a date and time" in reply.message.body
        edit = await commands.edit(ctx(ADMIN), 3, next_step_at=when, reason="typo")
        assert not edit.ok and "is not a date and time" in edit.message.body
        late = await commands.post(ctx(ADMIN), "strike_on", "Typo", publish_at=when)
        assert not late.ok and "is not a date and time" in late.message.body
    assert (await commands.status(ctx(timezone="Asia/Tokyo"))).ok
    async with commands.store.read() as tx:
        assert await tx.count_updates() == 4


async def test_approval_needs_a_second_admin(sqlite_store: Store, clock: FixedClock) -> None:
    campaign = replace(CAMPAIGN, require_approval=True)
    await strike_week(sqlite_store, clock)
    commands = Commands(sqlite_store, campaign, Admin(sqlite_store, campaign, ADMINS, clock), clock)
    posted = await commands.post(ctx(ADMIN), "strike_on", "Strike continues")
    assert posted.ok and posted.message.title == "Update #5 awaits approval"
    assert "/strike approve 5" in posted.message.body
    same = await commands.approve(ctx(ADMIN), 5)
    assert not same.ok and "someone else must approve it" in same.message.body
    second = CommandContext("slack", SECOND_ADMIN, "T1", "C1")
    approved = await commands.handle(second, "approve #5")
    assert approved.ok and approved.message.title == "Approved update #5"
    again = await commands.approve(second, "5")
    assert not again.ok and again.message.title == "Not possible right now"


async def test_edit_and_correct(commands_any_db: Commands) -> None:
    reply = await commands_any_db.handle(
        ctx(ADMIN),
        'edit 2 next="Picket at your school, 6:30 AM" reason="Add the time" correction=yes',
    )
    assert reply.ok, reply.message.body
    assert reply.message.title == "Edited update #2"
    assert "a visible correction note goes out" in reply.message.body
    async with commands_any_db.store.read() as tx:
        update = await tx.get_update(2, FRIDAY)
    assert update is not None and update.revision == 2
    assert update.text("en").next_step == "Picket at your school, 6:30 AM"
    assert update.text("en").headline == (
        "Day 4: only a third of students in class as talks resume"
    )  # untouched
    spanish = await commands_any_db.edit(
        ctx(ADMIN), 2, body="Más de 30.000 docentes.", language="es", reason="Cifra"
    )
    assert spanish.ok
    async with commands_any_db.store.read() as tx:
        update = await tx.get_update(2, FRIDAY)
    assert update is not None and update.text("es").body == "Más de 30.000 docentes."
    assert update.text("en").body.startswith("Families are standing with us.")
    for text, expected in [
        ("edit 2 reason=x", "Say what to change"),
        ("edit 2 body=y", "Give a reason"),
        ("edit two body=y reason=x", "“two” is not an update number"),
        ("edit 99 body=y reason=x", "There is no update #99"),
        ("edit 4 body=y reason=x", "was retracted and cannot be edited"),
        ("edit 2 status=won reason=x", "“won” is not a status"),
        ("edit", "needs an update number"),
    ]:
        bad = await commands_any_db.handle(ctx(ADMIN), text)
        assert not bad.ok and expected in bad.message.body, (text, bad.message.body)


async def test_retract(commands_any_db: Commands) -> None:
    reply = await commands_any_db.handle(ctx(ADMIN), "retract 3 Talks were moved to Saturday")
    assert reply.ok and reply.message.title == "Retracted update #3"
    assert reply.extra[0].retracted
    async with commands_any_db.store.read() as tx:
        update = await tx.get_update(3, FRIDAY)
    assert update is not None and update.state is UpdateState.RETRACTED
    assert update.retraction_reason == "Talks were moved to Saturday"
    # The status falls back to the newest update still standing (#4 is retracted too).
    status = (await commands_any_db.status(ctx())).message
    assert status.title == "Where things stand: On strike — talks scheduled"
    assert status.footer.startswith("Update #2 ·")
    twice = await commands_any_db.retract(ctx(ADMIN), 3, "again")
    assert not twice.ok and "already retracted" in twice.message.body
    no_reason = await commands_any_db.handle(ctx(ADMIN), "retract 2")
    assert not no_reason.ok and "Give a reason" in no_reason.message.body


async def test_recent_updates_include_pending_ones_for_admin_pickers(
    commands: Commands,
) -> None:
    await commands.post(ctx(ADMIN), "strike_on", "Later", publish_at="2019-01-21T06:00")
    recent = await commands.recent_updates(3)
    assert [u.id for u in recent] == [5, 4, 3]


# ---------------------------------------------------------------------------- input, safety


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("dance", "I don't know the command “dance”"),
        ('post strike_on "unclosed', "A quote is not closed"),
        ("status now please", "Too much after /strike status"),
        ("approve 1 2", "Too much after /strike approve"),
        ("timeline 3 4", "Too much after /strike timeline"),
    ],
)
async def test_typed_mistakes_are_replies(commands: Commands, text: str, expected: str) -> None:
    reply = await commands.handle(ctx(ADMIN), text)
    assert not reply.ok and reply.ephemeral
    assert expected in reply.message.body


async def test_replies_quoting_mentions_ping_nobody(commands: Commands) -> None:
    for text in ("demand @everyone", "<@&2002>", "timeline @here", "demand <!channel>"):
        reply = await commands.handle(ctx(), text)
        assert not PING.search(text_of(reply)), text
    posted = await commands.post(ctx(ADMIN), "strike_on", "@everyone rally <@123>", "<!here>")
    assert posted.ok
    preview = posted.extra[0]
    assert not PING.search(preview.title + preview.body)
    assert not PING.search(text_of(await commands.status(ctx())))


async def test_curly_quotes_from_phones_work(commands: Commands) -> None:
    reply = await commands.handle(ctx(ADMIN), "post strike_on “Strike continues” “See you at 6”")
    assert reply.ok, reply.message.body
    assert reply.extra[0].title == "Strike continues"
    assert reply.extra[0].body == "See you at 6"


async def test_latency_is_recorded_per_command(commands: Commands) -> None:
    await commands.status(ctx())
    await commands.handle(ctx(), "demand pay")
    await commands.handle(ctx(), "gibberish")
    assert commands.metrics is not None
    registry = commands.metrics.registry
    for command in ("status", "demand", "unknown"):
        count = registry.get_sample_value(
            "strikebot_command_seconds_count", {"platform": "discord", "command": command}
        )
        assert count == 1, command


@pytest.mark.parametrize("language", ["en", "es"])
def test_the_days_error_suggests_only_words_in_the_askers_language_that_work(
    language: str,
) -> None:
    sentence = say(language, "bad_days", value="x")
    examples = sentence.split(": ", 1)[-1].split("ejemplo " if language == "es" else "example ")[1]
    words = re.split(r", | o | or ", examples.rstrip("."))
    assert len(words) == 4
    for word in words:
        assert parse_days(word)
    if language == "es":
        assert not {"weekdays", "daily"} & set(words)


# ---------------------------------------------------------------------------- briefing=on
# `/strike subscribe briefing=on` turns the morning briefing on at the campaign's default time.


async def test_briefing_on_uses_the_default_time(sqlite_store: Store, clock: FixedClock) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    commands = Commands(sqlite_store, CAMPAIGN, admin, clock, default_briefing_time=time(6, 30))
    ctx = CommandContext("discord", ADMIN, "guild", "news")

    reply = await commands.handle(ctx, "subscribe briefing=on")
    assert reply.ok, reply.message.body
    async with sqlite_store.read() as tx:
        sub = await tx.find_subscription("discord", "guild", "news")
    assert sub is not None and sub.briefing_time == time(6, 30)

    reply = await commands.handle(ctx, "subscribe briefing=off")
    assert reply.ok
    async with sqlite_store.read() as tx:
        sub = await tx.find_subscription("discord", "guild", "news")
    assert sub is not None and sub.briefing_time is None

    reply = await commands.handle(ctx, "subscribe briefing=soon")
    assert not reply.ok
    assert "on (the campaign's default time)" in reply.message.body


# ---------------------------------------------------------------------------- next step passed
# `/strike next` says so when the announced time has passed without a newer update.


async def test_a_next_step_in_the_past_is_marked_as_passed(
    sqlite_store: Store, clock: FixedClock
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    commands = Commands(sqlite_store, CAMPAIGN, admin, clock)
    monday = datetime(2019, 1, 21, 14, 0, tzinfo=UTC)  # 6:00 AM in Los Angeles
    await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {"en": UpdateText("No deal", next_step="The strike resumes Monday")},
            next_step_at=monday,
        ),
    )
    ctx = CommandContext("discord", ADMIN, "guild", "news")

    before = await commands.next_step(ctx)
    (when,) = [f.value for f in before.message.fields if f.name == "When"]
    assert "passed" not in when

    clock.now = datetime(2019, 1, 22, 18, 0, tzinfo=UTC)
    after = await commands.next_step(ctx)
    (when,) = [f.value for f in after.message.fields if f.name == "When"]
    assert when.endswith("(this has passed; no newer update yet)")
    spanish = await commands.next_step(
        CommandContext("discord", ADMIN, "guild", "news", locale="es-ES")
    )
    (cuando,) = [f.value for f in spanish.message.fields if f.name == "Cuándo"]
    assert "ya pasó" in cuando


# ---------------------------------------------------------------------------- demand lookup
# `/strike demand class size` finds the `class-size` demand, however it is typed.


AT = datetime(2019, 1, 18, tzinfo=UTC)
TWO_DEMANDS = [
    Demand("class-size", 0, DemandStatus.OPEN, {"en": DemandText("Smaller classes")}, AT),
    Demand("nurses", 1, DemandStatus.OPEN, {"en": DemandText("A nurse in every school")}, AT),
]


@pytest.mark.parametrize(
    "typed", ["class-size", "class size", "class_size", "class", "smaller classes"]
)
def test_any_separator_or_the_title_finds_the_demand(typed: str) -> None:
    assert _match_demand(typed, TWO_DEMANDS) == "class-size"


def test_no_match_is_none() -> None:
    assert _match_demand("pensions", TWO_DEMANDS) is None
