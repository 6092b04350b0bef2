"""Who may sign in through the OpenID Connect issuer (`VIOLET_OIDC_ALLOW`).

A valid token of the issuer is not enough: with a public issuer (Google, Entra ID, Auth0) anyone
has an account, and every person who signs in spends on the operator's key. So the operator
says who may, and with no one listed no one signs in through the issuer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from violet.identity import Unauthorized

# What a person the operator does not let in is told, on the page and over the websocket.
NOT_ALLOWED_TEXT = (
    "This account may not use Violet here. Ask the person who runs Violet to let it in."
)
# What the page says when nobody may sign in through the identity provider.
NOBODY_ALLOWED_TEXT = (
    "Nobody can sign in with an account here yet: the person who runs Violet has not said who "
    "may. A sign-in code from them still works."
)


class NotAllowed(Unauthorized):
    """A valid token of the issuer, for a person the operator does not let in."""


@dataclass(frozen=True)
class Allowlist:
    """Who may sign in through the issuer (`VIOLET_OIDC_ALLOW`, comma-separated): an email
    address (`ana@example.org`), every address of a domain (`@example.org`), or a claim's value
    (`groups=violet`: a claim holding a list must hold the value; a string must be it). An email
    counts only when the issuer says it verified it (`email_verified`): an address anyone may
    type at a public issuer opens nothing. Empty: nobody."""

    emails: frozenset[str] = frozenset()
    domains: frozenset[str] = frozenset()
    claims: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def parse(cls, text: str) -> Allowlist:
        """Raises ValueError, in plain words, for an entry that is none of the three."""
        emails, domains, claims = set(), set(), set()
        for entry in (part.strip() for part in text.split(",")):
            if not entry:
                continue
            if "=" in entry:
                claim, _, value = entry.partition("=")
                if not claim.strip() or not value.strip():
                    raise ValueError(f"{entry!r} needs a claim and a value: claim=value")
                claims.add((claim.strip(), value.strip()))
            elif entry.startswith("@") and "." in entry and " " not in entry:
                domains.add(entry.casefold())
            elif _EMAIL.fullmatch(entry):
                emails.add(entry.casefold())
            else:
                raise ValueError(
                    f"{entry!r} is not an email address, an @domain or a claim=value pair"
                )
        return cls(frozenset(emails), frozenset(domains), frozenset(claims))

    @property
    def nobody(self) -> bool:
        return not (self.emails or self.domains or self.claims)

    def lets_in(self, claims: dict[str, Any]) -> bool:
        email = claims.get("email")
        if isinstance(email, str) and claims.get("email_verified") is True:
            address = email.strip().casefold()
            if address in self.emails or "@" + address.rpartition("@")[2] in self.domains:
                return True
        return any(_holds(claims.get(claim), value) for claim, value in self.claims)


def _holds(found: object, value: str) -> bool:
    if isinstance(found, list):
        return value in found
    return isinstance(found, str | int | bool) and str(found) == value


_EMAIL = re.compile(r"[^@\s,]+@[^@\s,]+\.[^@\s,]+")
