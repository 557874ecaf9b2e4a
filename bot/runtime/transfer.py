"""Export a campaign's store to one JSON document, and import it back, losslessly.

The document carries a format marker, a format version and the campaign slug; a file that
is not JSON, was written by another program, by a newer strikebot, or for another campaign
is refused with one sentence, and the store is left as it was. Every row keeps its id, so
links (`/updates/3`), audit targets (`update:3`) and delivery references stay valid, and
export → import → export gives the same bytes.

What goes in: updates with their revisions (retracted ones too, with their reason),
demands with their dated history, subscriptions (including removed ones), the audit log
and the store's metadata; deliveries, briefing runs and the briefings' shared payloads only
when asked for. Processed platform event ids are transient and never exported.

The records below mirror the tables column for column (`bot/store/schema.py`). A migration
that adds a column adds it here too (and bumps VERSION if old files cannot be read);
tests/test_transfer.py compares every table after a round trip, so a forgotten one fails.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Annotated, Any, Final, Literal, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, ValidationError
from sqlalchemy import Table, delete, func, select, text
from sqlalchemy.exc import DataError, IntegrityError

from bot.errors import Conflict, ImportRefused
from bot.models import (
    DeliveryAction,
    DeliveryState,
    DemandChange,
    DemandStatus,
    Platform,
    Status,
    Urgency,
)
from bot.runtime.seed import CAMPAIGN_META_KEY
from bot.store import Store, Tx
from bot.store import schema as t
from bot.store.codecs import subscription_from_row

FORMAT: Final = "strikebot-export"
VERSION: Final = 1

# Tables whose integer ids come from a sequence on PostgreSQL (bumped after an import).
_SERIAL_TABLES = (
    t.updates,
    t.demand_events,
    t.subscriptions,
    t.audit_log,
    t.briefing_runs,
    t.shared_payloads,
)


def _utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


Moment = Annotated[AwareDatetime, AfterValidator(_utc)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UpdateTextRecord(_Record):
    headline: str
    body: str = ""
    next_step: str = ""


class RevisionRecord(_Record):
    number: int
    texts: dict[str, UpdateTextRecord]
    status: Status
    urgency: Urgency
    next_step_at: Moment | None
    editor: str
    reason: str
    created_at: Moment
    reasons: dict[str, str] | None = None  # absent from exports before schema 0014


class UpdateRecord(_Record):
    id: int
    seed_key: str | None
    status: Status
    urgency: Urgency
    # As stored: "scheduled" is derived from published_at at read time, never stored.
    state: Literal["pending_approval", "published", "retracted"]
    texts: dict[str, UpdateTextRecord]
    next_step_at: Moment | None
    author: str
    created_at: Moment
    publish_at: Moment | None
    published_at: Moment | None
    approved_by: str | None
    revision: int
    retracted_at: Moment | None
    retracted_by: str | None
    retraction_reason: str | None
    retraction_reasons: dict[str, str] | None = None  # absent before schema 0014
    audience: dict[str, list[str]] | None = None  # absent before schema 0018: everyone
    revisions: list[RevisionRecord] = []


class DemandTextRecord(_Record):
    title: str
    summary: str = ""
    union_position: str = ""
    employer_offer: str = ""
    facts: list[str] = []


class DemandEventRecord(_Record):
    id: int
    at: Moment
    status: DemandStatus
    offer: dict[str, str]
    source: str
    recorded_by: str
    note: str
    kind: DemandChange = DemandChange.OFFER
    changes: dict[str, dict[str, list[str]]] | None = None
    recorded_at: Moment | None = None


class DemandRecord(_Record):
    key: str
    position: int
    status: DemandStatus
    texts: dict[str, DemandTextRecord]
    updated_at: Moment
    retired_at: Moment | None = None
    history: list[DemandEventRecord] = []


class SubscriptionRecord(_Record):
    id: int
    platform: Platform
    workspace: str
    channel: str
    label: str
    language: str
    urgencies: str
    briefing_time: str | None
    timezone: str
    briefing_days: str
    quiet_start: str | None
    quiet_end: str | None
    active: bool
    broken_reason: str | None
    created_at: Moment
    change_seq: int = 0  # files from before the field have none
    follows: dict[str, list[str]] | None = None  # absent before schema 0018: everything


class SiteGroupRecord(_Record):
    code: str
    names: dict[str, str]
    example: bool
    updated_at: Moment


class SiteRecord(_Record):
    code: str
    group_code: str
    names: dict[str, str]
    address: str
    example: bool
    updated_at: Moment


class AuditRecord(_Record):
    id: int
    at: Moment
    actor: str
    action: str
    target: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


class StaleTextRecord(_Record):
    target: str
    language: str
    since: Moment
    edited: str
    editor: str


class DeliveryRecord(_Record):
    id: str
    dedupe_key: str
    subscription_id: int
    platform: Platform
    action: DeliveryAction
    update_id: int | None
    revision: int
    state: DeliveryState
    attempts: int
    not_before: Moment
    claimed_by: str | None
    claimed_until: Moment | None
    platform_message_id: str | None
    last_error: str | None
    payload: dict[str, Any] | None
    created_at: Moment
    sent_at: Moment | None
    in_doubt_since: Moment | None = None  # absent from exports before schema 0008
    shared_payload_id: int | None = None  # absent from exports before schema 0013


class SharedPayloadRecord(_Record):
    id: int
    payload: dict[str, Any]
    created_at: Moment


class BriefingRunRecord(_Record):
    id: int
    subscription_id: int
    local_date: date
    scheduled_for: Moment
    created_at: Moment
    outcome: str
    delivery_id: str | None


class ExportDocument(_Record):
    format: Literal["strikebot-export"]
    version: Literal[1]
    campaign: str
    schema_revision: str | None
    meta: dict[str, str]
    updates: list[UpdateRecord]
    demands: list[DemandRecord]
    subscriptions: list[SubscriptionRecord]
    audit: list[AuditRecord]
    # Translations written before another language's text was edited (`bot.editorial.translations`).
    stale_texts: list[StaleTextRecord] = []
    # The campaign's sites and their groups (schema 0018).
    site_groups: list[SiteGroupRecord] = []
    sites: list[SiteRecord] = []
    # Absent unless exported with deliveries (`strikebot export --deliveries`).
    deliveries: list[DeliveryRecord] | None = None
    briefing_runs: list[BriefingRunRecord] | None = None
    # The briefings' shared payloads (schema 0013), with the deliveries naming them.
    shared_payloads: list[SharedPayloadRecord] | None = None


@dataclass(frozen=True, slots=True)
class TransferSummary:
    """How many rows of each kind an export holds or an import wrote."""

    campaign: str
    updates: int
    revisions: int
    demands: int
    demand_events: int
    subscriptions: int
    audit: int
    deliveries: int | None
    briefing_runs: int | None

    @classmethod
    def of(cls, doc: ExportDocument) -> TransferSummary:
        return cls(
            campaign=doc.campaign,
            updates=len(doc.updates),
            revisions=sum(len(u.revisions) for u in doc.updates),
            demands=len(doc.demands),
            demand_events=sum(len(d.history) for d in doc.demands),
            subscriptions=len(doc.subscriptions),
            audit=len(doc.audit),
            deliveries=None if doc.deliveries is None else len(doc.deliveries),
            briefing_runs=None if doc.briefing_runs is None else len(doc.briefing_runs),
        )

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


# ---------------------------------------------------------------------------- export


async def export_document(
    store: Store, campaign_slug: str, *, deliveries: bool = False
) -> ExportDocument:
    """Read the whole campaign in one transaction (a consistent snapshot)."""
    async with store.read() as tx:
        meta = {r.key: r.value for r in await _rows(tx, t.meta, t.meta.c.key)}
        stored_slug = meta.get(CAMPAIGN_META_KEY)
        if stored_slug is not None and stored_slug != campaign_slug:
            raise Conflict(
                f"This database belongs to campaign {stored_slug!r}, not {campaign_slug!r}; "
                "export it with that campaign's config (--config)."
            )
        revisions: dict[int, list[RevisionRecord]] = {}
        for r in await _rows(
            tx, t.update_revisions, t.update_revisions.c.update_id, t.update_revisions.c.number
        ):
            values = dict(r._mapping)
            revisions.setdefault(values.pop("update_id"), []).append(
                RevisionRecord.model_validate(values)
            )
        updates = [
            UpdateRecord.model_validate(dict(r._mapping) | {"revisions": revisions.get(r.id, [])})
            for r in await _rows(tx, t.updates, t.updates.c.id)
        ]
        history: dict[str, list[DemandEventRecord]] = {}
        for r in await _rows(tx, t.demand_events, t.demand_events.c.id):
            values = dict(r._mapping)
            history.setdefault(values.pop("demand_key"), []).append(
                DemandEventRecord.model_validate(values)
            )
        demands = [
            DemandRecord.model_validate(dict(r._mapping) | {"history": history.get(r.key, [])})
            for r in await _rows(tx, t.demands, t.demands.c.position, t.demands.c.key)
        ]
        subscriptions = [
            SubscriptionRecord.model_validate(dict(r._mapping))
            for r in await _rows(tx, t.subscriptions, t.subscriptions.c.id)
        ]
        audit = [
            AuditRecord.model_validate(dict(r._mapping))
            for r in await _rows(tx, t.audit_log, t.audit_log.c.id)
        ]
        stale = [
            StaleTextRecord.model_validate(dict(r._mapping))
            for r in await _rows(
                tx, t.stale_texts, t.stale_texts.c.target, t.stale_texts.c.language
            )
        ]
        groups = [
            SiteGroupRecord.model_validate(dict(r._mapping))
            for r in await _rows(tx, t.site_groups, t.site_groups.c.code)
        ]
        sites = [
            SiteRecord.model_validate(dict(r._mapping))
            for r in await _rows(tx, t.sites, t.sites.c.code)
        ]
        delivery_records = None
        briefing_records = None
        shared_records = None
        if deliveries:
            delivery_records = [
                DeliveryRecord.model_validate(dict(r._mapping))
                for r in await _rows(tx, t.deliveries, t.deliveries.c.created_at, t.deliveries.c.id)
            ]
            briefing_records = [
                BriefingRunRecord.model_validate(dict(r._mapping))
                for r in await _rows(tx, t.briefing_runs, t.briefing_runs.c.id)
            ]
            shared_records = [
                SharedPayloadRecord.model_validate(dict(r._mapping))
                for r in await _rows(tx, t.shared_payloads, t.shared_payloads.c.id)
            ]
        schema_revision = await _schema_revision(tx)
    return ExportDocument(
        format=FORMAT,
        version=VERSION,
        campaign=campaign_slug,
        schema_revision=schema_revision,
        meta=meta,
        updates=updates,
        demands=demands,
        subscriptions=subscriptions,
        audit=audit,
        stale_texts=stale,
        site_groups=groups,
        sites=sites,
        deliveries=delivery_records,
        briefing_runs=briefing_records,
        shared_payloads=shared_records,
    )


def dumps(doc: ExportDocument) -> str:
    """The file's text: stable (same store, same bytes), readable, UTF-8."""
    data = doc.model_dump(mode="json", exclude_none=False)
    if doc.deliveries is None:
        del data["deliveries"]
    if doc.briefing_runs is None:
        del data["briefing_runs"]
    if doc.shared_payloads is None:
        del data["shared_payloads"]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------- import


