"""Rows to domain types and back: how each table's row reads as a model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, time
from typing import Any

from sqlalchemy import Row

from bot.models import (
    Audience,
    Delivery,
    DeliveryAction,
    DeliveryState,
    DemandText,
    QuietHours,
    Revision,
    Status,
    Subscription,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
)


def texts_to_json(texts: Mapping[str, UpdateText]) -> dict[str, dict[str, str]]:
    return {
        lang: {"headline": x.headline, "body": x.body, "next_step": x.next_step}
        for lang, x in texts.items()
    }


def texts_from_json(raw: Mapping[str, Mapping[str, str]]) -> dict[str, UpdateText]:
    return {
        lang: UpdateText(x["headline"], x.get("body", ""), x.get("next_step", ""))
        for lang, x in raw.items()
    }


def demand_texts_to_json(texts: Mapping[str, DemandText]) -> dict[str, dict[str, Any]]:
    return {
        lang: {
            "title": x.title,
            "summary": x.summary,
            "union_position": x.union_position,
            "employer_offer": x.employer_offer,
            "facts": list(x.facts),
        }
        for lang, x in texts.items()
    }


def demand_texts_from_json(raw: Mapping[str, Mapping[str, Any]]) -> dict[str, DemandText]:
    return {
        lang: DemandText(
            title=x["title"],
            summary=x.get("summary", ""),
            union_position=x.get("union_position", ""),
            employer_offer=x.get("employer_offer", ""),
            facts=tuple(x.get("facts", ())),
        )
        for lang, x in raw.items()
    }


def _hhmm(value: time | None) -> str | None:
    return None if value is None else value.strftime("%H:%M")


def _parse_hhmm(value: str | None) -> time | None:
    return None if value is None else time.fromisoformat(value)


def update_from_row(row: Row[Any], now: datetime, revisions: Sequence[Revision] = ()) -> Update:
    state = UpdateState(row.state)
    if state is UpdateState.PUBLISHED and row.published_at is not None and row.published_at > now:
        state = UpdateState.SCHEDULED
    return Update(
        id=row.id,
        status=Status(row.status),
        urgency=Urgency(row.urgency),
        texts=texts_from_json(row.texts),
        author=row.author,
        created_at=row.created_at,
        state=state,
        revision=row.revision,
        next_step_at=row.next_step_at,
        publish_at=row.publish_at,
        published_at=row.published_at,
        approved_by=row.approved_by,
        retracted_at=row.retracted_at,
        retracted_by=row.retracted_by,
        retraction_reason=row.retraction_reason,
        seed_key=row.seed_key,
        revisions=tuple(revisions),
        retraction_reasons=dict(row.retraction_reasons or {}),
        audience=Audience.from_json(getattr(row, "audience", None)),
    )


def revision_from_row(row: Row[Any]) -> Revision:
    return Revision(
        number=row.number,
        texts=texts_from_json(row.texts),
        status=Status(row.status),
        urgency=Urgency(row.urgency),
        next_step_at=row.next_step_at,
        editor=row.editor,
        reason=row.reason,
        created_at=row.created_at,
        reasons=dict(row.reasons or {}),
    )


def subscription_from_row(row: Row[Any]) -> Subscription:
    quiet = None
    if row.quiet_start is not None and row.quiet_end is not None:
        quiet = QuietHours(time.fromisoformat(row.quiet_start), time.fromisoformat(row.quiet_end))
    return Subscription(
        id=row.id,
        platform=str(row.platform),
        workspace=row.workspace,
        channel=row.channel,
        language=row.language,
        urgencies=frozenset(Urgency(u) for u in row.urgencies.split(",") if u),
        briefing_time=_parse_hhmm(row.briefing_time),
        timezone=row.timezone,
        briefing_days=frozenset(int(d) for d in row.briefing_days),
        quiet_hours=quiet,
        broken_reason=row.broken_reason,
        created_at=row.created_at,
        label=row.label,
        follows=Audience.from_json(getattr(row, "follows", None)),
    )


def subscription_to_values(sub: Subscription) -> dict[str, Any]:
    """Column values for a subscription (without id / created_at)."""
    return {
        "platform": str(sub.platform),
        "workspace": sub.workspace,
        "channel": sub.channel,
        "label": sub.label,
        "language": sub.language,
        "urgencies": ",".join(sorted(str(u) for u in sub.urgencies)),
        "briefing_time": _hhmm(sub.briefing_time),
        "timezone": sub.timezone,
        "briefing_days": "".join(str(d) for d in sorted(sub.briefing_days)),
        "quiet_start": _hhmm(sub.quiet_hours.start) if sub.quiet_hours else None,
        "quiet_end": _hhmm(sub.quiet_hours.end) if sub.quiet_hours else None,
        "broken_reason": sub.broken_reason,
        "follows": sub.follows.to_json(),
    }


def delivery_from_row(row: Row[Any]) -> Delivery:
    return Delivery(
        id=row.id,
        dedupe_key=row.dedupe_key,
        subscription_id=row.subscription_id,
        platform=str(row.platform),
        action=DeliveryAction(row.action),
        state=DeliveryState(row.state),
        created_at=row.created_at,
        not_before=row.not_before,
        update_id=row.update_id,
        revision=row.revision,
        attempts=row.attempts,
        platform_message_id=row.platform_message_id,
        last_error=row.last_error,
        sent_at=row.sent_at,
        payload=row.payload,
        in_doubt_since=row.in_doubt_since,
        shared_payload_id=row.shared_payload_id,
    )
