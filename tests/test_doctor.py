"""`strikebot doctor` tells the truth both ways: a platform that works is on (e-mail through a
real SMTP server, texts through the fake Twilio), one that fails is broken with the reason,
the admin token's strength, the campaign file against the database, partial catalogues, and
"all good" only when something that reaches people is on and answering. Each exit status
(docs/cli.md) has its case. Start-up says the file's differences and partial catalogues."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from bot import i18n
from bot.clock import FixedClock
from bot.config import Settings
from bot.models import Contact
from bot.people.signups import Offer, SignUps
from bot.plugins import DoctorRequest, Verdict, installed_plugins
from bot.runtime.doctor import EXIT_FAILING, EXIT_NOTHING_REACHED, EXIT_OK, run_doctor
from bot.store import Store
from tests.fakes.discord import ROOT, FakeDiscord
from tests.fakes.smtp import FakeSmtp
from tests.fakes.twilio import FakeTwilio
from tests.family_support import family_env
from tests.support import CAMPAIGN, campaign_config, free_port
from tests.test_init_doctor import INIT, by_subject, clean_env, strikebot

PERSON = "maria.lopez@example.com"


async def signed_up(store: Store, clock: FixedClock) -> None:
    """One person who signed up for e-mail and confirmed, as the page's form does it."""
    people = SignUps(store, CAMPAIGN, clock)
    people.offer(Offer(Contact.EMAIL, "email"))
    await people.request(Contact.EMAIL, PERSON, client="c", via="web")
    async with store.read() as tx:
        rows = [d for d in await tx.list_deliveries(limit=None) if d.action == "confirm"]
    message = rows[-1].payload and rows[-1].payload["message"]
    assert isinstance(message, dict)
    await people.confirm(str(message["url"]).rsplit("/", 1)[1])


# ---------------------------------------------------------------------------- each plugin


