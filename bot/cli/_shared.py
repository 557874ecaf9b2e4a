"""What the command modules share: who is acting, reading times and zones, JSON shapes,
and the small formatting helpers behind the tables. Not a command (no `register`)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Collection, Sequence
from datetime import date, datetime, time
from pathlib import Path
from typing import Any, NoReturn
from zoneinfo import ZoneInfo

from rich.console import RenderableType

from bot import i18n
from bot.clock import parse_moment as parse_offset_moment
from bot.errors import InvalidInput
from bot.models import (
    Actor,
    AuditEntry,
    Campaign,
    Demand,
    DemandEvent,
    Revision,
    Subscription,
    Update,
    UpdateState,
)
from bot.plugins.admins import CLI_ACTOR

# ---------------------------------------------------------------------------- options

MAX_ID = 2**31 - 1  # ids are 32-bit integers on PostgreSQL; larger ones name no record


def update_number(text: str) -> int:
    """argparse `type=` for an update number: a bad one is a usage error, not a traceback."""
    value = text.strip()
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_ID:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an update number; give a whole number from 1 to {MAX_ID}, "
            "as listed by `strikebot timeline --all`."
        )
    return int(value)


def add_actor_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--as",
        dest="acting_as",
        metavar="NAME",
        help="who is acting, for the audit log (default: 'cli'); two-person approval needs "
        "a different name from the author",
    )


def add_language_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--language",
        "--lang",
        metavar="LANG",
        help="language to show (default: the campaign's first language)",
    )


def actor_from(args: argparse.Namespace) -> Actor:
    """The command line is trusted (see bot.auth); `--as` names the person for the audit log."""
    name = (getattr(args, "acting_as", None) or "").strip()
    if not name:
        return CLI_ACTOR
    if len(name) > 100 or not re.fullmatch(r"[\w.@+-]+", name):
        raise InvalidInput(
            f"--as {name!r} is not a usable name; use letters, digits, dots or dashes, "
            "e.g. --as maria.lopez."
        )
    return Actor(platform=CLI_ACTOR.platform, user_id=name, display_name="command line")


def language_for(args: argparse.Namespace, campaign: Campaign) -> str:
    language: str | None = getattr(args, "language", None)
    if language is None:
        return campaign.default_language
    language = language.strip().lower()
    if language not in campaign.languages:
        raise InvalidInput(
            f"Language {language!r} is not one of this campaign's languages "
            f"({', '.join(campaign.languages)}); pick one of those."
        )
    return language


def read_text_file(path: str, what: str) -> str:
    """Body text from a file (`-` reads standard input)."""
    import sys

    if path == "-":
        return sys.stdin.read().strip()
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise InvalidInput(
            f"Cannot read {what} from {path} ({exc.strerror}); check the file name."
        ) from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text; save it as UTF-8 and try again.") from None


# ---------------------------------------------------------------------------- times


_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})$")


def parse_moment(value: str, zone_name: str, *, option: str) -> datetime:
    """An ISO 8601 date-time with an offset, or a local wall time in `zone_name`.

    `2019-01-21T06:00-08:00`, `2019-01-21 06:00` (in the zone), `2019-01-21T14:00Z`.
    A wall time that does not exist (clocks spring forward) or happens twice (clocks fall
    back) is refused: give the offset instead.
    """
    from bot.editorial.parsing import parse_timezone, parse_when  # its rules' patterns

    zone = ZoneInfo(parse_timezone(zone_name))
    try:
        return parse_when(value, zone)  # the one reading rule, chat's too
    except InvalidInput as exc:
        raise InvalidInput(
            f"{option}: {exc.message}",
            translations={lang: f"{option}: {text}" for lang, text in exc.translations.items()},
        ) from None


def moment_type(text: str) -> datetime:
    """argparse `type=` for an ISO 8601 moment with its offset (`--now`), via bot.clock."""
    try:
        return parse_offset_moment(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_clock(value: str, *, option: str) -> time:
    match = _CLOCK.match(value.strip())
    if match is None or int(match.group(1)) > 23 or int(match.group(2)) > 59:
        raise InvalidInput(
            f"{option} {value!r} is not a time of day; write it as HH:MM, e.g. 07:00."
        )
    return time(int(match.group(1)), int(match.group(2)))


def local(moment: datetime | None, zone_name: str) -> str:
    """`2019-01-21 06:00 PST` in the campaign's zone, for tables."""
    if moment is None:
        return ""
    shown = moment.astimezone(ZoneInfo(zone_name))
    return f"{shown:%Y-%m-%d %H:%M} {shown.tzname() or ''}".strip()


def iso(moment: datetime | date | time | None) -> str | None:
    return None if moment is None else moment.isoformat()


# ---------------------------------------------------------------------------- JSON shapes


# The JSON shapes below use the store's codecs, imported in each (they bring SQLAlchemy, which
# `strikebot --help` and the argument types above must not load).


