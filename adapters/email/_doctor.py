"""`strikebot doctor` for e-mail: does the SMTP server in STRIKEBOT_SMTP_URL answer, with TLS
as the URL asks, and take its login? Nobody's address is used: nothing is sent."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import aiosmtplib

from adapters.email._settings import NAME, EmailSettings
from bot.ports import Check, DoctorRequest, Verdict

TIMEOUT = 10.0


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    settings = request.settings
    assert isinstance(settings, EmailSettings)
    if not settings.enabled:
        return []
    server = settings.server()
    where = f"{server.host}:{server.port}"
    security = "TLS" if server.use_tls else "STARTTLS" if server.start_tls else "no TLS (local)"
    client = aiosmtplib.SMTP(
        hostname=server.host,
        port=server.port,
        use_tls=server.use_tls,
        start_tls=True if server.start_tls else (None if server.use_tls else False),
        timeout=TIMEOUT,
        local_hostname="strikebot.doctor",
    )
    try:
        await client.connect()
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
        return [
            Check(NAME, "reachable", Verdict.FAIL,
                  f"could not reach the mail server at {where} ({type(exc).__name__})",
                  "Check the host and port in STRIKEBOT_SMTP_URL (587 for STARTTLS, 465 for "
                  "smtps://) and this machine's outgoing network.")
        ]  # fmt: skip
    try:
        if server.username and server.password:
            try:
                await client.login(server.username, server.password)
            except aiosmtplib.SMTPAuthenticationError as exc:
                return [
                    Check(NAME, "login", Verdict.FAIL,
                          f"the mail server at {where} refused the login ({exc.code})",
                          "Check the user and password in STRIKEBOT_SMTP_URL (%-encode @ as "
                          "%40; some providers want an app password).")
                ]  # fmt: skip
            except aiosmtplib.SMTPException as exc:
                return [
                    Check(NAME, "login", Verdict.FAIL,
                          f"the mail server at {where} would not log in ({type(exc).__name__})",
                          "Check that the provider allows SMTP logins for this account.")
                ]  # fmt: skip
        login = f" and takes the login of {server.username}" if server.username else ""
        return [
            Check(NAME, "server", Verdict.OK,
                  f"{where} answers ({security}){login}; mail goes out from {settings.mail_from}")
        ]  # fmt: skip
    finally:
        with contextlib.suppress(Exception):
            await client.quit()
