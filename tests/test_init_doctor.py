"""A new campaign from nothing: `strikebot init` writes the campaign file and an empty
database (refusing to overwrite), `strikebot doctor` asks the fake Discord and Slack what the
bot can do and says how to fix each problem, and the first post goes out — real processes,
no edit by hand. Start-up warns about a loopback public_url or placeholder admins."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings, load_config
from bot.plugins import Verdict, installed_plugins
from bot.runtime.doctor import campaign_checks, is_loopback, startup_warnings
from tests.fakes.discord import ROOT, FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.support import free_port

GUILD = "700000000000000001"
OK_CHANNEL, MUTED_CHANNEL, HIDDEN_CHANNEL = (
    "700000000000000011", "700000000000000012", "700000000000000013",
)  # fmt: skip
SEND_MESSAGES = 1 << 11
INIT = (
    "init", "--union", "Acme Workers United", "--employer", "Acme Corp",
    "--timezone", "America/Chicago", "--languages", "en,es", "--strike-start", "2026-03-02",
    "--public-url", "https://strike.acme.example", "--admin", "discord:123456789012345678",
    "--admin", "slack:U0123ABCD", "--demand", "pay=Fair pay", "--demand", "Safe staffing",
)  # fmt: skip


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This machine's environment without any plugin's variables or ours, then `extra`."""
    variables = {
        info.alias or name
        for plugin in installed_plugins().values()
        for name, info in plugin.settings.model_fields.items()
    }
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("STRIKEBOT_") and k not in variables
    }
    return env | {"STRIKEBOT_CONSOLE": "off"} | extra


