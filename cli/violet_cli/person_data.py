"""The operator's commands for a person's whole data: `violet person export NAME` writes their
archive to a file, `violet person delete NAME` removes them everywhere, `violet person devices
NAME` lists the devices they are signed in on and `violet person signout NAME DEVICE|--all`
signs one (or every one) out. Each calls the session service's `Operator` with an operator
token, as the account commands do."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from google.protobuf.timestamp_pb2 import Timestamp

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


def devices(person: str) -> int:
    """A line per device, then one JSON object: `{"devices": [...]}` (CONTRACTS section 9)."""

    async def listed(
        stub: accounts_pb2_grpc.OperatorAsyncStub, metadata: tuple
    ) -> persons_pb2.DevicesReply:
        return await stub.PersonDevices(
            accounts_pb2.PersonRequest(person=person), metadata=metadata
        )

    _print_devices(person, operator_call(listed))
    return 0


def sign_out(person: str, device: str, every: bool) -> int:
    if bool(device) == every:
        sys.exit("Name one device (its id from `violet person devices`), or --all.")

    async def signed_out(
        stub: accounts_pb2_grpc.OperatorAsyncStub, metadata: tuple
    ) -> persons_pb2.DevicesReply:
        asked = accounts_pb2.PersonSignOutRequest(person=person, device=device, all=every)
        return await stub.SignOutPerson(asked, metadata=metadata)

    left = operator_call(signed_out)
    if every:
        print(f"Every device of {person}'s is signed out; their sign-ins until now are refused.")
    else:
        print(f"Device {device} of {person}'s is signed out; its sign-in is refused from now on.")
    _print_devices(person, left)
    return 0


def _print_devices(person: str, listed: persons_pb2.DevicesReply) -> None:
    found = [
        {
            "device": device.device,
            "agent": device.agent,
            "first_seen": _when(device.first_seen),
            "last_seen": _when(device.last_seen),
        }
        for device in listed.devices
    ]
    if not found:
        print(f"{person} is signed in on no device.")
    for device in found:
        print(
            f"{device['device']}  {device['agent'] or 'an unnamed device'}: first seen "
            f"{device['first_seen']}, last seen {device['last_seen']}"
        )
    print(json.dumps({"devices": found}))


def _when(stamp: Timestamp) -> str:
    return stamp.ToDatetime(tzinfo=UTC).isoformat().replace("+00:00", "Z")


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