def revision_json(revision: Revision) -> dict[str, Any]:
    from bot.store.codecs import texts_to_json

    return {
        "number": revision.number,
        "status": str(revision.status),
        "urgency": str(revision.urgency),
        "next_step_at": iso(revision.next_step_at),
        "texts": texts_to_json(revision.texts),
        "editor": revision.editor,
        "reason": revision.reason,
        "reasons": dict(revision.reason_texts()),
        "edited_at": iso(revision.created_at),
    }


def update_json(update: Update, campaign: Campaign) -> dict[str, Any]:
    from bot.messages.compose import update_url
    from bot.store.codecs import texts_to_json

    return {
        "id": update.id,
        "url": update_url(update, campaign),
        "state": str(update.state),
        "status": str(update.status),
        "urgency": str(update.urgency),
        "revision": update.revision,
        "texts": texts_to_json(update.texts),
        "next_step_at": iso(update.next_step_at),
        "author": update.author,
        "created_at": iso(update.created_at),
        "publish_at": iso(update.publish_at),
        "published_at": iso(update.published_at),
        "approved_by": update.approved_by,
        "retracted_at": iso(update.retracted_at),
        "retracted_by": update.retracted_by,
        "retraction_reason": update.retraction_reason,
        "retraction_reasons": dict(update.retraction_reason_texts()),
        "seed_key": update.seed_key,
        "audience": {"sites": list(update.audience.sites), "groups": list(update.audience.groups)},
        "revisions": [revision_json(r) for r in update.revisions],
    }


def demand_event_json(event: DemandEvent) -> dict[str, Any]:
    return {
        "at": iso(event.at),
        "status": str(event.status),
        "offer": dict(event.offer),
        "source": event.source,
        "recorded_by": event.recorded_by,
        "note": event.note,
        "kind": str(event.kind),
        "changes": {lang: {k: list(v) for k, v in f.items()} for lang, f in event.changes.items()},
        "recorded_at": iso(event.recorded_at),
    }


def demand_json(demand: Demand) -> dict[str, Any]:
    from bot.store.codecs import demand_texts_to_json

    return {
        "key": demand.key,
        "position": demand.position,
        "status": str(demand.status),
        "updated_at": iso(demand.updated_at),
        "retired_at": iso(demand.retired_at),
        "texts": demand_texts_to_json(demand.texts),
        "history": [demand_event_json(e) for e in demand.history],
    }


def subscription_json(sub: Subscription, *, active: bool = True) -> dict[str, Any]:
    return {
        "id": sub.id,
        "address": sub.address,
        "platform": str(sub.platform),
        "workspace": sub.workspace,
        "channel": sub.channel,
        "label": sub.label,
        "language": sub.language,
        "urgencies": sorted(str(u) for u in sub.urgencies),
        "briefing_time": sub.briefing_time.strftime("%H:%M") if sub.briefing_time else None,
        "briefing_days": sorted(sub.briefing_days),
        "timezone": sub.timezone,
        "quiet_hours": (
            {
                "start": sub.quiet_hours.start.strftime("%H:%M"),
                "end": sub.quiet_hours.end.strftime("%H:%M"),
            }
            if sub.quiet_hours
            else None
        ),
        "active": active,
        "broken_reason": sub.broken_reason,
        "created_at": iso(sub.created_at),
        "follows": {"sites": list(sub.follows.sites), "groups": list(sub.follows.groups)},
    }


def audit_json(entry: AuditEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "at": iso(entry.at),
        "actor": entry.actor,
        "action": entry.action,
        "target": entry.target,
        "before": entry.before,
        "after": entry.after,
    }


# ---------------------------------------------------------------------------- words


STATE_STYLES: dict[UpdateState, str] = {
    UpdateState.PUBLISHED: "green",
    UpdateState.SCHEDULED: "cyan",
    UpdateState.PENDING_APPROVAL: "yellow",
    UpdateState.RETRACTED: "red",
}


def state_label(update: Update, zone_name: str) -> str:
    if update.state is UpdateState.SCHEDULED:
        return f"scheduled for {local(update.published_at, zone_name)}"
    if update.state is UpdateState.PENDING_APPROVAL:
        return "waiting for a second admin's approval"
    if update.state is UpdateState.RETRACTED:
        return f"retracted: {update.retraction_reason or ''}".rstrip(": ")
    return "published"


WORD = 16  # the longest word a table column keeps whole


