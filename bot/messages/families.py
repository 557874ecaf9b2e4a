"""What families ask first, answered the same way on the page, in briefings and in
`/strike status`: is the strike on today, then the campaign's questions (a school's "Are
schools open?", meals and where to ask; a hospital's own; see `bot.messages.kinds`).

A pure function of the campaign, the update that defines the status, and `now`."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot import i18n
from bot.messages.fallback import shown
from bot.messages.kinds import status_term
from bot.models import Campaign, FamilyQuestion, Update


def _today(
    campaign: Campaign, latest: Update | None, now: datetime
) -> tuple[str, dict[str, object]]:
    """The families' sentence that says whether the strike is on today, and its values."""
    if latest is None:
        return "", {}
    if not latest.status.on_strike:
        return "no", {"status": status_term(campaign, latest.status)}
    today = now.astimezone(ZoneInfo(campaign.timezone)).date()
    start = campaign.strike_start
    if start is not None and start <= today:
        return "yes_day", {"n": i18n.day_of_strike(start, today)}
    return "yes", {}


def strike_today(campaign: Campaign, latest: Update | None, now: datetime, language: str) -> str:
    """'Yes: day 5 of the strike.' / 'No. Strike suspended.'; '' before any update."""
    key, values = _today(campaign, latest, now)
    return i18n.family_word(key, language, **values) if key else ""


def as_line(question: str, answer: str) -> str:
    """'Are schools open? Yes.' / 'Meals: as usual.'"""
    return f"{question} {answer}" if question.endswith("?") else f"{question}: {answer}"


def _asked_in(question: FamilyQuestion, language: str) -> str:
    """The language a kind's question and its yes/no verdict are both said in (one of them
    untranslated: both in the source language, never a question in one and its "Yes, ..."
    in another)."""
    contexts = [question.context]
    if question.verdict is not None:
        contexts.append(question.yes if question.verdict else question.no)
    return i18n.sentence_language(language, contexts)


def question_text(question: FamilyQuestion, campaign: Campaign, language: str) -> str:
    """The question as the reader reads it: the kind's (catalogue) or the campaign's own."""
    if question.wording:
        return shown(question.wording, language, campaign.default_language)
    return i18n.text(_asked_in(question, language), question.context)


def answer_text(question: FamilyQuestion, campaign: Campaign, language: str) -> str:
    """The answer, after its yes/no verdict when it has one ("Yes, schools are open. ...")."""
    text = shown(question.answer, language, campaign.default_language)
    if question.verdict is not None:
        said = _asked_in(question, language)
        verdict = i18n.text(said, question.yes if question.verdict else question.no)
        text = f"{verdict} {text}".strip()
    return text


def family_answers(
    campaign: Campaign, latest: Update | None, now: datetime, language: str
) -> list[tuple[str, str]]:
    """(question, answer) pairs, in order; only those the campaign has an answer for."""
    lang = i18n.pick(language)
    answers: list[tuple[str, str]] = []
    key, values = _today(campaign, latest, now)
    if key:
        # The question and its answer in one language (see `i18n.sentence_language`).
        terms = [c for v in values.values() if isinstance(v, i18n.Term) for c in v.contexts]
        said = i18n.sentence_language(lang, ["families.strike_today", f"families.{key}", *terms])
        answers.append(
            (i18n.family_word("strike_today", said), i18n.family_word(key, said, **values))
        )
    if campaign.families is None:
        return answers
    for question in campaign.families.questions:
        answer = answer_text(question, campaign, lang)
        if answer:
            answers.append((question_text(question, campaign, lang), answer))
    return answers
