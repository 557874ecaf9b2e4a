"""The core's public boundary: everything a platform plugin may use, and nothing else.

Adapters (`adapters/<platform>/`, or a package pip installs) import from here only; an
import-linter contract in `make test` says so. What a plugin declares (`Plugin`) and what
its factory receives (`PluginContext`) are the heart of it; the rest is the vocabulary a
plugin speaks: the domain types, the platform-neutral message and how to fit it, the
commands and admin use cases, errors whose sentences people read, and the helpers a
plugin's own CLI commands use. `docs/adapters.md` walks through writing a plugin.
"""

from __future__ import annotations

from bot import i18n
from bot.addresses import Address, example_address, parse_address
from bot.admin import HEADLINE_MAX, NEXT_STEP_MAX, REASON_MAX, Admin, Changes, Draft
from bot.auth import AdminList
from bot.cli import CliContext, add_json_flag, open_context, out, print_json
from bot.cli._shared import moment_type
from bot.clock import Clock, FixedClock, shifted_clock, utcnow
from bot.commands import CommandContext, Commands, Reply
from bot.context import PluginContext, plugin_context
from bot.dispatcher import Dispatcher
from bot.errors import (
    ConfigError,
    Conflict,
    InvalidInput,
    NotAllowed,
    NotFound,
    PermanentDeliveryError,
    StrikebotError,
    TransientDeliveryError,
)
from bot.families import family_answers
from bot.locales import not_found, say
from bot.logging import configure_logging
from bot.messages import (
    fit,
    fit_message,
    local_zone,
    neutralize_mentions,
    split,
    update_message,
)
from bot.metrics import Metrics
from bot.models import (
    Actor,
    Campaign,
    DeliveryState,
    Demand,
    DemandEvent,
    DemandStatus,
    Platform,
    Status,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
)
from bot.outbound import (
    Adapter,
    ChannelRef,
    Field,
    HealthBoard,
    Limits,
    Link,
    MessageKind,
    OutboundMessage,
    Pacing,
    Reporting,
    Service,
)
from bot.outbox import wants
from bot.plugins import (
    AdminRule,
    Mountable,
    Plugin,
    Plugins,
    PluginSettings,
    Section,
    SubParsers,
    installed_plugins,
)
from bot.store import Store, Tx
from bot.store.content import SharedCheck, watch_public_version
from bot.store.public import RevisionNote

__all__ = [
    "HEADLINE_MAX",
    "NEXT_STEP_MAX",
    "REASON_MAX",
    "Actor",
    "Adapter",
    "Address",
    "Admin",
    "AdminList",
    "AdminRule",
    "Campaign",
    "Changes",
    "ChannelRef",
    "CliContext",
    "Clock",
    "CommandContext",
    "Commands",
    "ConfigError",
    "Conflict",
    "DeliveryState",
    "Demand",
    "DemandEvent",
    "DemandStatus",
    "Dispatcher",
    "Draft",
    "Field",
    "FixedClock",
    "HealthBoard",
    "InvalidInput",
    "Limits",
    "Link",
    "MessageKind",
    "Metrics",
    "Mountable",
    "NotAllowed",
    "NotFound",
    "OutboundMessage",
    "Pacing",
    "PermanentDeliveryError",
    "Platform",
    "Plugin",
    "PluginContext",
    "PluginSettings",
    "Plugins",
    "Reply",
    "Reporting",
    "RevisionNote",
    "Section",
    "Service",
    "SharedCheck",
    "Status",
    "Store",
    "StrikebotError",
    "SubParsers",
    "TransientDeliveryError",
    "Tx",
    "Update",
    "UpdateState",
    "UpdateText",
    "Urgency",
    "add_json_flag",
    "configure_logging",
    "example_address",
    "family_answers",
    "fit",
    "fit_message",
    "i18n",
    "installed_plugins",
    "local_zone",
    "moment_type",
    "neutralize_mentions",
    "not_found",
    "open_context",
    "out",
    "parse_address",
    "plugin_context",
    "print_json",
    "say",
    "shifted_clock",
    "split",
    "update_message",
    "utcnow",
    "wants",
    "watch_public_version",
]
