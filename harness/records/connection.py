"""Talking to a tracking server: how long to wait for it, and what went wrong, in a few words."""

from __future__ import annotations

import hashlib
import os
import re

# Fail fast when a server is down instead of MLflow's long default retry schedule;
# a user's own settings win.
HTTP_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "20",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
}


def mlflow_defaults() -> None:
    """harness's MLflow settings where the user set none, before MLflow is imported (it reads them then): fail fast
    on a server that is down (:data:`HTTP_DEFAULTS`), and no INFO lines or download bars on stderr (a new store's
    migrations, a baseline's artifacts): harness's progress says what is under way."""
    quiet = {"MLFLOW_LOGGING_LEVEL": "WARNING", "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false"}  # harness shows its own
    for key, value in (HTTP_DEFAULTS | quiet).items():
        os.environ.setdefault(key, value)


def explain(exc: BaseException) -> str:
    """What went wrong with the tracking server, in a few words rather than a wrapped exception.

    >>> explain(OSError("HTTPConnectionPool(host='127.0.0.1', port=1): Max retries exceeded (Caused by NewConnectionError)"))
    'cannot connect to the server (connection refused or unreachable): is it running at that address?'
    """
    text = " ".join(str(exc).split())
    lowered = text.lower()
    if "newconnectionerror" in lowered or "connection refused" in lowered or "max retries exceeded" in lowered:
        return "cannot connect to the server (connection refused or unreachable): is it running at that address?"
    if "timed out" in lowered or "timeout" in lowered:
        return "the server did not answer in time (MLFLOW_HTTP_REQUEST_TIMEOUT sets the limit)"
    if "401" in text or "403" in text or "unauthorized" in lowered or "permission_denied" in lowered:
        return "the server refused the credentials (MLFLOW_TRACKING_USERNAME / _PASSWORD or _TOKEN)"
    first = text or type(exc).__name__
    return first if len(first) <= 200 else first[:199] + "…"


__all__ = ["HTTP_DEFAULTS", "explain", "mlflow_defaults"]


def key_part(name: str) -> str:
    """A user's name (dataset, segment, gain scheme) as part of an MLflow param or metric key: unchanged when MLflow
    takes it as it is, else its safe characters and a digest of the original, so distinct names stay distinct keys.

    >>> key_part("returning"), key_part("a_b"), key_part("a b"), key_part("<b>x</b>")
    ('returning', 'a_b', 'a_b_7dbde9', '_b_x__b__e7fec2')
    """
    safe = re.sub(r"[^A-Za-z0-9_\-]", "_", name)[:60]
    if safe == name:
        return name
    return f"{safe}_{hashlib.sha1(name.encode()).hexdigest()[:6]}"
