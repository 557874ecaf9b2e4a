"""Sites and groups as campaign data (bot/audiences): the CSV file read line by line with
every bad line named, an import that can run twice, and the rules of codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.audiences import SiteFile, Sites, check_code, parse_audience, read_sites_csv
from bot.clock import FixedClock
from bot.errors import InvalidInput, NotFound
from bot.models import EVERYONE, Audience
from bot.store import Store
from tests.support import ADMIN, ADMINS, ROOT

LANGUAGES = ("en", "es")
GOOD = """kind,code,group,name,name_es,address,example
group,east,,Local District East,Distrito Local Este,,yes
group,west,,Local District West,,,
site,roosevelt,east,Roosevelt High School,Preparatoria Roosevelt,"456 S Mathews St, LA",yes
site,Venice,west,Venice High School,,,no
"""


def read(text: str) -> SiteFile:
    return read_sites_csv(text, LANGUAGES, "en")


def test_a_file_gives_its_groups_and_sites() -> None:
    found = read_sites_csv(GOOD, LANGUAGES, "en")
    assert [g.code for g in found.groups] == ["east", "west"]
    assert found.groups[0].names == {"en": "Local District East", "es": "Distrito Local Este"}
    roosevelt, venice = found.sites
    assert (roosevelt.group, roosevelt.address, roosevelt.example) == (
        "east",
        "456 S Mathews St, LA",
        True,
    )
    assert venice.code == "venice"  # codes are lower-cased
    assert venice.names == {"en": "Venice High School"} and not venice.example


def test_every_bad_line_is_named_by_its_number() -> None:
    text = (
        "code,group,name\n"
        "ok,east,Fine\n"
        "bad code,east,Spaces\n"
        "nogroup,,No group\n"
        "ok,east,Twice\n"
        "empty,east,\n"
    )
    with pytest.raises(InvalidInput) as caught:
        read(text)
    message = caught.value.message
    assert message.startswith("Nothing was imported: 4 bad lines.")
    assert "line 3: 'bad code' is not a site or group code" in message
    assert "line 4: a site needs its `group`" in message
    assert "line 5: code 'ok' is already on an earlier line" in message
    assert "line 6: `name` is empty" in message


def test_a_file_without_its_columns_or_with_unknown_ones_is_refused() -> None:
    with pytest.raises(InvalidInput, match="at least `code` and `name`"):
        read("school,district\nx,y\n")
    with pytest.raises(InvalidInput, match="Unknown column 'name_fr' on line 1"):
        read("code,group,name,name_fr\nx,y,z,w\n")


def test_codes_and_audiences() -> None:
    assert check_code(" ROOSEVELT ") == "roosevelt"
    with pytest.raises(InvalidInput) as caught:
        check_code("a/b")
    assert "no es un código" in caught.value.localized("es")
    assert parse_audience("b, A", None) == Audience(("a", "b"), ())
    assert parse_audience(None, "") == EVERYONE and EVERYONE.everyone
    assert Audience.from_json(Audience.of(["x"], ["g"]).to_json()) == Audience(("x",), ("g",))


async def test_importing_twice_adds_nothing_and_a_change_is_applied_in_place(
    store: Store, clock: FixedClock
) -> None:
    sites = Sites(store, ADMINS, clock)
    first = await sites.import_file(ADMIN, read_sites_csv(GOOD, LANGUAGES, "en"))
    assert first.counts == {"group": {"added": 2}, "site": {"added": 2}}
    again = await sites.import_file(ADMIN, read_sites_csv(GOOD, LANGUAGES, "en"))
    assert again.counts == {"group": {"same": 2}, "site": {"same": 2}}
    moved = GOOD.replace("site,Venice,west", "site,Venice,east")
    changed = await sites.import_file(ADMIN, read_sites_csv(moved, LANGUAGES, "en"))
    assert changed.count("site", "changed") == 1 and changed.count("site", "same") == 1
    groups, listed = await sites.all()
    assert [g.code for g in groups] == ["east", "west"]
    assert [(s.code, s.group) for s in listed] == [("roosevelt", "east"), ("venice", "east")]


async def test_a_site_in_no_known_group_or_a_code_taken_is_refused_whole(
    store: Store, clock: FixedClock
) -> None:
    sites = Sites(store, ADMINS, clock)
    with pytest.raises(InvalidInput, match="in group 'north', which is neither"):
        await sites.import_file(ADMIN, read("code,group,name\nx,north,X\n"))
    assert await sites.all() == ([], [])
    await sites.import_file(ADMIN, read(GOOD))
    with pytest.raises(InvalidInput, match="'east' is a group's code"):
        await sites.import_file(ADMIN, read("code,group,name\neast,west,East school\n"))


async def test_checking_an_audience_names_the_unknown_code(store: Store, clock: FixedClock) -> None:
    sites = Sites(store, ADMINS, clock)
    await sites.import_file(ADMIN, read(GOOD))
    assert await sites.check(Audience.of(["roosevelt"], ["west"])) == Audience(
        ("roosevelt",), ("west",)
    )
    with pytest.raises(NotFound) as caught:
        await sites.check(Audience.of(["lincoln"]))
    assert caught.value.message.startswith("There is no site 'lincoln'.")
    assert caught.value.localized("es").startswith("No hay ningún centro 'lincoln'.")
    with pytest.raises(NotFound, match="There is no group 'north'"):
        await sites.check(Audience.of([], ["north"]))
    found = await sites.find("ROOSEVELT")
    assert found is not None and found.name("es") == "Preparatoria Roosevelt"


def test_the_demo_ships_its_local_districts_and_schools_as_examples() -> None:
    from bot.config import load_config

    config = load_config(ROOT / "config" / "strike.toml")
    assert [g.code for g in config.site_groups] == [
        "central",
        "east",
        "northeast",
        "northwest",
        "south",
        "west",
    ]
    assert config.sites and all(s.example for s in config.sites)
    shipped = read_sites_csv(
        (ROOT / "config" / "lausd-sites.csv").read_text(encoding="utf-8"), LANGUAGES, "en"
    )
    assert [s.code for s in shipped.sites] == [s.code for s in config.sites]


def test_the_command_line_imports_and_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    base = ["--config", str(ROOT / "config" / "strike.toml"), "--database-url", url]
    assert main([*base, "sites", "import", str(ROOT / "config" / "lausd-sites.csv")]) == 0
    assert "Sites: 0 added, 0 changed, 6 unchanged." in capsys.readouterr().out  # seeded
    bad = tmp_path / "bad.csv"
    bad.write_text("code,group,name\nx,nowhere,X\ny y,east,Y\n", encoding="utf-8")
    assert main([*base, "sites", "import", str(bad)]) != 0
    assert "line 3: 'y y' is not a site or group code" in capsys.readouterr().err
    more = tmp_path / "more.csv"
    more.write_text("code,group,name,name_es\nlincoln,east,Lincoln High,Preparatoria Lincoln\n")
    assert main([*base, "sites", "import", str(more)]) == 0
    assert "Sites: 1 added" in capsys.readouterr().out
    assert main([*base, "sites", "list", "--group", "east", "--json"]) == 0
    import json

    listed = json.loads(capsys.readouterr().out)
    assert [s["code"] for s in listed["sites"]] == ["lincoln", "roosevelt"]


async def test_a_campaign_files_subscription_follows_what_it_says(
    store: Store, clock: FixedClock
) -> None:
    from bot.runtime.seed import apply_seed
    from tests.support import shipped_config

    config = shipped_config(
        subscriptions=[
            {
                "platform": "console",
                "workspace": "local",
                "channel": "roosevelt",
                "sites": ["roosevelt"],
            }
        ]
    )
    await apply_seed(store, config, clock)
    async with store.read() as tx:
        sub = await tx.find_subscription("console", "local", "roosevelt")
        assert sub is not None and sub.follows == Audience.of(["roosevelt"])
        venice = await tx.recipients(Audience.of(["venice"]), "routine")
        assert "roosevelt" not in {s.channel for s in venice}
