"""AES-128 for EncryptionVersion 2, as the notes settle it.

ECB (no IV is stored), the key is the password's bytes zero-padded to 16, and
the last decrypted byte counts the padding bytes to strip. pycryptodome is
imported only when a file is encrypted, so unencrypted work never needs it.
"""
from __future__ import annotations

from ...errors import FormatError, UnsupportedFeature, WrongPassword

MAGIC = b"$U3D_"


def _cipher(password: str):
    try:
        from Crypto.Cipher import AES
    except ImportError as e:
        raise UnsupportedFeature("this .u3d file is AES-encrypted and the AES library (pycryptodome) "
                                 "is not installed") from e
    key = password.encode("latin-1", errors="replace")
    if len(key) > 16:
        raise WrongPassword(f"wrong password: a .u3d password has at most 16 bytes, this one has {len(key)}")
    return AES.new(key.ljust(16, b"\0"), AES.MODE_ECB)


def decrypt(body: bytes, password: str, offset: int) -> tuple[bytes, bytes]:
    """-> (plain data, the padding bytes stripped). Raises WrongPassword when it does not decrypt."""
    if not password:
        raise WrongPassword("this .u3d file is encrypted (AES-128): a password is needed")
    if not body or len(body) % 16:
        raise FormatError(f"encrypted data of {len(body)} bytes is not a positive multiple of 16 (truncated?)",
                          offset, "$U3D_FILE_HEADER/encrypted data")
    plain = _cipher(password).decrypt(body)
    pad = plain[-1]
    if not 1 <= pad <= 16 or not plain.startswith(MAGIC):
        raise WrongPassword("wrong password: the decrypted data is not a .u3d chunk list")
    return plain[:-pad], plain[-pad:]


def encrypt(data: bytes, password: str, padding: bytes | None = None) -> bytes:
    """Pad (reusing the padding read from the file when it fits) and encrypt."""
    n = 16 - len(data) % 16
    if padding is None or len(padding) != n or padding[-1] != n:
        padding = bytes([n]) * n
    return _cipher(password).encrypt(data + padding)
