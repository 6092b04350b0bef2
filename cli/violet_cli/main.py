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
        help="run only these sections, comma-separated (turns, load, goals, cpu, idle, first, "
        "economy, calls, routing, recall, memory, trust, sandboxes); the others keep their part of "
        "benchmarks.md. Default: all",
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
    elif args.command == "eval":
        _evaluate(args.what, args.file)
    elif args.command == "bench":
        from violet_cli.bench import run_benchmarks, selected

        try:
            selected(args.only)
        except ValueError as error:
            parser.error(str(error))
        sys.exit(run_benchmarks(args.data, args.out, args.only))


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
