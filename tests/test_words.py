"""Every error a person reads is a sentence in their language (issue 29, "words that
confuse"): no Python reprs in campaign-file errors, no argparse internals, a preview that
refuses what the post refuses, replies that say what happened, tables that fit the
terminal, and the "Admins only" reply naming the campaign file actually in use."""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path

import pytest

from bot.clock import FixedClock
from bot.commands import Commands
from bot.config import load_config, parse_config
from bot.errors import ConfigError, NotAllowed
from bot.metrics import Metrics
from bot.store import Store
from tests.fakes.discord import ROOT
from tests.strike_week import strike_week
from tests.support import ADMIN, CAMPAIGN, MEMBER
from tests.test_commands import ctx, text_of
from tests.test_init_doctor import clean_env, strikebot

SHIPPED = tomllib.loads((ROOT / "config" / "strike.toml").read_text(encoding="utf-8"))
BOX = re.compile(r"[│┃┏┓┗┛┡┩└┘├┤┬┴┼━─╇╈╋┳┻]")


def demo_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return clean_env(
        tmp_path,
        STRIKEBOT_CONFIG=str(ROOT / "config" / "strike.toml"),
        STRIKEBOT_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'demo.db'}",
        **extra,
    )


# ---------------------------------------------------------------------------- the file


def _refusal(change: dict[str, object]) -> str:
    raw = copy.deepcopy(SHIPPED)
    for path, value in change.items():
        *parents, last = path.split(".")
        where: object = raw
        for part in parents:
            where = where[int(part)] if isinstance(where, list) else where[part]  # type: ignore[index]
        where[int(last) if isinstance(where, list) else last] = value  # type: ignore[index]
    with pytest.raises(ConfigError) as refused:
        parse_config(raw, source="config/strike.toml")
    return str(refused.value)


def test_campaign_file_errors_show_values_as_written_not_as_python_reprs() -> None:
    naive = tomllib.loads("x = 2026-11-30T07:00:00")["x"]
    said = _refusal({"updates.0.published_at": naive})
    assert "datetime.datetime(" not in said, said
    assert "(got 2026-11-30T07:00:00)" in said and "UTC offset" in said
    slug = _refusal({"campaign.slug": "X Y"})
    assert "String should match pattern" not in slug and "^[a-z0-9]" not in slug
    assert "lower-case letters, digits and '-'" in slug and '(got "X Y")' in slug
    day = _refusal({"campaign.start_date": "last week"})
    assert "YYYY-MM-DD" in day and "Input should" not in day
    attempts = _refusal({"delivery.max_attempts": 0} if "delivery" in SHIPPED else {})
    assert "must be at least 1" in attempts


# ---------------------------------------------------------------------------- the command line


async def test_argparse_internals_become_sentences(tmp_path: Path) -> None:
    """Issue 29: a language the campaign lacks got argparse's "unrecognized arguments:
    --ko-headline"."""
    env = demo_env(tmp_path)
    post = ("post", "--status", "strike_on", "--headline", "Hi", "--dry-run")
    code, _, err = await strikebot(tmp_path, *post, "--ko-headline", "안녕", env=env)
    assert code == 2
    assert "“ko” is not one of this campaign's languages. Choose one of: en, es." in err, err
    for refused, said in [
        (("translations", "status"), "'status' is not a command of `strikebot translations`; "
                                     "use one of: report, export, import, confirm."),
        (("retract", "3"), "`strikebot retract` needs --reason."),
        (("run", "--port", "eighty"), "--port takes a whole number, not 'eighty'."),
        (("audit", "--who"), "--who is not an option of `strikebot`."),
    ]:  # fmt: skip
        code, _, err = await strikebot(tmp_path, *refused, env=env)
        assert code == 2 and said in err, (refused, err)
        assert "usage:" not in err and "unrecognized arguments" not in err
        assert "invalid choice" not in err and "the following arguments" not in err


async def test_the_preview_refuses_what_the_post_refuses(tmp_path: Path) -> None:
    """Issue 29: `--dry-run` passed a 3,000-character headline that the real post refuses."""
    env = demo_env(tmp_path)
    long = "x" * 3000
    post = ("post", "--status", "strike_on", "--headline", long)
    dry = await strikebot(tmp_path, *post, "--dry-run", env=env)
    real = await strikebot(tmp_path, *post, env=env)
    assert dry[0] == real[0] == 2, dry
    assert "The headline is 3000 characters; keep it to 150" in dry[2]
    assert dry[2] == real[2]  # the same sentence
    past = ("post", "--status", "strike_on", "--headline", "Late", "--at", "2019-01-01T00:00Z")
    code, _, err = await strikebot(tmp_path, *past, "--dry-run", env=env)
    assert code == 2 and ("in the past" in err or "already passed" in err), err


