"""The main job (`strikebot run`): one process, every resource handed in, `async with` down.

Order of start: store (migrate + seed) → web server → platform adapters whose credentials
are present → dispatcher → briefing scheduler. Shutdown runs in reverse; a failing step is
logged and the rest still run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web

from bot.admin import Admin
from bot.clock import Clock
from bot.config import Settings, StrikeConfig
from bot.metrics import Metrics
from bot.models import Campaign, Platform
from bot.ports import Adapter, HealthBoard
from bot.store import Store

WebMount = Callable[[web.Application], None]


@dataclass(slots=True)
class Runtime:
    """Everything a running strikebot holds. Built once in `serve`, handed to each part."""

    settings: Settings
    config: StrikeConfig
    campaign: Campaign
    store: Store
    admin: Admin
    clock: Clock
    metrics: Metrics = field(default_factory=Metrics)
    health: HealthBoard = field(default_factory=HealthBoard)
    adapters: dict[Platform, Adapter] = field(default_factory=dict)
    # Extra routes on the one web server (Slack's /slack/events in HTTP mode).
    web_mounts: list[WebMount] = field(default_factory=list)