def fitted_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    key: int = 0,
    width: int | None = None,
) -> RenderableType:
    """A table whose every column keeps at least its header's width (text wraps, long words
    fold), or, when the terminal is too narrow even for that, the same rows as a list: each
    row under its `key` column's value, one "header: value" line per other column. Nothing
    is cut off, whatever the width. Cells are rich markup, escaped by the caller."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from bot.cli import out

    # Each column needs its header and its longest word (up to WORD): narrower, words would
    # break mid-way, so the rows become a list instead.
    needs = [
        max(
            [len(header)]
            + [min(WORD, len(w)) for row in rows for w in Text.from_markup(row[i]).plain.split()]
        )
        for i, header in enumerate(headers)
    ]
    available = width or out.width
    if sum(needs) + 3 * len(headers) + 1 <= available:
        table = Table(title=title, title_justify="left")
        for header, need in zip(headers, needs, strict=True):
            table.add_column(header, overflow="fold", min_width=need)
        for row in rows:
            table.add_row(*row)
        return table
    blocks: list[RenderableType] = [Text(title, style="bold")] if title else []
    for row in rows:
        lines = [Text.from_markup(f"[bold]{row[key]}[/]")]
        for i, (header, cell) in enumerate(zip(headers, row, strict=True)):
            if i != key and cell:
                lines.append(Text.from_markup(f"  {header or '-'}: {cell}"))
        blocks += [*lines, Text("")]
    return Group(*blocks)


def shorten(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# `--es-headline TEXT`, `--headline-es=TEXT`, `--ko-body-file PATH`, `--offer-es TEXT`: a
# field's flag with any language code the bot has a catalogue for, read as
# `--text es headline TEXT` (post, edit), `--offer-in es TEXT` (demand set) or
# `--reason-in es TEXT` (edit, retract: `--es-reason`).
_CODE = r"[a-z]{2,3}(?:_[A-Za-z0-9]{2,8})?"
_FIELD = r"headline|body-file|body|next-step|offer|reason"
_LANGUAGE_FLAG = re.compile(
    rf"--(?:(?P<code1>{_CODE})-(?P<field1>{_FIELD})|(?P<field2>{_FIELD})-(?P<code2>{_CODE}))"
    r"(?:=(?P<value>.*))?",
    re.DOTALL,
)


def language_flags(argv: Sequence[str], reserved: Collection[str] = ()) -> list[str]:
    """`argv` with each per-language field flag spelled the general way. Any language code
    counts, not only the ones with a catalogue: a language the campaign lacks is then told
    so by the command, in a sentence, rather than by argparse. `reserved` are the real
    options that look alike (`--offer-in`, `--next-step-at`)."""
    known = set(i18n.languages())
    result: list[str] = []
    for token in argv:
        match = _LANGUAGE_FLAG.fullmatch(token)
        code = match and (match["code1"] or match["code2"])
        flag = token.split("=", 1)[0]
        if match is None or not code or flag in reserved or not _language_like(code, known):
            result.append(token)
            continue
        name = (match["field1"] or match["field2"]).replace("-", "_")
        if name in ("offer", "reason"):
            result += [f"--{name}-in", code]
        else:
            result += ["--text", code, name]
        if match["value"] is not None:
            result.append(match["value"])
    return result


def _language_like(code: str | None, known: Collection[str]) -> bool:
    from babel import Locale, UnknownLocaleError

    if not code:
        return False
    if code in known:
        return True
    try:
        Locale.parse(code)
    except (UnknownLocaleError, ValueError):
        return False
    return True


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every option of `parser` and its subcommands, e.g. {"--offer-in", "--next-step-at"}."""
    found: set[str] = set()
    for action in parser._actions:  # argparse has no public way to list them
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= option_strings(sub)
    return found


class Parser(argparse.ArgumentParser):
    """argparse, saying what went wrong in a sentence instead of its own internals
    ("unrecognized arguments", "invalid choice"), with where to read more."""

    def error(self, message: str) -> NoReturn:
        from rich.markup import escape

        from bot.cli import err

        err.print(f"[bold red]error:[/] {escape(usage_sentence(message, self.prog))}")
        self.exit(2)


def usage_sentence(message: str, prog: str) -> str:
    """argparse's `message` about `prog`, as a sentence a person follows."""
    more = f"`{prog} --help` lists what it takes."
    if match := re.fullmatch(r"unrecognized arguments: (.+)", message):
        first = match.group(1).split()[0]
        return f"{first} is not an option of `{prog}`. {more}"
    if match := re.fullmatch(r"the following arguments are required: (.+)", message):
        return f"`{prog}` needs {match.group(1).replace(', ', ' and ')}. {more}"
    if match := re.fullmatch(
        r"argument (\S+): invalid choice: '([^']*)' \(choose from (.+)\)", message
    ):
        choices = match.group(3).replace("'", "")
        what = "command" if match.group(1).isupper() else f"value of {match.group(1)}"
        return f"'{match.group(2)}' is not a {what} of `{prog}`; use one of: {choices}."
    if match := re.fullmatch(
        r"argument (\S+): expected (one|at least one|\d+) arguments?", message
    ):
        return f"{match.group(1)} needs a value after it. {more}"
    if match := re.fullmatch(r"argument (\S+): invalid (\w+) value: '(.*)'", message):
        kind = {"int": "a whole number", "float": "a number"}.get(match.group(2), match.group(2))
        return f"{match.group(1)} takes {kind}, not '{match.group(3)}'."
    if match := re.fullmatch(r"argument (\S+): not allowed with argument (\S+)", message):
        return f"Give {match.group(1)} or {match.group(2)}, not both."
    if match := re.fullmatch(r"argument \S+: (.+)", message, re.DOTALL):
        return match.group(1)  # our own sentence (an ArgumentTypeError from a `type=`)
    return f"{message[:1].upper()}{message[1:]}. {more}"
