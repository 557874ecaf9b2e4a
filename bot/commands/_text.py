"""The typed form: `status`, `demand pay`, `timeline 3`, `post strike_on "Headline" "Body"
urgency=urgent`... parsed into the same calls the platform pickers make (what the console and
Slack's text argument use)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import cache
from typing import Any

from bot import i18n
from bot.commands._admin import EXAMPLES, AdminOrders
from bot.commands._context import Asker, CommandContext, Reply
from bot.commands._demands import DEMAND_FLAGS, DEMAND_OPTIONS, DemandOrders, wants_change
from bot.editorial.parsing import parse_flag, tokenize
from bot.errors import StrikebotError
from bot.i18n.sentences import invalid, short

COMMAND_NAMES = ("status", "demands", "demand", "timeline", "next", "help", "subscribe",
                 "unsubscribe", "post", "edit", "retract", "approve")  # fmt: skip
# What each command is called in each language, for platforms that list commands by name
# (Telegram's menus). Every name here is one `handle` understands.
LOCALIZED_NAMES = i18n.Words("command_names")
ALIASES = i18n.Words("command_aliases")
PREFIX = i18n.Phrase("command_prefix.word")


# Short forms that name a command in any language.
_SHORT_FORMS = {"st": "status", "?": "help"}


@cache
def _aliases(languages: tuple[str, ...]) -> dict[str, str]:
    """Every word that names a command in any language the bot speaks: its name there
    (`command_names.<command>`) and other words for it (`command_aliases.<command>`)."""
    found = dict(_SHORT_FORMS)
    for language in reversed(languages):
        for command in COMMAND_NAMES:
            found[command] = command
            words = [LOCALIZED_NAMES[language][command]]
            words += ALIASES[language].get(command, "").split()
            for word in words:
                found[word.lower()] = command
    return found


def _prefixes(languages: tuple[str, ...]) -> set[str]:
    return {PREFIX[lang].lower() for lang in languages}


def is_command_prefix(word: str) -> bool:
    """Whether `word` is /strike's name in a language the bot speaks ("strike", "huelga")."""
    return word.strip().lower().lstrip("/") in _prefixes(i18n.languages())


def command_named(word: str) -> str | None:
    """The command a typed word names (in any language the bot speaks, or a short form),
    or None."""
    return _aliases(i18n.languages()).get(word.strip().lower().lstrip("/"))


# Named options of the typed form (`key=value`), alias -> parameter.
# /strike subscribe's options: the parameter's own name, and its names in every language the
# bot speaks (catalogue messages "subscribe_options.<parameter>": "lang" / "idioma").
_SUBSCRIBE_PARAMETERS = ("language", "urgencies", "briefing_time", "briefing_days", "timezone",
                         "quiet_hours", "sites", "groups")  # fmt: skip
_SUBSCRIBE_NAMES = i18n.Words("subscribe_options")


@cache
def _subscribe_options(languages: tuple[str, ...]) -> dict[str, str]:
    options = {name: name for name in _SUBSCRIBE_PARAMETERS}
    for language in languages:
        for name in _SUBSCRIBE_PARAMETERS:
            for word in _SUBSCRIBE_NAMES[language][name].split():
                options.setdefault(word.lower(), name)
    return options


_POST_OPTIONS = {
    "body": "body", "next": "next_step", "next_step": "next_step",
    "when": "next_step_at", "next_step_at": "next_step_at",
    "urgency": "urgency", "at": "publish_at", "publish_at": "publish_at",
    "embargo": "publish_at", "lang": "language", "language": "language",
    "preview": "preview", "dry_run": "preview",
    "sites": "sites", "site": "sites", "centros": "sites", "centro": "sites",
    "groups": "groups", "group": "groups", "grupos": "groups", "grupo": "groups",
}  # fmt: skip
# Another language's text in the typed form: headline_es=, body_ko=, next_es=, next_step_es=.
_POST_TEXT_OPTIONS = {"headline": "headline", "body": "body", "next": "next_step",
                      "next_step": "next_step"}  # fmt: skip


