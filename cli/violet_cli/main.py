"""The `violet` command: run the stack, make tokens, chat, evaluate, benchmark."""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="violet", description="Violet, one conversation forever.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    commands.add_parser("run", help="start all five services in the foreground")

    token = commands.add_parser("token", help="print a bearer token for a person")
    token.add_argument("name", help="the person's name")

    chat = commands.add_parser("chat", help="talk to Violet from the terminal")
    chat.add_argument("--url", default="", help="gateway address, e.g. ws://127.0.0.1:8080")
    chat.add_argument(
        "--person",
        default=os.environ.get("USER") or "me",
        help="who you are (default: your user name)",
    )

    args = parser.parse_args(argv)
    if args.command == "run":
        from violet_cli.run import run_stack

        sys.exit(run_stack())
    if args.command == "token":
        from violet_cli.tokens import local_token

        print(local_token(args.name))
    elif args.command == "chat":
        from violet_cli.chat import chat as run_chat

        sys.exit(run_chat(args.url, args.person))


if __name__ == "__main__":
    main()
