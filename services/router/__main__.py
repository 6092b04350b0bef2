"""`python -m router` serves the router; `python -m router migrate` only migrates;
`python -m router train FILE.jsonl [--out PATH] [--ablations]` retrains the routing weights."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc

from router.runtime import NAME, migrate, open_router
from router.service import RouterService
from router.settings import RouterSettings
from violet.accounts_client import personal_model
from violet.identity import resolve_secret
from violet.person_data import PersonDataService
from violet.server import Command, Hosted, run
from violet.v1 import persons_pb2, persons_pb2_grpc, router_pb2, router_pb2_grpc


@contextlib.asynccontextmanager
async def resources(settings: RouterSettings) -> AsyncIterator[Hosted]:
    async with (
        personal_model(settings, NAME) as model,
        open_router(settings, model=model) as router,
    ):
        secret = resolve_secret(settings.secret, settings.home)
        service = RouterService(router, secret)
        person_data = PersonDataService(router.erasure, secret)

        def register(server: grpc.aio.Server) -> list[str]:
            router_pb2_grpc.add_RouterServicer_to_server(service, server)
            persons_pb2_grpc.add_PersonDataServicer_to_server(person_data, server)
            return [
                router_pb2.DESCRIPTOR.services_by_name["Router"].full_name,
                persons_pb2.DESCRIPTOR.services_by_name["PersonData"].full_name,
            ]

        yield Hosted(register)


def train_arguments(parser: argparse.ArgumentParser) -> None:
    from router.scoring import SHIPPED_WEIGHTS

    parser.add_argument("file", help="routing cases, JSONL as in CONTRACTS section 6")
    parser.add_argument("--out", type=Path, default=SHIPPED_WEIGHTS, help="where to write")
    parser.add_argument(
        "--ablations", action="store_true", help="also cross-validate without each feature group"
    )
    parser.add_argument(
        "--held-out",
        default="",
        help="comma-separated person ids kept out of the cross-validation and scored once by "
        "models trained on the others (the written weights still learn from every case)",
    )


def train(args: argparse.Namespace) -> int:
    from router.cases import load_cases
    from router.embedding import shipped_embedders
    from router.training import train as train_weights

    weights = train_weights(
        load_cases(args.file),
        shipped_embedders(),
        held_out=frozenset(p for p in args.held_out.split(",") if p),
        ablations=args.ablations,
        progress=lambda step: print(step, file=sys.stderr),
    )
    weights.save(args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    print(json.dumps(weights.report))
    return 0


TRAIN = Command("train", "retrain the routing weights from routing cases", train, train_arguments)


def main() -> None:
    run(NAME, RouterSettings, resources, migrate, [TRAIN])


if __name__ == "__main__":
    main()
