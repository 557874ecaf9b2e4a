"""The translators' workflow end to end: `strikebot translations report|export|import|confirm`
against a temporary database and the shipped campaign (en, es)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from babel.messages.pofile import read_po, write_po

from bot import i18n
from tests.test_cli import Cli, cli, seeded_database

__all__ = ["cli", "seeded_database"]


@pytest.fixture(autouse=True)
def fresh_catalogues() -> Iterator[None]:
    """Catalogues are read once per process; a test that adds one reads them again."""
    i18n.reload()
    yield
    i18n.reload()


def post_both(cli: Cli) -> int:
    posted = cli.json(
        "post",
        "--status", "strike_on",
        "--headline", "Strike continues Tuesday",
        "--next-step", "Picket at 6:30",
        "--es-headline", "La huelga sigue el martes",
        "--es-next-step", "Piquete a las 6:30",
    )  # fmt: skip
    return int(posted["update"]["id"])


def test_an_edit_in_one_language_shows_as_stale_until_confirmed(cli: Cli) -> None:
    update_id = post_both(cli)
    target = f"update:{update_id}"
    assert cli.json("translations", "report")["languages"]["es"]["campaign"] == []

    cli.ok("edit", str(update_id), "--headline", "Strike continues Wednesday", "--reason", "date")

    report = cli.json("translations", "report")["languages"]["es"]
    (gap,) = report["campaign"]
    assert gap["target"] == target and gap["stale"]["edited"] == ["en"]
    assert report["catalogue"]["missing"] == [] and report["catalogue"]["stale"] == []
    assert cli("translations", "report", "--check").code == 1
    text = cli.ok("translations", "report")
    assert f"{target}: stale since" in text and "(en edited by cli:cli" in text

    shown = cli.json("show", str(update_id))
    assert list(shown["stale"]) == ["es"] and shown["stale"]["es"]["edited"] == ["en"]
    assert f"translations confirm {target} es" in " ".join(cli.ok("show", str(update_id)).split())

    assert "is current again" in cli.ok("translations", "confirm", target, "es", "--note", "ok")
    assert cli.json("show", str(update_id))["stale"] == {}
    assert cli("translations", "report", "--check").code == 0
    assert "nothing to confirm" in cli.ok("translations", "confirm", target, "es")
    (entry, *_) = cli.json("audit", "--target", target)
    assert entry["action"] == "translation.confirm"


def test_export_then_import_brings_the_campaign_texts_up_to_date(
    cli: Cli,
    tmp_path: Path,
) -> None:
    update_id = post_both(cli)
    cli.ok("edit", str(update_id), "--headline", "Strike continues Wednesday", "--reason", "d")
    exported = tmp_path / "es.po"
    cli.ok("translations", "export", "es", "-o", str(exported))

    with exported.open("rb") as fp:
        catalog = read_po(fp)
    assert str(catalog.locale) == "es"
    headline = catalog.get(
        "Strike continues Wednesday", context=f"content:update:{update_id}:headline"
    )
    assert headline is not None and headline.fuzzy  # stale: the old Spanish, to check
    assert headline.string == "La huelga sigue el martes"
    assert catalog.get("That didn't work", context="commands.error_title") is not None

    headline.string = "La huelga sigue el miércoles"
    headline.flags.discard("fuzzy")
    with exported.open("wb") as fp:
        write_po(fp, catalog)
    out = cli.ok("translations", "import", str(exported))
    assert f"Campaign texts: 1 written (update:{update_id})" in out

    shown = cli.json("show", str(update_id))
    assert shown["update"]["texts"]["es"]["headline"] == "La huelga sigue el miércoles"
    assert shown["update"]["texts"]["en"]["headline"] == "Strike continues Wednesday"
    assert cli("translations", "report", "--check").code == 0  # nothing else went stale


def test_an_import_of_a_text_changed_since_the_export_is_left_alone(
    cli: Cli,
    tmp_path: Path,
) -> None:
    update_id = post_both(cli)
    cli.ok("edit", str(update_id), "--headline", "Strike continues Wednesday", "--reason", "d")
    exported = tmp_path / "es.po"
    cli.ok("translations", "export", "es", "-o", str(exported))
    cli.ok("edit", str(update_id), "--headline", "Strike continues Thursday", "--reason", "d")

    with exported.open("rb") as fp:
        catalog = read_po(fp)
    for message in catalog:
        if message.context and message.context.startswith("content:"):
            message.string = "La huelga sigue el miércoles"
            message.flags.discard("fuzzy")
    with exported.open("wb") as fp:
        write_po(fp, catalog)
    result = cli.json("translations", "import", str(exported))
    assert result["campaign"]["outdated"] == [f"update:{update_id}"]
    assert cli.json("show", str(update_id))["update"]["texts"]["es"]["headline"] == (
        "La huelga sigue el martes"
    )


def test_a_new_language_catalogue_starts_from_an_export_and_is_imported_as_a_file(
    cli: Cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exported = tmp_path / "ko.po"
    cli.ok("translations", "export", "ko", "-o", str(exported))
    before = cli.json("translations", "report", "--lang", "ko")["languages"]["ko"]["catalogue"]
    assert before["translated"] == 0 and before["file"] is None

    with exported.open("rb") as fp:
        catalog = read_po(fp)
    title = catalog.get("That didn't work", context="commands.error_title")
    assert title is not None and title.string == ""
    title.string = "⟦That didn't work⟧"  # a stand-in: no real Korean without a reviewer
    with exported.open("wb") as fp:
        write_po(fp, catalog)
    locales = tmp_path / "locales"
    out = cli.ok("translations", "import", str(exported), "--into", str(locales))
    written = locales / "ko" / "LC_MESSAGES" / "strikebot.po"
    assert f"ko: 1 catalogue messages written to {written}" in " ".join(out.split())

    monkeypatch.setenv(i18n.LOCALES_ENV, str(locales))
    i18n.reload()
    after = cli.json("translations", "report", "--lang", "ko")["languages"]["ko"]["catalogue"]
    assert after["translated"] == 1 and after["file"] == str(written)
    assert i18n.text("ko", "commands.error_title") == "⟦That didn't work⟧"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["translations", "export", "xx"], "'xx' is not a language code CLDR knows"),
        (["translations", "export", "en"], "is the language the sentences are written in"),
        (["translations", "confirm", "nonsense", "es"], "write update:12 or demand:pay"),
        (["translations", "confirm", "update:1", "fr"], "not one of this campaign's languages"),
        (["translations", "import", "/nonexistent.po"], "no such file"),
    ],
)
def test_bad_input_is_a_clear_error(cli: Cli, args: list[str], says: str) -> None:
    result = cli(*args)
    assert result.code != 0
    assert says in " ".join(result.err.split())


def test_the_command_line_takes_text_in_any_campaign_language(cli: Cli) -> None:
    posted = cli.json(
        "post",
        "--status", "strike_on",
        "--lang", "es",
        "--headline", "Sigue la huelga",
        "--text", "en", "headline", "Strike continues",
        "--next-step-en=Picket at 6:30",
    )  # fmt: skip
    texts = posted["update"]["texts"]
    assert texts["es"] == {"headline": "Sigue la huelga", "body": "", "next_step": ""}
    assert texts["en"]["headline"] == "Strike continues"
    assert texts["en"]["next_step"] == "Picket at 6:30"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--text", "en", "headline", "A", "--en-headline", "B"], "given twice"),
        (["--text", "es", "title", "A"], "a field is headline, body, body_file or next_step"),
        (["--text", "fr", "headline", "A"], "not one of this campaign's languages"),
        (["--es-body", "solo cuerpo"], "--es-headline: Add the Spanish headline"),
    ],
)
def test_text_flags_refuse_what_is_unclear(cli: Cli, args: list[str], says: str) -> None:
    result = cli("post", "--status", "strike_on", "--headline", "H", *args)
    assert result.code != 0
    assert says in " ".join(result.err.split())
