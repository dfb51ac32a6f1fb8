"""Who may change what in the workspace: owners and admins, as a team's annotation tools have them.

* A dataset belongs to whoever added it (`datasets.owner`). Renaming it, deleting it (to the trash), restoring it
  from the trash, or deleting it for good needs its owner or an admin. A dataset stored before owners were kept
  belongs to nobody: only an admin manages it.
* A rater changes only their own grades; taking back another rater's grades needs the dataset's owner or an admin.
  A run, an embeddings upload or a saved experiment is changed by whoever added it, the dataset's owner or an admin.
* Admins are named in $RETRIEVAL_LAB_ADMINS (comma-separated names, as the proxy's header gives them).
* Where the app's sign-in header is configured ($RETRIEVAL_LAB_USER_HEADER), a person is who the header says, and a
  request without it changes nothing. Where it is not (one person on a laptop), there is no sign-in to trust, so the
  one local person is an admin: they manage everything in their store, as before owners were kept.

The store (`workspace.Workspace`) checks every one of these itself, whoever calls it (the app, the command line).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

ADMINS_ENV = "RETRIEVAL_LAB_ADMINS"
USER_HEADER_ENV = "RETRIEVAL_LAB_USER_HEADER"  # the header an authenticating proxy sets to the signed-in user's name


@dataclass(frozen=True)
class Actor:
    """Who asks for a change: a name, and whether that person is an admin."""

    name: str
    admin: bool = False

    def may_manage(self, owner: str | None) -> bool:
        """Whether this person may change something `owner` added (None: added before owners were kept)."""
        return self.admin or (owner is not None and owner == self.name)


def admins() -> frozenset[str]:
    """The names in $RETRIEVAL_LAB_ADMINS (comma-separated, each stripped)."""
    return frozenset(n.strip() for n in os.environ.get(ADMINS_ENV, "").split(",") if n.strip())


def sign_in_configured() -> bool:
    """Whether people are told apart by the proxy's header ($RETRIEVAL_LAB_USER_HEADER set)."""
    return bool(os.environ.get(USER_HEADER_ENV, "").strip())


def actor(name: str) -> Actor:
    """The person of this name: an admin when listed in $RETRIEVAL_LAB_ADMINS, or when no sign-in is configured
    (the one local person manages their whole store)."""
    return Actor(name, admin=name in admins() or not sign_in_configured())
