"""A preview says how long each platform takes at its configured pace, and when that is
long, the plugin's advice: on the command line (`strikebot post --dry-run`) and in typed
chat (`/strike post ... preview`), from the campaign file's `[delivery]` keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.clock import utcnow
from bot.commands import CommandContext
from bot.config import load_config
from bot.editorial.admin import Admin
from bot.editorial.reach import Reach, Spend
from bot.metrics import Metrics
from bot.models import Contact
from bot.people.signups import Offer, signups_for
from bot.plugins import installed_plugins
from bot.plugins.outbound import Pacing
from bot.runtime.context import commands_for
from bot.store import Store
from tests.support import ADMIN, ADMINS, ROOT

PHONES = 120  # 2 minutes at the shipped 1 text a second


def campaign_file(tmp_path: Path, sms_per_second: float) -> Path:
    lines = []
    for line in (ROOT / "config" / "strike.toml").read_text().splitlines():
        if line.startswith("sms_per_second"):
            line = f"sms_per_second = {sms_per_second:g}"
        lines.append(line)
    path = tmp_path / "strike.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


async def people(url: str, config_path: Path) -> None:
    async with Store.open(url) as store:
        signups = signups_for(store, load_config(config_path), utcnow)
        signups.offer(Offer(Contact.PHONE, "sms"))
        for n in range(PHONES):
            await signups.join(Contact.PHONE, f"+1213555{n:04d}", language="en", via="test")


def run(capsys: pytest.CaptureFixture[str], config: Path, url: str, *args: str) -> str:
    capsys.readouterr()
    code = main(["--config", str(config), "--database-url", url, *args])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return " ".join(captured.out.split())  # the console wraps long lines


DRY_RUN = ["post", "--dry-run", "--urgency", "urgent", "--headline", "Strike is on"]


@pytest.fixture
async def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A database where 120 people signed up for texts."""
    for name in ("STRIKEBOT_CONFIG", "STRIKEBOT_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    database = f"sqlite+aiosqlite:///{tmp_path / 'people.db'}"
    await people(database, campaign_file(tmp_path, 1))
    return database


def test_a_dry_run_says_how_long_the_texts_take(
    tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    shipped = campaign_file(tmp_path, 1)
    out = run(capsys, shipped, url, *DRY_RUN)
    assert "Nothing was posted." in out
    assert "120 text segments. 120 texts at 1 a second: about 2 minutes." in out
    assert "which is long" not in out
    found = json.loads(run(capsys, shipped, url, *DRY_RUN, "--json"))
    assert found["seconds"]["sms"] == 120.0

    slow = campaign_file(tmp_path, 0.02)  # 120 texts: 100 minutes
    out = run(capsys, slow, url, *DRY_RUN)
    assert "120 texts at 0.02 a second: about 2 hours, which is long." in out
    assert "A Messaging Service or a short code sends texts faster than one number." in out


async def test_typed_chat_previews_say_how_long_the_texts_take(tmp_path: Path, url: str) -> None:
    config_path = campaign_file(tmp_path, 0.02)
    config = load_config(config_path)
    async with Store.open(url) as store:
        admin = Admin(store, config.to_campaign(), ADMINS, utcnow)
        commands = commands_for(config, store, admin, utcnow, Metrics())
        ctx = CommandContext("discord", ADMIN, "G1", "C1")
        reply = await commands.handle(
            ctx, 'post strike_on "Strike is on" "Picket lines at 6:30." urgency=urgent preview'
        )
    assert reply.ok, reply.message.body
    body = " ".join(reply.message.body.split())
    assert "120 texts at 0.02 a second: about 2 hours, which is long." in body
    assert "A Messaging Service or a short code" in body


def test_the_estimate_is_said_in_spanish_and_rounded_to_a_readable_unit() -> None:
    plugins = installed_plugins()
    found = Reach(
        spends=(Spend("sms", 100_000, 150_000), Spend("email", 1_204, 1_204)),
        _plugins=plugins,
        platforms={"email": 1_204, "sms": 100_000},
        paces={"email": Pacing(1000, 1), "sms": Pacing(100, 1)},
    )
    assert found.estimates("en") == [
        "1,204 e-mails at 1,000 a second: about 1 second.",
        "100,000 texts at 100 a second: about 17 minutes.",
    ]
    slow = Reach(
        spends=(Spend("sms", 100_000, 150_000),),
        _plugins=plugins,
        platforms={"sms": 100_000},
        paces={"sms": Pacing(1, 1)},
    )
    (spanish,) = slow.estimates("es")
    assert spanish.startswith(
        "100.000 mensajes a 1 por segundo: aproximadamente 28 horas, que es mucho tiempo."
    )
    assert "Un Messaging Service o un código corto" in spanish
    assert Reach(platforms={"sms": 10}).estimates("en") == []  # no pace known: nothing said
    chat = Reach(
        channels=3, _plugins=plugins, platforms={"discord": 3}, paces={"discord": Pacing(48, 5)}
    )
    assert chat.estimates("en") == []  # three channels go in moments
    many = Reach(
        channels=10_000,
        _plugins=plugins,
        platforms={"discord": 10_000},
        paces={"discord": plugins["discord"].pacing(None)},  # type: ignore[misc]
    )
    assert many.estimates("en") == ["10,000 chat channels at 48 a second: about 3 minutes."]
