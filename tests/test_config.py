"""The campaign file: the shipped LAUSD campaign loads, and a bad file is refused with the
file, the key and what to write instead."""

from __future__ import annotations

import tomllib
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from bot.config import Settings, load_config
from bot.errors import ConfigError
from bot.models import DemandStatus, Status, Urgency
from tests.support import FRIDAY

ROOT = Path(__file__).resolve().parent.parent
STRIKE = ROOT / "config" / "strike.toml"
MINIMAL = ROOT / "config" / "example-minimal.toml"

GOOD_CAMPAIGN = """
[campaign]
slug = "test-1"
union = "Union"
employer = "Employer"
start_date = 2019-01-01
timezone = "America/Los_Angeles"
languages = ["en", "es"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "campaign.toml"
    path.write_text(text, encoding="utf-8")
    return path


def refusal(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return str(caught.value)


# ---------------------------------------------------------------------------- the real file


def test_the_shipped_lausd_campaign_loads() -> None:
    config = load_config(STRIKE)
    campaign = config.to_campaign()
    assert campaign.slug == "utla-2019"
    assert "UTLA" in campaign.union and "LAUSD" in campaign.employer
    assert campaign.timezone == "America/Los_Angeles"
    assert campaign.languages == ("en", "es")
    assert campaign.strike_start == date(2019, 1, 14)
    assert campaign.public_url == "http://127.0.0.1:8080"
    assert campaign.require_approval is False
    # Bargaining began about 20 months before the strike.
    months = (2019 - campaign.start_date.year) * 12 + (1 - campaign.start_date.month)
    assert 19 <= months <= 22


def test_every_demand_is_written_in_english_and_spanish_with_its_offer_and_source() -> None:
    config = load_config(STRIKE)
    keys = [d.key for d in config.demands]
    assert keys[:5] == ["pay", "class-size", "nurses", "librarians", "support-staff"]
    for demand in config.demands:
        for field in ("title", "summary", "union_position", "employer_offer"):
            texts = getattr(demand, field)
            assert set(texts) == {"en", "es"}, (demand.key, field)
            assert all(t.strip() for t in texts.values()), (demand.key, field)
        assert demand.source, demand.key
        assert demand.as_of is not None and demand.as_of < FRIDAY
        assert len(demand.facts.get("en", [])) == len(demand.facts.get("es", [])), demand.key
    by_key = {d.key: d for d in config.demands}
    assert "6.5%" in by_key["pay"].union_position["en"]
    assert "2017" in by_key["pay"].union_position["en"]
    assert "6%" in by_key["pay"].employer_offer["en"]
    assert by_key["pay"].status is DemandStatus.OFFER_ON_TABLE
    # The source article's "450-50 students" is a typo for 45-50.
    assert any("45-50" in fact for fact in by_key["class-size"].facts["en"])
    assert not any("450" in fact for d in config.demands for fact in d.facts.get("en", []))
    assert any("15%" in fact for fact in by_key["nurses"].facts["en"])
    assert any("15%" in fact for fact in by_key["nurses"].facts["es"])


def test_the_timeline_runs_from_monday_to_friday_with_the_weekend_talks() -> None:
    config = load_config(STRIKE)
    updates = config.updates
    assert [u.published_at for u in updates] == sorted(u.published_at for u in updates)
    first, *_, last = updates
    assert first.published_at.astimezone(UTC).date() == date(2019, 1, 14)
    assert first.status is Status.STRIKE_ON and first.urgency is Urgency.URGENT
    assert "30,000" in first.headline["en"]
    assert "30 years" in first.body["en"]
    assert any("third" in u.body["en"] and "$25 million" in u.body["en"] for u in updates)
    # Friday: strike continues, talks through the weekend, resumes Monday 6:00 if no deal.
    assert last.published_at <= FRIDAY
    assert last.status.on_strike
    assert "weekend" in last.headline["en"] and "fin de semana" in last.headline["es"]
    assert last.next_step_at == datetime(2019, 1, 21, 14, 0, tzinfo=UTC)  # 06:00 in LA
    assert "Monday" in last.next_step["en"] and "lunes" in last.next_step["es"]
    for update in updates:
        for field in ("headline", "body", "next_step"):
            assert set(getattr(update, field)) == {"en", "es"}, (update.key, field)
        assert len(update.headline["en"]) <= 150 and len(update.headline["es"]) <= 150


def test_admin_placeholders_are_present_and_the_minimal_example_loads() -> None:
    config = load_config(STRIKE)
    discord = config.plugin_config("discord").admins.model_dump()
    slack = config.plugin_config("slack").admins.model_dump()
    assert discord["role_ids"] and discord["user_ids"]
    assert slack["user_ids"] and slack["usergroup_ids"]
    minimal = load_config(MINIMAL)
    assert minimal.campaign.languages == ["en"]
    assert [d.key for d in minimal.demands] == ["pay"]


def test_no_secret_keys_in_the_shipped_files() -> None:
    for path in (STRIKE, MINIMAL):
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        flat = repr(raw).lower()
        assert "token" not in flat and "secret" not in flat, path


def test_the_config_path_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, GOOD_CAMPAIGN)
    monkeypatch.setenv("STRIKEBOT_CONFIG", str(path))
    assert load_config().campaign.slug == "test-1"
    assert Settings.from_env().config_path == path


# ---------------------------------------------------------------------------- refusals


def test_an_unknown_key_is_named_with_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD_CAMPAIGN + 'colour = "red"\n')
    message = refusal(path)
    assert str(path) in message
    assert "campaign.colour" in message
    assert "unknown key" in message and "spelling" in message


def test_a_bad_status_lists_the_statuses_to_use(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        GOOD_CAMPAIGN
        + """
