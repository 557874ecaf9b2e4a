"""The core's public boundary: everything a platform plugin may use, and nothing else.

Adapters (`adapters/<platform>/`, or a package pip installs) import from here only; an
import-linter contract in `make test` says so. What a plugin declares (`Plugin`) and what
its factory receives (`PluginContext`) are the heart of it; the rest is the vocabulary a
plugin speaks: the domain types, the platform-neutral message and how to fit it, the
commands and admin use cases, errors whose sentences people read, and the helpers a
plugin's own CLI commands use. `docs/adapters.md` walks through writing a plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot import i18n
from bot.clock import Clock, shifted_clock, utcnow
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
from bot.models import (
    Actor,
    Audience,
    Campaign,
    Contact,
    DeliveryState,
    Demand,
    DemandChange,
    DemandEvent,
    DemandStatus,
    QuietHours,
    Site,
    SiteGroup,
    Status,
    Subscription,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
    WebhookEndpoint,
)
from bot.plugins import (
    AdminRule,
    Check,
    Command,
    Cost,
    DoctorRequest,
    Mountable,
    Plugin,
    PluginSettings,
    Section,
    SubParsers,
    SurfacePreview,
    Verdict,
    lazy_exports,
)
from bot.plugins.admins import AdminList

if TYPE_CHECKING:
    from bot.audiences.picker import PlaceMatch
    from bot.channels.webhooks import AddressPolicy
    from bot.channels.webhooks import summary as webhook_summary
    from bot.cli import add_json_flag, open_plugin, out, print_json
    from bot.cli._shared import moment_type
    from bot.commands import (
        LOCALIZED_NAMES,
        CommandContext,
        Commands,
        Reply,
        command_named,
        is_command_prefix,
    )
    from bot.delivery import events
    from bot.delivery.leadership import Leadership
    from bot.delivery.progress import Progress
    from bot.editorial.admin import DemandResult
    from bot.editorial.demands import DemandWording
    from bot.editorial.desk import Action, Preview, Problems, Proposal, TextPatch
    from bot.editorial.parsing import QuietHoursSetting, parse_quiet_hours
    from bot.editorial.rules import (
        BODY_MAX,
        HEADLINE_MAX,
        NEXT_STEP_MAX,
        NOTE_MAX,
        OFFER_MAX,
        REASON_MAX,
        SOURCE_MAX,
        VISIBLE_TEXT_PATTERN,
    )
    from bot.editorial.translations import StaleText, stale_note
    from bot.messages import fallback, kinds
    from bot.messages.compose import (
        fit,
        fit_message,
        local_zone,
        neutralize_mentions,
        page_url,
        split,
    )
    from bot.messages.families import family_answers
    from bot.metrics import Metrics
    from bot.network import network_of
    from bot.people.contacts import show_phone
    from bot.people.conversation import Conversation
    from bot.people.preferences import LinkRefused
    from bot.people.sign_in import SignIn, TooManySignIns
    from bot.people.signups import (
        Choice,
        Contactable,
        Offer,
        SignUps,
        TooManySignups,
        choice_text,
    )
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
    from bot.runtime.context import PluginContext
    from bot.store import STORE_FAILURES
    from bot.store.content import SharedCheck
    from bot.store.public import RevisionNote
    from bot.store.reads import Reads
    from bot.store.sessions import DeskSession

# Names whose modules bring the store, SQLAlchemy or the CLI with them load when first used,
# so that a plugin's declaration (and `strikebot --help`) imports none of it.
_LAZY = {
    "DemandWording": "bot.editorial.demands",
    "QuietHoursSetting": "bot.editorial.parsing",
    "parse_quiet_hours": "bot.editorial.parsing",
    "BODY_MAX": "bot.editorial.rules",
    "HEADLINE_MAX": "bot.editorial.rules",
    "NEXT_STEP_MAX": "bot.editorial.rules",
    "NOTE_MAX": "bot.editorial.rules",
    "OFFER_MAX": "bot.editorial.rules",
    "REASON_MAX": "bot.editorial.rules",
    "SOURCE_MAX": "bot.editorial.rules",
    "VISIBLE_TEXT_PATTERN": "bot.editorial.rules",
    "fallback": "bot.messages:fallback",
    "kinds": "bot.messages:kinds",
    "fit": "bot.messages.compose",
    "fit_message": "bot.messages.compose",
    "local_zone": "bot.messages.compose",
    "neutralize_mentions": "bot.messages.compose",
    "page_url": "bot.messages.compose",
    "split": "bot.messages.compose",
    "family_answers": "bot.messages.families",
    "network_of": "bot.network",
    "Adapter": "bot.plugins.outbound",
    "ChannelRef": "bot.plugins.outbound",
    "EventSink": "bot.plugins.outbound",
    "Field": "bot.plugins.outbound",
    "FindsSent": "bot.plugins.outbound",
    "HealthBoard": "bot.plugins.outbound",
    "Limits": "bot.plugins.outbound",
    "Link": "bot.plugins.outbound",
    "MessageKind": "bot.plugins.outbound",
    "OutboundMessage": "bot.plugins.outbound",
    "Pacing": "bot.plugins.outbound",
    "Reporting": "bot.plugins.outbound",
    "Service": "bot.plugins.outbound",
    "PlaceMatch": "bot.audiences.picker",
    "AddressPolicy": "bot.channels.webhooks",
    "webhook_summary": "bot.channels.webhooks:summary",
    "add_json_flag": "bot.cli",
    "out": "bot.cli",
    "print_json": "bot.cli",
    "moment_type": "bot.cli._shared",
    "LOCALIZED_NAMES": "bot.commands",
    "CommandContext": "bot.commands",
    "Commands": "bot.commands",
    "Reply": "bot.commands",
    "command_named": "bot.commands",
    "is_command_prefix": "bot.commands",
    "events": "bot.delivery",
    "Leadership": "bot.delivery.leadership",
    "Progress": "bot.delivery.progress",
    "DemandResult": "bot.editorial.admin",
    "Action": "bot.editorial.desk",
    "Preview": "bot.editorial.desk",
    "Problems": "bot.editorial.desk",
    "Proposal": "bot.editorial.desk",
    "TextPatch": "bot.editorial.desk",
    "Conversation": "bot.people.conversation",
    "open_plugin": "bot.cli",
    "StaleText": "bot.editorial.translations",
    "stale_note": "bot.editorial.translations",
    "Metrics": "bot.metrics",
    "show_phone": "bot.people.contacts",
    "LinkRefused": "bot.people.preferences",
    "SignIn": "bot.people.sign_in",
    "TooManySignIns": "bot.people.sign_in",
    "Choice": "bot.people.signups",
    "Contactable": "bot.people.signups",
    "Offer": "bot.people.signups",
    "SignUps": "bot.people.signups",
    "TooManySignups": "bot.people.signups",
    "choice_text": "bot.people.signups",
    "PluginContext": "bot.runtime.context",
    "STORE_FAILURES": "bot.store",
    "SharedCheck": "bot.store.content",
    "RevisionNote": "bot.store.public",
    "Reads": "bot.store.reads",
    "DeskSession": "bot.store.sessions",
}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "BODY_MAX",
    "HEADLINE_MAX",
    "LOCALIZED_NAMES",
    "NEXT_STEP_MAX",
    "NOTE_MAX",
    "OFFER_MAX",
    "REASON_MAX",
    "SOURCE_MAX",
    "STORE_FAILURES",
    "VISIBLE_TEXT_PATTERN",
    "Action",
    "Actor",
    "Adapter",
    "AddressPolicy",
    "AdminList",
    "AdminRule",
    "Audience",
    "Campaign",
    "ChannelRef",
    "Check",
    "Choice",
    "Clock",
    "Command",
    "CommandContext",
    "Commands",
    "ConfigError",
    "Conflict",
    "Contact",
    "Contactable",
    "Conversation",
    "Cost",
    "DeliveryState",
    "Demand",
    "DemandChange",
    "DemandEvent",
    "DemandResult",
    "DemandStatus",
    "DemandWording",
    "DeskSession",
    "DoctorRequest",
    "EventSink",
    "Field",
    "FindsSent",
    "HealthBoard",
    "InvalidInput",
    "Leadership",
    "Limits",
    "Link",
    "LinkRefused",
    "MessageKind",
    "Metrics",
    "Mountable",
    "NotAllowed",
    "NotFound",
    "Offer",
    "OutboundMessage",
    "Pacing",
    "PermanentDeliveryError",
    "PlaceMatch",
    "Plugin",
    "PluginContext",
    "PluginSettings",
    "Preview",
    "Problems",
    "Progress",
    "Proposal",
    "QuietHours",
    "QuietHoursSetting",
    "Reads",
    "Reply",
    "Reporting",
    "RevisionNote",
    "Section",
    "Service",
    "SharedCheck",
    "SignIn",
    "SignUps",
    "Site",
    "SiteGroup",
    "StaleText",
    "Status",
    "StoreUnavailable",
    "StrikebotError",
    "SubParsers",
    "Subscription",
    "SurfacePreview",
    "TextPatch",
    "TooManySignIns",
    "TooManySignups",
    "TransientDeliveryError",
    "Update",
    "UpdateState",
    "UpdateText",
    "Urgency",
    "Verdict",
    "WebhookEndpoint",
    "add_json_flag",
    "choice_text",
    "command_named",
    "events",
    "fallback",
    "family_answers",
    "fit",
    "fit_message",
    "i18n",
    "is_command_prefix",
    "kinds",
    "lazy_exports",
    "local_zone",
    "moment_type",
    "network_of",
    "neutralize_mentions",
    "not_found",
    "open_plugin",
    "out",
    "page_url",
    "parse_quiet_hours",
    "print_json",
    "say",
    "shifted_clock",
    "show_phone",
    "split",
    "stale_note",
    "utcnow",
    "webhook_summary",
]