async def strikebot(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *args,
        env=env or clean_env(tmp_path), cwd=tmp_path,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else b""), 90)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def by_subject(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{c['platform']} {c['subject']}": c for c in report["checks"]}


# ---------------------------------------------------------------------------- init


async def test_init_writes_a_commented_campaign_file_and_an_empty_database(
    tmp_path: Path,
) -> None:
    code, out, err = await strikebot(tmp_path, *INIT)
    assert code == 0, err
    path = tmp_path / "config" / "acme-workers-united.toml"
    text = path.read_text(encoding="utf-8")
    assert "# The file SEEDS the database" in text  # commented for the next person
    raw = tomllib.loads(text)
    assert raw["campaign"]["slug"] == "acme-workers-united"
    assert raw["campaign"]["languages"] == ["en", "es"]
    assert raw["admins"]["discord"]["user_ids"] == ["123456789012345678"]
    assert raw["admins"]["console"]["user_ids"] == ["console"]
    assert [d["key"] for d in raw["demands"]] == ["pay", "safe-staffing"]
    config = load_config(path)  # exactly what `run` reads
    assert config.campaign.timezone == "America/Chicago"
    assert (tmp_path / "data" / "acme-workers-united.db").exists()
    assert "strikebot doctor" in out

    # The database is empty but for the campaign and its first demands.
    database = "sqlite+aiosqlite:///data/acme-workers-united.db"
    env = clean_env(tmp_path, STRIKEBOT_CONFIG=str(path), STRIKEBOT_DATABASE_URL=database)
    code, out, err = await strikebot(tmp_path, "timeline", "--all", "--json", env=env)
    assert code == 0, err
    assert json.loads(out) == []
    code, out, err = await strikebot(tmp_path, "demands", "--json", env=env)
    assert [d["key"] for d in json.loads(out)] == ["pay", "safe-staffing"]

    # Never overwrites: the file and the database are left as they were.
    before = path.read_bytes()
    code, out, err = await strikebot(tmp_path, *INIT)
    assert code == 2
    assert "already exists" in err and "never overwrites" in err
    assert path.read_bytes() == before
    code, out, err = await strikebot(
        tmp_path, "--config", "config/other.toml", *INIT
    )  # a new file, but the database exists
    assert code != 0 and "already exists" in err
    assert not (tmp_path / "config" / "other.toml").exists()


async def test_init_asks_in_a_terminal_and_says_what_is_missing_in_a_script(
    tmp_path: Path,
) -> None:
    code, _, err = await strikebot(tmp_path, "init", "--union", "Acme Workers United")
    assert code == 2 and "--employer" in err
    assert not (tmp_path / "config").exists()
    code, _, err = await strikebot(
        tmp_path, "init", "--union", "X Union", "--employer", "Y", "--timezone", "Pacific Time",
        "--no-input",
    )  # fmt: skip
    assert code == 2 and "Pacific Time" in err


def test_init_prompts_one_question_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a terminal, whatever no flag gave is asked; Enter takes the default or skips."""
    from bot.cli import main

    answers = [
        "Bay Nurses Union", "Bay Hospital", "hospital", "", "America/Los_Angeles", "en",
        "2026-01-05",
        "", "https://strike.baynurses.example",
        "console", "111111111111111111", "", "",  # admins: console, Discord, Slack, Telegram
        "staffing=Safe staffing ratios", "",
    ]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", Terminal("\n".join(answers) + "\n"))
    assert main(["init"]) == 0, capsys.readouterr().err
    raw = tomllib.loads((tmp_path / "config" / "bay-nurses-union.toml").read_text())
    assert raw["campaign"]["employer"] == "Bay Hospital"
    assert raw["campaign"]["kind"] == "hospital"
    assert raw["campaign"]["start_date"].isoformat() == "2026-01-05"
    assert "strike_start" not in raw["campaign"]
    assert raw["admins"]["discord"]["user_ids"] == ["111111111111111111"]
    assert raw["demands"][0]["title"] == {"en": "Safe staffing ratios"}


class Terminal(io.StringIO):
    """Standard input as a terminal, typed in advance."""

    def isatty(self) -> bool:
        return True


def test_init_asks_again_and_keeps_every_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 29: one wrong answer ("Pacific Time") exited and lost every answer; an
    unsupported language was refused only after the last question; any text was accepted as
    a Discord admin id. Each answer is checked as it is typed, and asked again."""
    from bot.cli import main

    answers = [
        "Bay Nurses Union", "Bay Hospital", "hospital", "",
        "Pacific Time", "America/Los_Angeles",  # refused, then asked again
        "en,ko", "en,es",  # refused when typed, before any later question
        "next Monday", "2026-01-05", "",
        "strike.baynurses.example", "https://strike.baynurses.example/",
        "console",
        "Bob#1234", "111111111111111111",  # Discord: a snowflake
        "U0123ABCD, S0456EFGH",  # Slack: a person and a user group
        "not-a-number, 42", "42, -1001234567890",  # Telegram: a person and a group
        "staffing=Safe staffing ratios", "staffing=Ratios again", "pay=Fair pay", "",
    ]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", Terminal("\n".join(answers) + "\n"))
    assert main(["init"]) == 0, capsys.readouterr().err
    said = capsys.readouterr().err
    raw = tomllib.loads((tmp_path / "config" / "bay-nurses-union.toml").read_text())
    assert raw["campaign"]["union"] == "Bay Nurses Union"  # kept through every refusal
    assert raw["campaign"]["timezone"] == "America/Los_Angeles"
    assert raw["campaign"]["languages"] == ["en", "es"]
    assert raw["campaign"]["start_date"].isoformat() == "2026-01-05"
    assert raw["campaign"]["public_url"] == "https://strike.baynurses.example"
    assert raw["admins"]["discord"]["user_ids"] == ["111111111111111111"]
    assert raw["admins"]["slack"] == {"user_ids": ["U0123ABCD"], "usergroup_ids": ["S0456EFGH"]}
    assert raw["admins"]["telegram"] == {"user_ids": ["42"], "admin_chat_ids": ["-1001234567890"]}
    assert [d["key"] for d in raw["demands"]] == ["staffing", "pay"]
    for refusal in ("Pacific Time” is not a time zone", "no catalogue for 'ko'",
                    "'next Monday' is not a date", "not a web address",
                    "'Bob#1234' is not a Discord user id", "'not-a-number' is not a Telegram id",
                    "already a demand with the key 'staffing'"):  # fmt: skip
        assert refusal in said, said
    assert said.count("Try again.") == 7
    assert "Traceback" not in said


async def test_init_checks_admin_ids_by_platform_in_a_script(tmp_path: Path) -> None:
    base = [a for a in INIT if not a.startswith(("discord:", "slack:")) and a != "--admin"]
    code, _, err = await strikebot(tmp_path, *base, "--admin", "discord:Bob")
    assert code == 2 and "is not a Discord user id, which is 17 to 20 digits" in err
    assert not (tmp_path / "config").exists()  # nothing written
    code, _, err = await strikebot(tmp_path, *base, "--admin", "email:someone@example.org")
    assert code == 2 and "nobody posts from E-mail, so it has no admins" in err
    code, _, err = await strikebot(tmp_path, *base, "--languages", "en,ko")
    assert code == 2 and "no catalogue for 'ko'" in err
    code, _, err = await strikebot(
        tmp_path, *base, "--admin", "slack:S0456EFGH", "--admin", "telegram:-1001234567890",
        "--admin", "telegram:42", "--admin", "discord:123456789012345678",
    )  # fmt: skip
    assert code == 0, err
    raw = tomllib.loads((tmp_path / "config" / "acme-workers-united.toml").read_text())
    assert raw["admins"]["slack"] == {"usergroup_ids": ["S0456EFGH"]}
    assert raw["admins"]["telegram"] == {"admin_chat_ids": ["-1001234567890"], "user_ids": ["42"]}


# ---------------------------------------------------------------------------- doctor


async def test_init_then_doctor_then_the_first_post_with_no_edit_by_hand(tmp_path: Path) -> None:
    assert (await strikebot(tmp_path, *INIT))[0] == 0
    async with FakeDiscord() as discord, FakeSlack() as slack:
        slack.add_channel("C0NEWS", "strike-news")
        slack.add_channel("C0STEWARDS", "stewards", member=False, private=True)
        slack.add_channel("C0OLD", "old-news", archived=True)
        discord.deny(MUTED_CHANNEL, SEND_MESSAGES)
        discord.forbidden_channels.add(HIDDEN_CHANNEL)
        env = clean_env(
            tmp_path,
            STRIKEBOT_CONFIG="config/acme-workers-united.toml",
            STRIKEBOT_DATABASE_URL="sqlite+aiosqlite:///data/acme-workers-united.db",
            STRIKEBOT_HTTP_PORT=str(free_port()),
            DISCORD_TOKEN=discord.token,
            DISCORD_API_BASE=discord.base_url,
            DISCORD_GATEWAY_URL=discord.gateway_url,
            SLACK_BOT_TOKEN=slack.bot_token,
            SLACK_APP_TOKEN=slack.app_token,
            SLACK_API_URL=slack.api_url,
        )
        for address in (f"discord:{GUILD}/{OK_CHANNEL}", f"discord:{GUILD}/{MUTED_CHANNEL}",
                        f"discord:{GUILD}/{HIDDEN_CHANNEL}", "slack:T0STRIKE/C0NEWS",
                        "slack:T0STRIKE/C0STEWARDS", "slack:T0STRIKE/C0OLD"):  # fmt: skip
            code, _, err = await strikebot(tmp_path, "subscriptions", "add", address, env=env)
            assert code == 0, err

        code, out, err = await strikebot(tmp_path, "doctor", "--json", env=env)
        assert code == 1, err  # something will not work
        report = by_subject(json.loads(out))
        assert report["discord token"]["verdict"] == "ok"
        assert report["discord intents"]["verdict"] == "ok"
        assert report[f"discord discord:{GUILD}/{OK_CHANNEL}"]["verdict"] == "ok"
        muted = report[f"discord discord:{GUILD}/{MUTED_CHANNEL}"]
        assert muted["verdict"] == "fail" and "Send Messages" in muted["detail"]
        assert "Send Messages" in muted["fix"]
        hidden = report[f"discord discord:{GUILD}/{HIDDEN_CHANNEL}"]
        assert hidden["verdict"] == "fail" and "View Channel" in hidden["fix"]
        assert report["slack token"]["verdict"] == "ok"
        assert report["slack scopes"]["verdict"] == "ok"
        assert report["slack slack:T0STRIKE/C0NEWS"]["verdict"] == "ok"
        private = report["slack slack:T0STRIKE/C0STEWARDS"]
        assert private["verdict"] == "fail" and "/invite" in private["fix"]
        assert report["slack slack:T0STRIKE/C0OLD"]["verdict"] == "fail"
        assert report["campaign public_url"]["verdict"] == "ok"
        assert report["discord admins"]["verdict"] == "ok"
        assert discord.token not in out + err and slack.bot_token not in out + err

        # The fixes, done where the platforms are; then everything checks out.
        discord.channel_overwrites.clear()
        discord.forbidden_channels.clear()
        slack.channels["C0STEWARDS"].member = True
        assert (await strikebot(tmp_path, "subscriptions", "remove", "slack:T0STRIKE/C0OLD",
                                env=env))[0] == 0  # fmt: skip
        code, out, err = await strikebot(tmp_path, "doctor", "--json", env=env)
        assert code == 0, out
        report = json.loads(out)
        assert {c["verdict"] for c in report["checks"]} <= {"ok", "off"}, out
        assert report["reaching"] == ["Discord", "Slack"]
        code, out, _ = await strikebot(tmp_path, "doctor", env=env)
        assert "Everything checked works: Discord, Slack reach people" in out

        # The first post reaches every channel.
        code, _, err = await strikebot(
            tmp_path, "post", "--status", "strike_on", "--urgency", "urgent",
            "--headline", "The strike is on", "--es-headline", "Comienza la huelga", env=env,
        )  # fmt: skip
        assert code == 0, err
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "run", env=env, cwd=tmp_path,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert proc.stderr is not None
        log = asyncio.create_task(proc.stderr.read())
        try:
            await discord.wait_for(
                lambda: (
                    len([m for m in discord.messages.values() if not m.deleted]) >= 3
                    or proc.returncode is not None
                    or None
                ),
                within=60,
            )
            assert proc.returncode is None, (await log).decode()
            for channel in ("C0NEWS", "C0STEWARDS"):
                await slack.wait_for_message(channel, within=30)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 30)
        stderr = (await log).decode()
        assert "The strike is on" in str(next(iter(discord.messages.values())).embeds)
        assert "check the campaign file" not in stderr  # nothing to warn about


