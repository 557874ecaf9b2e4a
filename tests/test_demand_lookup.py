"""`/strike demand class size` finds the `class-size` demand, however it is typed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.commands._questions import _match_demand
from bot.models import Demand, DemandStatus, DemandText

AT = datetime(2019, 1, 18, tzinfo=UTC)
DEMANDS = [
    Demand("class-size", 0, DemandStatus.OPEN, {"en": DemandText("Smaller classes")}, AT),
    Demand("nurses", 1, DemandStatus.OPEN, {"en": DemandText("A nurse in every school")}, AT),
]


@pytest.mark.parametrize(
    "typed", ["class-size", "class size", "class_size", "class", "smaller classes"]
)
def test_any_separator_or_the_title_finds_the_demand(typed: str) -> None:
    assert _match_demand(typed, DEMANDS) == "class-size"


def test_no_match_is_none() -> None:
    assert _match_demand("pensions", DEMANDS) is None
