"""Platform plugins: how the core finds the platforms it never names.

Each platform is one package (under `adapters/`, or any package pip installs) that declares
itself once, as a `Plugin`, under the entry-point group `strikebot.adapters`:

    [project.entry-points."strikebot.adapters"]
    console = "adapters.console:plugin"

The declaration says everything the core needs to know: the platform's name (the address
prefix `name:workspace/channel`, the campaign-file section `[name]` and `[admins.name]`),
its environment settings and which of them are secrets, who counts as an admin there, its
message limits and mention syntax, and a factory that builds the running part from a
`bot.runtime.context.PluginContext`. The built object may deliver
(`bot.plugins.outbound.Adapter`), add routes to the bot's web server (`Mountable`), or
both. `docs/adapters.md` walks through writing one.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import re
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Protocol,
    Self,
    TypeAlias,
    TypeVar,
    runtime_checkable,
)

from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from bot import i18n
from bot.errors import ConfigError
from bot.models import Actor, Campaign, Contact, Subscription

if TYPE_CHECKING:
    from aiohttp import web

    from bot.plugins.outbound import Limits, OutboundMessage, Pacing

ZWSP = "\u200b"
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{1,31}$")
# Names the core uses for its own actors and surfaces; no plugin may take them.
RESERVED_NAMES = frozenset({"cli", "http", "campaign", "admins", "delivery", "briefings"})

log = logging.getLogger("strikebot.plugins")

SubParsers = argparse._SubParsersAction
S = TypeVar("S", bound="PluginSettings")
T = TypeVar("T")
B = TypeVar("B", bound="FromEnvironment")


class Environment(EnvSettingsSource):
    """pydantic-settings' reading of environment variables, from a given mapping (the
    process's environment by default): names as written, an empty variable unset."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str] | None = None):
        super().__init__(settings_cls, case_sensitive=True, env_ignore_empty=True)
        if env is not None:
            self.env_vars = {k: v for k, v in env.items() if v}


class FromEnvironment(BaseSettings):
    """Base of the settings read from the environment: values come in only through
    `from_environment` (which may be handed a mapping instead of the process's environment),
    never from the process's environment behind a plain constructor's back."""

    model_config = SettingsConfigDict(
        frozen=True, extra="ignore", case_sensitive=True, env_ignore_empty=True, defer_build=True
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def from_environment(cls: type[B], env: Mapping[str, str] | None = None) -> B:
    """`cls` read from `env` (default: the process's environment) by pydantic-settings,
    each field's default written once, on the field. A bad value is a `ConfigError` naming
    the variable and saying what to write, never a Python repr."""
    try:
        return cls.model_validate(Environment(cls, env)())
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = str(error["loc"][0]) if error["loc"] else ""
        info = cls.model_fields.get(field)
        variable = (info.alias if info is not None else None) or field or cls.__name__
        message = error["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{variable}: {message}. Fix the variable and start again.") from None


class PluginSettings(FromEnvironment):
    """One plugin's settings from the environment (pydantic-settings).

    Each field's alias is its variable (`Field(alias="DISCORD_TOKEN")`), its default the one
    default; an empty variable counts as unset. Fields typed `SecretStr` are secrets: never
    printed, and redacted from every log line. `enabled` says whether the platform is on
    (usually: its token is set).
    """

    @property
    def enabled(self) -> bool:
        return True

    @property
    def off_hint(self) -> str:
        """Logged at start-up when the plugin is off: which variable turns it on."""
        return ""

    def secrets(self) -> list[str]:
        found = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr) and value.get_secret_value():
                found.append(value.get_secret_value())
        return found

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        """Read the fields' variables from `env` (default: the process's environment); a
        bad value names the variable."""
        return from_environment(cls, env)