async def test_doctor_says_a_refused_token_and_missing_scopes_and_how_to_fix_them(
    tmp_path: Path,
) -> None:
    assert (await strikebot(tmp_path, *INIT))[0] == 0
    async with FakeDiscord() as discord, FakeSlack() as slack:
        slack.scopes -= {"usergroups:read", "groups:read", "channels:read"}
        env = clean_env(
            tmp_path,
            STRIKEBOT_CONFIG="config/acme-workers-united.toml",
            STRIKEBOT_DATABASE_URL="sqlite+aiosqlite:///data/acme-workers-united.db",
            DISCORD_TOKEN="not-the-token", DISCORD_API_BASE=discord.base_url,
            SLACK_BOT_TOKEN=slack.bot_token, SLACK_API_URL=slack.api_url,
        )  # fmt: skip
        await strikebot(tmp_path, "subscriptions", "add", "slack:T0STRIKE/C0NEWS", env=env)
        code, out, err = await strikebot(tmp_path, "doctor", "--json", env=env)
    assert code == 1, err
    report = by_subject(json.loads(out))
    token = report["discord token"]
    assert token["verdict"] == "fail" and "Reset Token" in token["fix"]
    scopes = report["slack scopes"]
    assert scopes["verdict"] == "fail" and "usergroups:read" in scopes["detail"]
    assert "Reinstall" in scopes["fix"]
    assert report["slack channel checks"]["verdict"] == "warn"
    assert report["slack slack:T0STRIKE/C0NEWS"]["verdict"] == "skip"
    assert "not-the-token" not in out + err