def _post_options(languages: Sequence[str]) -> dict[str, str]:
    options = dict(_POST_OPTIONS)
    for code in languages:
        for key, field in _POST_TEXT_OPTIONS.items():
            options[f"{key}_{code}".lower()] = f"{field}@{code}"
    return options


_EDIT_OPTIONS = {
    "headline": "headline", "body": "body", "next": "next_step", "next_step": "next_step",
    "when": "next_step_at", "next_step_at": "next_step_at", "status": "status",
    "urgency": "urgency", "reason": "reason", "correction": "correction",
    "lang": "language", "language": "language",
}  # fmt: skip
_RETRACT_OPTIONS = {"reason": "reason"}
EDIT_ONE_LANGUAGE = '/strike edit 12 headline_es="…" reason="…"'


def _edit_options(languages: Sequence[str]) -> dict[str, str]:
    """/strike edit's options, and each text field in any campaign language (headline_es=)."""
    options = dict(_EDIT_OPTIONS)
    for code in languages:
        for key, field in _POST_TEXT_OPTIONS.items():
            options[f"{key}_{code}".lower()] = f"{field}@{code}"
    return options


def _one_language(options: dict[str, Any]) -> dict[str, Any]:
    """`headline_es="…"` as `lang=es headline="…"`: an edit changes one language's text,
    so fields of two languages (or headline= beside headline_es=) are refused in words."""
    tagged = {k: v for k, v in options.items() if "@" in k}
    if not tagged:
        return options
    codes = {k.partition("@")[2] for k in tagged}
    plain = {"headline", "body", "next_step"} & set(options)
    asked = options.get("language")
    if len(codes) > 1 or plain or (asked is not None and str(asked).strip() not in codes):
        raise invalid("edit_one_language", example=EDIT_ONE_LANGUAGE)
    result = {k: v for k, v in options.items() if "@" not in k}
    result |= {k.partition("@")[0]: v for k, v in tagged.items()}
    result["language"] = codes.pop()
    return result


_ADMIN_ONLY = {
    "subscribe": "subscribe channels",
    "unsubscribe": "unsubscribe channels",
    "post": "post updates",
    "edit": "edit updates",
    "retract": "retract updates",
    "approve": "approve updates",
}


