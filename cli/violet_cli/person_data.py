"""The operator's commands for a person's whole data: `violet person export NAME` writes their
archive to a file, `violet person delete NAME` removes them everywhere. Both call the session
service's `Operator` with an operator token, as the account commands do."""

from __future__ import annotations

import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from violet.v1 import accounts_pb2, accounts_pb2_grpc, persons_pb2
from violet_cli.accounts import operator_call

# A deletion waits for the person's turn under way and every service's erasing.
DELETE_TIMEOUT_S = 300.0


def export(person: str, out: str) -> int:
    """Writes the archive beside its final name first, so a broken export leaves no file."""
    target = Path(out or f"{_file_name(person)}-violet-archive.zip")
    if target.is_dir():
        target = target / f"{_file_name(person)}-violet-archive.zip"

    async def write(stub: accounts_pb2_grpc.OperatorAsyncStub, metadata: tuple) -> int:
        request = accounts_pb2.PersonRequest(person=person)
        written = 0
        with tempfile.NamedTemporaryFile(dir=target.parent or ".", delete=False) as file:
            try:
                async for chunk in stub.ExportPerson(request, metadata=metadata):
                    file.write(chunk.data)
                    written += len(chunk.data)
            except BaseException:
                os.unlink(file.name)
                raise
        os.replace(file.name, target)
        return written

    size = operator_call(write)
    print(f"{person}'s archive is in {target} ({size:,} bytes).")
    return 0


def delete(person: str, yes: bool) -> int:
    if not yes and not _confirmed(person):
        print("Nothing was deleted.")
        return 1

    async def remove(
        stub: accounts_pb2_grpc.OperatorAsyncStub, metadata: tuple
    ) -> persons_pb2.DeleteReply:
        request = accounts_pb2.PersonRequest(person=person)
        return await stub.DeletePerson(request, metadata=metadata, timeout=DELETE_TIMEOUT_S)

    reply = operator_call(remove)
    at = datetime.fromtimestamp(reply.erased_at_unix, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if reply.held:
        print(f"{person} was deleted everywhere at {at}; every device of theirs is signed out.")
    else:
        print(f"Violet held nothing of {person}'s; nothing was left of them anywhere ({at}).")
    return 0


def _confirmed(person: str) -> bool:
    print(
        f"This removes everything of {person}'s in every service: their conversation, memory, "
        "documents, work and account, and signs out their devices. It cannot be undone.\n"
        f"Take a copy first with `violet person export {person}`.\n"
        f"Type the name ({person}) to delete:",
        file=sys.stderr,
    )
    try:
        return input().strip() == person
    except EOFError:
        return False


def _file_name(person: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in person) or "person"
