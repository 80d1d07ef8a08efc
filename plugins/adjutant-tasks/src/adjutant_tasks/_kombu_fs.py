"""kombu's filesystem transport with an atomic publish (the broker URL
``adjutantfs://``, registered by ``_celery``; imported only when that transport is
used).

kombu's own ``_put`` creates the message file under its final name and writes it
after: a consumer polling the folder can take the file while it is still empty,
fail to decode it, and the message is lost (seen here: a worker stopped taking
messages). Here a message is written under a hidden temporary name, then renamed
into the queue folder, so a consumer sees a whole message or none."""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

__all__ = ["Channel", "Transport"]


class Channel(filesystem.Channel):
    def _put(self, queue: Any, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]  # kombu's own bases disagree
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        folder = self.data_folder_out
        tmp = os.path.join(folder, f".{name}.tmp")  # not a `<queue>.msg`: never taken
        with open(tmp, "wb") as f:
            f.write(str_to_bytes(dumps(payload)))  # type: ignore[no-untyped-call]
        os.rename(tmp, os.path.join(folder, name))


class Transport(filesystem.Transport):
    Channel = Channel
