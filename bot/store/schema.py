"""Tables, as SQLAlchemy Core. The Alembic migrations under `migrations/` create them.

Every datetime column is stored as UTC and read back timezone-aware (`UTCDateTime`), so
SQLite and PostgreSQL return the same values.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Date,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.types import DateTime, TypeDecorator

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def partial_index(name: str, *columns: str, where: str) -> Index:
    """An index of the rows `where` holds. SQLite's condition is set here; PostgreSQL's is
    added by `postgresql_partial_indexes`, run only for a PostgreSQL database (naming it here
    would load that dialect for every command on SQLite)."""
    index = Index(name, *columns, sqlite_where=text(where))
    index.info["where"] = where
    return index


def postgresql_partial_indexes() -> None:
    """Give every partial index its condition on PostgreSQL too (loads that dialect)."""
    for table in metadata.tables.values():
        for index in table.indexes:
            if "where" in index.info:
                index.dialect_kwargs["postgresql_where"] = text(index.info["where"])


class UTCDateTime(TypeDecorator[datetime]):
    """Aware datetimes in, aware UTC datetimes out, on every backend."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; pass an aware datetime")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


meta = Table(
    "meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

public_version = Table(
    "public_version",
    metadata,
    # One row (id 1): bumped in the same transaction as every change a public view shows,
    # so the page, feeds and API know they are current without reading the tables.
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("version", BigInteger, nullable=False),
)

public_changes = Table(
    "public_changes",
    metadata,
    # Which updates each public version touched (a row per update; update_id NULL: every
    # view changed, e.g. an import), so the static site re-publishes only their pages.
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("version", BigInteger, nullable=False),
    Column("update_id", Integer, nullable=True),
    Index("ix_public_changes_version", "version"),
)

stale_texts = Table(
    "stale_texts",
    metadata,
    # A language's wording of a text (an update, a demand) written before another language's
    # was edited: it may say something else now, until it is updated or confirmed.
    Column("target", String(80), primary_key=True),  # "update:12", "demand:pay"
    Column("language", String(16), primary_key=True),
    Column("since", UTCDateTime, nullable=False),
    Column("edited", String(80), nullable=False),  # the language(s) whose edit made it stale
    Column("editor", String(200), nullable=False),
)

drafts = Table(
    "drafts",
    metadata,
    # What an admin wrote in a form, kept between "Preview" and "Confirm" on any instance.
    Column("token", String(32), primary_key=True),
    Column("kind", String(32), nullable=False),
    Column("payload", JSON, nullable=False),
    Column("saved_at", UTCDateTime, nullable=False),
    Index("ix_drafts_saved_at", "saved_at"),
)

updates = Table(
    "updates",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("seed_key", String(120), nullable=True, unique=True),
    Column("status", String(32), nullable=False),
    Column("urgency", String(16), nullable=False),
    Column("state", String(24), nullable=False),
    Column("texts", JSON, nullable=False),
    Column("next_step_at", UTCDateTime, nullable=True),
    Column("author", String(200), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("publish_at", UTCDateTime, nullable=True),
    Column("published_at", UTCDateTime, nullable=True),
    Column("approved_by", String(200), nullable=True),
    Column("revision", Integer, nullable=False, default=1),
    Column("retracted_at", UTCDateTime, nullable=True),
    Column("retracted_by", String(200), nullable=True),
    Column("retraction_reason", Text, nullable=True),  # in the main language
    Column("retraction_reasons", JSON, nullable=True),  # language -> reason (0014)
    # Whom it addresses: {"sites": [...], "groups": [...]}; NULL: everyone (0018).
    Column("audience", JSON, nullable=True),
    Index("ix_updates_state_published", "state", "published_at"),
    Index("ix_updates_published_at", "published_at"),
    Index("ix_updates_next_step_at", "next_step_at"),
    Index("ix_updates_retracted_at", "retracted_at"),
)

update_revisions = Table(
    "update_revisions",
    metadata,
    Column("update_id", Integer, ForeignKey("updates.id"), primary_key=True),
    Column("number", Integer, primary_key=True),
    Column("texts", JSON, nullable=False),
    Column("status", String(32), nullable=False),
    Column("urgency", String(16), nullable=False),
    Column("next_step_at", UTCDateTime, nullable=True),
    Column("editor", String(200), nullable=False),
    Column("reason", Text, nullable=False),  # in the main language
    Column("reasons", JSON, nullable=True),  # language -> reason (0014)
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_update_revisions_created_at", "created_at"),
)

demands = Table(
    "demands",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("position", Integer, nullable=False),
    Column("status", String(32), nullable=False),
    Column("texts", JSON, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("retired_at", UTCDateTime, nullable=True),  # kept, with its history; not listed
)

demand_events = Table(
    "demand_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("demand_key", String(64), ForeignKey("demands.key"), nullable=False),
    Column("at", UTCDateTime, nullable=False),
    Column("status", String(32), nullable=False),
    Column("offer", JSON, nullable=False),
    Column("source", Text, nullable=False),
    Column("recorded_by", String(200), nullable=False),
    Column("note", Text, nullable=False, default=""),
    # offer (a new offer and/or status, dated `at`), edit, added, retired
    Column("kind", String(16), nullable=False, server_default="offer"),
    Column("changes", JSON, nullable=True),  # {language: {field: [before, after]}}
    Column("recorded_at", UTCDateTime, nullable=True),  # when it was written; `at` may be earlier
    Index("ix_demand_events_key_at", "demand_key", "at"),
)

subscriptions = Table(
    "subscriptions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("platform", String(16), nullable=False),
    Column("workspace", String(64), nullable=False),
    Column("channel", String(64), nullable=False),
    Column("label", String(200), nullable=False, default=""),
    Column("language", String(8), nullable=False),
    Column("urgencies", String(64), nullable=False),
    Column("briefing_time", String(5), nullable=True),
    Column("timezone", String(64), nullable=False),
    Column("briefing_days", String(16), nullable=False, default="0123456"),
    Column("quiet_start", String(5), nullable=True),
    Column("quiet_end", String(5), nullable=True),
    Column("active", Boolean, nullable=False, default=True),
    Column("broken_reason", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    # The subscriptions version (meta `subscriptions_version`) of this row's latest change:
    # the briefing scheduler reads only what changed since the version it saw.
    Column("change_seq", Integer, nullable=False, default=0, server_default="0"),
    # What it follows, as read with the row: {"sites": [...], "groups": [...]}; NULL:
    # everything. `subscription_follows` holds the same codes, one row each, for the
    # recipients query (0018).
    Column("follows", JSON, nullable=True),
    UniqueConstraint("platform", "workspace", "channel", name="uq_subscriptions_address"),
    Index("ix_subscriptions_change_seq", "change_seq"),
    partial_index(
        "ix_subscriptions_schedule",
        "briefing_time",
        "timezone",
        "briefing_days",
        "id",
        where="active AND briefing_time IS NOT NULL",
    ),
)

deliveries = Table(
    "deliveries",
    metadata,
    # Short random id: Discord's nonce (25 chars max) and the idempotency key everywhere.
    Column("id", String(25), primary_key=True),
    Column("dedupe_key", String(200), nullable=False, unique=True),
    Column("subscription_id", Integer, ForeignKey("subscriptions.id"), nullable=False),
    Column("platform", String(16), nullable=False),
    Column("action", String(16), nullable=False),
    Column("update_id", Integer, ForeignKey("updates.id"), nullable=True),
    Column("revision", Integer, nullable=False, default=0),
    Column("state", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("not_before", UTCDateTime, nullable=False),
    Column("claimed_by", String(64), nullable=True),
    Column("claimed_until", UTCDateTime, nullable=True),
    Column("platform_message_id", String(128), nullable=True),
    Column("last_error", Text, nullable=True),
    Column("payload", JSON, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("sent_at", UTCDateTime, nullable=True),
    # Set when the outcome of a send became unknown (see bot.dispatcher, "Exactly once").
    Column("in_doubt_since", UTCDateTime, nullable=True),
    # A briefing's rendered message, shared with the run's other channels of its language:
    # a row of `shared_payloads` used when `payload` is NULL. No foreign key (its check is
    # per-row work for 100,000 briefings); the row is written in the same transaction and
    # the history purge deletes it only once no delivery names it.
    Column("shared_payload_id", Integer, nullable=True),
    # What is pending, in the claim's order: a claim, `next_due` and the queue depth read
    # only pending rows, however long the history (the queries say `state = 'pending'` as a
    # literal so that PostgreSQL's generic plans can use it too). `claimed_until` rides
    # along: the rows a dispatcher holds, first in that order, are passed over in the index.
    partial_index(
        "ix_deliveries_pending",
        "platform",
        "not_before",
        "created_at",
        "id",
        "claimed_until",
        where="state = 'pending'",
    ),
    # Leases held, per platform: when the next one lapses (`next_due`), read from the index
    # alone, in as many entries as rows are leased, not as many as are pending.
    partial_index(
        "ix_deliveries_leases",
        "platform",
        "claimed_until",
        "not_before",
        where="state = 'pending' AND claimed_until IS NOT NULL",
    ),
    Index("ix_deliveries_update", "update_id", "subscription_id"),
    # The retention purge takes the oldest rows first.
    Index("ix_deliveries_created_at", "created_at"),
    # Is a shared payload still used (the purge's question)?
    partial_index(
        "ix_deliveries_shared_payload",
        "shared_payload_id",
        where="shared_payload_id IS NOT NULL",
    ),
)

shared_payloads = Table(
    "shared_payloads",
    metadata,
    # One per (briefing run, language): the payload its deliveries would each have carried
    # (`deliveries.shared_payload_id`). Never changed once written.
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("payload", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

delivery_history = Table(
    "delivery_history",
    metadata,
    # What purged deliveries were (`[delivery] keep_history_days`): one row per (update,
    # platform, action, outcome) per purge, with how many and when they were queued.
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("purged_at", UTCDateTime, nullable=False),
    Column("update_id", Integer, nullable=True),
    Column("platform", String(16), nullable=False),
    Column("action", String(16), nullable=False),
    Column("state", String(16), nullable=False),
    Column("count", Integer, nullable=False),
    Column("retried", Integer, nullable=False),
    Column("first_created_at", UTCDateTime, nullable=False),
    Column("last_created_at", UTCDateTime, nullable=False),
    Index("ix_delivery_history_update", "update_id"),
)

webhook_endpoints = Table(
    "webhook_endpoints",
    metadata,
    # Where a webhook subscription's events go, and the secret that signs them (shown once).
    Column("subscription_id", Integer, ForeignKey("subscriptions.id"), primary_key=True),
    Column("url", String(2000), nullable=False),
    Column("secret", String(128), nullable=False),
    Column("description", String(200), nullable=False, default=""),
    Column("created_at", UTCDateTime, nullable=False),
    Column("created_by", String(200), nullable=False),
    Column("failing_since", UTCDateTime, nullable=True),
    Column("last_success_at", UTCDateTime, nullable=True),
    Column("last_error", Text, nullable=True),
)

briefing_runs = Table(
    "briefing_runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("subscription_id", Integer, ForeignKey("subscriptions.id"), nullable=False),
    Column("local_date", Date, nullable=False),
    Column("scheduled_for", UTCDateTime, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("outcome", String(16), nullable=False),  # queued | skipped
    Column("delivery_id", String(25), nullable=True),
    UniqueConstraint("subscription_id", "local_date", name="uq_briefing_runs_sub_date"),
)

audit_log = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", UTCDateTime, nullable=False),
    Column("actor", String(200), nullable=False),
    Column("action", String(64), nullable=False),
    Column("target", String(200), nullable=False),
    Column("before", JSON, nullable=True),
    Column("after", JSON, nullable=True),
    Index("ix_audit_log_at", "at"),
    Index("ix_audit_log_target", "target"),
)

processed_events = Table(
    "processed_events",
    metadata,
    # Platform events already handled (Slack retries, Discord replays): handled once only.
    Column("platform", String(16), primary_key=True),
    Column("event_id", String(128), primary_key=True),
    Column("at", UTCDateTime, nullable=False),
)

subscribers = Table(
    "subscribers",
    metadata,
    # People who signed up by e-mail or text (bot/people/signups.py). The only table holding an
    # address or number: everything else names a person by `key`, an opaque random id that
    # is also their subscription's channel. A row is deleted when its person unsubscribes.
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(24), nullable=False, unique=True),
    Column("kind", String(8), nullable=False),  # email | phone | whatsapp | push
    # An e-mail address, a number, or a browser push subscription's endpoint (a URL).
    Column("address", String(2048), nullable=False),
    Column("language", String(8), nullable=False),
    Column("choice", String(16), nullable=False),  # urgent | all | briefing
    Column("state", String(16), nullable=False),  # pending | confirmed
    Column("subscription_id", Integer, ForeignKey("subscriptions.id"), nullable=True),
    Column("manage_token", String(64), nullable=False, unique=True),
    # The consent record: how and when they asked, and how and when they confirmed.
    Column("signed_up_at", UTCDateTime, nullable=False),
    Column("signed_up_via", String(64), nullable=False),
    Column("confirmed_at", UTCDateTime, nullable=True),
    Column("confirmed_via", String(64), nullable=True),
    # The confirmation in flight: its token's SHA-256, expiry, and the choices it confirms.
    Column("confirm_digest", String(64), nullable=True, unique=True),
    Column("confirm_expires", UTCDateTime, nullable=True),
    Column("requested", JSON, nullable=True),
    # How many confirmations went out, for the per-address limits.
    Column("last_confirmation_at", UTCDateTime, nullable=True),
    Column("confirmations_today", Integer, nullable=False, default=0),
    Column("confirmations_since", UTCDateTime, nullable=True),
    Column("broken_reason", Text, nullable=True),
    Column("broken_at", UTCDateTime, nullable=True),
    # A browser push subscription's keys ({"p256dh", "auth"}): what its messages are
    # encrypted to (RFC 8291). Nothing else about a browser is kept.
    Column("keys", JSON, nullable=True),
    # When the person last wrote to the number (WhatsApp: free-form messages only within 24
    # hours of it; templates otherwise).
    Column("heard_at", UTCDateTime, nullable=True),
    UniqueConstraint("kind", "address", name="uq_subscribers_address"),
    Index("ix_subscribers_state_signed_up", "state", "signed_up_at"),
)

desk_links = Table(
    "desk_links",
    metadata,
    # A sign-in link to the web desk, e-mailed to an address under [admins.web]
    # (bot/people/sign_in.py): its token's SHA-256 (the token itself is never kept), whom it
    # signs in, until when, and when it was used (it works once). Kept a day, to limit how
    # many links an address gets.
    Column("digest", String(64), primary_key=True),
    Column("person", String(254), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("used_at", UTCDateTime, nullable=True),
    Index("ix_desk_links_person_created", "person", "created_at"),
)

desk_sessions = Table(
    "desk_sessions",
    metadata,
    # Someone signed in to the web desk: the SHA-256 of their cookie's token, who, since
    # when, when last seen (idle expiry) and when it ends whatever happens.
    Column("digest", String(64), primary_key=True),
    Column("person", String(254), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("seen_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Index("ix_desk_sessions_person", "person"),
)

receipts = Table(
    "receipts",
    metadata,
    # What a provider later said about a sent message (Twilio's status callbacks):
    # delivered, undelivered, failed, with its error code. One row per delivery.
    Column("delivery_id", String(25), primary_key=True),
    Column("platform", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("error", String(64), nullable=True),
    Column("at", UTCDateTime, nullable=False),
)


site_groups = Table(
    "site_groups",
    metadata,
    # A group of sites: a region, a local district, a campus (bot/audiences). `names` by
    # language; `example` marks a demo's rows.
    Column("code", String(32), primary_key=True),
    Column("names", JSON, nullable=False),
    Column("example", Boolean, nullable=False, default=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

sites = Table(
    "sites",
    metadata,
    # A school, a worksite, a depot: its short code, names by language, its group.
    Column("code", String(32), primary_key=True),
    Column("group_code", String(32), ForeignKey("site_groups.code"), nullable=False),
    Column("names", JSON, nullable=False),
    Column("address", Text, nullable=False, default=""),
    Column("example", Boolean, nullable=False, default=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index("ix_sites_group_code", "group_code"),
)

subscription_follows = Table(
    "subscription_follows",
    metadata,
    # What a subscription follows, one code a row (kind "site" or "group"); a subscription
    # with none follows everything. Looked up by (kind, code) when an update is targeted.
    Column("subscription_id", Integer, ForeignKey("subscriptions.id"), primary_key=True),
    Column("kind", String(8), primary_key=True),
    Column("code", String(32), primary_key=True),
    Index("ix_subscription_follows_code", "kind", "code", "subscription_id"),
)
