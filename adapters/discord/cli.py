"""`strikebot discord ...`: push the slash commands, print the invite link.

    strikebot discord sync            # to every server in [discord] guild_ids (instant)
    strikebot discord sync --guild ID # to one server
    strikebot discord sync --global   # everywhere the bot is (Discord takes up to an hour)
    strikebot discord invite          # the link that adds the bot to a server

`strikebot run` syncs to the configured servers on every start; global sync happens only
here, on request. Both need DISCORD_TOKEN and talk to Discord over REST only.
"""

from __future__ import annotations

import argparse

from bot.ports import add_json_flag


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "discord",
        help="Discord set-up: sync the /strike commands, print the invite link",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="discord_command", metavar="ACTION")
    actions.required = True

    sync = actions.add_parser(
        "sync",
        help="push the /strike commands to your servers (or globally with --global)",
        description="Push the /strike command tree to the servers listed in [discord] "
        "guild_ids (shown at once), or with --global to every server the bot is in (Discord "
        "may take up to an hour to show it). Do not combine a global sync with guild_ids, or "
        "members see every command twice.",
    )
    sync.add_argument(
        "--guild",
        action="append",
        metavar="ID",
        help="a server id to sync to (repeatable; default: [discord] guild_ids)",
    )
    sync.add_argument(
        "--global",
        dest="global_",
        action="store_true",
        help="also sync globally (every server the bot is in)",
    )
    add_json_flag(sync)
    sync.set_defaults(handler=handle_sync)

    invite = actions.add_parser(
        "invite",
        help="print the link that adds the bot to a server, with the permissions it needs",
    )
    add_json_flag(invite)
    invite.set_defaults(handler=handle_invite)


async def handle_sync(args: argparse.Namespace) -> int:
    from adapters.discord._cli_run import handle_sync as run

    return await run(args)


async def handle_invite(args: argparse.Namespace) -> int:
    from adapters.discord._cli_run import handle_invite as run

    return await run(args)
