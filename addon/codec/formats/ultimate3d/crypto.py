"""AES-128 for EncryptionVersion 2, as the notes settle it.

ECB (no IV is stored), the key is the password's bytes zero-padded to 16, and
the last decrypted byte counts the padding bytes to strip. pycryptodome is
imported only when a file is encrypted, so unencrypted work never needs it.

The password's bytes are its UTF-8 encoding, on import and on export alike
(ASCII passwords, the usual case, are the same bytes in every encoding); a
password of more than 16 bytes cannot be a key: an import reports it as a
wrong password, an export refuses it as an option error before writing.
"""
from __future__ import annotations

from ...errors import FormatError, UnsupportedFeature, WrongPassword

MAGIC = b"$U3D_"


KEY_BYTES = 16


def password_key(password: str, error: type[Exception] = WrongPassword) -> bytes:
    """The AES key: the password's UTF-8 bytes, zero-padded to 16; `error` when it does not fit."""
    try:
        key = password.encode("utf-8")
    except UnicodeEncodeError as e:
        raise error(f"the .u3d password is not valid text ({e.reason})") from e
    if len(key) > KEY_BYTES:
        raise error(f"a .u3d password has at most {KEY_BYTES} bytes (UTF-8: a non-ASCII letter takes 2 to 4), "
                    f"this one has {len(key)}")
    return key.ljust(KEY_BYTES, b"\0")


def _cipher(password: str, error: type[Exception]):
    key = password_key(password, error)
    try:
        from Crypto.Cipher import AES
    except ImportError as e:
        raise UnsupportedFeature("this .u3d file is AES-encrypted and the AES library (pycryptodome) "
                                 "is not installed") from e
    return AES.new(key, AES.MODE_ECB)


def decrypt(body: bytes, password: str, offset: int) -> tuple[bytes, bytes]:
    """-> (plain data, the padding bytes stripped). Raises WrongPassword when it does not decrypt."""
    if not password:
        raise WrongPassword("this .u3d file is encrypted (AES-128): a password is needed")
    if not body or len(body) % 16:
        raise FormatError(f"encrypted data of {len(body)} bytes is not a positive multiple of 16 (truncated?)",
                          offset, "$U3D_FILE_HEADER/encrypted data")
    plain = _cipher(password, WrongPassword).decrypt(body)
    pad = plain[-1]
    if not 1 <= pad <= 16 or not plain.startswith(MAGIC):
        raise WrongPassword("wrong password: the decrypted data is not a .u3d chunk list")
    return plain[:-pad], plain[-pad:]


def encrypt(data: bytes, password: str, padding: bytes | None = None) -> bytes:
    """Pad (reusing the padding read from the file when it fits) and encrypt."""
    n = 16 - len(data) % 16
    if padding is None or len(padding) != n or padding[-1] != n:
        padding = bytes([n]) * n
    return _cipher(password, UnsupportedFeature).encrypt(data + padding)
