"""`strikebot subscribers stats|export|delete` and `strikebot post --dry-run` against a SQLite
file with the shipped campaign: a person's own data on request, counts for everyone else,
and the cost of a post before it is posted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.clock import utcnow
from bot.config import load_config
from bot.models import Contact
from bot.people.signups import Choice, Offer, signups_for
from bot.store import Store
from tests.support import ROOT

STRIKE = ROOT / "config" / "strike.toml"
EMAIL = "maria@example.com"
PHONE = "+12135550123"


def run(capsys: pytest.CaptureFixture[str], url: str, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["--config", str(STRIKE), "--database-url", url, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
async def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A database where Maria (e-mail, Spanish, every update) and Rosa (texts, urgent only)
    signed up and confirmed, and a third person never confirmed."""
    for name in ("STRIKEBOT_CONFIG", "STRIKEBOT_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    database = f"sqlite+aiosqlite:///{tmp_path / 'people.db'}"
    async with Store.open(database) as store:
        people = signups_for(store, load_config(STRIKE), utcnow)
        people.offer(Offer(Contact.EMAIL, "email"))
        people.offer(Offer(Contact.PHONE, "sms"))
        await people.request(
            Contact.EMAIL,
            EMAIL,
            language="es",
            choice=Choice.ALL,
            client="a",
            via="web /es/subscribe",
        )
        async with store.read() as tx:
            [row] = await tx.list_deliveries(limit=None)
        assert row.payload is not None
        await people.confirm(str(row.payload["message"]["url"]).rsplit("/", 1)[1])  # type: ignore[index]
        await people.join(Contact.PHONE, PHONE, language="en", via="text JOIN")
        await people.request(Contact.EMAIL, "never@example.com", client="b", via="web /subscribe")
    return database


def test_stats_count_people_and_never_show_an_address(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, url, "subscribers", "stats", "--json")
    assert code == 0 and err == ""
    stats = json.loads(out)
    assert stats["people"]["email"]["confirmed"] == 1 and stats["people"]["email"]["pending"] == 1
    assert stats["people"]["email"]["languages"] == {"es": 1}
    assert stats["people"]["phone"]["receives"] == {"urgent": 1}
    code, table, _ = run(capsys, url, "subscribers", "stats")
    assert code == 0 and "e-mail" in table and "text" in table
    for text in (out, table):
        assert EMAIL not in text and "2135550123" not in text and "never@" not in text


def test_export_gives_a_person_everything_kept_about_them(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, url, "subscribers", "export", "(213) 555-0123")
    assert code == 0
    found = json.loads(out)
    assert found["address"] == PHONE and found["consent"]["signed_up_via"] == "text JOIN"
    code, out, _ = run(capsys, url, "subscribers", "export", "MARIA@example.com")
    assert json.loads(out)["consent"]["confirmed_via"] == "link"
    code, _, err = run(capsys, url, "subscribers", "export", "nobody@example.com")
    assert code == 2 and "Nobody with that address" in err
    code, _, err = run(capsys, url, "subscribers", "export", "not an address\r\n")
    assert code == 2 and "not a mobile number" in err


def test_delete_forgets_one_person_or_everyone(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, url, "subscribers", "delete", EMAIL)
    assert code == 0 and "Deleted 1 person" in out
    code, _, err = run(capsys, url, "subscribers", "delete", EMAIL)
    assert code == 2 and "nothing to delete" in err
    code, _, err = run(capsys, url, "subscribers", "delete", "--all")
    assert code == 2 and "--all --yes" in err
    code, out, _ = run(capsys, url, "subscribers", "delete", "--all", "--yes", "--json")
    assert code == 0 and json.loads(out) == {"deleted": 2}
    code, out, _ = run(capsys, url, "subscribers", "stats", "--json")
    assert json.loads(out)["people"] == {}
    code, out, _ = run(capsys, url, "audit", "-n", "20", "--json")
    assert EMAIL not in out and PHONE not in out


def test_a_dry_run_says_what_a_post_will_cost_and_posts_nothing(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spanish = "Comienza la huelga mañana en todas las escuelas del distrito"
    args = ["post", "--dry-run", "--urgency", "urgent", "--headline", "Strike is on",
            "--es-headline", spanish]  # fmt: skip
    code, out, err = run(capsys, url, *args)
    assert code == 0 and err == ""
    assert "Nothing was posted." in out
    assert "1 e-mail and 1 text segment." in out
    code, out, _ = run(capsys, url, *args, "--json")
    found = json.loads(out)
    assert found["people"] == {
        "email": {"messages": 1, "units": 1},
        "sms": {"messages": 1, "units": 1},
    }
    code, out, _ = run(capsys, url, "timeline", "--all", "--json")
    assert "Strike is on" not in out
    # Routine: Rosa asked for urgent news only, Maria for everything.
    code, out, _ = run(capsys, url, "post", "--dry-run", "--headline", "Picket schedule", "--json")
    assert json.loads(out)["people"] == {"email": {"messages": 1, "units": 1}}
