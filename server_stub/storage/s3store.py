"""Artifact bytes in an S3-compatible bucket (`--artifacts s3://BUCKET/PREFIX`, decision 0150).

The same `ObjectStore` as the folder: one object per artifact at `PREFIX/<session>/<artifact>`,
never shared. A put is one `PutObject`, so an interrupted write leaves no object; what an
interrupted *multipart* upload leaves (by another tool or a future large-object path) is a
half-written object, listed by `locators()` as `<locator>.tmp` and aborted by the sweep like
the folder's `.tmp` files. Listings are paged (1000 keys a request).

Every call has a bounded connect and read timeout and no client-side retry (the outbox is the
retry). After a connection failure the store answers "unavailable" at once for a short while,
so that a purge with many artifacts during an outage costs one timeout, not one per artifact:
a DELETE still answers 204 promptly, with its byte deletes queued.

`compact()` runs a configured compaction hook (SeaweedFS: the master's `/vol/vacuum`) on the
maintenance passes that follow a delete, because a store may keep deleted bytes in its files
until then (docs/server.md, "What a deleted object leaves behind").
"""

from __future__ import annotations

import logging
import threading
import time
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionError,
    ConnectTimeoutError,
    ReadTimeoutError,
)

from server_stub.storage.objectstore import TMP_SUFFIX, ObjectStoreUnavailable

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

log = logging.getLogger(__name__)

#: No artifact is larger (a request body is bounded well below); a bigger object is not ours.
MAX_OBJECT_BYTES = 64 * 1024 * 1024
#: After a connection failure, calls fail at once for this long (then one tries again).
DOWN_SECONDS = 2.0
#: Deleted bytes may reach the volumes after the delete (SeaweedFS's filer deletes chunks
#: from a queue): every pass this long after the last delete compacts again.
COMPACT_SETTLE_SECONDS = 180.0

_CONNECTION_ERRORS = (ConnectionError, ConnectTimeoutError, ReadTimeoutError)


@dataclass(frozen=True)
class S3Location:
    """`s3://BUCKET/PREFIX`, parsed: the bucket and the key prefix (no slashes at its ends)."""

    bucket: str
    prefix: str

    @classmethod
    def parse(cls, url: str) -> S3Location:
        if not url.startswith("s3://"):
            raise ValueError(f"not an s3:// URL: {url!r}")
        bucket, _, prefix = url[len("s3://") :].partition("/")
        prefix = prefix.strip("/")
        if not bucket or any(p in ("", ".", "..") for p in prefix.split("/") if prefix):
            raise ValueError(f"bad object store URL {url!r} (expected s3://BUCKET/PREFIX)")
        return cls(bucket, prefix)


def _check(locator: str) -> str:
    parts = locator.split("/")
    if len(parts) != 2 or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"bad locator {locator!r}")
    return locator