async def test_email_that_works_is_on_and_needs_no_admins(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """Issue 29: with e-mail working, doctor said "E-mail, which is off: nothing reaches
    them" and "[admins.email] lists nobody", and exited 1."""
    plugins = installed_plugins()
    await signed_up(sqlite_store, clock)
    async with FakeSmtp() as smtp:
        settings = Settings.from_env(family_env(smtp, None), plugins=plugins)
        report = await run_doctor(settings, campaign_config(), sqlite_store, plugins, clock=clock)
        wrong = family_env(smtp, None)
        wrong["STRIKEBOT_SMTP_URL"] = wrong["STRIKEBOT_SMTP_URL"].replace("s3cret", "wrong")
        refused = await run_doctor(
            Settings.from_env(wrong, plugins=plugins), campaign_config(), sqlite_store, plugins
        )
    found = {(c.platform, c.subject): c for c in report.checks}
    state = found[("email", "state")]
    assert (state.verdict, state.detail) == (Verdict.OK, "on (1 person(s) signed up)")
    assert found[("email", "server")].verdict is Verdict.OK
    assert ("email", "admins") not in found
    assert not any("off" in c.detail and c.platform == "email" for c in report.checks)
    assert PERSON not in json.dumps([c.detail + c.fix for c in report.checks])
    assert report.reaching == ("E-mail",) and report.exit_code == EXIT_OK
    assert "Everything checked works: E-mail reaches people" in report.summary() or (
        "E-mail reach people" in report.summary()
    )
    broken = {(c.platform, c.subject): c for c in refused.checks}[("email", "state")]
    assert broken.verdict is Verdict.FAIL and broken.detail.startswith("broken: the mail server")
    assert "refused the login" in broken.detail and refused.exit_code == EXIT_FAILING
    assert "wrong" not in json.dumps([c.detail + c.fix for c in refused.checks])


async def test_texts_check_the_account_and_warn_about_us_registration() -> None:
    plugin = installed_plugins()["sms"]
    assert plugin.doctor is not None
    section = plugin.section
    assert section is not None
    async with FakeTwilio() as twilio:
        settings = plugin.settings.from_env(family_env(None, twilio))
        unregistered = await plugin.doctor(
            DoctorRequest(settings, section.model_validate({}), None, CAMPAIGN, ())
        )
        registered = await plugin.doctor(
            DoctorRequest(settings, section.model_validate({"us_registered": True}), None,
                          CAMPAIGN, ())
        )  # fmt: skip
        twilio.account_type = "Trial"
        trial = await plugin.doctor(
            DoctorRequest(settings, section.model_validate({"countries": ["CA"]}), None,
                          CAMPAIGN, ())
        )  # fmt: skip
        twilio.account_status = "suspended"
        suspended = await plugin.doctor(DoctorRequest(settings, None, None, CAMPAIGN, ()))
        wrong = plugin.settings.from_env(
            family_env(None, twilio) | {"TWILIO_AUTH_TOKEN": "not-the-token"}
        )
        refused = await plugin.doctor(DoctorRequest(wrong, None, None, CAMPAIGN, ()))
    found = {c.subject: c for c in unregistered}
    assert found["account"].verdict is Verdict.OK
    us = found["US registration"]
    assert us.verdict is Verdict.WARN and "A2P 10DLC" in us.fix and "days to weeks" in us.fix
    assert "us_registered = true" in us.fix
    assert [(c.subject, c.verdict) for c in registered] == [("account", Verdict.OK)]
    assert [(c.subject, c.verdict) for c in trial] == [
        ("account", Verdict.OK), ("trial", Verdict.WARN)
    ]  # fmt: skip
    assert [(c.subject, c.verdict) for c in suspended] == [("account", Verdict.FAIL)]
    assert "suspended" in suspended[0].detail
    assert [(c.subject, c.verdict) for c in refused] == [("account", Verdict.FAIL)]
    assert "not-the-token" not in refused[0].detail + refused[0].fix


@pytest.mark.parametrize(
    ("token", "verdict"),
    [
        (None, Verdict.OFF),
        ("change-me", Verdict.FAIL),
        ("a" * 40, Verdict.FAIL),  # long, but one character
        ("0123456789abcdef01234567", Verdict.WARN),  # 24 hex digits: 96 bits
        ("3f9c2b8e7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e", Verdict.OK),
    ],
)
async def test_the_admin_token_is_strong_enough(token: str | None, verdict: Verdict) -> None:
    plugin = installed_plugins()["web"]
    assert plugin.doctor is not None
    env = {"STRIKEBOT_ADMIN_TOKEN": token} if token else {}
    [check] = await plugin.doctor(
        DoctorRequest(plugin.settings.from_env(env), None, None, CAMPAIGN, ())
    )
    assert (check.subject, check.verdict) == ("admin token", verdict)
    if token:
        assert token not in check.detail + check.fix
    if verdict in (Verdict.FAIL, Verdict.WARN):
        assert "openssl rand -hex 32" in check.fix


# ---------------------------------------------------------------------------- exit statuses


def demo_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    defaults = {
        "STRIKEBOT_CONFIG": str(ROOT / "config" / "strike.toml"),
        "STRIKEBOT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'demo.db'}",
    }
    return clean_env(tmp_path, **(defaults | extra))


async def test_nothing_connected_and_nothing_subscribed_is_not_all_good(tmp_path: Path) -> None:
    """Issue 29: with nothing connected and no channel subscribed, doctor said
    "Everything checked works." It says nothing reaches anyone, and exits 5."""
    code, out, err = await strikebot(tmp_path, "doctor", "--json", env=demo_env(tmp_path))
    assert code == EXIT_NOTHING_REACHED == 5, err
    report = json.loads(out)
    assert not report["ok"] and report["reaching"] == []
    assert "nothing reaches anyone yet" in report["summary"]
    states = {c["platform"]: c for c in report["checks"] if c["subject"] == "state"}
    assert states["discord"]["verdict"] == "off" and "DISCORD_TOKEN" in states["discord"]["fix"]
    assert states["web"]["verdict"] == "ok"  # on, but it is no platform that reaches people
    code, out, _ = await strikebot(tmp_path, "doctor", env=demo_env(tmp_path))
    assert code == 5 and "Everything checked works" not in out


async def test_a_connected_platform_with_nothing_subscribed_is_not_all_good(
    tmp_path: Path,
) -> None:
    assert (await strikebot(tmp_path, *INIT))[0] == 0
    async with FakeDiscord() as discord:
        env = clean_env(
            tmp_path,
            STRIKEBOT_CONFIG="config/acme-workers-united.toml",
            STRIKEBOT_DATABASE_URL="sqlite+aiosqlite:///data/acme-workers-united.db",
            DISCORD_TOKEN=discord.token, DISCORD_API_BASE=discord.base_url,
        )  # fmt: skip
        code, out, err = await strikebot(tmp_path, "doctor", "--json", env=env)
    assert code == 5, out + err
    report = json.loads(out)
    assert by_subject(report)["discord state"]["verdict"] == "ok"
    assert "Discord answered, and no channel there is subscribed" in report["summary"]
    assert "/strike subscribe" in report["summary"]


async def test_each_exit_status_is_documented_and_meant(tmp_path: Path) -> None:
    """0 and 1 are in test_init_doctor (all good; a refused token), 5 above; 2 a campaign
    file that does not load, 4 a database that does not answer."""
    bad = tmp_path / "bad.toml"
    bad.write_text('[campaign]\nslug = "x"\n', encoding="utf-8")
    code, _, err = await strikebot(
        tmp_path, "doctor", env=demo_env(tmp_path, STRIKEBOT_CONFIG=str(bad))
    )
    assert code == 2 and "bad.toml" in err and "Traceback" not in err
    code, _, err = await strikebot(
        tmp_path, "doctor",
        env=demo_env(tmp_path, STRIKEBOT_DATABASE_URL="postgresql+asyncpg://nobody@127.0.0.1:1/x"),
    )  # fmt: skip
    assert code == 4 and "Cannot open the database" in err
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    paragraph = text[text.index("`doctor` exits") :].split("\n\n")[0]
    for status, meaning in [(EXIT_OK, "0"), (EXIT_FAILING, "1"), (EXIT_NOTHING_REACHED, "5")]:
        assert f"{meaning} " in paragraph and str(status) == meaning
    assert "2 " in paragraph and "4 " in paragraph


# ---------------------------------------------------------------------------- the file


async def start_up(tmp_path: Path, env: dict[str, str]) -> str:
    """What `strikebot run` prints until it serves, then it is stopped."""
    env = env | {"STRIKEBOT_HTTP_PORT": str(free_port())}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", env=env, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert proc.stdout is not None
    seen = ""
    try:
        async with asyncio.timeout(60):
            while "strikebot serving" not in seen:
                line = await proc.stdout.readline()
                if not line:
                    break
                seen += line.decode()
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        rest, _ = await asyncio.wait_for(proc.communicate(), 30)
    return seen + rest.decode()


async def test_a_file_edited_after_seeding_is_named_with_the_command_that_applies_it(
    tmp_path: Path,
) -> None:
    """Issue 29: changes to the campaign file were silently ignored after the first run."""
    config = tmp_path / "strike.toml"
    shutil.copy(ROOT / "config" / "strike.toml", config)
    env = demo_env(tmp_path, STRIKEBOT_CONFIG=str(config))
    code, out, _ = await strikebot(tmp_path, "doctor", "--json", env=env)  # seeds
    assert by_subject(json.loads(out))["campaign campaign file"]["verdict"] == "ok"

    text = config.read_text(encoding="utf-8")
    before = 'es = "Salario justo"'
    assert before in text
    config.write_text(text.replace(before, 'es = "Un salario digno"'), encoding="utf-8")
    code, out, _ = await strikebot(tmp_path, "doctor", "--json", env=env)
    found = by_subject(json.loads(out))["campaign file: demand pay"]
    assert found["verdict"] == "warn" and "title (es)" in found["detail"]
    assert "the database is what people see" in found["detail"]
    command = found["fix"]
    assert command.startswith("strikebot demand edit pay --language es --title")

    logged = await start_up(tmp_path, env)
    assert logged.count("the campaign file's demand pay differs from the database") == 1, logged
    assert "strikebot demand edit pay" in logged

    code, _, err = await strikebot(tmp_path, *shlex.split(command)[1:], env=env)
    assert code == 0, err
    code, out, _ = await strikebot(tmp_path, "doctor", "--json", env=env)
    report = by_subject(json.loads(out))
    assert report["campaign campaign file"]["verdict"] == "ok"  # the database follows it now
    code, out, _ = await strikebot(tmp_path, "demand", "show", "pay", "--lang", "es", env=env)
    assert "Un salario digno" in out

    # Changed through the bot, the file untouched: that is the bot's job, not a difference.
    code, _, err = await strikebot(
        tmp_path, "demand", "edit", "pay", "--language", "es", "--title", "Un salario justo",
        "--reason", "shorter", env=env,
    )  # fmt: skip
    assert code == 0, err
    code, out, _ = await strikebot(tmp_path, "doctor", "--json", env=env)
    assert by_subject(json.loads(out))["campaign campaign file"]["verdict"] == "ok"


# ---------------------------------------------------------------------------- catalogues


def partial_catalogue(root: Path) -> None:
    """A French catalogue with one sentence translated, under STRIKEBOT_LOCALES."""
    template = [m for m in i18n.catalogues().template if m.id and m.context]
    catalog = Catalog(locale="fr", domain=i18n.DOMAIN)
    first = template[0]
    catalog.add(first.id, "Traduit", context=first.context)
    path = root / "fr" / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"
    path.parent.mkdir(parents=True)
    with path.open("wb") as f:
        write_po(f, catalog)


async def test_partial_catalogues_are_counted_by_doctor_and_at_start_up(tmp_path: Path) -> None:
    partial_catalogue(tmp_path / "locales")
    extra = {"STRIKEBOT_LOCALES": str(tmp_path / "locales")}
    init = [a if a != "en,es" else "en,fr" for a in INIT]
    assert (await strikebot(tmp_path, *init, env=clean_env(tmp_path, **extra)))[0] == 0
    env = clean_env(
        tmp_path,
        STRIKEBOT_CONFIG="config/acme-workers-united.toml",
        STRIKEBOT_DATABASE_URL="sqlite+aiosqlite:///data/acme-workers-united.db",
        **extra,
    )
    _, out, _ = await strikebot(tmp_path, "doctor", "--json", env=env)
    report = by_subject(json.loads(out))
    french: dict[str, Any] = report["campaign catalogue fr"]
    total = len([m for m in i18n.catalogues().template if m.id and m.context])
    assert french["verdict"] == "warn"
    assert french["detail"].startswith(f"1 of {total} sentences translated")
    assert "strikebot translations export fr" in french["fix"]
    assert report["campaign catalogue en"]["verdict"] == "ok"
    logged = await start_up(tmp_path, env)
    assert f"the catalogue fr is partial: 1 of {total} sentences translated" in logged, logged