class TypedForm(DemandOrders, AdminOrders):
    """Every command, and the typed text that names one."""

    async def handle(self, ctx: CommandContext, text: str) -> Reply:
        """Answer a typed command: `status`, `demand pay`, `timeline 3`,
        `post strike_on "Headline" "Body" urgency=urgent`... A leading `/strike` is fine."""
        try:
            tokens = tokenize(text)
        except StrikebotError as exc:
            return await self._run(ctx, "unknown", _raising(exc))
        while tokens and tokens[0].lower().lstrip("/") in _prefixes(i18n.languages()):
            tokens = tokens[1:]
        if not tokens:
            return await self._run(ctx, "help", self._help)
        word = tokens[0].lower().lstrip("/")
        name = _aliases(i18n.languages()).get(word)
        if name is None:
            return await self._run(
                ctx, "unknown", _raising(invalid("unknown_command", name=short(tokens[0])))
            )
        args = tokens[1:]
        return await self._run(ctx, name, lambda a: self._typed(a, name, args))

    async def _typed(self, a: Asker, name: str, args: list[str]) -> Reply:
        if name in _ADMIN_ONLY:  # a member hears "admins only" before any usage hint
            self.admin.admins.require(a.ctx.actor, _ADMIN_ONLY[name])
        if name == "status" and args:
            _no_more(name, args[1:], "/strike status roosevelt")
            return await self._status(a, args[0])
        if name in ("status", "demands", "next", "help", "unsubscribe"):
            _no_more(name, args, f"/strike {name}")
            simple: dict[str, Callable[[Asker], Awaitable[Reply]]] = {
                "status": self._status,
                "demands": self._demands,
                "next": self._next,
                "help": self._help,
                "unsubscribe": self._unsubscribe,
            }
            return await simple[name](a)
        if name == "demand":
            positional, options = _options(args, DEMAND_OPTIONS, flags=DEMAND_FLAGS)
            if wants_change(positional, options):
                return await self._change_demand(a, positional, options)
            return await self._demand(a, " ".join(args))
        if name == "timeline":
            _no_more(name, args[1:], "/strike timeline 5")
            return await self._timeline(a, args[0] if args else 5)
        if name == "subscribe":
            positional, options = _options(args, _subscribe_options(i18n.languages()))
            _no_more(name, positional, "/strike subscribe language=es briefing=07:00")
            return await self._subscribe(a, **options)
        if name == "post":
            return await self._typed_post(a, args)
        if name == "edit":
            known = _edit_options(self.campaign.languages)
            positional, options = _options(args, known, flags={"correction"})
            options = _one_language(options)
            if not positional:
                raise invalid("missing_update_id", command="edit", example=EXAMPLES["edit"])
            _no_more(name, positional[1:], EXAMPLES["edit"])
            return await self._edit(a, positional[0], **options)
        if name == "retract":
            positional, options = _options(args, _RETRACT_OPTIONS)
            if not positional:
                raise invalid("missing_update_id", command="retract", example=EXAMPLES["retract"])
            reason = options.get("reason") or " ".join(positional[1:])
            return await self._retract(a, positional[0], reason)
        # approve
        if not args:
            raise invalid("missing_update_id", command="approve", example=EXAMPLES["approve"])
        _no_more(name, args[1:], EXAMPLES["approve"])
        return await self._approve(a, args[0])

    async def _typed_post(self, a: Asker, args: list[str]) -> Reply:
        positional, options = _options(
            args, _post_options(self.campaign.languages), flags={"preview", "dry_run"}
        )
        if len(positional) < 2:
            raise invalid("missing_post")
        body = options.pop("body", "")
        if len(positional) >= 3:
            body = positional[2]
        _no_more("post", positional[3:], EXAMPLES["post"])
        others: dict[str, dict[str, str]] = {}
        for key in [k for k in options if "@" in k]:
            field, _, code = key.partition("@")
            others.setdefault(code, {})[field] = options.pop(key)
        return await self._post(
            a,
            positional[0],
            positional[1],
            body,
            options.get("next_step", ""),
            options.get("urgency", "routine"),
            options.get("publish_at"),
            others or None,
            options.get("next_step_at"),
            options.get("language"),
            preview=parse_flag(options.get("preview", False)),
            sites=options.get("sites"),
            groups=options.get("groups"),
        )


def _raising(exc: StrikebotError) -> Callable[[Asker], Awaitable[Reply]]:
    async def answer(_asker: Asker) -> Reply:
        raise exc

    return answer


def _options(
    args: Sequence[str], known: Mapping[str, str], *, flags: frozenset[str] | set[str] = frozenset()
) -> tuple[list[str], dict[str, Any]]:
    """Split typed arguments into positional ones and `key=value` options. A token whose
    key is not an option of this command stays positional (a headline may contain '=')."""
    positional: list[str] = []
    options: dict[str, Any] = {}
    for token in args:
        key, sep, value = token.partition("=")
        name = known.get(key.strip().lower().lstrip("-"))
        if sep and name is not None:
            options[name] = value
        elif not sep and token.lower().lstrip("-") in flags:
            options[known[token.lower().lstrip("-")]] = True
        else:
            positional.append(token)
    return positional, options


def _no_more(command: str, extra: Sequence[str], example: str) -> None:
    if extra:
        raise invalid("too_many_args", command=command, example=example)
