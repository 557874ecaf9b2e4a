"""Every language is data: the catalogues are complete, and no code names a language."""

from __future__ import annotations

import ast
import string
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from bot import i18n
from bot.editorial.parsing import parse_language

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("en", "es")


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_the_shipped_languages_are_the_template_and_one_file_each() -> None:
    found = i18n.catalogues()
    assert found.source == "en"
    assert set(found.languages) >= set(SHIPPED)
    assert found.paths["es"] == ROOT / "bot/i18n/locales/es/LC_MESSAGES/strikebot.po"


@pytest.mark.parametrize("language", [lang for lang in SHIPPED if lang != "en"])
def test_every_message_is_translated_current_and_keeps_its_blanks(language: str) -> None:
    found = i18n.catalogues()
    catalog = found.catalogs[language]
    problems = []
    for message in found.template:
        if not message.id:
            continue
        own = catalog.get(message.id, context=message.context)
        if own is None:
            problems.append(f"{message.context}: missing")
            continue
        if own.fuzzy:
            problems.append(f"{message.context}: stale (fuzzy)")
        forms = [own.string] if isinstance(own.string, str) else list(own.string or ())
        if not all(forms):
            problems.append(f"{message.context}: untranslated")
        sources = [message.id] if isinstance(message.id, str) else list(message.id)
        allowed = set().union(*(_fields(s) for s in sources))
        for form in forms:
            if _fields(form) - allowed:
                problems.append(f"{message.context}: unknown blank {_fields(form) - allowed}")
    assert problems == []


def _named_languages(path: Path, codes: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and node.value.lower().replace("_", "-").split("-")[0] in codes
        and len(node.value) <= 6
    ]


def test_no_code_names_a_language() -> None:
    codes = set(SHIPPED)
    found = []
    for folder in ("bot", "adapters"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" not in path.parts:
                found += _named_languages(path, codes)
    assert found == []


def test_dates_times_and_numbers_come_from_cldr() -> None:
    day = date(2019, 1, 14)
    assert i18n.format_date(day, "en") == "Monday, January 14"
    assert i18n.format_date(day, "es") == "lunes, 14 de enero"
    assert i18n.format_date(day, "es", today=date(2026, 1, 1)) == "lunes, 14 de enero de 2019"
    moment = datetime(2019, 1, 21, 14, 0, tzinfo=UTC).astimezone(ZoneInfo("America/Los_Angeles"))
    assert i18n.format_datetime(moment, "en") == "Monday, January 21, 6:00 AM PST"
    assert i18n.format_datetime(moment, "es") == "lunes, 21 de enero, 6:00 PST"
    assert i18n.format_number(30000, "en") == "30,000"
    assert i18n.format_number(30000, "es") == "30.000"
    assert "\u202f" not in i18n.format_time(moment, "en")  # would make a text UCS-2


def test_plurals_follow_each_languages_rules() -> None:
    assert i18n.plural("en", "reach.channels", 1) == "{n} chat channel"
    assert i18n.plural("en", "reach.channels", 2) == "{n} chat channels"
    assert i18n.plural("es", "reach.channels", 1) == "{n} canal de chat"
    assert i18n.plural("es", "reach.channels", 5) == "{n} canales de chat"
    assert i18n.plural("es", "reach.channels", 1_000_000) == "{n} canales de chat"


def test_a_locale_picks_the_language_the_bot_speaks() -> None:
    assert i18n.pick("es-MX") == "es"
    assert i18n.pick("es_419") == "es"
    assert i18n.pick("fr-FR") == "en"  # no catalogue: the source language
    assert i18n.supported("fr") is None


def test_language_names_come_from_cldr_in_every_language() -> None:
    assert i18n.language_name("es") == "Español"
    assert i18n.language_name("es", "en") == "Spanish"
    assert i18n.language_name("en", "es") == "inglés"
    assert parse_language("Spanish", ["en", "es"]) == "es"
    assert parse_language("inglés", ["en", "es"]) == "en"
    assert parse_language("es-MX", ["en", "es"]) == "es"


def test_an_unknown_message_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match=r"no message 'commands\.nope'"):
        i18n.text("en", "commands.nope")


@pytest.fixture
def extra_locales(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A catalogue directory in STRIKEBOT_LOCALES, read afresh (and forgotten after)."""
    monkeypatch.setenv(i18n.LOCALES_ENV, str(tmp_path))
    i18n.reload()
    yield tmp_path
    monkeypatch.delenv(i18n.LOCALES_ENV)
    i18n.reload()


def write_catalogue(folder: Path, code: str, text: str) -> Path:
    path = folder / code / "LC_MESSAGES" / "strikebot.po"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_translation_that_would_break_its_sentence_is_not_used(
    extra_locales: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = i18n.catalogues().source_texts
    catalog = Catalog(locale="de", domain=i18n.DOMAIN)
    catalog.add(source["commands.error_title"], "Das ging nicht", context="commands.error_title")
    bad = "{wert} ist keine Uhrzeit"
    catalog.add(source["commands.bad_time"], bad, context="commands.bad_time")
    catalog.add(source["commands.bad_days"], "{value} {", context="commands.bad_days")
    path = extra_locales / "de" / "LC_MESSAGES" / "strikebot.po"
    path.parent.mkdir(parents=True)
    with path.open("wb") as fp:
        write_po(fp, catalog)
    i18n.reload()

    assert i18n.text("de", "commands.error_title") == "Das ging nicht"
    assert i18n.text("de", "commands.bad_time") == source["commands.bad_time"]  # {wert}
    assert i18n.text("de", "commands.bad_days") == source["commands.bad_days"]  # a lone {
    assert "commands.bad_time" in caplog.text and "blanks the English does not have" in caplog.text


def test_a_damaged_catalogue_names_its_file(extra_locales: Path) -> None:
    path = write_catalogue(extra_locales, "de", 'msgid "unterminated\n')
    with pytest.raises(i18n.CatalogueError, match="cannot be read as a gettext catalogue") as exc:
        i18n.catalogues()
    assert str(path) in str(exc.value)


def test_a_catalogue_folder_that_is_not_a_language_is_refused(extra_locales: Path) -> None:
    write_catalogue(extra_locales, "klingon", 'msgid ""\nmsgstr ""\n')
    with pytest.raises(i18n.CatalogueError, match="not a language code CLDR knows"):
        i18n.catalogues()
