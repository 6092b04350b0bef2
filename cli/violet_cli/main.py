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
    token.add_argument(
        "--internal",
        action="store_true",
        help="a token the internal gRPC services accept (valid for an hour), for grpcurl",
    )

    chat = commands.add_parser("chat", help="talk to Violet from the terminal")
    chat.add_argument("--url", default="", help="gateway address, e.g. ws://127.0.0.1:8080")
    chat.add_argument(
        "--person",
        default=os.environ.get("USER") or "me",
        help="who you are (default: your user name)",
    )

    commands.add_parser(
        "check-model",
        help="a few small real calls: is the key accepted, are the models there, does each "
        "kind of call work",
    )

    person = commands.add_parser(
        "person", help="a person's key, budget, archive and deletion (operator)"
    )
    about = person.add_subparsers(dest="about", required=True, metavar="WHAT")
    key = about.add_parser("key", help="set or remove the person's own Anthropic key")
    key_actions = key.add_subparsers(dest="action", required=True, metavar="ACTION")
    key_actions.add_parser(
        "set", help="set the key, read from standard input; it is checked with one small call"
    ).add_argument("name")
    key_actions.add_parser("remove", help="remove the key").add_argument("name")
    budget = about.add_parser("budget", help="the person's limits on the operator's key")
    budget.add_argument("name")
    budget.add_argument("--day", type=float, default=-1, help="US dollars a day; 0: no limit")
    budget.add_argument("--month", type=float, default=-1, help="US dollars a month; 0: no limit")
    export = about.add_parser("export", help="write everything Violet keeps of the person to a zip")
    export.add_argument("name")
    export.add_argument("--out", default="", help="the file (default: NAME-violet-archive.zip)")
    delete = about.add_parser("delete", help="remove the person everywhere and sign them out")
    delete.add_argument("name")
    delete.add_argument("--yes", action="store_true", help="do not ask to confirm")
    about.add_parser(
        "devices", help="the devices the person is signed in on, and their ids"
    ).add_argument("name")
    signout = about.add_parser("signout", help="sign out one device of the person's, or all")
    signout.add_argument("name")
    signout.add_argument("device", nargs="?", default="", help="the device's id (`devices`)")
    signout.add_argument("--all", action="store_true", help="every device, every sign-in")

    keys = commands.add_parser("keys", help="the key-encryption key people's keys are sealed with")
    keys.add_subparsers(dest="action", required=True, metavar="ACTION").add_parser(
        "rotate", help="seal every person's key again under the current key-encryption key"
    )

    usage = commands.add_parser("usage", help="what each person's model calls used and cost")
    usage.add_argument("--person", default="", help="only this person")
    usage.add_argument("--since", default="", help="from this day, YYYY-MM-DD (default: the 1st)")

    evaluate = commands.add_parser("eval", help="measure routing or memory recall on a data file")
    evaluations = evaluate.add_subparsers(dest="what", required=True, metavar="WHAT")
    evaluations.add_parser("routing", help="routing cases (JSONL)").add_argument("file")
    evaluations.add_parser("memory", help="LoCoMo conversations (JSON)").add_argument("file")

    bench = commands.add_parser("bench", help="run the benchmarks; writes docs/benchmarks.md")
    bench.add_argument(
        "--data", default="../shared/data", help="folder with routing_dev.jsonl and locomo_dev.json"
    )
    bench.add_argument("--out", default="docs", help="where benchmarks.md and plots go")
    bench.add_argument(
        "--only",
        default="",
        metavar="NAMES",
        help="run only these sections, comma-separated (turns, load, goals, burst, cpu, idle, "
        "reminders, first, economy, calls, routing, recall, memory, trust, sandboxes); the others "
        "keep their part of benchmarks.md. Default: all",
    )

    args = parser.parse_args(argv)
    if args.command == "run":
        from violet_cli.run import run_stack

        sys.exit(run_stack())
    if args.command == "token":
        from violet_cli.tokens import local_token

        try:
            print(local_token(args.name, internal=args.internal))
        except ValueError as error:
            sys.exit(str(error))
    elif args.command == "chat":
        from violet_cli.chat import chat as run_chat

        sys.exit(run_chat(args.url, args.person))
    elif args.command == "check-model":
        from violet_cli.check_model import check_model

        sys.exit(check_model())
    elif args.command in ("person", "keys", "usage"):
        sys.exit(_accounts(args))
    elif args.command == "eval":
        _evaluate(args.what, args.file)
    elif args.command == "bench":
        from violet_cli.bench import missing_data, run_benchmarks, selected

        try:
            selected(args.only)
        except ValueError as error:
            parser.error(str(error))
        if missing := missing_data(args.data, args.only):
            names = " or ".join(missing)
            parser.error(f"{args.data} holds no {names}: name the folder with --data")
        sys.exit(run_benchmarks(args.data, args.out, args.only))


def _accounts(args: argparse.Namespace) -> int:
    from violet_cli import accounts

    if args.command == "usage":
        return accounts.usage(args.person, args.since)
    if args.command == "keys":
        return accounts.rotate()
    if args.about == "budget":
        return accounts.set_budget(args.name, args.day, args.month)
    if args.about in ("export", "delete", "devices", "signout"):
        from violet_cli import person_data

        if args.about == "export":
            return person_data.export(args.name, args.out)
        if args.about == "devices":
            return person_data.devices(args.name)
        if args.about == "signout":
            return person_data.sign_out(args.name, args.device, args.all)
        return person_data.delete(args.name, args.yes)
    if args.action == "set":
        return accounts.set_key(args.name)
    return accounts.remove_key(args.name)


def _evaluate(what: str, path: str) -> None:
    """Each evaluation prints its report as one JSON object on its last stdout line."""
    if not os.path.exists(path):
        sys.exit(f"There is no file at {path}.")
    if what == "routing":
        from violet_cli.eval_routing import eval_routing

        eval_routing(path)
    else:
        from violet_cli.eval_memory import eval_memory

        eval_memory(path)


if __name__ == "__main__":
    main()
