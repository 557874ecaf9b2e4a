"""`strikebot init`: start a new campaign. Asks for what it needs (or takes it as flags, for
scripts), writes a commented campaign file and an empty database, and refuses to overwrite
either.

    strikebot init                                    # asks, one question at a time
    strikebot --config config/acme.toml init --union "Acme Workers United" \\
        --employer "Acme Corp" --timezone America/Chicago --languages en,es \\
        --strike-start 2026-03-02 --public-url https://strike.acmeworkers.org \\
        --admin discord:123456789012345678 --admin slack:U0123ABCD \\
        --demand "pay=Fair pay" --demand "safety=Safe staffing"

In a terminal each answer is checked as it is typed and asked again until it is usable;
no answer given before is lost. The file goes to `--config` (default `config/<slug>.toml`),
the database to `--database-url` (default SQLite `data/<slug>.db`). Then `strikebot doctor`
and `strikebot run` with the same two.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from rich.markup import escape

from bot import i18n
from bot.cli import err, out
from bot.clock import shifted_clock
from bot.config import load_config
from bot.editorial.parsing import parse_timezone
from bot.errors import ConfigError, Conflict, InvalidInput
from bot.messages.kinds import defaults as kind_defaults
from bot.models import CampaignKind
from bot.plugins import Plugin, Plugins, installed_plugins

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")
DEMAND = re.compile(r"^\s*(?:([a-z0-9][a-z0-9_-]{0,63})\s*=\s*)?(.+?)\s*$")
LOOPBACK_URL = "http://127.0.0.1:8080"
ASKS = "Enter to skip"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "init",
        help="start a new campaign: write a campaign file and an empty database",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--union", help="the union's name, e.g. 'United Teachers Los Angeles'")
    parser.add_argument(
        "--kind",
        help="the workplace: school, hospital, transit or other; it decides what families "
        "are asked first and when briefings come (default: other)",
    )
    parser.add_argument("--employer", help="the employer's name")
    parser.add_argument("--slug", help="short id of the campaign (default: from the union)")
    parser.add_argument("--timezone", help="IANA time zone, e.g. America/Los_Angeles")
    parser.add_argument(
        "--languages", help="languages, first is the default: en, es or en,es (default en)"
    )
    parser.add_argument("--start-date", help="when bargaining began, YYYY-MM-DD (default today)")
    parser.add_argument("--strike-start", help="day 1 of the strike, YYYY-MM-DD (if there is one)")
    parser.add_argument(
        "--public-url", help="the status page's public https:// address (default: this machine)"
    )
    parser.add_argument(
        "--admin",
        action="append",
        default=[],
        metavar="PLATFORM:ID",
        help="an admin's id on an installed platform, as PLATFORM:ID (repeat); each is checked "
        "in the form its platform gives ids (docs/platforms.md says where to find them)",
    )
    parser.add_argument(
        "--demand",
        action="append",
        default=[],
        metavar="[KEY=]TITLE",
        help="a first demand, e.g. 'pay=Fair pay' (repeat)",
    )
    parser.add_argument(
        "--no-input",
        action="store_true",
        help="never ask: fail if a required value is missing (default when not a terminal)",
    )
    parser.set_defaults(handler=handle)


@dataclass(frozen=True, slots=True)
class Answers:
    union: str
    employer: str
    kind: CampaignKind
    slug: str
    timezone: str
    languages: list[str]
    start_date: date
    strike_start: date | None
    public_url: str
    admins: dict[str, dict[str, list[str]]]  # platform -> its rule's list -> ids
    demands: list[tuple[str, str]]


T = TypeVar("T")


async def handle(args: argparse.Namespace) -> int:
    from bot.runtime.seed import apply_seed
    from bot.store import Store

    plugins = installed_plugins()
    ask = not args.no_input and sys.stdin.isatty()
    answers = _answers(args, plugins, ask)
    config_path = Path(args.config or f"config/{answers.slug}.toml")
    database_url = args.database_url or f"sqlite+aiosqlite:///data/{answers.slug}.db"
    sqlite_file = _sqlite_path(database_url)
    draft, config = _write_draft(render(answers, plugins), config_path, sqlite_file)
    if sqlite_file is not None:
        sqlite_file.parent.mkdir(parents=True, exist_ok=True)
    clock = shifted_clock(getattr(args, "clock_now", None))
    try:
        async with Store.open(database_url) as store:
            async with store.read() as tx:
                existing = await tx.get_meta("campaign_slug")
            if existing is not None:
                raise Conflict(
                    f"The database already holds the campaign {existing!r}; init never reuses "
                    "one. Give a new --database-url."
                )
            await apply_seed(store, config, clock)
    except BaseException:
        draft.unlink(missing_ok=True)
        raise
    draft.rename(config_path)
    shown = _shown(database_url)  # never a password
    env = f"STRIKEBOT_CONFIG={config_path} STRIKEBOT_DATABASE_URL={shown}"
    out.print(f"[bold]Wrote {escape(str(config_path))}[/] and an empty database ({shown}).")
    out.print("Next, with your platform tokens in the environment:")
    out.print(f"  {escape(env)} .venv/bin/strikebot doctor   # can the bot post where it should?")
    out.print(f"  {escape(env)} .venv/bin/strikebot run")
    if answers.public_url == LOOPBACK_URL:
        out.print(
            "[yellow]public_url is this machine's address:[/] set it to the status page's real "
            f"https:// address in {escape(str(config_path))} before members get links."
        )
    return 0


def _write_draft(text: str, config_path: Path, sqlite_file: Path | None) -> tuple[Path, Any]:
    """Refuse to overwrite; write the file beside its final name and read it back exactly as
    `run` will, so a file that would not load is never left behind."""
    if config_path.exists():
        raise Conflict(
            f"{config_path} already exists; init never overwrites a campaign file. Choose "
            "another path with --config, or move that file away."
        )
    if sqlite_file is not None and sqlite_file.exists() and sqlite_file.stat().st_size > 0:
        raise Conflict(
            f"The database {sqlite_file} already exists; init never reuses one. Choose another "
            "with --database-url, or move that file away."
        )
    config_path.parent.mkdir(parents=True, exist_ok=True)
    draft = config_path.with_name(config_path.name + ".new")
    draft.write_text(text, encoding="utf-8")
    try:
        config = load_config(draft)
    except ConfigError as exc:
        draft.unlink()
        raise InvalidInput(str(exc).replace(str(draft), "the campaign file")) from None
    return draft, config


class _Asker:
    """Each answer from its flag, or, in a terminal, asked until it is usable: a refused
    answer is said why and asked again, and every answer before it is kept."""

    def __init__(self, args: argparse.Namespace, interactive: bool) -> None:
        self.args = args
        self.interactive = interactive

    def value(
        self,
        name: str,
        question: str,
        parse: Callable[[str], T],
        *,
        default: str = "",
        required: bool = True,
    ) -> T | None:
        flag = "--" + name.replace("_", "-")
        given = getattr(self.args, name)
        if given is not None and str(given).strip():
            return self._flag(flag, str(given).strip(), parse)
        if self.interactive:
            suffix = f" [{default}]" if default else ("" if required else f" ({ASKS})")
            return self.ask(f"{question}{suffix}: ", parse, default=default, required=required)
        if default:
            return self._flag(flag, default, parse)
        if not required:
            return None
        raise InvalidInput(f"Give {flag} (or run `strikebot init` in a terminal to be asked).")

    def ask(
        self, prompt: str, parse: Callable[[str], T], *, default: str = "", required: bool = True
    ) -> T | None:
        while True:
            try:
                typed = input(prompt).strip()
            except EOFError:
                raise InvalidInput(
                    f"No answer to “{prompt.rstrip(': ')}”: run init again, or give it as a flag."
                ) from None
            text = typed or default
            if not text:
                if not required:
                    return None
                err.print("[yellow]This one is needed.[/] Type an answer.")
                continue
            try:
                return parse(text)
            except (InvalidInput, ValueError) as exc:
                err.print(f"[yellow]{escape(_sentence(exc))}[/] Try again.")

    @staticmethod
    def _flag(flag: str, text: str, parse: Callable[[str], T]) -> T:
        try:
            return parse(text)
        except (InvalidInput, ValueError) as exc:
            raise InvalidInput(f"{flag}: {_sentence(exc)}") from None


def _kind(text: str) -> CampaignKind:
    """The workplace: school, hospital, transit or other."""
    try:
        return CampaignKind(text.strip().lower())
    except ValueError:
        kinds = ", ".join(k.value for k in CampaignKind)
        raise InvalidInput(f"“{text}” is not a kind of workplace; write one of {kinds}") from None


def _sentence(exc: Exception) -> str:
    text = str(exc).strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _answers(args: argparse.Namespace, plugins: Plugins, ask: bool) -> Answers:
    asker = _Asker(args, ask)
    union = asker.value("union", "The union's name", _name)
    employer = asker.value("employer", "The employer's name", _name)
    assert union is not None and employer is not None
    kinds = "/".join(k.value for k in CampaignKind)
    kind = asker.value("kind", f"The workplace ({kinds})", _kind, default=CampaignKind.OTHER.value)
    assert kind is not None
    slug = asker.value("slug", "A short id for this campaign", _slug, default=slugify(union))
    timezone = asker.value("timezone", "Time zone (IANA name, e.g. America/Chicago)", _timezone)
    languages = asker.value(
        "languages", "Languages, first is the default", _languages,
        default=i18n.source_language(),
    )  # fmt: skip
    today = date.today().isoformat()
    start_date = asker.value("start_date", "When bargaining began", _date, default=today)
    strike = asker.value("strike_start", "Day 1 of the strike, YYYY-MM-DD", _date, required=False)
    public_url = asker.value(
        "public_url", "The status page's public address", _url, default=LOOPBACK_URL
    )
    assert slug and timezone and languages and start_date and public_url
    admins: dict[str, dict[str, list[str]]] = {}
    for item in args.admin:
        platform, field, user = _admin(item, plugins)
        admins.setdefault(platform, {}).setdefault(field, []).append(user)
    if ask and not args.admin:
        for plugin in _admin_platforms(plugins):
            who = plugin.admins.who[i18n.source_language()]
            placed = asker.ask(
                f"Admins on {plugin.title} ({who}; several: comma-separated, {ASKS}): ",
                partial(_ids, plugin), required=False,
            )  # fmt: skip
            if placed:
                admins[plugin.name] = placed
    demands: list[tuple[str, str]] = []
    for text in args.demand:
        demands.append(_Asker._flag("--demand", text, partial(_demand, taken=demands)))
    if ask and not args.demand:
        while found := asker.ask(
            f"A first demand, as key=Title or just its title ({ASKS}): ",
            partial(_demand, taken=demands), required=False,
        ):  # fmt: skip
            demands.append(found)
    return Answers(
        union, employer, kind, slug, timezone, languages, start_date, strike, public_url,
        admins, demands,
    )  # fmt: skip


def slugify(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:63].strip("-")
    return slug if SLUG.match(slug) else "my-campaign"


def _name(text: str) -> str:
    if len(text) > 200 or any(ch in text for ch in "\r\n\x00"):
        raise InvalidInput("Write the name on one line, in at most 200 characters.")
    return text


def _slug(text: str) -> str:
    if not SLUG.match(text):
        raise InvalidInput(
            f"{text!r} is not usable as the campaign's id; use 2-63 lower-case letters, digits "
            "and '-', e.g. acme-workers-2026."
        )
    return text


def _timezone(text: str) -> str:
    return parse_timezone(text)


def _languages(text: str) -> list[str]:
    languages = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not languages:
        raise InvalidInput("Give at least one language, e.g. en.")
    known = i18n.languages()
    for language in languages:
        if language not in known:
            raise InvalidInput(
                f"strikebot has no catalogue for {language!r}; the languages it speaks are "
                f"{', '.join(known)} (docs/translating.md adds one)."
            )
    if len(set(languages)) != len(languages):
        raise InvalidInput("A language is listed twice; give each once, the default first.")
    return languages


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"{text!r} is not a date; write YYYY-MM-DD, e.g. 2026-03-02.") from None


def _url(text: str) -> str:
    url = text.rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in url:
        raise InvalidInput(
            f"{text!r} is not a web address; write it in full, e.g. https://strike.acme.example."
        )
    return url


def _admin_platforms(plugins: Plugins) -> list[Plugin]:
    return [plugins[name] for name in plugins.delivering if not plugins[name].events]


def _admin(item: str, plugins: Plugins) -> tuple[str, str, str]:
    """`--admin PLATFORM:ID`, checked by the platform's own admin rule."""
    platform, sep, user = item.partition(":")
    platform, user = platform.strip().lower(), user.strip()
    names = ", ".join(p.name for p in _admin_platforms(plugins))
    if not sep or not user:
        raise InvalidInput(
            f"--admin {item!r}: write PLATFORM:ID, where PLATFORM is one of {names}."
        )
    if platform not in plugins:
        raise InvalidInput(
            f"--admin {item!r}: no platform {platform!r} is installed (with admins: {names})."
        )
    plugin = plugins[platform]
    if plugin not in _admin_platforms(plugins):
        raise InvalidInput(
            f"--admin {item!r}: nobody posts from {plugin.title}, so it has no admins "
            f"(platforms with admins: {names})."
        )
    try:
        field, placed = plugin.admins.place(user)
    except ValueError as exc:
        raise InvalidInput(f"--admin {item!r}: {_sentence(exc)}") from None
    return platform, field, placed


