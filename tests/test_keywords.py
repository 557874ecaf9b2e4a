"""Keywords by text (issue 27, finding 3; issue 30, asking by text): a message is a keyword
only when the whole of it is one, trimmed, case and accents ignored, as Twilio reads STOP;
a question that begins with "end" or "cancel" unsubscribes no one and gets a short menu in
the sender's language; STATUS / ESTADO, DEMANDS / DEMANDAS, NEXT / SIGUIENTE answer as the
chat commands do, within the text's segments, with the page's link."""

from __future__ import annotations

import pytest

from adapters.twilio.sms import count
from bot.clock import FixedClock
from bot.people.keywords import Keywords, Kind, guess_language, normalize
from bot.store import Store
from tests.fakes.twilio import FakeTwilio
from tests.family_support import Families, families
from tests.strike_week import strike_week
from tests.support import CAMPAIGN

ROSA = "+12135550123"
SMS = {"sender_name": "UTLA"}
WORDS = Keywords(CAMPAIGN.languages, CAMPAIGN.default_language)


@pytest.mark.parametrize(
    ("body", "kind", "language"),
    [
        ("STOP", Kind.STOP, "en"),
        ("  stop  ", Kind.STOP, "en"),
        ("Stop.", Kind.STOP, "en"),
        ("STOPALL", Kind.STOP, "en"),
        ("Unsubscribe", Kind.STOP, "en"),
        ("cancel", Kind.STOP, "en"),
        ("END", Kind.STOP, "en"),
        ("quit", Kind.STOP, "en"),
        ("OPTOUT", Kind.STOP, "en"),
        ("revoke", Kind.STOP, "en"),
        ("PARAR", Kind.STOP, "es"),
        ("Baja", Kind.STOP, "es"),
        ("alto", Kind.STOP, "es"),
        ("CANCELAR", Kind.STOP, "es"),
        ("START", Kind.JOIN, "en"),
        ("unstop", Kind.JOIN, "en"),
        ("JOIN", Kind.JOIN, "en"),
        ("Unirse", Kind.JOIN, "es"),
        ("yes", Kind.YES, "en"),
        ("¡Sí!", Kind.YES, "es"),
        ("SI", Kind.YES, "es"),
        ("HELP", Kind.HELP, "en"),
        ("info", Kind.HELP, "en"),
        ("Ayuda", Kind.HELP, "es"),
        ("STATUS", Kind.STATUS, "en"),
        ("Estado", Kind.STATUS, "es"),
        ("demands", Kind.DEMANDS, "en"),
        ("DEMANDAS", Kind.DEMANDS, "es"),
        ("next?", Kind.NEXT, "en"),
        ("Siguiente", Kind.NEXT, "es"),
        ("ＳＴＯＰ", Kind.STOP, "en"),
    ],
)
def test_a_whole_message_is_a_keyword(body: str, kind: Kind, language: str) -> None:
    heard = WORDS.read(body)
    assert (heard.kind, heard.language) == (kind, language)


@pytest.mark.parametrize(
    "body",
    [
        "End of the strike, when?",
        "Cancel the rally today?",
        "stop sending me the picket times at night",
        "Quit? Never.",
        "status of the nurses demand",
        "y",
        "s",
        "",
        "STOP" * 20,
    ],
)
def test_a_message_that_only_begins_with_a_keyword_is_a_message(body: str) -> None:
    assert WORDS.read(body).kind is None


def test_normalize_ignores_case_accents_spaces_and_punctuation() -> None:
    assert normalize("  ¡SÍ!  ") == "si"
    assert normalize("Next step ?") == "next step"
    assert normalize("...") == ""


@pytest.mark.parametrize(
    ("body", "language"),
    [
        ("¿Cuándo termina la huelga?", "es"),
        ("¿Hay escuela mañana?", "es"),
        ("End of the strike, when?", "en"),
        ("Is there school tomorrow?", "en"),
        ("12345", "en"),
    ],
)
def test_the_language_of_a_message_is_guessed_from_the_catalogues(body: str, language: str) -> None:
    assert guess_language(body, CAMPAIGN.languages, CAMPAIGN.default_language) == language


