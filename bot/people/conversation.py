"""A number's conversation with the campaign, one flow for every platform that reads texts
(SMS, WhatsApp): what a message does, answered neutrally (`Said`) for the plugin to say in
its own sentences. docs/email-sms.md says what each keyword does.

    talk = Conversation(signups, commands, Contact.PHONE, "sms", via="text", codes=True)
    said = await talk.answer("+12135550123", "UNIRSE")  # Said("joined", "es", {...}, link)
    text = said.say(i18n.Words("sms"), who="UTLA")
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field, replace

from bot import i18n
from bot.commands import CommandContext, Commands
from bot.errors import InvalidInput
from bot.messages.compose import page_url
from bot.models import Actor, Contact
from bot.people.keywords import QUESTIONS, Heard, Keywords, Kind, guess_language
from bot.people.preferences import Preferences
from bot.people.signups import CODE_DIGITS, WORKSPACE, Choice, Outcome, SignUps, choice_term
from bot.plugins.outbound import Field, MessageKind, OutboundMessage


@dataclass(frozen=True, slots=True)
class Said:
    """An answer: sentence `key` of the plugin's table in `language` with `values` (the
    page's `url`, the `choice`, a `link`), and `prefs`, the person's preferences link to
    end it with; or `answer`, a question's answer for the plugin to render."""

    key: str
    language: str
    values: Mapping[str, object] = field(default_factory=dict)
    prefs: str = ""
    answer: OutboundMessage | None = None

    def say(self, table: i18n.Words, **values: object) -> str:
        """The answer from the plugin's `table` (which has this key and `prefs_line`), with
        its own `values` ("who"), whole in one language with the preferences line."""
        filled = {**values, **self.values}
        language = self.language
        if self.prefs and i18n.pick(language) != i18n.source_language():  # both in one
            terms = [c for v in filled.values() if isinstance(v, i18n.Term) for c in v.contexts]
            contexts = (f"{table.table}.{self.key}", f"{table.table}.prefs_line", *terms)
            language = i18n.sentence_language(language, contexts)
        text = table.say(language, self.key, **filled)
        return (
            f"{text} {table.say(language, 'prefs_line', link=self.prefs)}" if self.prefs else text
        )


@dataclass
class Conversation:
    """What messages to one channel's number (`contact`, on `platform`) do, by its rules."""

    signups: SignUps
    commands: Commands
    contact: Contact
    platform: str
    _: KW_ONLY
    via: str  # how the consent record names the channel ("text": "text STOP")
    codes: bool = False  # JOIN takes the web form's code (the page shows one for it)
    yes_joins: bool = False  # YES is JOIN (no sign-up on the page waits for a YES here)
    window: bool = False  # each message is recorded (`SignUps.heard`: WhatsApp's window)

    def __post_init__(self) -> None:
        self.campaign = self.signups.campaign
        self.words = Keywords(self.campaign.languages, self.campaign.default_language)
        self.preferences = Preferences(self.signups)

    def join_word(self, language: str) -> str:
        """The word that signs up, in `language` ("JOIN", "UNIRSE"): for a link that types it."""
        return self.words.first_word(Kind.JOIN, language)

    async def answer(self, sender: str, body: str) -> Said | None:
        """The answer to `body` from `sender` (None: no answer at all, a STOP from a number
        that cannot be one)."""
        heard = self.words.read(body)
        kind, language = heard.kind, heard.language
        try:
            number = self.signups.read(self.contact, sender)
        except InvalidInput:
            if kind is Kind.STOP:
                return None
            return self._said(self._guess(body) if kind is None else language, "bad_number")
        if self.window:
            await self.signups.heard(self.contact, number)
        if kind is Kind.STOP:
            via = f"{self.via} {heard.word.upper()}"
            outcome = await self.signups.unsubscribe_address(self.contact, number, via=via)
            stopped = outcome is Outcome.UNSUBSCRIBED
            return self._said(language, "stopped" if stopped else "not_subscribed")
        if kind is Kind.JOIN or (kind is Kind.YES and self.yes_joins):
            return await self._join(number, heard)
        if kind is Kind.YES:
            via = f"reply {heard.word.upper()}"
            outcome = await self.signups.confirm_by_reply(self.contact, number, via=via)
            if outcome is Outcome.CONFIRMED:
                return await self._welcome(number, "confirmed", language)
            return self._said(language, str(outcome))
        if kind in (Kind.PREFS, Kind.HELP):
            mine = await self.preferences.link_of(self.contact, number)
            if kind is Kind.HELP:
                return self._said(language, "help", prefs=mine[0] if mine else "")
            if mine is None:
                return self._said(language, "prefs_none")
            return self._said(mine[1], "prefs", link=mine[0])
        person = await self.signups.find(number, self.contact)
        if kind is None:
            return self._said(person.language if person else self._guess(body), "menu")
        key = person.key if person is not None and person.confirmed else None
        answer = await ask(
            self.commands,
            kind,
            platform=self.platform,
            person=key,
            language=language,
            argument=heard.argument,  # "STATUS ROOSEVELT"
        )
        return Said("", language, answer=answer)

    async def _join(self, number: str, heard: Heard) -> Said:
        """JOIN (or YES where it joins): "JOIN 482913", the code the web form gave, carries
        its language and choice; "JOIN ROOSEVELT", a site's or a group's code, is followed."""
        argument = heard.argument if heard.kind is Kind.JOIN else ""
        code = argument if self.codes and _is_code(argument) else None
        outcome = await self.signups.join(
            self.contact,
            number,
            language=heard.language,
            via=f"{self.via} {heard.word.upper()}",
            code=code,
            follow=None if code else argument or None,
        )
        if self.window:
            await self.signups.heard(self.contact, number)  # the window of a new person
        if outcome is Outcome.ALREADY:
            return self._said(heard.language, "already")
        return await self._welcome(number, "joined", heard.language)

    async def _welcome(self, number: str, key: str, language: str) -> Said:
        """The welcome (`key`, "joined" or "confirmed"), in the person's language, with what
        they chose and their preferences link."""
        person = await self.signups.find(number, self.contact)
        if person is None:
            return self._said(language, key, choice=choice_term(Choice.URGENT))
        link = await self.preferences.url(person.key, person.language) if person.confirmed else ""
        choice = choice_term(person.choice, self.campaign)
        return self._said(person.language, key, prefs=link, choice=choice)

    def _said(self, language: str, key: str, prefs: str = "", **values: object) -> Said:
        return Said(key, language, {"url": page_url(self.campaign, language), **values}, prefs)

    def _guess(self, body: str) -> str:
        campaign = self.campaign
        return guess_language(body, campaign.languages, campaign.default_language)


