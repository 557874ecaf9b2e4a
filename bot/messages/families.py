"""What a parent asks first, answered the same way on the page, in briefings and in
`/strike status`: is the strike on today, are schools open, meals, where to ask.

A pure function of the campaign, the update that defines the status, and `now`."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot import i18n
from bot.messages.fallback import shown
from bot.models import Campaign, Update


def strike_today(campaign: Campaign, latest: Update | None, now: datetime, language: str) -> str:
    """'Yes: day 5 of the strike.' / 'No. Strike suspended.'; '' before any update."""
    if latest is None:
        return ""
    if not latest.status.on_strike:
        return i18n.family_word("no", language, status=i18n.status_term(latest.status))
    today = now.astimezone(ZoneInfo(campaign.timezone)).date()
    start = campaign.strike_start
    if start is not None and start <= today:
        return i18n.family_word("yes_day", language, n=i18n.day_of_strike(start, today))
    return i18n.family_word("yes", language)


def as_line(question: str, answer: str) -> str:
    """'Are schools open? Yes.' / 'Meals: as usual.'"""
    return f"{question} {answer}" if question.endswith("?") else f"{question}: {answer}"


def family_answers(
    campaign: Campaign, latest: Update | None, now: datetime, language: str
) -> list[tuple[str, str]]:
    """(question, answer) pairs, in order; only those the campaign has an answer for."""
    lang = i18n.pick(language)
    answers: list[tuple[str, str]] = []
    today = strike_today(campaign, latest, now, lang)
    if today:
        answers.append((i18n.family_word("strike_today", lang), today))
    families = campaign.families
    if families is None:
        return answers
    main = campaign.default_language
    schools = shown(families.schools, lang, main)
    if families.schools_open is not None:
        verdict = i18n.family_word("schools_open" if families.schools_open else "schools_closed",
                                   lang)  # fmt: skip
        schools = f"{verdict} {schools}".strip()
    if schools:
        answers.append((i18n.family_word("schools", lang), schools))
    for name in ("meals", "ask"):
        text = shown(getattr(families, name), lang, main)
        if text:
            answers.append((i18n.family_word(name, lang), text))
    return answers
