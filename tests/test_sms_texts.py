"""Every kind of text in every shipped language, checked against Twilio's rules: the
encoding (GSM-7 unless the message itself needs UCS-2: nothing the cut adds switches it),
the segments (160/153 GSM-7 septets, an extension character counting two and never split;
70/67 UCS-2 units, an emoji never split) within `[sms] max_segments`, and what each kind
must keep when it is cut: whole words, the next step's time, a correction's or
retraction's reason, a confirmation whole.

The counting here is written from the rules (3GPP TS 23.038), apart from the plugin's own."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from xml.etree import ElementTree

import pytest

from adapters.twilio.sms import count, render_text
from bot import i18n
from bot.briefings.compose import compose_briefing
from bot.clock import FixedClock
from bot.messages.compose import correction_message, retraction_message, update_message
from bot.models import (
    Demand,
    DemandStatus,
    DemandText,
    Revision,
    Status,
    Subscription,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
)
from bot.people.signups import Choice
from bot.plugins.outbound import MessageKind, OutboundMessage
from bot.store import Store
from tests.fakes.twilio import FakeTwilio
from tests.family_support import families
from tests.support import CAMPAIGN, FRIDAY

LANGUAGES = tuple(i18n.languages())  # every shipped language
BUDGET = 2  # `[sms] max_segments` as shipped
MONDAY = datetime(2019, 1, 21, 14, 0, tzinfo=UTC)

# -- Twilio's rules, written out ---------------------------------------------------------

GSM7 = set(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQ"
    "RSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
) - {"\x1b"}
GSM7_EXTENSION = set("\f^{}\\[~]|€")


def twilio_segments(text: str) -> tuple[str, int]:
    """(encoding, segments) as Twilio bills them."""
    if all(ch in GSM7 or ch in GSM7_EXTENSION for ch in text):
        units = [2 if ch in GSM7_EXTENSION else 1 for ch in text]
        encoding, alone, each = "GSM-7", 160, 153
    else:
        units = [2 if ord(ch) > 0xFFFF else 1 for ch in text]
        encoding, alone, each = "UCS-2", 70, 67
    if sum(units) <= alone:
        return encoding, 1 if units else 0
    segments, used = 1, 0
    for unit in units:  # a character's units never straddle two segments
        if used + unit > each:
            segments, used = segments + 1, 0
        used += unit
    return encoding, segments


def typographic_twins(text: str) -> str:
    """What any SMS sender turns into GSM-7 without changing a word (quotes, dashes...)."""
    for fancy, plain in (("‘’", "'"), ("“”", '"'), ("–—", "-"), ("\u00a0", " "), ("•", "-")):
        for ch in fancy:
            text = text.replace(ch, plain)
    return text.replace("…", "...").replace("\u200b", "")


def message_allows_gsm(message: OutboundMessage) -> bool:
    """True when every word of the message (before any cut) is GSM-7."""
    words = [message.title, message.body, *(f"{f.name} {f.value}" for f in message.fields)]
    if message.kind is MessageKind.UPDATE and message.urgency is Urgency.URGENT:
        words.append(i18n.text(message.language, "sms.urgent"))
    return all(ch in GSM7 or ch in GSM7_EXTENSION for ch in typographic_twins(" ".join(words)))


# -- what people write, long, in each language --------------------------------------------

LONG = {
    "en": "Picket lines start at every school from 6:30 AM, and the rally follows at City "
    "Hall at noon with parents, students and community allies. Bring water and signs. ",
    "es": "Los piquetes empiezan en todas las escuelas a las 6:30, y la marcha sigue en el "
    "Ayuntamiento al mediodía con familias, estudiantes y aliados. Traigan agua y carteles. ",
}
GSM_SPANISH = "Los piquetes empiezan en todas las escuelas a las 6:30 y la marcha sigue "


def _texts(body_repeats: int, *, gsm_spanish: bool = False) -> dict[str, UpdateText]:
    texts = {}
    for lang in LANGUAGES:
        body = GSM_SPANISH if gsm_spanish and lang != "en" else LONG.get(lang, LONG["en"])
        texts[lang] = UpdateText(
            "The strike is on" if lang == "en" else "Comienza la huelga",
            body * body_repeats,
            "Picket at your site at 6:30" if lang == "en" else "Piquete a las 6:30",
        )
    return texts


def _update(**overrides: object) -> Update:
    base = Update(
        id=12,
        status=Status.STRIKE_ON,
        urgency=Urgency.ROUTINE,
        texts=_texts(4),
        author="admin",
        created_at=FRIDAY,
        state=UpdateState.PUBLISHED,
        next_step_at=MONDAY,
        published_at=FRIDAY,
    )
    return replace(base, **overrides)  # type: ignore[arg-type]


REASONS = {"en": "The rally moved to City Hall at noon", "es": "La marcha pasó al Ayuntamiento"}


def _corrected() -> Update:
    old = Revision(1, _texts(4), Status.STRIKE_ON, Urgency.ROUTINE, MONDAY, "admin",
                   REASONS["en"], FRIDAY, reasons=REASONS)  # fmt: skip
    return _update(revision=2, revisions=(old,), texts=_texts(6))


def _retracted() -> Update:
    return _update(
        state=UpdateState.RETRACTED,
        retracted_at=FRIDAY,
        retraction_reason=REASONS["en"],
        retraction_reasons=REASONS,
        texts={lang: replace(t, headline=t.headline * 6) for lang, t in _texts(4).items()},
    )


def _briefing(language: str) -> OutboundMessage:
    demand = Demand(
        "pay", 1, DemandStatus.OFFER_ON_TABLE,
        {"en": DemandText("Fair pay", "", "A 6.5% raise", "A 6% raise over two years")},
        FRIDAY,
    )  # fmt: skip
    sub = Subscription(1, "sms", "sms", "key", language, timezone=CAMPAIGN.timezone)
    latest = _update(published_at=FRIDAY)
    return compose_briefing(CAMPAIGN, sub, latest, [latest], [demand], [], FRIDAY, language)


@dataclass(frozen=True)
class Case:
    kind: str
    language: str
    message: OutboundMessage
    keeps: tuple[str, ...] = ()  # what the text must still say once cut


def cases() -> list[Case]:
    found = []
    for lang in LANGUAGES:
        when = update_message(_update(), lang, CAMPAIGN).fields[-1].value
        found += [
            Case("update", lang, update_message(_update(), lang, CAMPAIGN), (when,)),
            Case("urgent update", lang,
                 update_message(_update(urgency=Urgency.URGENT), lang, CAMPAIGN), (when,)),
            Case("short update", lang, update_message(_update(texts=_texts(0)), lang, CAMPAIGN),
                 (when,)),
            Case("gsm update", lang,
                 update_message(_update(texts=_texts(5, gsm_spanish=True)), lang, CAMPAIGN),
                 (when,)),
            Case("correction", lang, correction_message(_corrected(), lang, CAMPAIGN),
                 (REASONS.get(lang, REASONS["en"]),)),
            Case("retraction", lang, retraction_message(_retracted(), lang, CAMPAIGN),
                 (REASONS.get(lang, REASONS["en"]),)),
            Case("briefing", lang, _briefing(lang)),
        ]  # fmt: skip
    return found


CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kind}-{c.language}" for c in CASES])
def test_every_kind_of_text_keeps_to_twilios_rules(case: Case) -> None:
    text = render_text(case.message, sender="UTLA", max_segments=BUDGET)
    encoding, segments = twilio_segments(text)
    assert (count(text).encoding, count(text).count) == (encoding, segments)
    assert segments <= BUDGET, text
    if message_allows_gsm(case.message):
        assert encoding == "GSM-7", text  # nothing added turns it into UCS-2
    for kept in case.keeps:
        assert kept in text, f"{kept!r} was cut from:\n{text}"
    assert case.message.url and text.endswith(case.message.url), text
    _cut_at_a_word(case.message, text)


def _cut_at_a_word(message: OutboundMessage, text: str) -> None:
    """Each "..." or "…" ends a whole word of the original."""
    original = typographic_twins(
        "\n".join([message.title, message.body, *(f"{f.name}: {f.value}" for f in message.fields)])
    )
    for line in text.split("\n"):
        for ellipsis in ("...", "…"):
            if line.endswith(ellipsis) and not original.count(line):
                head = line[: -len(ellipsis)].removeprefix("UTLA: ")
                head = head.removeprefix(f"{i18n.text(message.language, 'sms.urgent')}: ")
                at = original.find(head)
                assert at >= 0, line
                after = original[at + len(head) : at + len(head) + 1]
                assert after in ("", " ", "\n", ".", ",", ":", ";", "-"), f"cut in a word: {line}"


# -- our own sentences: never cut, and within the budget ------------------------------------


def _message_of(twiml: str) -> str:
    found = ElementTree.fromstring(twiml).find("Message")  # noqa: S314 - our own server's TwiML
    assert found is not None and found.text, twiml
    return found.text


@pytest.mark.parametrize("language", LANGUAGES)
async def test_confirmations_and_replies_fit_the_budget(
    sqlite_store: Store, clock: FixedClock, language: str
) -> None:
    """Signed up with the page's code for each choice (the confirmation is the reply to
    that text), then every reply the number gives, in the language's own keywords."""
    words = {kind: i18n.text(language, f"keywords.{kind}").split()[0]
             for kind in ("join", "stop", "yes", "help")}  # fmt: skip
    async with (
        FakeTwilio() as twilio,
        families(sqlite_store, clock, twilio=twilio, sms={"sender_name": "UTLA"}) as f,
    ):
        texts = []
        for n, choice in enumerate(Choice):
            code = await f.signups.join_code(
                language=language, choice=choice, client=f"192.0.2.{n + 1}"
            )
            status, body = await f.text_in(f"+1213555010{n}", f"{words['join']} {code}", f"J{n}")
            assert status == 200
            texts.append(_message_of(body))
        assert twilio.texts == []  # the confirmations are the replies: nothing sent first
        replies = [
            await f.text_in("+12135550100", words["yes"], "SM-1"),  # confirmed
            await f.text_in("+12135550150", words["help"], "SM-2"),  # help
            await f.text_in("+12135550150", words["join"], "SM-3"),  # joined
            await f.text_in("+12135550150", words["join"], "SM-4"),  # already
            await f.text_in("+12135550150", words["stop"], "SM-5"),  # stopped
            await f.text_in("+12135550150", words["stop"], "SM-6"),  # not signed up
            await f.text_in("+12135550160", words["yes"], "SM-7"),  # nothing to confirm
            await f.text_in("+442079460958", words["join"], "SM-8"),  # a number abroad
        ]
        texts += [_message_of(body) for status, body in replies if status == 200]
    assert len(texts) == len(Choice) + 8
    for text in texts:
        encoding, segments = twilio_segments(text)
        assert segments <= BUDGET, f"{encoding}, {segments} segments: {text}"
        assert "…" not in text
    if language == "en":
        assert all(twilio_segments(t)[0] == "GSM-7" for t in texts)
