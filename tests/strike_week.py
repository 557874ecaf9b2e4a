"""The strike week every test that needs one uses: the shipped campaign file, seeded the way
`strikebot run` seeds it, then the week's admin actions through the admin use cases.

    week = await strike_week(store, clock)   # leaves the clock at FRIDAY

What the store then holds (times in Los Angeles):

  config/strike.toml, seeded by `bot.runtime.seed.apply_seed` when the bot starts, Fri Jan 18 09:05:
    demands   pay, class-size, nurses, librarians, support-staff, testing, charter-schools
              (the first five with the district's offer of Fri Jan 11 12:00)
    #1 began    Mon Jan 14 05:30  strike_on        urgent     next step Mon Jan 14 07:00
    #2 talks    Thu Jan 17 17:00  talks_scheduled  important  next step Fri Jan 18 07:00
    #3 friday   Fri Jan 18 09:00  strike_on        urgent     next step Mon Jan 21 06:00
  then, through `bot.editorial.admin.Admin` as an admin on Discord would:
    #4 retracted  posted Fri 09:15 (tentative_agreement, by mistake; next step a vote
                  Sat Jan 19 10:00), retracted Fri 09:20
    #3 corrected  Fri 09:30: the talks are at City Hall (a correction, revision 2)

The campaign is `tests.support.CAMPAIGN` (the shipped [campaign] with a public https address).
Nothing here is a shortcut production never takes: the rows come from the seed and the use
cases, so a test of the seed, the commands or the page sees what a real first run shows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from bot.clock import FixedClock
from bot.config import StrikeConfig
from bot.editorial.admin import Admin, Changes, Draft
from bot.models import Campaign, Status, Update, UpdateText, Urgency
from bot.runtime.seed import apply_seed
from bot.store import Store
from tests.support import ADMIN, ADMINS, CAMPAIGN, FRIDAY, shipped_config

LA = ZoneInfo("America/Los_Angeles")


def la(year: int, month: int, day: int, hour: int, minute: int = 0) -> datetime:
    """A moment given in Los Angeles, as aware UTC."""
    return datetime(year, month, day, hour, minute, tzinfo=LA).astimezone(UTC)


SEEDED_AT = la(2019, 1, 18, 9, 5)  # the bot's first start, just after Friday's update
MONDAY_6AM = la(2019, 1, 21, 6)  # Friday's next step: the strike resumes if there is no deal
MISTAKEN_VOTE = la(2019, 1, 19, 10)  # the retracted update's next step (a calendar event)
DEMAND_KEYS = ("pay", "class-size", "nurses", "librarians", "support-staff", "testing",
               "charter-schools")  # fmt: skip

RETRACTION_REASON = "No deal yet: posted by mistake"
CORRECTION_REASON = "The talks are at City Hall, hosted by the Mayor"
CORRECTED_BODY = {
    "en": "As of Friday, January 18, there is no agreement between UTLA and LAUSD. We are asking "
    "for a 6.5% raise retroactive to 2017, caps on class sizes, a nurse in every school, "
    "librarians, and resources for support staff. Negotiations continue through the weekend "
    "at City Hall, hosted by the Mayor.",
    "es": "Al viernes 18 de enero no hay acuerdo entre UTLA y el LAUSD. Pedimos un aumento del "
    "6.5% retroactivo a 2017, límites al tamaño de las clases, una enfermera en cada escuela, "
    "bibliotecarios y recursos para el personal de apoyo. Las negociaciones continúan todo el "
    "fin de semana en el Ayuntamiento, con el alcalde como anfitrión.",
}


def week_config() -> StrikeConfig:
    """The shipped campaign file, as it is."""
    return shipped_config()


@dataclass(frozen=True, slots=True)
class Week:
    began: Update  # 1
    talks: Update  # 2
    friday: Update  # 3, corrected (the latest update standing)
    retracted: Update  # 4
    admin: Admin
    config: StrikeConfig

    @property
    def campaign(self) -> Campaign:
        return self.admin.campaign


async def strike_week(
    store: Store, clock: FixedClock, admin: Admin | None = None, campaign: Campaign = CAMPAIGN
) -> Week:
    """Seed the week into `store` (see the module docstring); leaves the clock at FRIDAY.

    `admin` (default: an `Admin` for `campaign` and the test admins) does the week's posts,
    so a test's own plugin context can be the one that writes."""
    config = week_config()
    admin = admin or Admin(store, campaign, ADMINS, clock)
    clock.now = SEEDED_AT
    await apply_seed(store, config, clock)
    async with store.read() as tx:
        seeded = [await tx.get_update_by_seed(entry.key, SEEDED_AT) for entry in config.updates]
    began, talks, friday = seeded
    assert began is not None and talks is not None and friday is not None

    clock.now = la(2019, 1, 18, 9, 15)
    mistake = await admin.post(
        ADMIN,
        Draft(
            Status.TENTATIVE_AGREEMENT,
            {
                "en": UpdateText(
                    "Deal reached!",
                    "A tentative agreement was reached.",
                    "Members vote on the agreement Saturday",
                ),
                "es": UpdateText(
                    "¡Hay acuerdo!",
                    "Se alcanzó un acuerdo provisional.",
                    "Los miembros votan el acuerdo el sábado",
                ),
            },
            Urgency.URGENT,
            next_step_at=MISTAKEN_VOTE,
        ),
    )
    clock.now = la(2019, 1, 18, 9, 20)
    retracted = await admin.retract(ADMIN, mistake.id, reason=RETRACTION_REASON)

    clock.now = la(2019, 1, 18, 9, 30)
    texts = {lang: replace(friday.text(lang), body=body) for lang, body in CORRECTED_BODY.items()}
    friday = await admin.edit(
        ADMIN, friday.id, Changes(texts=texts), reason=CORRECTION_REASON, correction=True
    )
    clock.now = FRIDAY
    return Week(began, talks, friday, retracted, admin, config)
