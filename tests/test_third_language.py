"""A third language is files only: a catalogue in a folder and the campaign's text in it.

The language here is a pseudo-translation (every sentence bracketed and accented, blanks
kept) filed under a code CLDR knows, built in the test's own directory: no real language
ships without a fluent reviewer.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from bot import i18n

REPO = Path(__file__).resolve().parent.parent
CODE = "eo"  # any code CLDR knows; the text is pseudo, not Esperanto
_ACCENTS = str.maketrans("aeiouAEIOUcnsz", "áéíóúÁÉÍÓÚçñšž")
_BLANK = re.compile(r"(\{[^{}]*\})")

CAMPAIGN = f"""
[campaign]
slug = "third-language"
union = "Example Workers Union"
employer = "Example Employer"
start_date = 2025-03-01
strike_start = 2025-06-02
timezone = "America/Chicago"
languages = ["en", "{CODE}"]

[admins.console]
user_ids = ["console"]

[[demands]]
key = "pay"
status = "open"
title = {{ en = "Fair pay", {CODE} = "⟦Fáír páy⟧" }}
union_position = {{ en = "A raise.", {CODE} = "⟦Á ráíšé.⟧" }}

[[updates]]
key = "strike-vote"
published_at = 2025-05-27T18:00:00-05:00
status = "strike_vote"
urgency = "important"
next_step_at = 2025-06-02T06:00:00-05:00
headline = {{ en = "We vote to strike", {CODE} = "⟦Wé vóté tó štríké⟧" }}
next_step = {{ en = "Picket lines", {CODE} = "⟦Píçkét líñéš⟧" }}
"""


def pseudo(text: str) -> str:
    """'{n} chat channels' -> '⟦{n} çhát çháññéls⟧': the blanks stay as they are."""
    parts = _BLANK.split(text)
    return "⟦" + "".join(p if _BLANK.fullmatch(p) else p.translate(_ACCENTS) for p in parts) + "⟧"


def write_pseudo_catalogue(folder: Path) -> Path:
    template = i18n.catalogues().template
    catalog = Catalog(locale=CODE, domain=i18n.DOMAIN)
    for message in template:
        if not message.id:
            continue
        if isinstance(message.id, str):
            string: str | tuple[str, ...] = pseudo(message.id)
        else:
            string = tuple(pseudo(message.id[min(i, 1)]) for i in range(catalog.num_plurals))
        catalog.add(message.id, string, context=message.context, flags=message.flags)
    path = folder / CODE / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"
    path.parent.mkdir(parents=True)
    with path.open("wb") as fp:
        write_po(fp, catalog)
    return path


def strikebot(
    tmp_path: Path, *args: str, locales: Path | None, script: str = ""
) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "campaign.toml"
    config.write_text(CAMPAIGN, encoding="utf-8")
    program = Path(sys.executable).parent / "strikebot"
    command = [str(program)] if program.exists() else [sys.executable, "-m", "bot.cli"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "SLACK_"))}
    env["COLUMNS"] = "200"
    env.pop(i18n.LOCALES_ENV, None)
    if locales is not None:
        env[i18n.LOCALES_ENV] = str(locales)
    return subprocess.run(  # noqa: S603 - our own program, fixed arguments
        [
            *command,
            "--config",
            str(config),
            "--database-url",
            f"sqlite+aiosqlite:///{tmp_path / 'third.db'}",
            *args,
        ],
        input=script,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
        check=False,
    )


def console(
    tmp_path: Path, script: str, *args: str, locales: Path | None
) -> subprocess.CompletedProcess[str]:
    now = ("--now", "2025-05-28T10:00-05:00")
    return strikebot(tmp_path, "console", *now, *args, locales=locales, script=script)


def test_without_its_catalogue_a_language_is_refused_with_the_fix(tmp_path: Path) -> None:
    result = console(tmp_path, "/strike status\n", locales=None)
    assert result.returncode != 0
    assert f"'{CODE}' has no catalogue" in result.stderr
    assert f"{CODE}/LC_MESSAGES/strikebot.po" in result.stderr


def test_a_third_language_added_by_files_answers_in_it(tmp_path: Path) -> None:
    locales = tmp_path / "locales"
    write_pseudo_catalogue(locales)

    result = console(
        tmp_path,
        "/strike status\n/strike demand pay\n/strike help\n",
        "--lang",
        CODE,
        locales=locales,
    )

    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.split())
    # The bot's own sentences come from the new catalogue...
    label = pseudo(i18n.text("en", "status.strike_vote"))
    assert pseudo(i18n.text("en", "commands.status_title")).format(label=label) in out
    assert pseudo(i18n.text("en", "commands.next_step")) in out
    # ...the campaign's text in that language from the campaign file...
    assert "⟦Fáír páy⟧" in out and "⟦Á ráíšé.⟧" in out
    assert "Fair pay" not in out
    assert pseudo(i18n.text("en", "demand_status.open")) in out
    # ...and its dates from CLDR, found by the code alone.
    assert "lundo, 2 Junio, 06:00 CDT" in out


def test_the_same_campaign_still_answers_in_english(tmp_path: Path) -> None:
    locales = tmp_path / "locales"
    write_pseudo_catalogue(locales)

    result = console(tmp_path, "/strike demand pay\n", locales=locales)

    assert result.returncode == 0, result.stderr
    assert "Fair pay" in result.stdout
    assert "⟦" not in result.stdout


def test_the_public_site_has_a_page_in_the_third_language(tmp_path: Path) -> None:
    locales = tmp_path / "locales"
    write_pseudo_catalogue(locales)

    result = strikebot(tmp_path, "publish", str(tmp_path / "site"), locales=locales)

    assert result.returncode == 0, result.stderr
    page = (tmp_path / "site" / CODE / "index.html").read_text(encoding="utf-8")
    assert f'<html lang="{CODE}">' in page
    assert "⟦Wé vóté tó štríké⟧" in page and "⟦Fáír páy⟧" in page
    assert pseudo(i18n.text("en", "status.strike_vote")) in page
    english = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "We vote to strike" in english and "⟦" not in english
    assert "Esperanto" in english  # the language switch names it in its own words (CLDR)
