from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from adapters.console import ConsoleAdapter, render_message, render_reply
from bot.clock import FixedClock
from bot.commands import CommandContext, Commands, Reply
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher
from bot.editorial.admin import Admin, Draft
from bot.models import Actor, Status, Subscription, UpdateText, Urgency
from bot.ports import Adapter, ChannelRef, Field, MessageKind, OutboundMessage
from bot.store import Store
from tests.support import ADMINS, CAMPAIGN

REPO = Path(__file__).resolve().parent.parent
CONSOLE_ADMIN = Actor("console", "console")
CHANNEL = ChannelRef("local", "general")


def recording_console() -> Console:
    return Console(file=io.StringIO(), width=100, record=True, color_system=None)


# ---------------------------------------------------------------------------- the adapter


async def test_adapter_prints_sends_once_per_idempotency_key() -> None:
    console = recording_console()
    adapter = ConsoleAdapter(console)
    assert isinstance(adapter, Adapter)
    await adapter.start()
    message = OutboundMessage("Strike continues", "Picket at 6:30", kind=MessageKind.UPDATE)
    first = await adapter.send(CHANNEL, message, idempotency_key="d1")
    again = await adapter.send(CHANNEL, message, idempotency_key="d1")
    other = await adapter.send(CHANNEL, message, idempotency_key="d2")
    assert first == again != other
    text = console.export_text()
    assert text.count("Strike continues") == 2  # the retried send printed nothing
    assert f"posted in local/#general · {first}" in text
    await adapter.edit(CHANNEL, first, OutboundMessage("Strike continues Tuesday"))
    await adapter.delete(CHANNEL, other)
    text = console.export_text()
    assert f"edited in local/#general · {first}" in text
    assert f"message {other} deleted" in text
    assert adapter.health() == {"connected": True, "sent": 2, "edited": 1, "deleted": 1}
    await adapter.stop()
    assert adapter.health()["connected"] is False


def test_text_is_shown_literally_and_retracted_text_is_struck() -> None:
    message = OutboundMessage(
        "RETRACTED: [bold red]Deal![/]",
        "Retracted: posted by mistake",
        kind=MessageKind.RETRACTION,
        fields=(Field("Original text (withdrawn)", "Deal reached [link=x]now[/link]"),),
        retracted=True,
    )
    segments = list(recording_console().render(render_message(message)))
    text = "".join(seg.text for seg in segments)
    assert "[bold red]Deal![/]" in text
    assert "[link=x]now[/link]" in text
    struck = "".join(seg.text for seg in segments if seg.style is not None and seg.style.strike)
    assert struck.strip() == "Deal reached [link=x]now[/link]"


def test_replies_say_when_only_you_see_them_and_show_previews() -> None:
    console = recording_console()
    reply = Reply(
        OutboundMessage("Posted update #5", "It is going out to 2 channel(s)."),
        ephemeral=True,
        extra=(OutboundMessage("Strike continues", status=Status.STRIKE_ON),),
    )
    console.print(render_reply(reply))
    text = console.export_text()
    assert "only you see this" in text
    assert "preview: what members will see" in text
    assert text.index("Posted update #5") < text.index("Strike continues")


async def test_the_dispatcher_delivers_through_the_console_adapter(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """End to end in process: command → outbox → dispatcher → console, then the retraction
    edits the same message in place."""
    admin = Admin(sqlite_store, CAMPAIGN, ADMINS, clock)
    commands = Commands(sqlite_store, CAMPAIGN, admin, clock)
    ctx = CommandContext("console", CONSOLE_ADMIN, "local", "general")
    assert (await commands.subscribe(ctx, language="es")).ok
    await admin.subscribe(
        CONSOLE_ADMIN,
        Subscription(0, "discord", "g", "c", "en", timezone=CAMPAIGN.timezone),
    )
    console = recording_console()
    adapter = ConsoleAdapter(console)
    dispatcher = Dispatcher(
        sqlite_store, {"console": adapter}, CAMPAIGN, clock, settings=DeliverySection()
    )
    update = await admin.post(
        CONSOLE_ADMIN,
        Draft(
            Status.STRIKE_ON,
            {"en": UpdateText("Strike is on"), "es": UpdateText("La huelga comenzó")},
            Urgency.URGENT,
        ),
    )
    stats = await dispatcher.drain()
    assert stats.sent == 1  # the Discord row is left for a Discord adapter
    [(message_id, (channel, message))] = adapter.messages.items()
    assert channel == CHANNEL
    assert message.title == "La huelga comenzó"
    assert (await commands.retract(ctx, update.id, "Demasiado pronto")).ok
    await dispatcher.drain()
    retracted = adapter.messages[message_id][1]
    assert retracted.retracted and retracted.title == "RETIRADA: La huelga comenzó"
    assert "edited in local/#general" in console.export_text()
    async with sqlite_store.read() as tx:
        discord_rows = {
            str(d.action): str(d.state)
            for d in await tx.list_deliveries(update_id=update.id)
            if d.platform == "discord"
        }
    assert discord_rows == {"post": "cancelled", "retract": "pending"}


# ---------------------------------------------------------------------------- strikebot console


SHIPPED_CONFIG = REPO / "config" / "strike.toml"  # the seeded 2019 campaign the tests read


def strikebot(tmp_path: Path, *args: str) -> list[str]:
    script = Path(sys.executable).parent / "strikebot"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "bot.cli"]
    return [
        *command,
        "--config",
        str(SHIPPED_CONFIG),
        "--database-url",
        f"sqlite+aiosqlite:///{tmp_path / 'console.db'}",
        *args,
    ]