# ---------------------------------------------------------------------------- warnings


def test_start_up_warns_about_a_loopback_url_and_placeholder_admins_when_a_token_is_set() -> None:
    config = load_config(ROOT / "config" / "strike.toml")  # the demo: placeholders, 127.0.0.1
    plugins = installed_plugins()
    quiet = Settings.from_env({}, plugins=plugins)
    assert startup_warnings(quiet, config, plugins) == []  # the demo with no token: fine
    with_discord = Settings.from_env({"DISCORD_TOKEN": "x"}, plugins=plugins)
    warnings = startup_warnings(with_discord, config, plugins)
    assert len(warnings) == 2
    assert "127.0.0.1" in warnings[0] and "https://" in warnings[0]
    assert "placeholder" in warnings[1] and "100000000000000001" in warnings[1]
    checks = campaign_checks(with_discord, config, plugins)
    assert {c.subject: c.verdict for c in checks} == {
        "public_url": Verdict.FAIL,
        "admins": Verdict.FAIL,
    }
    assert [is_loopback(u) for u in ("http://127.0.0.1:8080", "http://localhost",
            "http://[::1]:8080", "https://strike.utla.net", "http://0.0.0.0")] == [
        True, True, True, False, True]  # fmt: skip


async def test_run_prints_the_warning_once(tmp_path: Path) -> None:
    port = free_port()
    env = clean_env(
        tmp_path,
        STRIKEBOT_CONFIG=str(ROOT / "config" / "strike.toml"),
        STRIKEBOT_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'run.db'}",
        STRIKEBOT_HTTP_PORT=str(port),
        TELEGRAM_BOT_TOKEN="123:abc",
        TELEGRAM_API_BASE="http://127.0.0.1:9",  # nothing there: Telegram retries quietly
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", env=env, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert proc.stdout is not None
    seen = ""
    try:
        async with asyncio.timeout(60):
            while "strikebot serving" not in seen:  # or the process ends
                line = await proc.stdout.readline()
                if not line:
                    break
                seen += line.decode()
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, _ = await asyncio.wait_for(proc.communicate(), 30)
    seen += rest.decode()
    assert seen.count("127.0.0.1:8080, which only this machine can open") == 1, seen
    assert "123:abc" not in seen


