"""Shared by the web tests: the web plugin's context, a small LAUSD timeline, a served app.

The timeline (times in Los Angeles), posted through the real admin use cases:
  Mon Jan 14 06:00  strike_on        "30,000 teachers walk out: the strike is on"
  Wed Jan 16 17:00  talks_scheduled  "Talks resume Thursday"  -> retracted Thu 08:00
  Fri Jan 18 09:00  talks_scheduled  "Strike continues; talks through the weekend",
                    next step Mon Jan 21 06:00 -> corrected Fri 09:30 (time fixed)
and five demands, one with a recorded district offer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from adapters.web import build_app
from bot.admin import Admin, Changes, Draft
from bot.clock import FixedClock
from bot.context import PluginContext
from bot.models import (
    Campaign,
    Demand,
    DemandStatus,
    DemandText,
    Status,
    Update,
    UpdateText,
    Urgency,
)
from bot.store import Store
from tests.support import ADMIN, CAMPAIGN, FRIDAY, plugin_ctx

LA = ZoneInfo("America/Los_Angeles")
TOKEN = "test-admin-token-0123456789abcdef"


def la(year: int, month: int, day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=LA).astimezone(UTC)


MONDAY_6AM = la(2019, 1, 21, 6)


def web_context(
    store: Store,
    clock: FixedClock,
    *,
    admin_token: str | None = TOKEN,
    campaign: Campaign = CAMPAIGN,
) -> PluginContext:
    """The web plugin's context, as `strikebot run` builds it."""
    env = {"STRIKEBOT_ADMIN_TOKEN": admin_token} if admin_token else {}
    return plugin_ctx("web", store, clock, env=env, campaign=campaign)


DEMANDS = [
    (
        "pay",
        DemandStatus.OFFER_ON_TABLE,
        DemandText(
            "A fair raise",
            "Pay that keeps teachers in Los Angeles classrooms.",
            "6.5% raise, retroactive to 2017",
            "6% over two years, contingent on cuts",
            ("Teachers have worked 20 months without a contract",),
        ),
        DemandText(
            "Un aumento justo",
            "Un salario que mantenga a los docentes en las aulas de Los Ángeles.",
            "Aumento del 6,5 %, retroactivo a 2017",
            "6 % en dos años, condicionado a recortes",
            ("Los docentes llevan 20 meses sin contrato",),
        ),
    ),
    (
        "class-size",
        DemandStatus.OPEN,
        DemandText("Smaller classes", "", "Enforceable caps on class sizes", ""),
        DemandText("Clases más pequeñas", "", "Límites obligatorios al tamaño de las clases", ""),
    ),
    (
        "nurses",
        DemandStatus.OPEN,
        DemandText(
            "A nurse in every school",
            "",
            "A full-time nurse in every school",
            "",
            ("Only 15% of schools have a full-time nurse",),
        ),
        DemandText(
            "Una enfermera en cada escuela",
            "",
            "Una enfermera a tiempo completo en cada escuela",
            "",
            ("Solo el 15 % de las escuelas tiene enfermera a tiempo completo",),
        ),
    ),
    (
        "librarians",
        DemandStatus.OPEN,
        DemandText("Librarians", "", "A full-time librarian in every school", ""),
        DemandText("Bibliotecarios", "", "Un bibliotecario a tiempo completo en cada escuela", ""),
    ),
    (
        "support-staff",
        DemandStatus.OPEN,
        DemandText("Support staff", "", "More counselors and support staff", ""),
        DemandText("Personal de apoyo", "", "Más consejeros y personal de apoyo", ""),
    ),
]


@dataclass(frozen=True, slots=True)
class Timeline:
    began: Update
    retracted: Update
    friday: Update