[[updates]]
key = "one"
published_at = 2019-01-14T06:00:00-08:00
status = "striking"
headline = { en = "On strike" }
""",
    )
    message = refusal(path)
    assert str(path) in message
    assert "updates[0].status" in message
    assert "'strike_on'" in message and '(got "striking")' in message


def test_a_bad_time_zone_says_to_write_an_iana_name(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD_CAMPAIGN.replace("America/Los_Angeles", "Pacific Time"))
    message = refusal(path)
    assert str(path) in message
    assert "campaign.timezone" in message
    assert "IANA" in message and "America/Los_Angeles" in message


def test_a_text_missing_the_default_language_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        GOOD_CAMPAIGN
        + """
[[demands]]
key = "pay"
title = { es = "Salario justo" }
""",
    )
    message = refusal(path)
    assert str(path) in message
    assert "demands[0].title" in message
    assert "'en'" in message and "first language" in message


def test_text_in_a_language_the_campaign_lacks_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        GOOD_CAMPAIGN
        + """
[[updates]]
key = "one"
published_at = 2019-01-14T06:00:00-08:00
status = "strike_on"
headline = { en = "On strike" }
body = { fr = "En grève" }
""",
    )
    message = refusal(path)
    assert "updates[0].body" in message and "'fr'" in message and "languages" in message


def test_a_time_without_an_offset_is_refused_as_ambiguous(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        GOOD_CAMPAIGN
        + """
[[updates]]
key = "one"
published_at = 2019-01-14T06:00:00
status = "strike_on"
headline = { en = "On strike" }
""",
    )
    message = refusal(path)
    assert "updates[0].published_at" in message
    assert "-08:00" in message


def test_a_missing_section_a_missing_file_and_broken_toml(tmp_path: Path) -> None:
    assert "campaign: required" in refusal(write(tmp_path, "[admins]\n"))
    missing = tmp_path / "nope.toml"
    message = refusal(missing)
    assert str(missing) in message and "STRIKEBOT_CONFIG" in message
    broken = write(tmp_path, "[campaign\nslug = 1\n")
    message = refusal(broken)
    assert str(broken) in message and "not valid TOML" in message


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    entry = '\n[[demands]]\nkey = "pay"\ntitle = { en = "Pay" }\n'
    message = refusal(write(tmp_path, GOOD_CAMPAIGN + entry + entry))
    assert "demands[1].key" in message and "twice" in message


def test_a_folder_or_a_file_that_is_not_utf8_is_refused_in_one_sentence(tmp_path: Path) -> None:
    message = refusal(tmp_path)
    assert str(tmp_path) in message and "cannot be read" in message
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes(GOOD_CAMPAIGN.replace("Union", "Uni\xf3n").encode("latin-1"))
    message = refusal(latin1)
    assert str(latin1) in message and "UTF-8" in message


SUBSCRIPTION = '\n[[subscriptions]]\nplatform = "discord"\nworkspace = "1"\nchannel = "2"\n'


def test_a_subscription_must_use_a_campaign_language_and_real_weekdays(tmp_path: Path) -> None:
    message = refusal(write(tmp_path, GOOD_CAMPAIGN + SUBSCRIPTION + 'language = "fr"\n'))
    assert str(tmp_path) in message
    assert "subscriptions[0].language 'fr'" in message and "en, es" in message
    message = refusal(write(tmp_path, GOOD_CAMPAIGN + SUBSCRIPTION + "briefing_days = [0, 9]\n"))
    assert "subscriptions[0].briefing_days[1]" in message and "6" in message
    message = refusal(write(tmp_path, GOOD_CAMPAIGN + SUBSCRIPTION + 'quiet_start = "22:00"\n'))
    assert "subscriptions[0]" in message and "quiet_end" in message
    spanish_only = GOOD_CAMPAIGN.replace('["en", "es"]', '["es"]')
    config = load_config(write(tmp_path, spanish_only + SUBSCRIPTION))
    assert config.subscriptions[0].language is None  # seeded in the campaign's language
