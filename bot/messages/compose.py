"""Platform-neutral messages composed from core data, and the helpers that make text fit.

Every adapter and the dispatcher render what these functions return; none of them builds an
update's wording itself. Text here is plain: adapters escape it for their markup.

Conventions adapters rely on:
- `update_message` of a retracted update is the retraction (kind RETRACTION, title prefixed
  "RETRACTED", body = the retraction note, then its reason on a line of its own). A
  correction's body also ends with its reason on its own line: a platform that must cut
  the text (a text message) cuts the other lines first. The `fields` of a message with
  `retracted=True` hold the withdrawn original text: adapters show them struck through.
- Text written by people (headlines, bodies, demand texts) passes through
  `neutralize_mentions`, so an update never pings @everyone, @here, a role or a user even if
  an adapter forgot `allowed_mentions`.
- `fit` trims at a word boundary and points to the full text; `split` cuts long text into
  sendable pieces; `fit_message` applies a platform's `Limits` to a whole message.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot import i18n
from bot.messages.fallback import shown, shown_update
from bot.messages.kinds import status_name
from bot.models import Campaign, Update
from bot.plugins import installed_plugins
from bot.plugins.outbound import Field, Limits, Link, MessageKind, OutboundMessage

__all__ = [
    "Limits",
    "correction_message",
    "fit",
    "fit_message",
    "local_zone",
    "neutralize_mentions",
    "notice_message",
    "retraction_message",
    "split",
    "update_message",
    "update_url",
]

ZWSP = "\u200b"

_WORDS = i18n.Words("messages")


def _w(language: str, key: str) -> str:
    return _WORDS[i18n.pick(language)][key]


def _say(language: str, key: str, **values: object) -> str:
    """Sentence `key`, whole in one language (`bot.i18n.say`)."""
    return _WORDS.say(language, key, **values)


# ------------------------------------------------------------------------- mentions


def neutralize_mentions(text: str) -> str:
    """Make every ping in `text` inert on every installed platform (each plugin declares its
    mention syntax) by inserting a zero-width space; idempotent.

    Adapters also send with mentions disabled: this is the second line of defence.
    """
    return installed_plugins().neutralize(text)


# ------------------------------------------------------------------------- fitting


def fit(text: str, limit: int, more_url: str | None = None, language: str = "") -> str:
    """`text` if it fits in `limit` characters, else trimmed at a word boundary and ending
    "… full text: <url>" (or "…" without a URL). The result never exceeds `limit`."""
    limit = max(limit, 0)
    if len(text) <= limit:
        return text
    suffix = f"… {_w(language, 'full_text')}: {more_url}" if more_url else "…"
    if len(suffix) + 1 > limit:
        # No room for a pointer: a bare ellipsis, or a hard cut if even that cannot fit.
        suffix = "…" if limit >= 2 else ""
    budget = limit - len(suffix)
    head = _cut_at_word(text, budget)
    return head + suffix


def _cut_at_word(text: str, budget: int) -> str:
    """At most `budget` characters of `text`, ending at whitespace when one is near."""
    if budget <= 0:
        return ""
    head = text[:budget]
    if len(text) > budget and not text[budget].isspace():
        space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
        if space >= budget // 2:
            head = head[:space]
    return _drop_dangling(head.rstrip())


def _drop_dangling(head: str) -> str:
    """Never end on a lone high surrogate or leave a zero-width space at the end."""
    while head and ("\ud800" <= head[-1] <= "\udbff" or head[-1] == ZWSP):
        head = head[:-1]
    return head


def split(text: str, limit: int) -> list[str]:
    """Cut `text` into pieces of at most `limit` characters, preferring paragraph, then line,
    then word boundaries. Whitespace at a cut is dropped; nothing else is. Empty text gives
    no pieces."""
    if limit < 1:
        raise ValueError("split needs a limit of at least 1 character")
    pieces: list[str] = []
    rest = text.strip()
    while rest:
        if len(rest) <= limit:
            pieces.append(rest)
            break
        cut = _best_cut(rest, limit)
        piece = rest[:cut].rstrip()
        if not piece:  # only whitespace before the cut: take a hard cut instead
            piece, cut = rest[:limit], limit
        pieces.append(piece)
        rest = rest[cut:].lstrip()
    return pieces


def _best_cut(text: str, limit: int) -> int:
    window = text[: limit + 1]  # a separator right at the limit still counts
    floor = limit // 3
    for separator in ("\n\n", "\n", " "):
        at = window.rfind(separator)
        if at >= floor and at > 0:
            return at
    return limit


def fit_message(message: OutboundMessage, limits: Limits) -> OutboundMessage:
    """The same message with every part inside `limits`; the body is trimmed last and its
    trimmed text points at `message.url`."""
    lang = message.language
    title = fit(message.title, limits.title, None, lang)
    footer = fit(message.footer, limits.footer, None, lang)
    used = len(title) + len(footer) + len(message.status_label)
    kept: list[Field] = []
    for f in message.fields[: limits.fields]:
        name = fit(f.name, limits.field_name, None, lang)
        value = fit(f.value, limits.field_value, message.url, lang)
        if used + len(name) + len(value) > limits.total:
            break  # the fields that would push the message over its total are left out
        kept.append(Field(name, value, f.inline))
        used += len(name) + len(value)
    fields = tuple(kept)
    body_room = max(min(limits.body, limits.total - used), 0)
    body = fit(message.body, body_room, message.url, lang)
    return replace(message, title=title, body=body, fields=fields, footer=footer)


# ------------------------------------------------------------------------- composing


def page_url(campaign: Campaign, language: str | None = None, path: str = "/") -> str:
    """A public page in `language`: the default language lives at /, others under /<lang>/."""
    prefix = ""
    if language is not None and i18n.pick(language) != campaign.default_language:
        prefix = f"/{i18n.pick(language)}"
    return f"{campaign.public_url}{prefix}{path}"


def update_url(update: Update, campaign: Campaign, language: str | None = None) -> str:
    """The update's canonical page, in `language`."""
    return page_url(campaign, language, f"/updates/{update.id}")


