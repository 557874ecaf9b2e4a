"""One exception root whose subclasses carry the sentence a person will read.

Every message says what went wrong *and what to do*. Adapters show `str(error)` as is
(translated where a translation exists); the CLI prints it and exits non-zero.
"""

from __future__ import annotations


class StrikebotError(Exception):
    """Base class: the message is written for the person who acted.

    `translations` maps a language code to the same sentence in that language; adapters
    show `error.localized(lang)`.
    """

    exit_code = 2

    def __init__(self, message: str, *, translations: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.translations = translations or {}

    def localized(self, language: str) -> str:
        return self.translations.get(language, self.message)


class InvalidInput(StrikebotError):
    """The request itself is wrong (empty headline, unknown key, bad time zone...)."""


class NotFound(StrikebotError):
    """The thing named does not exist."""


class NotAllowed(StrikebotError):
    """The actor may not do this."""

    exit_code = 3


class Conflict(StrikebotError):
    """The request is valid but clashes with the current state (already retracted...)."""


class ConfigError(StrikebotError):
    """The configuration file is wrong: names the file, the key and what to write."""


class StoreUnavailable(StrikebotError):
    """The database cannot be reached or opened."""

    exit_code = 4


class ImportRefused(StrikebotError):
    """An export file that is corrupt, from another program or another campaign."""


class PermanentDeliveryError(Exception):
    """A platform refused a send in a way retrying will not fix (403, 404, archived channel).

    `tell_admins=False` when one person's address failed (a bounced e-mail, a landline):
    the channel is paused all the same, but admins read such failures as counts
    (`strikebot subscribers stats`) instead of one notice per address."""

    def __init__(self, reason: str, *, tell_admins: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.tell_admins = tell_admins


class TransientDeliveryError(Exception):
    """A platform failed in a way that may pass (429, 5xx, timeout, reset).

    `retry_after` is the platform's own hint in seconds, when it gave one. `is_global` says
    the limit hit is the whole token's (Discord's global 429), not one channel's: the
    dispatcher then pauses every send on the platform, not just this channel's. `in_doubt`
    says the platform may have acted on the request all the same (no answer came: a
    timeout, a connection cut after the request went out).
    """

    def __init__(
        self,
        reason: str,
        retry_after: float | None = None,
        *,
        is_global: bool = False,
        in_doubt: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.is_global = is_global
        self.in_doubt = in_doubt