class Section(BaseModel):
    """Base for a plugin's campaign-file tables: frozen, and unknown keys are refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class AdminRule(Section):
    """`[admins.<platform>]`: who may post, edit, retract and approve from that platform.

    A plugin subclasses it to add its own kinds of id (roles, user groups) and overrides
    `allows`; `who` is how to describe the id a person should send an admin, per language.
    """

    who: ClassVar[Mapping[str, str]] = i18n.Phrase("plugins.who")

    user_ids: list[str] = []

    def allows(self, actor: Actor) -> bool:
        return actor.user_id in self.user_ids

    @classmethod
    def place(cls, value: str) -> tuple[str, str]:
        """Where an admin id typed as `value` goes: the name of this rule's list and the id
        as stored. Raises `ValueError` with a sentence saying what an id looks like on
        this platform (`strikebot init` asks again). Plugins override it with their form."""
        value = value.strip()
        if not re.fullmatch(r"[\w.@+-]{1,100}", value):
            raise ValueError(
                f"{value!r} is not a usable id: letters, digits, '.', '@', '+', '-' or '_'"
            )
        return "user_ids", value


class Verdict(StrEnum):
    """How one `strikebot doctor` check came out."""

    OK = "ok"
    WARN = "warn"  # works, but something will surprise people
    FAIL = "fail"  # something will not work until fixed
    SKIP = "skip"  # could not be checked
    OFF = "off"  # switched off, and nothing waits on it


@dataclass(frozen=True, slots=True)
class Check:
    """One thing `strikebot doctor` checked: what (`subject`: "token", "scopes", a channel's
    address), how it came out, what was found, and the fix, in words an organiser follows."""

    platform: str
    subject: str
    verdict: Verdict
    detail: str
    fix: str = ""


@dataclass(frozen=True, slots=True)
class DoctorRequest:
    """What a plugin's doctor gets: its own settings (tokens included: it may use them, never
    print them), its campaign-file sections, the campaign, and every active subscription on
    its platform, to say for each whether the bot can post there."""

    settings: PluginSettings
    section: Section | None
    admins: AdminRule | None
    campaign: Campaign
    channels: tuple[Subscription, ...]


Doctor = Callable[[DoctorRequest], Awaitable[Sequence[Check]]]


@runtime_checkable
class Mountable(Protocol):
    """A plugin part that adds routes (and middlewares) to the bot's one web server."""

    def mount(self, app: web.Application) -> None: ...


def one_message(message: OutboundMessage, campaign: Campaign, section: Section | None) -> int:
    return 1


class Part(Generic[T]):
    """A field of a plugin's declaration given as the thing itself or as its address,
    `"package.module:name"`, imported when the field is first read: a declaration loads
    none of the models, adapters and renderers it names, so every command starts quickly."""

    def __init__(self, default: T) -> None:
        self.default = default

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.slot = name, f"_{name}"

    def __get__(self, obj: object | None, owner: type | None = None) -> T:
        if obj is None:  # the dataclass asks for the field's default
            return self.default
        value = obj.__dict__[self.slot]
        if isinstance(value, str):
            value = obj.__dict__[self.slot] = self._load(obj, value)
        return value  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: T | str) -> None:
        obj.__dict__[self.slot] = value

    def given(self, obj: object) -> bool:
        """Whether `obj` declares this field (without importing what it names)."""
        return obj.__dict__[self.slot] is not None

    def _load(self, obj: object, address: str) -> Any:
        module, _, name = address.partition(":")
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            owner = getattr(obj, "name", None) or type(obj).__name__
            raise ConfigError(
                f"The platform plugin {owner!r} names {address!r} as its {self.name}, which "
                f"cannot be loaded ({type(exc).__name__}: {exc}). Reinstall the plugin."
            ) from exc


@dataclass(frozen=True)
class Cost:
    """What a platform that reaches people one by one spends per message, for the preview
    ("It will send 1,204 e-mails and 2,310 text segments"). `units` is the context of a
    plural message in the catalogue naming the unit, with `{n}` for the number ("{n} e-mail"
    / "{n} e-mails"); `measure` counts the units one message takes once the
    plugin renders it (an SMS plugin counts segments), given the campaign and the plugin's
    campaign-file section."""

    units: str
    measure: Part[Callable[[OutboundMessage, Campaign, Section | None], int]] = Part(one_message)
    # The plural context naming whole messages ("{n} text"), when units are parts of one.
    messages: str = ""


