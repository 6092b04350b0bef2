"""The operator's commands for people's accounts: a person's key, their budget, everyone's usage,
and rotating the key-encryption key. Each calls the session service's `Operator` with an
operator token made from the operator secret (which the gateway and worker do not hold)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import defaultdict
from collections.abc import Awaitable, Callable
from datetime import date
from typing import TypeVar

import grpc

from violet.accounts_client import usage_row_of
from violet.channels import channel_to
from violet.clock import utc_now
from violet.identity import issue_operator_token
from violet.settings import OperatorSettings, load_settings
from violet.tls import transport_of
from violet.v1 import accounts_pb2, accounts_pb2_grpc
from violet_cli.tokens import NoLocalStack, stack_operator_secret

T = TypeVar("T")
TIMEOUT_S = 60.0  # setting a key waits for the one call that checks it


def _call(make: Callable[[accounts_pb2_grpc.OperatorAsyncStub, tuple], Awaitable[T]]) -> T:
    settings = load_settings(OperatorSettings)
    operator_secret = settings.operator_secret or stack_operator_secret(settings.home)
    metadata = (("authorization", f"Bearer {issue_operator_token(operator_secret)}"),)
    credentials = transport_of(settings, "operator").channel_credentials()

    async def run() -> T:
        async with channel_to(settings.session_addr, credentials) as channel:
            return await make(accounts_pb2_grpc.OperatorStub(channel), metadata)

    return asyncio.run(run())


def operator_call(make: Callable[[accounts_pb2_grpc.OperatorAsyncStub, tuple], Awaitable[T]]) -> T:
    """The call's reply; a failure stops the command with one plain line."""
    try:
        return _call(make)
    except NoLocalStack as missing:
        sys.exit(str(missing))
    except grpc.aio.AioRpcError as error:
        if error.code() == grpc.StatusCode.UNAVAILABLE:
            sys.exit("Violet can't be reached: is she running? (`make run`)")
        sys.exit(f"Violet refused that: {error.details()}")


def set_key(person: str) -> int:
    """Reads the key from standard input (never an argument, so no shell history holds it)."""
    if sys.stdin.isatty():
        print(f"Paste {person}'s Anthropic key, then press Enter:", file=sys.stderr)
    key = sys.stdin.readline().strip()
    if not key:
        sys.exit("No key was given on standard input.")
    reply = operator_call(
        lambda stub, metadata: stub.SetPersonKey(
            accounts_pb2.PersonKeyRequest(person=person, key=key),
            metadata=metadata,
            timeout=TIMEOUT_S,
        )
    )
    if reply.refused:
        print(reply.refused)
        return 1
    print(f"{person}: {reply.text}")
    return 0


def remove_key(person: str) -> int:
    reply = operator_call(
        lambda stub, metadata: stub.RemovePersonKey(
            accounts_pb2.PersonRequest(person=person), metadata=metadata, timeout=TIMEOUT_S
        )
    )
    print(f"{person}: {reply.text} Their calls go as the operator allows, within a minute.")
    return 0


def set_budget(person: str, day_usd: float, month_usd: float) -> int:
    reply = operator_call(
        lambda stub, metadata: stub.SetBudget(
            accounts_pb2.BudgetRequest(person=person, day_usd=day_usd, month_usd=month_usd),
            metadata=metadata,
            timeout=TIMEOUT_S,
        )
    )
    print(f"{person}: {_limit(reply.day_usd)} a day, {_limit(reply.month_usd)} a month.")
    return 0


def _limit(usd: float) -> str:
    return f"${usd:.2f}" if usd else "no limit"


def rotate() -> int:
    reply = operator_call(
        lambda stub, metadata: stub.RotateKeys(
            accounts_pb2.RotateKeysRequest(), metadata=metadata, timeout=TIMEOUT_S * 5
        )
    )
    print(
        f"{reply.rotated} key(s) sealed again under key-encryption key {reply.current!r}"
        + (f"; {reply.skipped} already done meanwhile." if reply.skipped else ".")
    )
    print(
        json.dumps({"rotated": reply.rotated, "skipped": reply.skipped, "current": reply.current})
    )
    return 0


def usage(person: str, since: str) -> int:
    """One line per person, day and kind of call, a total per person, then one JSON object."""
    if since:
        try:
            date.fromisoformat(since)
        except ValueError:
            sys.exit(f"--since takes a date as YYYY-MM-DD, not {since!r}.")
    reply = operator_call(
        lambda stub, metadata: stub.Usage(
            accounts_pb2.UsageRequest(person=person, since=since),
            metadata=metadata,
            timeout=TIMEOUT_S,
        )
    )
    people: dict[str, dict] = defaultdict(
        lambda: {"calls": 0, "cost_usd": 0.0, "by_payer": defaultdict(float), "by_call": {}}
    )
    for entry in reply.rows:
        row = usage_row_of(entry.row)
        tokens = row.input_tokens + row.cache_write_tokens + row.cache_read_tokens
        print(
            f"{entry.person}  {row.day}  {row.call:<20} {row.payer:<9} {row.calls:>6} calls  "
            f"{tokens:>10} in  {row.output_tokens:>9} out  ${row.cost_usd:.4f}"
        )
        totals = people[entry.person]
        totals["calls"] += row.calls
        totals["cost_usd"] += row.cost_usd
        totals["by_payer"][row.payer] += row.cost_usd
        call = totals["by_call"].setdefault(row.call, {"calls": 0, "cost_usd": 0.0})
        call["calls"] += row.calls
        call["cost_usd"] += row.cost_usd
    for name, totals in sorted(people.items()):
        print(f"{name}: {totals['calls']} calls, ${totals['cost_usd']:.4f}")
    summary = {
        "since": since or utc_now().date().replace(day=1).isoformat(),
        "people": {
            name: {
                "calls": totals["calls"],
                "cost_usd": round(totals["cost_usd"], 6),
                "by_payer": {k: round(v, 6) for k, v in sorted(totals["by_payer"].items())},
                "by_call": {
                    k: {"calls": v["calls"], "cost_usd": round(v["cost_usd"], 6)}
                    for k, v in sorted(totals["by_call"].items())
                },
            }
            for name, totals in sorted(people.items())
        },
        "cost_usd": round(sum(t["cost_usd"] for t in people.values()), 6),
    }
    print(json.dumps(summary))
    return 0