def parse_document(raw: bytes | str, *, source: str, campaign_slug: str) -> ExportDocument:
    """Check an export file before anything touches the store. One sentence on refusal."""
    try:
        text_ = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise ImportRefused(
            f"{source} is not a strikebot export (it is not UTF-8 text); "
            "import only a file written by `strikebot export`."
        ) from None
    try:
        data = json.loads(text_)
    except json.JSONDecodeError as exc:
        raise ImportRefused(
            f"{source} is not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno}); "
            "it may be truncated or damaged, so export it again from the source database."
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ImportRefused(
            f'{source} is not a strikebot export (it lacks "format": "{FORMAT}"); '
            "import only a file written by `strikebot export`."
        )
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ImportRefused(
            f"{source} has no valid format version; export it again with `strikebot export`."
        )
    if version > VERSION:
        raise ImportRefused(
            f"{source} was written by a newer strikebot (export format {version}, this one "
            f"reads {VERSION}); upgrade strikebot before importing it."
        )
    if data.get("campaign") != campaign_slug:
        raise ImportRefused(
            f"{source} is an export of campaign {data.get('campaign')!r}, but the config is "
            f"for {campaign_slug!r}; import it with that campaign's config (--config) and "
            "its own database."
        )
    try:
        doc = ExportDocument.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the document"
        raise ImportRefused(
            f"{source} is damaged at {where} ({first['msg']}); "
            "export it again from the source database."
        ) from None
    if doc.schema_revision is not None and doc.schema_revision not in known_schema_revisions():
        raise ImportRefused(
            f"{source} was written by a newer strikebot (database schema "
            f"{doc.schema_revision!r}); upgrade strikebot before importing it."
        )
    _check_consistent(doc, source)
    return doc


def _check_consistent(doc: ExportDocument, source: str) -> None:
    slug = doc.meta.get(CAMPAIGN_META_KEY)
    if slug is not None and slug != doc.campaign:
        raise ImportRefused(
            f"{source} is damaged: it says campaign {doc.campaign!r} but its data belongs to "
            f"{slug!r}; export it again from the source database."
        )
    for name, ids in (
        ("update", [u.id for u in doc.updates]),
        ("demand", [d.key for d in doc.demands]),
        ("subscription", [s.id for s in doc.subscriptions]),
        ("audit entry", [a.id for a in doc.audit]),
    ):
        if len(set(ids)) != len(ids):
            raise ImportRefused(
                f"{source} is damaged: it lists the same {name} twice; "
                "export it again from the source database."
            )
    shared = {p.id for p in doc.shared_payloads or []}
    for i, d in enumerate(doc.deliveries or []):
        if d.shared_payload_id is not None and d.shared_payload_id not in shared:
            raise ImportRefused(
                f"{source} is damaged at deliveries.{i} (its shared payload "
                f"{d.shared_payload_id} is not in the file); export it again from the "
                "source database."
            )
    for i, sub in enumerate(doc.subscriptions):
        # Stored as text: a bad value would be written, then break every later read.
        try:
            subscription_from_row(cast(Any, sub))  # reads attributes, as from a row
            ZoneInfo(sub.timezone)
            if not set(sub.briefing_days) <= set("0123456"):
                raise ValueError(sub.briefing_days)
        except (ValueError, TypeError, ZoneInfoNotFoundError, OSError):
            raise ImportRefused(
                f"{source} is damaged at subscriptions.{i} (a value strikebot cannot read); "
                "export it again from the source database."
            ) from None


async def import_document(store: Store, doc: ExportDocument, *, replace: bool = False) -> None:
    """Write the document in one transaction: all of it, or (on any refusal) nothing.

    Without `replace` the store must hold no campaign data yet; with it, the store's data
    is replaced by the file's.
    """
    try:
        async with store.write() as tx:
            if replace:
                await _wipe(tx)
            else:
                held = await _held(tx)
                if held:
                    raise ImportRefused(
                        f"The database already holds data ({held}); import into an empty "
                        "database, or pass --replace to overwrite it with the file."
                    )
                slug = await tx.get_meta(CAMPAIGN_META_KEY)
                if slug is not None and slug != doc.campaign:
                    raise ImportRefused(
                        f"This database belongs to campaign {slug!r}, not {doc.campaign!r}; "
                        "import into that campaign's own database."
                    )
                keys = [*doc.meta, CAMPAIGN_META_KEY]
                await tx.conn.execute(delete(t.meta).where(t.meta.c.key.in_(keys)))
            await _insert(tx, doc)
    except (IntegrityError, DataError) as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)
        raise ImportRefused(
            f"The file's rows cannot be stored ({reason}); nothing was imported, so "
            "export it again from the source database."
        ) from None