@dataclass(frozen=True, slots=True)
class Command:
    """A `strikebot` command a plugin adds, declared so that `strikebot --help` lists it
    without importing the plugin's code: `register` (`"package.module:function"`, taking
    the subparsers) is imported only when this command runs. `help` is the line the list
    shows, the same as the one `register` gives."""

    name: str
    help: str
    register: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SurfacePreview:
    """An update as one platform will show it, for the web desk's cards: what its reader
    sees, as plain text (`title`, then `lines`), and `notes` for the person posting, in
    their language (its length against the platform's limit; a text's segments and what it
    costs)."""

    title: str
    lines: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


# (the message in one language, the campaign, the plugin's campaign-file section, the
# language of the person reading the preview) -> the update as the platform shows it.
Previewer: TypeAlias = "Callable[[OutboundMessage, Campaign, Section | None, str], SurfacePreview]"


@dataclass(frozen=True, eq=False)
class Plugin:
    """A platform, declared once. See the module docstring and `docs/adapters.md`.

    `mentions` are regular expressions matching what a ping starts with, the rest in a
    lookahead (`@(?=everyone)`); a zero-width space goes right after each match in
    everything people wrote, on every platform. `delivers` is False for a plugin whose
    channels cannot be subscribed (the web page). `delivery` declares extra `[delivery]`
    keys, each named `<name>_...` (pacing settings). `contact` marks a platform that reaches
    people at their own address (`bot.people.contacts.Contact`: e-mail, phone): its channels are
    the people who signed up through `bot.people.signups`, never subscribed by an admin, and
    `cost` says what each message spends. `events` is True for a plugin whose channels take
    documents for machines (`bot.delivery.events`: webhook endpoints) instead of messages for
    people: its subscriptions get an event per change (and demand changes too), delivered through
    `bot.plugins.outbound.EventSink.send_event`. `doctor` answers `strikebot doctor` for the
    platform (see `DoctorRequest`). `commands` are the `strikebot` commands it adds.
    `preview` renders an update as the platform will show it, in plain text with notes,
    without sending anything (`SurfacePreview`: the web desk's card per surface); pure, and
    quick (no network). `pacing` gives the platform's limits from its `[delivery]` section
    (None: the defaults), the same its adapter keeps to, for the preview's time estimate;
    `slow_advice` is the catalogue key of the sentence a preview adds when that time is
    long (how to send faster), "" for none.
    """

    name: str
    title: str
    # Takes a `bot.runtime.context.PluginContext`. Not named here: the context is built from the
    # plugins, so naming it would make the two modules depend on each other.
    create: Part[Callable[[Any], object] | None] = Part(None)
    settings: Part[type[PluginSettings]] = Part(PluginSettings)
    section: Part[type[Section] | None] = Part(None)
    admins: Part[type[AdminRule]] = Part(AdminRule)
    delivery: Part[type[Section] | None] = Part(None)
    limits: Part[Limits | None] = Part(None)
    mentions: tuple[str, ...] = ()
    address_example: str = ""
    delivers: bool = True
    events: bool = False
    commands: tuple[Command, ...] = ()
    # The older way to add commands: called for every command line, so whatever it imports
    # loads even for `strikebot --help`. Prefer `commands`.
    cli: Callable[[SubParsers[argparse.ArgumentParser]], None] | None = None
    docs: str = ""  # where a person reads how to connect it (a README section, a docs page)
    contact: Contact | None = None
    cost: Cost | None = None
    # `strikebot doctor`: asks the platform, with the configured token, what the bot can do
    # (token valid, scopes or intents, and for every subscribed channel whether it can post
    # there), and says how to fix each problem. No network call may outlive a few seconds.
    doctor: Part[Doctor | None] = Part(None)
    preview: Part[Previewer | None] = Part(None)
    pacing: Part[Callable[[Section | None], Pacing] | None] = Part(None)
    slow_advice: str = ""

    def __post_init__(self) -> None:
        if not NAME_PATTERN.match(self.name) or self.name in RESERVED_NAMES:
            raise ConfigError(
                f"A platform plugin is called {self.name!r}; a name is 2-32 lowercase letters, "
                f"digits or _ starting with a letter, and not one of {sorted(RESERVED_NAMES)}."
            )

    def declares(self, part: str) -> bool:
        """Whether the declaration gives `part` ("section", "delivery"...), without loading it."""
        descriptor = Plugin.__dict__[part]  # the field's `Part` (reading it would load it)
        assert isinstance(descriptor, Part)
        return descriptor.given(self)

    def delivery_keys(self) -> list[str]:
        """The `[delivery]` keys this plugin declares (loads its delivery model). Raises
        `ConfigError` for a key not named `<name>_...`: every plugin's keys share the table."""
        keys = list(self.delivery.model_fields) if self.delivery else []
        for key in keys:
            if not key.startswith(f"{self.name}_"):
                raise ConfigError(
                    f"Plugin {self.name!r} declares the [delivery] key {key!r}; its keys must "
                    f"start with '{self.name}_'."
                )
        return keys


