"""The Slack plugin's declaration: what the core needs to know about Slack, said once.

Its parts are named by address: they load, with the platform's library,
only when the core uses them."""

from __future__ import annotations

from bot.ports import Plugin

plugin = Plugin(
    name="slack",
    title="Slack",
    create="adapters.slack._adapter:SlackAdapter",
    settings="adapters.slack._settings:SlackSettings",
    section="adapters.slack._settings:SlackSection",
    admins="adapters.slack._settings:SlackAdmins",
    delivery="adapters.slack._settings:SlackDelivery",
    pacing="adapters.slack._settings:pacing",
    limits="adapters.slack._settings:LIMITS",
    # <!channel>, <!here>, <!everyone>, <!subteam^S1>, <@U123>; plain @here/@channel with
    # link_names. No word boundary, as Slack reads them.
    mentions=(r"@(?=(?:everyone|here|channel))", r"<(?=[@!])"),
    address_example="slack:T0001/C0001",
    docs="docs/platforms.md#slack",
    doctor="adapters.slack._doctor:doctor",
    preview="adapters.slack._preview:preview",
)
