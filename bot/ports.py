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
from bot.channels.webhooks import AddressPolicy, Created, Webhooks, check_url
from bot.channels.webhooks import summary as webhook_summary
from bot.cli import CliContext, add_json_flag, open_context, out, print_json
from bot.cli._shared import moment_type
from bot.clock import Clock, FixedClock, shifted_clock, utcnow
from bot.commands import (
    LOCALIZED_NAMES,
    CommandContext,
    Commands,
    Reply,
    command_named,
    is_command_prefix,
)
from bot.delivery import events
from bot.delivery.dispatcher import Dispatcher
from bot.delivery.leadership import Leadership, leadership_for, shard_lock_key
from bot.delivery.planning import wants
from bot.editorial.admin import Admin, Changes, DemandResult, Draft
from bot.editorial.demands import DemandWording
from bot.editorial.parsing import parse_quiet_hours
from bot.editorial.reach import Reach, reach
from bot.editorial.rules import (
    BODY_MAX,
    HEADLINE_MAX,
    LABEL_MAX,
    NEXT_STEP_MAX,
    NOTE_MAX,
    OFFER_MAX,
    REASON_MAX,
    SOURCE_MAX,
    VISIBLE_TEXT_PATTERN,
    check_update_text,
    clean_text,
)
from bot.editorial.translations import stale_note
from bot.errors import (
    ConfigError,
    Conflict,
    InvalidInput,
    NotAllowed,
    NotFound,
    PermanentDeliveryError,
    StoreUnavailable,
    StrikebotError,
    TransientDeliveryError,
)
from bot.i18n.sentences import not_found, say
from bot.messages.compose import (
    fit,
    fit_message,
    local_zone,
    neutralize_mentions,
    page_url,
    split,
    update_message,
)
from bot.messages.families import family_answers
from bot.metrics import Metrics
from bot.models import (
    Actor,
    Campaign,
    Contact,
    DeliveryState,
    Demand,
    DemandChange,
    DemandEvent,
    DemandStatus,
    Platform,
    QuietHours,
    Status,
    Subscription,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
    WebhookEndpoint,
)
from bot.network import Clients, network_of
from bot.people.contacts import mask, show_phone
from bot.people.forms import FormTokens
from bot.people.signups import (
    Choice,
    Contactable,
    Offer,
    Outcome,
    Pending,
    QuietHoursSetting,
    SignUps,
    TooManySignups,
    choice_text,
    short_union,
)
from bot.plugins import (
    AdminRule,
    Check,
    Cost,
    DoctorRequest,
    Mountable,
    Plugin,
    Plugins,
    PluginSettings,
    Section,
    SubParsers,
    Verdict,
    installed_plugins,
    lazy_exports,
)
from bot.plugins.addresses import Address, example_address, parse_address
from bot.plugins.admins import AdminList
from bot.plugins.outbound import (
    Adapter,
    ChannelRef,
    EventSink,
    Field,
    FindsSent,
    HealthBoard,
    Limits,
    Link,
    MessageKind,
    OutboundMessage,
    Pacing,
    Reporting,
    Service,
)
from bot.runtime.context import PluginContext, plugin_context
from bot.runtime.logging import configure_logging
from bot.store import STORE_FAILURES, Store, Tx
from bot.store.content import SharedCheck, watch_public_version
from bot.store.public import RevisionNote

__all__ = [
    "BODY_MAX",
    "HEADLINE_MAX",
    "LABEL_MAX",
    "LOCALIZED_NAMES",
    "NEXT_STEP_MAX",
    "NOTE_MAX",
    "OFFER_MAX",
    "REASON_MAX",
    "SOURCE_MAX",
    "STORE_FAILURES",
    "VISIBLE_TEXT_PATTERN",
    "Actor",
    "Adapter",
    "Address",
    "AddressPolicy",
    "Admin",
    "AdminList",
    "AdminRule",
    "Campaign",
    "Changes",
    "ChannelRef",
    "Check",
    "Choice",
    "CliContext",
    "Clients",
    "Clock",
    "CommandContext",
    "Commands",
    "ConfigError",
    "Conflict",
    "Contact",
    "Contactable",
    "Cost",
    "Created",
    "DeliveryState",
    "Demand",
    "DemandChange",
    "DemandEvent",
    "DemandResult",
    "DemandStatus",
    "DemandWording",
    "Dispatcher",
    "DoctorRequest",
    "Draft",
    "EventSink",
    "Field",
    "FindsSent",
    "FixedClock",
    "FormTokens",
    "HealthBoard",
    "InvalidInput",
    "Leadership",
    "Limits",
    "Link",
    "MessageKind",
    "Metrics",
    "Mountable",
    "NotAllowed",
    "NotFound",
    "Offer",
    "OutboundMessage",
    "Outcome",
    "Pacing",
    "Pending",
    "PermanentDeliveryError",
    "Platform",
    "Plugin",
    "PluginContext",
    "PluginSettings",
    "Plugins",
    "QuietHours",
    "QuietHoursSetting",
    "Reach",
    "Reply",
    "Reporting",
    "RevisionNote",
    "Section",
    "Service",
    "SharedCheck",
    "SignUps",
    "Status",
    "Store",
    "StoreUnavailable",
    "StrikebotError",
    "SubParsers",
    "Subscription",
    "TooManySignups",
    "TransientDeliveryError",
    "Tx",
    "Update",
    "UpdateState",
    "UpdateText",
    "Urgency",
    "Verdict",
    "WebhookEndpoint",
    "Webhooks",
    "add_json_flag",
    "check_update_text",
    "check_url",
    "choice_text",
    "clean_text",
    "command_named",
    "configure_logging",
    "events",
    "example_address",
    "family_answers",
    "fit",
    "fit_message",
    "i18n",
    "installed_plugins",
    "is_command_prefix",
    "lazy_exports",
    "leadership_for",
    "local_zone",
    "mask",
    "moment_type",
    "network_of",
    "neutralize_mentions",
    "not_found",
    "open_context",
    "out",
    "page_url",
    "parse_address",
    "parse_quiet_hours",
    "plugin_context",
    "print_json",
    "reach",
    "say",
    "shard_lock_key",
    "shifted_clock",
    "short_union",
    "show_phone",
    "split",
    "stale_note",
    "update_message",
    "utcnow",
    "wants",
    "watch_public_version",
    "webhook_summary",
]