def _ids(plugin: Plugin, text: str) -> dict[str, list[str]]:
    placed: dict[str, list[str]] = {}
    for part in text.split(","):
        if part.strip():
            field, value = plugin.admins.place(part)
            placed.setdefault(field, []).append(value)
    return placed


def _demand(text: str, *, taken: list[tuple[str, str]]) -> tuple[str, str]:
    match = DEMAND.match(text)
    if match is None or not match.group(2):
        raise InvalidInput(f"{text!r}: write KEY=Title, e.g. pay=Fair pay.")
    title = match.group(2)
    key = match.group(1) or slugify(title)[:40]
    if key in {k for k, _ in taken}:
        raise InvalidInput(
            f"There is already a demand with the key {key!r}; give this one its own key, "
            f"e.g. {key}-2={title}."
        )
    return key, title


def _q(text: str) -> str:
    """A TOML basic string (JSON's escaping is valid TOML)."""
    return json.dumps(text, ensure_ascii=False)


def render(a: Answers, plugins: Plugins) -> str:
    """The campaign file, commented for the person who will edit it next."""
    first = a.languages[0]
    lines = [
        f"# strikebot campaign file: {a.union} and {a.employer}.",
        "# Written by `strikebot init`. Every section is explained in config/strike.toml of the",
        "# strikebot repository and in docs/configuration.md.",
        "#",
        "# The file SEEDS the database: demands listed here are added the first time strikebot",
        "# starts. After that, change them through the bot (`strikebot demand edit|set|add|",
        "# retire`, `/strike demand ...` in chat, the admin API): edits here are not read again.",
        "# Secrets (platform tokens) never go in this file: they come from the environment.",
        "",
        "[campaign]",
        f"slug = {_q(a.slug)}                # the id written into the database; never change it",
        f"union = {_q(a.union)}",
        f"employer = {_q(a.employer)}",
        f"kind = {_q(a.kind.value)}   # school | hospital | transit | other: what families are "
        "asked first",
        f"start_date = {a.start_date.isoformat()}       # when bargaining began",
    ]
    if a.strike_start:
        lines.append(f"strike_start = {a.strike_start.isoformat()}     # day 1 of the strike")
    else:
        lines.append("# strike_start = 2026-01-14   # day 1 of the strike, once there is one")
    lines += [
        f"timezone = {_q(a.timezone)}   # IANA name; times without an offset are read here",
        f"languages = {json.dumps(a.languages)}   # the first is the default; every text "
        "members read is given in it",
    ]
    if a.public_url == LOOPBACK_URL:
        lines.append("# CHANGE ME before going live: members' links point here, and only this")
        lines.append("# machine can open 127.0.0.1. `strikebot run` warns while it is so.")
    lines += [
        f"public_url = {_q(a.public_url)}",
        "require_approval = false   # true: a second admin approves each update before it goes out",
        "",
        "# ---------------------------------------------------------------------------- admins",
        "# Who may post, edit, retract and approve updates, change demands and subscribe",
        "# channels, per platform. docs/platforms.md says where to find each id.",
    ]
    for plugin in _admin_platforms(plugins):
        # None given: what the plugin's section holds by default (the console's own user).
        given = a.admins.get(plugin.name) or {"user_ids": list(plugin.admins().user_ids)}
        lines += ["", f"[admins.{plugin.name}]"]
        for field, ids in given.items():
            hint = "" if ids else f"   # {plugin.admins.who[i18n.source_language()]}"
            lines.append(f"{field} = {json.dumps(ids, ensure_ascii=False)}{hint}")
    lines += [
        "",
        "# ---------------------------------------------------------------------------- demands",
        "# What the union is asking for, in the order members see. Each needs a key (used in",
        f"# commands: `/strike demand KEY`) and a title in {first!r}; add `union_position`,",
        "# `summary`, `employer_offer` and `facts` the same way, or later through the bot.",
    ]
    for key, title in a.demands:
        lines += [
            "",
            "[[demands]]",
            f"key = {_q(key)}",
            'status = "open"',
            f"title = {{ {first} = {_q(title)} }}",
        ]
    if not a.demands:
        lines += ["", "# [[demands]]", '# key = "pay"', f'# title = {{ {first} = "Fair pay" }}']
    lines += _families_hint(a.kind, first)
    return "\n".join(lines) + "\n"


