"""Bad input: whatever anyone types, every command answers and no exception escapes."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.clock import FixedClock
from bot.commands import COMMAND_NAMES, CommandContext, Commands, Reply
from bot.i18n.sentences import say
from bot.models import Actor, Platform
from bot.store import Store
from tests.strike_week import strike_week
from tests.support import ADMIN, CAMPAIGN, MEMBER, SECOND_ADMIN

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
PING = re.compile(r"@(everyone|here)\b|<[@!]", re.IGNORECASE)
INTERNAL = {say("en", "internal_error"), say("es", "internal_error")}

actors = st.sampled_from([ADMIN, SECOND_ADMIN, MEMBER])
contexts = st.builds(
    lambda actor, locale, zone, channel: CommandContext(
        Platform(actor.platform), actor, "w1", channel, locale=locale, timezone=zone
    ),
    actors,
    st.one_of(st.none(), st.sampled_from(["en", "es-ES", "es_MX", "fr", ""]), st.text(max_size=8)),
    st.one_of(
        st.none(),
        st.sampled_from(["America/New_York", "America", "Mars/Base", "../x", "UTC"]),
        st.text(max_size=20),
    ),
    st.sampled_from(["general", "padres"]),
)
# Words that look like the real thing, plus anything at all.
nasty = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "", " ", "0", "-1", "#3", "3", "99999999999999999999", "1e9", "nan", "off",
            "07:00", "24:00", "22:00-06:00", "mon-fri", "sun-sat", "urgent,important",
            "strike_on", "STRIKE-ON", "es", "es-MX", "America/Los_Angeles", "America",
            "2019-01-21T06:00", "2019-01-21T06:00-08:00", "0001-01-01T00:00",
            "9999-12-31T23:59", "@everyone", "<@&2002>", "<!here>", "\x00", "\u200b",
            "x" * 400, '"', "'", "\\", "pay", "class", "ñandú",
        ]
    ),
)  # fmt: skip
maybe = st.one_of(st.none(), nasty)
OPTION_NAMES = ["reason", "body", "next", "when", "at", "urgency", "briefing", "tz", "quiet",
                "days", "lang", "headline_es", "status", "correction"]  # fmt: skip
words = st.one_of(
    st.sampled_from([*COMMAND_NAMES, "estado", "ayuda", "/strike", "strike", "dance"]),
    nasty,
    st.builds(lambda key, value: f"{key}={value}", st.sampled_from(OPTION_NAMES), nasty),
)
typed = st.one_of(
    st.text(max_size=120),
    st.lists(words, max_size=6).map(" ".join),
    st.lists(words, max_size=6).map(lambda ws: " ".join(f'"{w}"' for w in ws)),
)


@pytest.fixture
async def commands(sqlite_store: Store, clock: FixedClock) -> Commands:
    week = await strike_week(sqlite_store, clock)
    return Commands(sqlite_store, CAMPAIGN, week.admin, clock)


def check(reply: object, caplog: pytest.LogCaptureFixture) -> None:
    """A reply, never an internal failure, never a ping, errors only to the asker."""
    assert isinstance(reply, Reply)
    message = reply.message
    assert message.title.strip()
    assert message.body not in INTERNAL, message.body
    if not reply.ok:
        assert reply.ephemeral
    for m in (message, *reply.extra):
        text = "\n".join([m.title, m.body, m.footer, *(f.name + f.value for f in m.fields)])
        assert not PING.search(text), text
    errors = [r for r in caplog.records if r.name == "bot.commands" and r.levelno >= logging.ERROR]
    assert not errors, errors[0].getMessage()


@FUZZ
@given(context=contexts, text=typed)
async def test_handle_answers_anything_typed(
    commands: Commands, caplog: pytest.LogCaptureFixture, context: CommandContext, text: str
) -> None:
    check(await commands.handle(context, text), caplog)


@FUZZ
@given(context=contexts, key=nasty, n=st.one_of(st.integers(), nasty))
async def test_questions_answer_any_argument(
    commands: Commands,
    caplog: pytest.LogCaptureFixture,
    context: CommandContext,
    key: str,
    n: Any,
) -> None:
    for reply in (
        await commands.status(context),
        await commands.demands(context),
        await commands.demand(context, key),
        await commands.timeline(context, n),
        await commands.next_step(context),
        await commands.help(context),
    ):
        check(reply, caplog)


@FUZZ
@given(
    context=contexts,
    language=maybe,
    urgencies=maybe,
    briefing_time=maybe,
    timezone=maybe,
    quiet_hours=maybe,
    briefing_days=maybe,
)
async def test_subscribe_answers_any_settings(
    commands: Commands,
    caplog: pytest.LogCaptureFixture,
    context: CommandContext,
    language: str | None,
    urgencies: str | None,
    briefing_time: str | None,
    timezone: str | None,
    quiet_hours: str | None,
    briefing_days: str | None,
) -> None:
    reply = await commands.subscribe(
        context,
        language=language,
        urgencies=urgencies,
        briefing_time=briefing_time,
        timezone=timezone,
        quiet_hours=quiet_hours,
        briefing_days=briefing_days,
    )
    check(reply, caplog)
    check(await commands.unsubscribe(context), caplog)


@FUZZ
@given(
    context=contexts,
    status=nasty,
    headline=nasty,
    body=nasty,
    next_step=nasty,
    urgency=nasty,
    publish_at=maybe,
    texts=st.one_of(
        st.none(),
        st.dictionaries(
            st.sampled_from(["es", "en", "ko", "ES", ""]),
            st.fixed_dictionaries({"headline": nasty}, optional={"body": nasty}),
            max_size=2,
        ),
    ),
    next_step_at=maybe,
)
async def test_post_answers_any_arguments(
    commands: Commands,
    caplog: pytest.LogCaptureFixture,
    context: CommandContext,
    status: str,
    headline: str,
    body: str,
    next_step: str,
    urgency: str,
    publish_at: str | None,
    texts: dict[str, dict[str, str]] | None,
    next_step_at: str | None,
) -> None:
    reply = await commands.post(
        context, status, headline, body, next_step, urgency, publish_at, texts, next_step_at
    )
    check(reply, caplog)


@FUZZ
@given(
    context=contexts,
    update_id=st.one_of(st.integers(), nasty),
    headline=maybe,
    body=maybe,
    next_step=maybe,
    status=maybe,
    reason=nasty,
    correction=st.one_of(st.booleans(), nasty),
    urgency=maybe,
    next_step_at=maybe,
    language=maybe,
)
async def test_edit_retract_approve_answer_any_arguments(
    commands: Commands,
    caplog: pytest.LogCaptureFixture,
    context: CommandContext,
    update_id: Any,
    headline: str | None,
    body: str | None,
    next_step: str | None,
    status: str | None,
    reason: str,
    correction: Any,
    urgency: str | None,
    next_step_at: str | None,
    language: str | None,
) -> None:
    check(
        await commands.edit(
            context,
            update_id,
            headline=headline,
            body=body,
            next_step=next_step,
            status=status,
            reason=reason,
            correction=correction,
            urgency=urgency,
            next_step_at=next_step_at,
            language=language,
        ),
        caplog,
    )
    check(await commands.approve(context, update_id), caplog)
    check(await commands.retract(context, update_id, reason), caplog)


async def test_a_platform_the_core_has_never_heard_of_gets_answers(commands: Commands) -> None:
    """The core names no platform: a context from any plugin (here one nobody installed)
    is answered like any other."""
    odd = CommandContext("carrier_pigeon", Actor("carrier_pigeon", "x"), "w", "c")
    reply = await commands.status(odd)
    assert reply.ok and reply.message.title