async def _held(tx: Tx) -> str:
    parts = []
    for label, table in (
        ("updates", t.updates),
        ("demands", t.demands),
        ("subscriptions", t.subscriptions),
        ("audit entries", t.audit_log),
        ("deliveries", t.deliveries),
    ):
        count = int(await tx.conn.scalar(select(func.count()).select_from(table)) or 0)
        if count:
            parts.append(f"{count} {label}")
    return ", ".join(parts)


async def _wipe(tx: Tx) -> None:
    # Children before parents, for the foreign keys.
    for table in (
        t.deliveries,
        t.shared_payloads,
        t.briefing_runs,
        t.update_revisions,
        t.updates,
        t.demand_events,
        t.demands,
        t.subscription_follows,
        t.subscriptions,
        t.sites,
        t.site_groups,
        t.audit_log,
        t.processed_events,
        t.stale_texts,
        t.meta,
    ):
        await tx.conn.execute(delete(table))


async def _insert(tx: Tx, doc: ExportDocument) -> None:
    async def put(table: Table, rows: list[dict[str, Any]]) -> None:
        if rows:
            await tx.conn.execute(table.insert(), rows)

    tx.touch_public()  # every public view changes with the imported rows
    meta = dict(doc.meta)
    meta.setdefault(CAMPAIGN_META_KEY, doc.campaign)
    await put(t.meta, [{"key": k, "value": v} for k, v in meta.items()])
    await put(t.site_groups, [g.model_dump() for g in doc.site_groups])
    await put(t.sites, [site.model_dump() for site in doc.sites])
    await put(t.subscriptions, [s.model_dump() for s in doc.subscriptions])
    await put(
        t.subscription_follows,
        [
            {"subscription_id": s.id, "kind": kind, "code": code}
            for s in doc.subscriptions
            for kind, key in (("site", "sites"), ("group", "groups"))
            for code in (s.follows or {}).get(key, [])
        ],
    )
    await put(t.updates, [u.model_dump(exclude={"revisions"}) for u in doc.updates])
    await put(
        t.update_revisions,
        [r.model_dump() | {"update_id": u.id} for u in doc.updates for r in u.revisions],
    )
    await put(t.demands, [d.model_dump(exclude={"history"}) for d in doc.demands])
    await put(
        t.demand_events,
        [e.model_dump() | {"demand_key": d.key} for d in doc.demands for e in d.history],
    )
    await put(t.audit_log, [a.model_dump() for a in doc.audit])
    await put(t.stale_texts, [s.model_dump() for s in doc.stale_texts])
    await put(t.shared_payloads, [p.model_dump() for p in doc.shared_payloads or []])
    await put(t.deliveries, [d.model_dump() for d in doc.deliveries or []])
    await put(t.briefing_runs, [b.model_dump() for b in doc.briefing_runs or []])
    if tx.dialect == "postgresql":
        # Explicit ids do not advance PostgreSQL's sequences: move them past the rows.
        for table in _SERIAL_TABLES:
            await tx.conn.execute(
                text(
                    f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "  # noqa: S608 -- table names are ours
                    f"COALESCE((SELECT MAX(id) FROM {table.name}), 0) + 1, false)"
                )
            )


# ---------------------------------------------------------------------------- helpers


async def _rows(tx: Tx, table: Table, *order: Any) -> list[Any]:
    return list((await tx.conn.execute(select(table).order_by(*order))).all())


async def _schema_revision(tx: Tx) -> str | None:
    value = await tx.conn.scalar(text("SELECT version_num FROM alembic_version"))
    return None if value is None else str(value)


def known_schema_revisions() -> set[str]:
    """The migrations this strikebot knows (a file from a newer schema is refused)."""
    from alembic.script import ScriptDirectory

    from bot.store.engine import alembic_config

    return {
        script.revision for script in ScriptDirectory.from_config(alembic_config()).walk_revisions()
    }