# -- end to end, through Twilio's signed webhook ------------------------------------------


async def subscribed(f: Families, word: str = "JOIN") -> None:
    status, reply = await f.text_in(ROSA, word, f"SM-join-{word}")
    assert status == 200 and "<Message>" in reply
    assert await f.signups.find(ROSA) is not None


@pytest.mark.parametrize("question", ["End of the strike, when?", "Cancel the rally today?"])
async def test_a_question_that_begins_with_an_opt_out_word_unsubscribes_no_one(
    sqlite_store: Store, clock: FixedClock, question: str
) -> None:
    """Issue 27, finding 3: each of these unsubscribed the parent and deleted the number
    while Twilio still counted them opted in."""
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        await subscribed(f)
        status, reply = await f.text_in(ROSA, question, "SM-question")
        assert status == 200
        assert "Reply STATUS for the latest" in reply and "STOP to stop" in reply
        person = await f.signups.find(ROSA)
        assert person is not None and person.confirmed


async def test_a_spanish_question_gets_the_menu_in_spanish(
    sqlite_store: Store, clock: FixedClock
) -> None:
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        await subscribed(f, "UNIRSE")
        status, reply = await f.text_in(ROSA, "Cancelar el piquete de hoy?", "SM-q-es")
        assert status == 200 and "Responde ESTADO" in reply
        # Someone the bot does not know yet: the language is read from the words.
        status, reply = await f.text_in("+13105550188", "¿Cuándo termina la huelga?", "SM-q2")
        assert status == 200 and "Responde ESTADO" in reply
        assert await f.signups.find("+13105550188") is None


@pytest.mark.parametrize("word", ["STOP", "stop", " Stop. ", "PARAR", "baja"])
async def test_a_whole_opt_out_word_still_unsubscribes(
    sqlite_store: Store, clock: FixedClock, word: str
) -> None:
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        await subscribed(f)
        status, reply = await f.text_in(ROSA, word, "SM-stop")
        assert status == 200 and "<Message>" in reply
        assert await f.signups.find(ROSA) is None


@pytest.mark.parametrize(
    ("word", "expected", "link"),
    [
        ("STATUS", ["On strike", "Day 5 of the strike", "Next step:"], "https://strike.example.org/"),
        ("estado", ["En huelga", "Día 5 de la huelga"], "https://strike.example.org/es/"),
        ("DEMANDS", ["What we are asking for", "Fair pay: Offer on the table"],
         "https://strike.example.org/"),
        ("Demandas", ["Lo que pedimos", "Salario justo: Oferta sobre la mesa"],
         "https://strike.example.org/es/"),
        ("next", ["the strike resumes Monday", "When: Monday, January 21"],
         "https://strike.example.org/"),
        ("SIGUIENTE", ["la huelga se reanuda el lunes"], "https://strike.example.org/es/"),
    ],
)  # fmt: skip
async def test_questions_by_text_are_answered_as_chat_answers_them(
    sqlite_store: Store, clock: FixedClock, word: str, expected: list[str], link: str
) -> None:
    async with FakeTwilio() as twilio, families(sqlite_store, clock, twilio=twilio, sms=SMS) as f:
        await strike_week(sqlite_store, clock, f.admin)
        await subscribed(f)
        status, reply = await f.text_in(ROSA, word, f"SM-ask-{word}")
        assert status == 200
        text = reply.split("<Message>", 1)[1].split("</Message>", 1)[0]
        for part in expected:
            assert part in text, text
        assert text.startswith("UTLA: ") and text.endswith(link)
        assert count(text).count <= 2
        assert await f.signups.find(ROSA) is not None  # a question changes nothing
