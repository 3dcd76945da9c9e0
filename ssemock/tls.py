"""Replay over https: a local certificate authority, a server certificate for this machine, the TLS context.

``ssemock serve --tls`` and ``MockServer(tls=True)`` answer over TLS with a certificate for ``localhost``,
``127.0.0.1`` and ``::1`` signed by ssemock's own local certificate authority. Both are made once with
trustme (a well-kept library of the Python TLS ecosystem; the ``tls`` extra, or ``pip install trustme``) and kept in
``$XDG_CACHE_HOME/ssemock/tls`` (else ``~/.cache/ssemock/tls``): ``ca.pem`` (the certificate clients
trust: ``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``, ``NODE_EXTRA_CA_CERTS``), ``server.pem`` and
``server-key.pem`` (mode 0600 from its creation on, in a directory of mode 0700; a key found readable by
others, or in a directory others may write to, is made again with a new authority). The authority's own
private key is never written: nobody can sign another certificate with it. A certificate and key of the
user's own can be given instead (:class:`TLSFiles` without ``ca``, ``serve --tls-cert FILE --tls-key FILE``).
"""

from __future__ import annotations

import fcntl
import os
import ssl
from dataclasses import dataclass
from pathlib import Path

from .cassette.append import atomic_write_bytes
from .errors import ConfigError

__all__ = ["TLS_NAMES", "TLSFiles", "local_authority", "server_context", "tls_dir", "trust_env", "trust_notice"]

TLS_NAMES = ("localhost", "127.0.0.1", "::1")
"""The names and addresses the local server certificate is valid for."""


@dataclass(frozen=True)
class TLSFiles:
    """A server's certificate chain and private key (PEM files), and the certificate authority that signed
    it, which clients must trust (None: a certificate of the user's own, trusted as their clients trust it).
    """

    cert: Path
    key: Path
    ca: Path | None = None


def tls_dir() -> Path:
    """Where the local authority's files are kept: ``$XDG_CACHE_HOME/ssemock/tls``, else ``~/.cache/ssemock/tls``
    (a relative ``XDG_CACHE_HOME`` is ignored, as the XDG Base Directory Specification asks: the clients given
    the certificate's path may run elsewhere)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ssemock" / "tls"


def local_authority(directory: Path | None = None) -> TLSFiles:
    """The local authority's certificate and a server certificate for :data:`TLS_NAMES`, made on first use
    and kept in ``directory`` (default :func:`tls_dir`); made again if a file is missing or does not load.

    Raises:
        ConfigError: trustme is not installed, or the directory cannot be written.
    """
    where = directory if directory is not None else tls_dir()
    ca = where / "ca.pem"
    files = TLSFiles(where / "server.pem", where / "server-key.pem", ca)
    try:
        if _usable(files):
            return files
    except ConfigError:
        pass  # not made yet, or broken: made again
    try:
        import trustme
    except ImportError:
        raise ConfigError(
            "TLS needs trustme: pip install trustme (ssemock's 'tls' extra), or give a certificate "
            "and key of your own: --tls-cert FILE --tls-key FILE"
        ) from None
    try:
        where.mkdir(parents=True, exist_ok=True, mode=0o700)
        open_to_others = where.stat().st_mode & 0o077  # made by another tool, or by hand
        if open_to_others:  # its files are made again below: others may have put theirs in it
            os.chmod(where, 0o700)
        with open(where / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another process making them at the same time: one set, not a mix
            try:
                if not open_to_others and _usable(files):
                    return files  # made by that other process meanwhile
            except ConfigError:
                pass
            authority = trustme.CA(organization_name="ssemock local CA")
            leaf = authority.issue_cert(*TLS_NAMES, organization_name="ssemock")
            atomic_write_bytes(files.key, leaf.private_key_pem.bytes(), mode=0o600)
            atomic_write_bytes(files.cert, b"".join(blob.bytes() for blob in leaf.cert_chain_pems))
            atomic_write_bytes(ca, authority.cert_pem.bytes())
    except OSError as exc:
        raise ConfigError(f"cannot write the local TLS authority's files to {where}: {exc.strerror or exc}") from None
    return files


def _usable(files: TLSFiles) -> bool:
    """Whether the local authority's files load, with a key that only its owner may read, in a directory that
    only its owner may write to (else others may have read the key or put an authority of theirs in place
    of ``ca.pem``: the whole set is made again). Raises ConfigError as :func:`server_context` does."""
    server_context(files)
    return files.key.stat().st_mode & 0o077 == 0 and files.key.parent.stat().st_mode & 0o022 == 0


def server_context(files: TLSFiles, *, http2: bool = False) -> ssl.SSLContext:
    """The server side TLS context of ``files`` (TLS 1.2 at least, ALPN ``http/1.1``; with ``http2``,
    ``h2`` first, then ``http/1.1``).

    Raises:
        ConfigError: a file is missing, is a directory or cannot be read, or the certificate and key do not
            load or do not go together (the message names the files).
    """
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["h2", "http/1.1"] if http2 else ["http/1.1"])
    for path in (files.cert, files.key, *(() if files.ca is None else (files.ca,))):
        try:
            if path.is_dir():
                raise ConfigError(f"{path}: a directory, expected a TLS certificate or key file (PEM)")
            if not path.is_file():
                raise ConfigError(f"{path}: no such TLS certificate or key file")
            with path.open("rb"):
                pass
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read this TLS certificate or key file: {exc.strerror or exc}") from None
    try:
        context.load_cert_chain(files.cert, files.key)
    except (ssl.SSLError, ValueError) as exc:
        raise ConfigError(
            f"{files.cert}, {files.key}: expected a PEM certificate chain and its private key, "
            f"got an error from the TLS library ({exc.__class__.__name__}: {exc})"
        ) from None
    except OSError as exc:  # (after ssl.SSLError, an OSError) replaced or made unreadable since
        raise ConfigError(f"{files.cert}, {files.key}: cannot read: {exc.strerror or exc}") from None
    return context


def trust_env(files: TLSFiles) -> dict[str, str]:
    """The environment variables that make the usual clients trust ``files``' authority without code changes
    (Python's ssl and httpx: ``SSL_CERT_FILE``; requests: ``REQUESTS_CA_BUNDLE``; Node.js:
    ``NODE_EXTRA_CA_CERTS``); empty for a certificate of the user's own."""
    if files.ca is None:
        return {}
    ca = str(files.ca)
    return {"SSL_CERT_FILE": ca, "REQUESTS_CA_BUNDLE": ca, "NODE_EXTRA_CA_CERTS": ca}


def trust_notice(files: TLSFiles | None) -> str | None:
    """The line ``serve`` and ``record`` print on start for the local authority: which file clients trust."""
    if files is None or files.ca is None:
        return None
    return f"TLS: clients trust {files.ca} (SSL_CERT_FILE={files.ca})"