def local_zone(timezone: str | None, campaign: Campaign) -> ZoneInfo:
    """The named zone, else the campaign's (an unknown name never breaks a message)."""
    for name in (timezone, campaign.timezone):
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: "America" is a dir
                continue
    return ZoneInfo("UTC")


def _when(moment: datetime, zone: ZoneInfo, language: str) -> str:
    return i18n.format_datetime(moment.astimezone(zone), language)


def _when_term(moment: datetime, zone: ZoneInfo) -> i18n.Term:
    return i18n.datetime_term(moment.astimezone(zone))


def _footer(update: Update, zone: ZoneInfo, language: str) -> str:
    if update.published_at is None:
        footer = _say(language, "footer_pending", id=update.id)
    else:
        footer = _say(language, "footer", id=update.id, when=_when_term(update.published_at, zone))
    if update.revision > 1:
        footer += f" · {_w(language, 'edited')}"
    return footer


def update_message(
    update: Update,
    language: str,
    campaign: Campaign,
    *,
    timezone: str | None = None,
) -> OutboundMessage:
    """An update as members see it: headline, body, status badge, next step and when (in
    `timezone`, default the campaign's), canonical link and footer. A retracted update
    renders as its retraction."""
    if update.retracted:
        return retraction_message(update, language, campaign, timezone=timezone)
    lang = i18n.pick(language)
    zone = local_zone(timezone, campaign)
    text = shown_update(update, lang, campaign.default_language)
    url = update_url(update, campaign, lang)
    fields: list[Field] = []
    if text.next_step.strip():
        fields.append(Field(_w(lang, "next_step"), neutralize_mentions(text.next_step.strip())))
    if update.next_step_at is not None:
        fields.append(Field(_w(lang, "when"), _when(update.next_step_at, zone, lang), True))
    return OutboundMessage(
        title=neutralize_mentions(text.headline.strip()),
        body=neutralize_mentions(text.body.strip()),
        kind=MessageKind.UPDATE,
        language=lang,
        status=update.status,
        status_label=status_name(campaign, update.status, lang),
        urgency=update.urgency,
        fields=tuple(fields),
        links=(Link(_w(lang, "read_online"), url),),
        url=url,
        footer=_footer(update, zone, lang),
    )


def retraction_message(
    update: Update,
    language: str,
    campaign: Campaign,
    *,
    timezone: str | None = None,
) -> OutboundMessage:
    """What replaces every copy of a retracted update: marked RETRACTED with its reason; the
    original text stays visible (adapters strike it through) so nobody wonders what vanished."""
    lang = i18n.pick(language)
    zone = local_zone(timezone, campaign)
    text = shown_update(update, lang, campaign.default_language)
    url = update_url(update, campaign, lang)
    when = _when_term(update.retracted_at or update.effective_at, zone)
    reason = shown(update.retraction_reason_texts(), lang, campaign.default_language).strip()
    note = _say(lang, "retracted_note_no_reason", when=when)
    if reason:  # on a line of its own, last: a text cut short keeps it (see the module's note)
        note += "\n" + _w(lang, "retraction_reason").format(reason=neutralize_mentions(reason))
    original = text.headline.strip()
    if text.body.strip():
        original += "\n" + text.body.strip()
    return OutboundMessage(
        title=_w(lang, "retracted_title").format(
            headline=neutralize_mentions(text.headline.strip())
        ),
        body=note,
        kind=MessageKind.RETRACTION,
        language=lang,
        status=None,
        status_label=_w(lang, "retracted_badge"),
        urgency=update.urgency,
        fields=(Field(_w(lang, "original"), neutralize_mentions(original)),),
        links=(Link(_w(lang, "read_online"), url),),
        url=url,
        footer=_footer(update, zone, lang),
        retracted=True,
    )


def correction_message(
    update: Update,
    language: str,
    campaign: Campaign,
    *,
    timezone: str | None = None,
) -> OutboundMessage:
    """A short visible note that an update was corrected (edits in place notify nobody)."""
    lang = i18n.pick(language)
    zone = local_zone(timezone, campaign)
    text = shown_update(update, lang, campaign.default_language)
    url = update_url(update, campaign, lang)
    main = campaign.default_language
    reason = shown(update.revisions[-1].reason_texts(), lang, main) if update.revisions else ""
    reason = reason.strip()
    reason_text = (
        _w(lang, "correction_reason").format(reason=neutralize_mentions(reason)) if reason else ""
    )
    body = _w(lang, "correction_body").format(id=update.id, reason="").strip()
    if reason_text:  # on a line of its own, last (see the module's note)
        body += "\n" + reason_text
    return OutboundMessage(
        title=_w(lang, "correction_title").format(
            headline=neutralize_mentions(text.headline.strip())
        ),
        body=body,
        kind=MessageKind.CORRECTION,
        language=lang,
        status=update.status,
        status_label=status_name(campaign, update.status, lang),
        urgency=update.urgency,
        links=(Link(_w(lang, "read_corrected"), url),),
        url=url,
        footer=_footer(update, zone, lang),
    )


def notice_message(title: str, body: str, language: str) -> OutboundMessage:
    """A note to admins (a channel broke, an update awaits approval...)."""
    return OutboundMessage(
        title=neutralize_mentions(title),
        body=neutralize_mentions(body),
        kind=MessageKind.NOTICE,
        language=i18n.pick(language),
    )