def _families_hint(kind: CampaignKind, first: str) -> list[str]:
    """The commented `[families]` of this kind of campaign, its questions named."""
    source = i18n.source_language()
    asked = kind_defaults(kind).questions
    days = kind_defaults(kind).briefing_days
    lines = [
        "",
        "# ---------------------------------------------------------------------------- families",
        "# What families ask first, at the top of the page, in the morning briefing and in",
        "# /strike status. Answer this kind's questions (leave out any you cannot answer):",
    ]
    for q in asked:
        lines.append(f"#   {q.key}: {i18n.text(source, q.context)}")
    lines += [
        "# [families]",
        f"# open = true        # {i18n.text(source, asked[0].context)} yes or no",
        "# [families.answers]",
    ]
    lines += [f'# {q.key} = {{ {first} = "..." }}' for q in asked]
    lines += [
        "# [[families.questions]]   # and questions of your own, in order",
        f'# question = {{ {first} = "..." }}',
        f'# answer = {{ {first} = "..." }}',
        "",
        "[briefings]",
        f"days = {json.dumps(sorted(days))}   # the days families' morning briefings come "
        "(0 = Monday)",
    ]
    return lines


def _shown(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _sqlite_path(url: str) -> Path | None:
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite") or not parsed.database:
        return None
    if parsed.database == ":memory:":
        return None
    return Path(parsed.database)