def run_console(tmp_path: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "SLACK_"))}
    env["COLUMNS"] = "120"
    return subprocess.run(  # noqa: S603 - our own program, fixed arguments
        strikebot(tmp_path, "console", "--now", "2019-01-18T10:00-08:00", *args),
        input=script,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=env,
        check=False,
    )


def test_scripted_console_answers_each_line_and_exits(tmp_path: Path) -> None:
    result = run_console(
        tmp_path,
        "/strike status\n# a comment\n\n/strike demand pay\n/strike help\n",
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Where things stand:" in out
    assert "Day 5 of the strike." in out
    assert "We ask" in out and "(LAUSD) offers" in out
    assert "For union admins" in out  # the console user is an admin
    assert out.index("Where things stand:") < out.index("We ask") < out.index("Ask me")


def test_scripted_console_posts_and_delivers_to_its_channel(tmp_path: Path) -> None:
    script = (
        "/strike subscribe language=es\n"
        '/strike post strike_on "Strike continues Tuesday @everyone" "Picket at 6:30 AM." '
        'headline_es="La huelga continúa el martes @here" urgency=urgent\n'
        "/strike timeline 1\n"
    )
    result = run_console(tmp_path, script, "--json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["event"] for e in events] == ["reply", "reply", "send", "reply"]
    subscribed, posted, delivered, timeline = events
    assert subscribed["ok"] and subscribed["message"]["title"] == "This channel is subscribed"
    assert posted["ok"] and posted["ephemeral"]
    assert posted["message"]["title"] == "Actualización #4 publicada"  # 3 seeded updates
    assert delivered["channel"] == "local/#general"
    assert delivered["message"]["title"] == "La huelga continúa el martes @\u200bhere"
    assert delivered["message"]["urgency"] == "urgent"
    assert timeline["message"]["fields"][0][1] == "La huelga continúa el martes @\u200bhere"
    # Neutralised in everything shown (only the echoed input still has it).
    shown = json.dumps([[e.get("message"), e.get("extra")] for e in events], ensure_ascii=False)
    assert "@here" not in shown and "@everyone" not in shown


def test_console_user_who_is_not_an_admin_is_refused(tmp_path: Path) -> None:
    result = run_console(tmp_path, '/strike post strike_on "Strike over"\n', "--user", "maria")
    assert result.returncode == 1
    assert "Only union admins can post updates" in result.stdout
    assert "[admins.console]" in result.stdout and "“maria”" in result.stdout


def test_interactive_console_shows_deliveries_as_they_go_out(tmp_path: Path) -> None:
    """On a terminal: a prompt, and the background dispatcher shows each delivery."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "SLACK_"))}
    env.update(COLUMNS="120", LINES="50", TERM="dumb")
    process = subprocess.Popen(  # noqa: S603 - our own program, fixed arguments
        strikebot(tmp_path, "console", "--lang", "en"),
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=env,
    )
    os.close(follower)
    seen = ""

    def read_until(needle: str, timeout: float = 30.0) -> None:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while needle not in seen:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"never saw {needle!r}; output so far:\n{seen}")
            ready, _, _ = select.select([leader], [], [], remaining)
            if ready:
                try:
                    seen += os.read(leader, 65536).decode("utf-8", "replace")
                except OSError:  # the child closed the terminal
                    pytest.fail(f"console exited before {needle!r}; output:\n{seen}")

    try:
        read_until("strike›")
        assert "You are 'console' (an admin)" in seen
        os.write(leader, b"/strike subscribe\n")
        read_until("This channel is subscribed")
        os.write(leader, b'/strike post strike_on "Picket lines at dawn"\n')
        read_until("posted in local/#general")
        os.write(leader, b"exit\n")
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)
        assert process.stderr is not None
        process.stderr.close()