def _is_code(argument: str) -> bool:
    return len(argument) == CODE_DIGITS and argument.isdigit()


# -- questions ("ESTADO", "DEMANDS", "NEXT"), answered as chat answers them -------------


@dataclass(frozen=True, slots=True)
class Shape:
    """How much of a chat answer a phone answer keeps: the first line of each of the first
    `paragraphs` of its body, and the first line of each of its first `fields`."""

    paragraphs: int
    fields: int


# Status: the day and the latest headline, then the next step and its time. Demands: each
# demand and where it stands (the intro says what the title says). Next: the step, its time.
SHAPES: Mapping[Kind, Shape] = {
    Kind.STATUS: Shape(paragraphs=2, fields=2),
    Kind.DEMANDS: Shape(paragraphs=0, fields=12),
    Kind.NEXT: Shape(paragraphs=1, fields=1),
}


async def ask(
    commands: Commands,
    kind: Kind,
    *,
    platform: str,
    person: str | None,
    language: str,
    argument: str = "",
) -> OutboundMessage:
    """The answer to question `kind` from `person` (their opaque key, or None for a number
    the bot does not know), in `language`, made for a phone: the commands' answer (the same
    reads, wording, fallbacks and time zone as every chat platform), shortened by `for_phone`.
    `argument`: the word after STATUS ("STATUS ROOSEVELT"), a site's or a group's code; the
    campaign's status when it names neither ("status please")."""
    command = QUESTIONS[kind]
    context = CommandContext(
        platform=platform,
        actor=Actor(platform, person or "unknown"),
        workspace=WORKSPACE,
        channel=person or "",
        locale=language,
    )
    answers = {
        "status": commands.status,
        "demands": commands.demands,
        "next": commands.next_step,
    }
    reply = None
    if command == "status" and argument:
        reply = await commands.status(context, site=argument)
    if reply is None or not reply.ok:
        reply = await answers[command](context)
    page = page_url(commands.campaign, reply.message.language)
    return for_phone(reply.message, page, SHAPES[kind] if reply.ok else Shape(1, 0))


def for_phone(message: OutboundMessage, page: str, shape: Shape) -> OutboundMessage:
    """`message` as a phone answer: its title, what `shape` keeps of its body and fields,
    and the page's address for the rest (the plugin fits it to its own size)."""
    paragraphs = [p.strip() for p in message.body.split("\n\n") if p.strip()]
    body = "\n".join(p.split("\n", 1)[0] for p in paragraphs[: shape.paragraphs])
    fields = tuple(
        Field(f.name, _first_line(f.value))
        for f in message.fields[: shape.fields]
        if f.value.strip()
    )
    return replace(
        message,
        kind=MessageKind.REPLY,
        body=body,
        fields=fields,
        links=(),
        url=page,
        footer="",
    )


def _first_line(value: str) -> str:
    """A field's first line, without what follows " · " there (a demand's key: a phone
    cannot ask by key, and "·" is not in the GSM-7 alphabet)."""
    return value.strip().split("\n", 1)[0].split(" · ", 1)[0].strip()