@pytest.mark.parametrize("width", [50, 80, 120])
async def test_tables_fit_the_terminal_and_never_lose_who(tmp_path: Path, width: int) -> None:
    """Issue 29: at 80 columns the audit's "who" column was cut away."""
    env = demo_env(tmp_path)
    for who in ("maria.lopez-organiser", "jt"):
        code, _, err = await strikebot(
            tmp_path, "post", "--status", "strike_on", "--headline", f"Posted by {who}",
            "--as", who, env=env,
        )  # fmt: skip
        assert code == 0, err
    code, out, _ = await strikebot(tmp_path, "audit", "-n", "5", env=env | {"COLUMNS": str(width)})
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= width, out
    if width == 50:
        assert "who: cli:maria.lopez-organiser" in out  # a list, one field a line
        return
    whos = column(out, "who")
    # A long id may be folded across lines in a narrow column, never dropped.
    assert any(w.startswith("cli:maria.lopez-organiser (command") for w in whos), out
    assert "cli:jt (command line)" in whos, out


def column(table: str, header: str) -> list[str]:
    """The cells of one column of a rich table, each put back together: a line that fills
    the column was folded mid-word and goes on with no space, any other wrapped with one."""
    lines = table.splitlines()
    heads = lines[1].strip("┃").split("┃")
    index = [h.strip() for h in heads].index(header)
    width = len(heads[index]) - 2  # one space of padding each side
    cells: list[list[str]] = []
    for line in lines[3:]:
        if line.startswith("│"):
            parts = line.strip("│").split("│")
            if parts[0].strip():  # a new row: its first cell is filled
                cells.append([])
            cells[-1].append(parts[index][1:-1])
    joined = []
    for pieces in cells:
        text, folded = "", False
        for piece in pieces:
            line = piece.rstrip()
            text += line if folded or not text else " " + line
            folded = len(line) == width
        joined.append(text)
    return joined


# ---------------------------------------------------------------------------- chat


async def test_the_retire_reply_says_the_demand_leaves_the_page(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """Issue 29: the reply said the retired demand stays "on the status page"."""
    admin = (await strike_week(sqlite_store, clock)).admin
    commands = Commands(sqlite_store, CAMPAIGN, admin, clock, metrics=Metrics())
    retired = await commands.handle(ctx(ADMIN), '/strike demand retire nurses "settled"')
    assert retired.ok, text_of(retired)
    assert "and on the status page" not in retired.message.body
    assert "off the list, the status page and the briefings" in retired.message.body
    es = await commands.handle(ctx(ADMIN, locale="es"), '/strike demand retire pay "acordado"')
    assert "Ya no está en la lista" in es.message.body and "y en la página" not in es.message.body
    recorded = await commands.handle(
        ctx(ADMIN), '/strike demand class-size offer="A cap" source="District"'
    )
    assert "on the status page" in recorded.message.body  # still true of a recorded offer


async def test_typed_edit_takes_another_languages_field(
    sqlite_store: Store, clock: FixedClock
) -> None:
    """Issue 29: `/strike edit … headline_es="…"` was answered "Too much after /strike edit"."""
    week = await strike_week(sqlite_store, clock)
    commands = Commands(sqlite_store, CAMPAIGN, week.admin, clock, metrics=Metrics())
    edited = await commands.handle(
        ctx(ADMIN), f'/strike edit {week.friday.id} headline_es="Día 5: sin acuerdo" reason="typo"'
    )
    assert edited.ok, text_of(edited)
    async with sqlite_store.read() as tx:
        update = await tx.get_update(week.friday.id, clock())
    assert update is not None and update.texts["es"].headline == "Día 5: sin acuerdo"
    assert update.texts["en"] == week.friday.texts["en"]  # the other language untouched
    both = await commands.handle(
        ctx(ADMIN), f'/strike edit {week.friday.id} headline="x" headline_es="y" reason="r"'
    )
    assert not both.ok and "one language's text at a time" in text_of(both)
    assert "Too much after" not in text_of(both)


def test_admins_only_names_the_campaign_file_in_use(tmp_path: Path) -> None:
    """Issue 29: the "Admins only" reply always named config/strike.toml."""
    path = tmp_path / "config" / "acme.toml"
    path.parent.mkdir()
    path.write_text((ROOT / "config" / "strike.toml").read_text(encoding="utf-8"))
    admins = load_config(path).to_admins()
    with pytest.raises(NotAllowed) as refused:
        admins.require(MEMBER, "post updates")
    for language in ("en", "es"):
        said = refused.value.localized(language)
        assert str(path) in said and "config/strike.toml" not in said, said
        assert "“5555”" in said and "[admins.discord]" in said