async def test_telegram_answers_for_itself_too() -> None:
    """The doctor hook is the plugin boundary's: Telegram's checks the token and, per
    subscribed chat, whether the bot can post (a channel needs it as a posting admin)."""
    from bot.ports import DoctorRequest, Subscription
    from tests.fakes.telegram import FakeTelegram
    from tests.support import CAMPAIGN

    plugin = installed_plugins()["telegram"]
    assert plugin.doctor is not None

    def chat(chat_id: int) -> Subscription:
        return Subscription(id=chat_id, platform="telegram", workspace=str(chat_id),
                            channel=str(chat_id), language="en", timezone="UTC")  # fmt: skip

    async with FakeTelegram() as tg:
        tg.add_chat(-1001, "supergroup", "Parents")
        tg.add_chat(-1002, "channel", "Strike news", admin=True)
        tg.add_chat(-1003, "channel", "Old news")  # the bot is a member, not an admin
        tg.add_chat(-1004, "supergroup", "Stewards")
        tg.kick(-1004)
        subs = tuple(chat(i) for i in (-1001, -1002, -1003, -1004, -1005))
        settings = plugin.settings.from_env(
            {"TELEGRAM_BOT_TOKEN": tg.token, "TELEGRAM_API_BASE": tg.base_url}
        )
        checks = await plugin.doctor(DoctorRequest(settings, None, None, CAMPAIGN, subs))
        bad = plugin.settings.from_env(
            {"TELEGRAM_BOT_TOKEN": "999:wrong", "TELEGRAM_API_BASE": tg.base_url}
        )
        refused = await plugin.doctor(DoctorRequest(bad, None, None, CAMPAIGN, ()))
    verdicts = {c.subject: c.verdict for c in checks}
    assert verdicts == {
        "token": Verdict.OK,
        "telegram:-1001/-1001": Verdict.OK,
        "telegram:-1002/-1002": Verdict.OK,
        "telegram:-1003/-1003": Verdict.FAIL,
        "telegram:-1004/-1004": Verdict.FAIL,
        "telegram:-1005/-1005": Verdict.FAIL,
    }
    fixes = {c.subject: c.fix for c in checks}
    assert "Post Messages" in fixes["telegram:-1003/-1003"]
    assert "Add the bot" in fixes["telegram:-1004/-1004"]
    assert [(c.subject, c.verdict) for c in refused] == [("token", Verdict.FAIL)]