async def seed(store: Store, admin: Admin, clock: FixedClock) -> Timeline:
    """Post the timeline above through the admin use cases; leaves the clock at FRIDAY."""
    async with store.write() as tx:
        for position, (key, status, en, es) in enumerate(DEMANDS):
            await tx.insert_demand(
                Demand(key, position, status, {"en": en, "es": es}, la(2019, 1, 11, 12))
            )
    clock.now = la(2019, 1, 14, 6)
    began = await admin.post(
        ADMIN,
        Draft(
            Status.STRIKE_ON,
            {
                "en": UpdateText(
                    "30,000 teachers walk out: the strike is on",
                    "The first LAUSD strike in 30 years began this morning after 20 months "
                    "of failed negotiations.\n\nJoin the picket line at your school at 7:00.",
                    "Picket at your school every morning at 7:00",
                ),
                "es": UpdateText(
                    "30.000 docentes salen a la calle: comienza la huelga",
                    "La primera huelga de LAUSD en 30 años comenzó esta mañana tras 20 meses "
                    "de negociaciones fallidas.",
                    "Piquete en tu escuela cada mañana a las 7:00",
                ),
            },
            Urgency.URGENT,
        ),
    )
    clock.now = la(2019, 1, 16, 17)
    wrong = await admin.post(
        ADMIN,
        Draft(
            Status.TALKS_SCHEDULED,
            {
                "en": UpdateText("Talks resume Thursday", "Bargaining resumes Thursday at 10:00."),
                "es": UpdateText("Las negociaciones se reanudan el jueves"),
            },
            next_step_at=la(2019, 1, 17, 10),
        ),
    )
    clock.now = la(2019, 1, 17, 8)
    wrong = await admin.retract(
        ADMIN, wrong.id, reason="The district had not confirmed Thursday's session."
    )
    clock.now = la(2019, 1, 18, 9)
    friday = await admin.post(
        ADMIN,
        Draft(
            Status.TALKS_SCHEDULED,
            {
                "en": UpdateText(
                    "Strike continues; talks through the weekend",
                    "No agreement yet. Negotiations continue through the weekend.",
                    "Strike resumes Monday 7:00 AM if there is no deal",
                ),
                "es": UpdateText(
                    "La huelga continúa; negociaciones todo el fin de semana",
                    "Aún no hay acuerdo. Las negociaciones siguen todo el fin de semana.",
                    "La huelga se reanuda el lunes a las 7:00 si no hay acuerdo",
                ),
            },
            Urgency.IMPORTANT,
            next_step_at=la(2019, 1, 21, 7),
        ),
    )
    clock.now = la(2019, 1, 18, 9, 30)
    friday = await admin.edit(
        ADMIN,
        friday.id,
        Changes(
            texts={
                "en": UpdateText(
                    "Strike continues; talks through the weekend",
                    "No agreement yet. Negotiations continue through the weekend.",
                    "Strike resumes Monday 6:00 AM if there is no deal",
                ),
                "es": UpdateText(
                    "La huelga continúa; negociaciones todo el fin de semana",
                    "Aún no hay acuerdo. Las negociaciones siguen todo el fin de semana.",
                    "La huelga se reanuda el lunes a las 6:00 si no hay acuerdo",
                ),
            },
            next_step_at=MONDAY_6AM,
        ),
        reason="The picket starts at 6:00 AM, not 7:00.",
        correction=True,
    )
    clock.now = FRIDAY
    return Timeline(began, wrong, friday)


@asynccontextmanager
async def client_for(
    ctx: PluginContext, *others: object
) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    """The real app on 127.0.0.1 (a free port), with an aiohttp client pointed at it."""
    server = TestServer(build_app(ctx, *others), host="127.0.0.1", port=0)
    client: TestClient[web.Request, web.Application] = TestClient(server)
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()


# -- a small HTML tree, enough to assert on landmarks, tables and struck-through text ----------

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}  # fmt: skip


@dataclass(slots=True)
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str]

    def text(self) -> str:
        parts = [c if isinstance(c, str) else c.text() for c in self.children]
        return " ".join("".join(parts).split())

    def all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        """Descendants with this tag whose attributes include `attrs` (class_ = one class)."""
        found: list[Node] = []
        for child in self.children:
            if isinstance(child, Node):
                if _matches(child, tag, attrs):
                    found.append(child)
                found.extend(child.all(tag, **attrs))
        return found

    def one(self, tag: str | None = None, **attrs: str) -> Node:
        found = self.all(tag, **attrs)
        assert len(found) == 1, f"expected one <{tag} {attrs}>, found {len(found)}"
        return found[0]


def _matches(node: Node, tag: str | None, attrs: dict[str, str]) -> bool:
    if tag is not None and node.tag != tag:
        return False
    for key, value in attrs.items():
        if key == "class_":
            if value not in node.attrs.get("class", "").split():
                return False
        elif node.attrs.get(key) != value:
            return False
    return True


def parse_html(html: str) -> Node:
    from html.parser import HTMLParser

    root = Node("#document", {}, [])
    stack = [root]

    class Builder(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            node = Node(tag, {k: v or "" for k, v in attrs}, [])
            stack[-1].children.append(node)
            if tag not in _VOID:
                stack.append(node)

        def handle_endtag(self, tag: str) -> None:
            for i in range(len(stack) - 1, 0, -1):
                if stack[i].tag == tag:
                    del stack[i:]
                    return

        def handle_data(self, data: str) -> None:
            stack[-1].children.append(data)

    Builder(convert_charrefs=True).feed(html)
    return root