class S3ObjectStore:
    """One object per artifact under a bucket's prefix (boto3; thread-safe client)."""

    def __init__(
        self,
        location: S3Location,
        *,
        endpoint: str | None = None,
        region: str | None = None,
        profile: str | None = None,
        timeout: float = 5.0,
        compact_url: str | None = None,
    ) -> None:
        self.location = location
        self.available = True
        self.compact_url = compact_url
        self._timeout = timeout
        session = boto3.session.Session(profile_name=profile, region_name=region)
        self._s3: S3Client = session.client(
            "s3",
            endpoint_url=endpoint,
            config=Config(
                connect_timeout=min(timeout, 2.0),
                read_timeout=timeout,
                retries={"max_attempts": 1, "mode": "standard"},
                max_pool_connections=32,
                s3={"addressing_style": "path"},
            ),
        )
        self._lock = threading.Lock()
        self._down_until = 0.0
        self._last_delete: float | None = None
        self._compacted_at = 0.0

    def _key(self, locator: str) -> str:
        prefix = self.location.prefix
        return f"{prefix}/{locator}" if prefix else locator

    def _locator(self, key: str) -> str | None:
        """The locator of a listed key, or None for a key of another shape (not ours)."""
        prefix = self.location.prefix
        if prefix:
            if not key.startswith(prefix + "/"):
                return None
            key = key[len(prefix) + 1 :]
        try:
            return _check(key)
        except ValueError:
            return None

    def _guard(self) -> None:
        if time.monotonic() < self._down_until:
            raise ObjectStoreUnavailable("object store unreachable (retrying shortly)")

    def _failed(self, exc: Exception) -> ObjectStoreUnavailable:
        if isinstance(exc, _CONNECTION_ERRORS):
            with self._lock:
                self._down_until = time.monotonic() + DOWN_SECONDS
        return ObjectStoreUnavailable(f"{type(exc).__name__}: {exc}"[:300])

    def put(self, locator: str, data: bytes) -> None:
        key = self._key(_check(locator))
        self._guard()
        try:
            self._s3.put_object(Bucket=self.location.bucket, Key=key, Body=data)
        except (BotoCoreError, ClientError) as exc:
            raise self._failed(exc) from exc

    def get(self, locator: str) -> bytes:
        key = self._key(_check(locator))
        self._guard()
        try:
            answer = self._s3.get_object(Bucket=self.location.bucket, Key=key)
            body = answer["Body"]
            try:
                data = body.read(MAX_OBJECT_BYTES + 1)
            finally:
                body.close()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                raise FileNotFoundError(locator) from exc
            raise self._failed(exc) from exc
        except BotoCoreError as exc:
            raise self._failed(exc) from exc
        if len(data) > MAX_OBJECT_BYTES:
            raise ObjectStoreUnavailable(f"object {locator} is larger than any artifact")
        return data

    def delete(self, locator: str) -> None:
        if not self.available:
            raise ObjectStoreUnavailable("object store is down (fault switch)")
        half = locator.endswith(TMP_SUFFIX)
        key = self._key(_check(locator.removesuffix(TMP_SUFFIX)))
        self._guard()
        try:
            if half:
                self._abort_uploads(key)
            else:
                self._s3.delete_object(Bucket=self.location.bucket, Key=key)
        except (BotoCoreError, ClientError) as exc:
            raise self._failed(exc) from exc
        with self._lock:
            self._last_delete = time.monotonic()

    def _abort_uploads(self, key: str) -> None:
        pages = self._s3.get_paginator("list_multipart_uploads")
        for page in pages.paginate(Bucket=self.location.bucket, Prefix=key):
            for upload in page.get("Uploads", []):
                if upload.get("Key") == key and "UploadId" in upload:
                    self._s3.abort_multipart_upload(
                        Bucket=self.location.bucket, Key=key, UploadId=upload["UploadId"]
                    )

    def _listed(self, prefix: str) -> list[str]:
        pages = self._s3.get_paginator("list_objects_v2")
        keys: list[str] = []
        for page in pages.paginate(
            Bucket=self.location.bucket, Prefix=prefix, PaginationConfig={"PageSize": 1000}
        ):
            keys.extend(item["Key"] for item in page.get("Contents", []) if "Key" in item)
        return keys

    def count(self, session_id: str) -> int:
        self._guard()
        try:
            keys = self._listed(self._key(session_id) + "/")
        except (BotoCoreError, ClientError) as exc:
            raise self._failed(exc) from exc
        return sum(1 for k in keys if (loc := self._locator(k)) and loc.startswith(session_id))

    def locators(self) -> list[str]:
        prefix = self.location.prefix + "/" if self.location.prefix else ""
        self._guard()
        try:
            found = {loc for key in self._listed(prefix) if (loc := self._locator(key))}
            pages = self._s3.get_paginator("list_multipart_uploads")
            for page in pages.paginate(Bucket=self.location.bucket, Prefix=prefix):
                for upload in page.get("Uploads", []):
                    loc = self._locator(upload.get("Key", ""))
                    if loc is not None:
                        found.add(loc + TMP_SUFFIX)
        except (BotoCoreError, ClientError) as exc:
            raise self._failed(exc) from exc
        return sorted(found)

    def compact(self) -> None:
        """Ask the store to rewrite its files without deleted bytes (the configured hook),
        on every pass until `COMPACT_SETTLE_SECONDS` after the last delete."""
        if self.compact_url is None or self._last_delete is None:
            return
        now = time.monotonic()
        if self._compacted_at - self._last_delete > COMPACT_SETTLE_SECONDS:
            return
        try:
            with urllib.request.urlopen(self.compact_url, timeout=max(self._timeout, 60)) as r:
                r.read(64 * 1024)
        except OSError as exc:
            log.warning("object store compaction request failed: %s", exc)
            return
        self._compacted_at = now