def lazy_exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A plugin package's module `__getattr__` (PEP 562): each name in `names` is imported
    from its module (`names[name]`) when first used, so the platform's library loads only
    when something needs it, not with the plugin's declaration (`strikebot --help` and the
    other commands start quickly). A module written `module:attribute` gives that attribute
    under the name (an alias). Each name is looked up once, then kept in the package."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = names[name].partition(":")
        found = importlib.import_module(module)
        attribute = attribute or name
        if not hasattr(found, attribute):  # a submodule not imported yet
            importlib.import_module(f"{module}.{attribute}")
        value = getattr(found, attribute)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


@dataclass(frozen=True, slots=True)
class Plugins(Mapping[str, Plugin]):
    """The installed plugins by name (sorted), and what the core derives from all of them."""

    by_name: Mapping[str, Plugin] = field(default_factory=dict)

    @classmethod
    def of(cls, *plugins: Plugin) -> Plugins:
        found: dict[str, Plugin] = {}
        for plugin in plugins:
            if plugin.name in found:
                raise ConfigError(
                    f"Two installed plugins are called {plugin.name!r}; uninstall one of them."
                )
            found[plugin.name] = plugin
        return cls(dict(sorted(found.items())))

    def __getitem__(self, name: str) -> Plugin:
        return self.by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_name)

    def __len__(self) -> int:
        return len(self.by_name)

    @property
    def delivering(self) -> list[str]:
        """Names of the platforms whose channels admins can subscribe (not the ones that
        reach people who sign up themselves)."""
        return [
            name
            for name, plugin in self.by_name.items()
            if plugin.delivers and plugin.contact is None
        ]

    def reaching(self, contact: Contact) -> Plugin | None:
        """The installed plugin that reaches people at `contact` addresses, if any."""
        return next((p for p in self.by_name.values() if p.contact is contact), None)

    @property
    def taking_events(self) -> frozenset[str]:
        """Names of the platforms whose channels take events rather than messages."""
        return frozenset(name for name, plugin in self.by_name.items() if plugin.events)

    def neutralize(self, text: str) -> str:
        """`text` with every plugin's pings made inert; idempotent."""
        pattern = _mention_pattern(tuple(p for plugin in self.values() for p in plugin.mentions))
        if pattern is None:
            return text
        return pattern.sub(lambda match: match.group(0) + ZWSP, text)


@cache
def _mention_pattern(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    # A zero-width space already in place does not match again: the result is idempotent.
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


@cache
def installed_plugins() -> Plugins:
    """Every plugin installed in this environment (entry-point group `strikebot.adapters`)."""
    found = []
    for entry in i18n.plugin_entry_points():
        try:
            plugin = entry.load()
        except Exception as exc:
            raise ConfigError(
                f"The platform plugin {entry.name!r} ({entry.value}) failed to load: "
                f"{type(exc).__name__}: {exc}. Reinstall it, or uninstall it."
            ) from exc
        if not isinstance(plugin, Plugin):
            raise ConfigError(
                f"The entry point {entry.name!r} ({entry.value}) is not a strikebot Plugin; "
                "it must name a `bot.ports.Plugin` object."
            )
        if plugin.name != entry.name:
            raise ConfigError(
                f"The entry point {entry.name!r} names a plugin called {plugin.name!r}; "
                "the two names must match."
            )
        found.append(plugin)
    return Plugins.of(*found)