async def test_discord_checks_the_servers_in_guild_ids_and_public_bot() -> None:
    from adapters.discord._settings import DiscordSection
    from bot.ports import DoctorRequest
    from tests.support import CAMPAIGN

    plugin = installed_plugins()["discord"]
    assert plugin.doctor is not None
    async with FakeDiscord() as discord:
        discord.bot_public = True
        settings = plugin.settings.from_env(
            {"DISCORD_TOKEN": discord.token, "DISCORD_API_BASE": discord.base_url}
        )
        section = DiscordSection(guild_ids=[GUILD, "700000000000000999"])
        checks = await plugin.doctor(DoctorRequest(settings, section, None, CAMPAIGN, ()))
    found = {c.subject: c for c in checks}
    assert found[f"server {GUILD}"].verdict is Verdict.OK
    gone = found["server 700000000000000999"]
    assert gone.verdict is Verdict.FAIL and "strikebot discord invite" in gone.fix
    public = found["public bot"]
    assert public.verdict is Verdict.WARN and "Install Link to None" in public.fix


async def test_doctor_names_channels_on_platforms_that_are_off_or_cannot_check_themselves(
    sqlite_store: Any,
) -> None:
    from bot.clock import FixedClock
    from bot.editorial.admin import Admin
    from bot.models import Subscription
    from bot.runtime.doctor import run_doctor
    from tests.support import ADMIN, ADMINS, FRIDAY

    config = load_config(ROOT / "config" / "strike.toml")
    admin = Admin(sqlite_store, config.to_campaign(), ADMINS, FixedClock(FRIDAY))
    for platform in ("console", "discord"):
        await admin.subscribe(
            ADMIN, Subscription(id=0, platform=platform, workspace="w1", channel="c1",
                                language="en", timezone="UTC"),
        )  # fmt: skip
    plugins = installed_plugins()
    report = await run_doctor(Settings.from_env({}, plugins=plugins), config, sqlite_store, plugins)
    found = {(c.platform, c.subject): c for c in report.checks}
    off = found[("discord", "state")]
    assert off.verdict is Verdict.FAIL and "DISCORD_TOKEN" in off.fix
    assert off.detail == "off, and 1 channel(s) subscribed get nothing"
    assert found[("console", "self-check")].verdict is Verdict.SKIP
    assert found[("campaign", "public_url")].verdict is Verdict.WARN  # no token: a warning
    # Off, and nothing subscribed there: off, with how to switch it on, and no failure.
    assert found[("slack", "state")].verdict is Verdict.OFF
    assert "SLACK_BOT_TOKEN" in found[("slack", "state")].fix
    assert report.exit_code == 1
