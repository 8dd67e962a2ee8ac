"""sha256 for a little data, without loading OpenSSL.

`hashlib` loads OpenSSL's libcrypto when it is imported: about 6 ms, a twentieth of a whole `plan` of a small
ledger, which hashes only its spec (55 KB, for the contract's identity). The interpreter's own sha256, the one
hashlib falls back to without OpenSSL, gives the same digest at a fifth of the speed: used for the spec only;
what hashes bulk data (a project's fingerprint, a torn tail) keeps `hashlib`.
"""

from __future__ import annotations

import sys

if sys.version_info >= (3, 12):
    try:
        from _sha2 import sha256
    except ImportError:  # an interpreter without it
        from hashlib import sha256
else:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # (no stub in typeshed)
    except ImportError:
        from hashlib import sha256

__all__ = ["sha256"]
