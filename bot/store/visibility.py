"""The embargo rule, in one place: which updates the public may see at a moment.

Visible = published with its embargo passed (`published_at <= now`), or retracted after it
was published. Pending approval, scheduled (embargoed) and never-published updates stay
hidden: an embargoed update must not leak through the page, a feed, the API or a briefing.
`current` narrows it to what defines the status now: visible and not retracted.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, and_

from bot.models import UpdateState
from bot.store import schema as t

_u = t.updates.c


def visible(now: datetime) -> ColumnElement[bool]:
    return and_(
        _u.state.in_([str(UpdateState.PUBLISHED), str(UpdateState.RETRACTED)]),
        _u.published_at.is_not(None),
        _u.published_at <= now,
    )


def current(now: datetime) -> ColumnElement[bool]:
    return and_(
        _u.state == str(UpdateState.PUBLISHED),
        _u.published_at.is_not(None),
        _u.published_at <= now,
    )


def embargoed(now: datetime) -> ColumnElement[bool]:
    """Published with its embargo still ahead: scheduled."""
    return and_(_u.state == str(UpdateState.PUBLISHED), _u.published_at > now)
