"""What the web desk reads beside the editorial desk, one call per screen, so that no
plugin opens a store transaction of its own: the latest updates in every state, the
approval queue, how far an update has gone (`bot.delivery.progress`), the translations gone
stale, the demands, sign-up counts (never who), the briefing's schedule and preview, and
each surface's rendering of an update (`Plugin.preview`).

    board = ctx.board
    await board.recent()                 # what admins pick from, newest first
    await board.progress(12)             # delivered / waiting / failed per platform
    board.surfaces(message, "es")        # {"discord": SurfacePreview, "sms": ...}
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import time
from typing import Any

from bot.briefings.overview import (
    AudienceLine,
    ScheduleLine,
    briefing_audiences,
    briefing_preview,
    briefing_schedule,
)
from bot.clock import Clock
from bot.delivery.progress import Progress, progress
from bot.models import Campaign, Demand, Update
from bot.people.signups import SignUps
from bot.plugins import Plugins, Section, SurfacePreview
from bot.plugins.outbound import OutboundMessage
from bot.store import Store
from bot.store.translations import StaleText

log = logging.getLogger("strikebot.board")

RECENT = 30  # updates listed on the desk's first screen


@dataclass(frozen=True, slots=True)
class Board:
    """Reads for the web desk's screens, bound to the store, campaign and installed plugins.
    `sections` are the plugins' campaign-file sections (a text's segment limit)."""

    store: Store
    campaign: Campaign
    clock: Clock
    plugins: Plugins
    sections: Mapping[str, Section | None] = field(default_factory=dict)
    people: SignUps | None = None
    briefing_time: time = time(7, 0)

    async def recent(self, limit: int = RECENT) -> list[Update]:
        """The newest updates in every state (waiting, embargoed, out, retracted)."""
        async with self.store.read() as tx:
            return await tx.recent_updates(self.clock(), limit=limit)

    async def waiting(self) -> list[Update]:
        """The approval queue: posts waiting for a second admin, oldest first."""
        async with self.store.read() as tx:
            return await tx.pending_approval(self.clock())

    async def progress(self, update_id: int) -> Progress:
        return await progress(self.store, update_id, self.plugins)

    async def stale(self) -> list[StaleText]:
        """Every language's wording written before another language's was edited."""
        async with self.store.read() as tx:
            return list(await tx.stale_texts())

    async def demands(self) -> list[Demand]:
        """The demands on the list, with their history."""
        async with self.store.read() as tx:
            return await tx.list_demands()

    async def demand(self, key: str) -> Demand | None:
        async with self.store.read() as tx:
            return await tx.get_demand(key)

    async def signup_counts(self) -> dict[str, Any]:
        """How many people signed up, by kind, state, language and choice: counts only."""
        if self.people is None:
            return {"people": {}, "receipts": {}}
        return await self.people.stats()

    async def briefings(self) -> list[ScheduleLine]:
        return await briefing_schedule(self.store, self.clock())

    async def briefing(self, language: str) -> OutboundMessage:
        return await briefing_preview(
            self.store, self.campaign, self.clock(), language, at=self.briefing_time
        )

    async def briefing_audiences(self) -> list[AudienceLine]:
        """What differs per audience in the briefing going now (`briefing_audiences`)."""
        return await briefing_audiences(
            self.store, self.campaign, self.clock(), at=self.briefing_time
        )

    def surfaces(self, message: OutboundMessage, language: str) -> dict[str, SurfacePreview]:
        """`message` as each installed platform with a `preview` hook shows it, notes in
        `language`. A hook that fails is logged and left out: the desk still works."""
        shown: dict[str, SurfacePreview] = {}
        for name, plugin in self.plugins.items():
            if plugin.preview is None:
                continue
            try:
                shown[name] = plugin.preview(
                    message, self.campaign, self.sections.get(name), language
                )
            except Exception:
                log.exception("the %s plugin's preview failed", name)
        return shown
