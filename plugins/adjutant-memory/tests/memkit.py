"""The fixture project the retrieval tests ask about, and helpers to write it."""

from __future__ import annotations

from pathlib import Path

#: A small project: each question below is answered by one file.
PROJECT: dict[str, str] = {
    "README.md": "# Larkspur\n\nLarkspur syncs photo albums between a camera card and a "
                 "home server.\n\nRun `larkspur sync` to copy new photos.\n",
    "larkspur/__init__.py": '"""Larkspur: photo album sync."""\n\n__version__ = "2.4.1"\n',
    "larkspur/settings.py": (
        '"""Reading the configuration file."""\n\nimport tomllib\nfrom pathlib import '
        'Path\n\nDEFAULT_PATH = Path("~/.config/larkspur/larkspur.toml")\n\n\n'
        'def parse_config(path: Path = DEFAULT_PATH) -> dict:\n'
        '    """Parse the TOML configuration and fill in defaults."""\n'
        '    with open(path.expanduser(), "rb") as handle:\n'
        '        data = tomllib.load(handle)\n'
        '    data.setdefault("workers", 4)\n    return data\n'),
    "larkspur/cli.py": (
        '"""The command line: argparse subcommands sync, status and prune."""\n\n'
        'import argparse\n\n\ndef main(argv=None):\n'
        '    parser = argparse.ArgumentParser(prog="larkspur")\n'
        '    sub = parser.add_subparsers(dest="command")\n'
        '    sub.add_parser("sync")\n    sub.add_parser("status")\n'
        '    sub.add_parser("prune")\n    return parser.parse_args(argv)\n'),
    "larkspur/thumbnails.py": (
        '"""Thumbnail generation with Pillow: resize each photo to 256 pixels."""\n\n'
        'from PIL import Image\n\nSIZE = (256, 256)\n\n\n'
        'def make_thumbnail(source, target):\n'
        '    with Image.open(source) as image:\n        image.thumbnail(SIZE)\n'
        '        image.save(target, "JPEG", quality=85)\n'),
    "larkspur/hashing.py": (
        '"""Duplicate detection: a SHA-256 digest of each photo\'s bytes."""\n\n'
        'import hashlib\n\n\ndef digest(path):\n    h = hashlib.sha256()\n'
        '    with open(path, "rb") as handle:\n'
        '        for block in iter(lambda: handle.read(65536), b""):\n'
        '            h.update(block)\n    return h.hexdigest()\n'),
    "larkspur/upload.py": (
        '"""Uploading photos to the home server over HTTP with retries and exponential '
        'backoff."""\n\nimport time\n\nRETRIES = 5\n\n\ndef upload(session, url, data):\n'
        '    for attempt in range(RETRIES):\n        response = session.post(url, data=data)\n'
        '        if response.ok:\n            return response\n'
        '        time.sleep(2 ** attempt)\n'
        '    raise RuntimeError("upload failed after retries")\n'),
    "larkspur/database.py": (
        '"""The catalogue: an SQLite database of albums and photos, with migrations."""\n\n'
        'import sqlite3\n\nSCHEMA = """\nCREATE TABLE albums (id INTEGER PRIMARY KEY, '
        'name TEXT);\nCREATE TABLE photos (id INTEGER PRIMARY KEY, album INTEGER, '
        'digest TEXT);\n"""\n\n\ndef open_catalogue(path):\n'
        '    db = sqlite3.connect(path)\n    db.executescript(SCHEMA)\n    return db\n'),
    "larkspur/logging_setup.py": (
        '"""Logging: rotating log files under ~/.cache/larkspur, 5 files of 1 MB."""\n\n'
        'import logging.handlers\n\n\ndef setup_logging(folder):\n'
        '    handler = logging.handlers.RotatingFileHandler(folder / "larkspur.log", '
        'maxBytes=1_000_000, backupCount=5)\n'
        '    logging.getLogger("larkspur").addHandler(handler)\n'),
    "larkspur/exif.py": (
        '"""EXIF metadata: the date a photo was taken and the camera model."""\n\n\n'
        'def taken_at(tags):\n    return tags.get("DateTimeOriginal")\n\n\n'
        'def camera_model(tags):\n    return tags.get("Model")\n'),
    "larkspur/scheduler.py": (
        '"""Running sync every night: a cron-like schedule at 02:00."""\n\n'
        'import sched\nimport time\n\nNIGHTLY = "02:00"\n\n\ndef every_night(job):\n'
        '    scheduler = sched.scheduler(time.time, time.sleep)\n'
        '    scheduler.enter(86400, 1, job)\n    scheduler.run()\n'),
    "docs/deployment.md": "# Deployment\n\nLarkspur runs as a systemd user service. Copy "
                          "`larkspur.service` to `~/.config/systemd/user/` and enable it "
                          "with `systemctl --user enable --now larkspur`.\n",
    "docs/contributing.md": "# Contributing\n\nRun the tests with `pytest -q`. Format the "
                            "code with ruff before opening a pull request.\n",
    "tests/test_hashing.py": (
        'from larkspur.hashing import digest\n\n\ndef test_same_bytes_same_digest(tmp_path):'
        '\n    a = tmp_path / "a"\n    a.write_bytes(b"x")\n'
        '    assert digest(a) == digest(a)\n'),
}

#: (question, the file that answers it)
QUESTIONS: list[tuple[str, str]] = [
    ("where do we parse the config?", "larkspur/settings.py"),
    ("how are thumbnails generated?", "larkspur/thumbnails.py"),
    ("how do we detect duplicate photos?", "larkspur/hashing.py"),
    ("what happens when an upload fails?", "larkspur/upload.py"),
    ("where is the database schema?", "larkspur/database.py"),
    ("where do log files go?", "larkspur/logging_setup.py"),
    ("how do we read the date a photo was taken?", "larkspur/exif.py"),
    ("when does the nightly sync run?", "larkspur/scheduler.py"),
    ("how do I deploy it as a service?", "docs/deployment.md"),
    ("which subcommands does the command line have?", "larkspur/cli.py"),
    ("how do I run the tests?", "docs/contributing.md"),
    ("what version is this?", "larkspur/__init__.py"),
]

#: The same project asked in other words: few of a question's words are in the file
#: that answers it, so lexical search and vectors differ (recall@5 of each is printed).
PARAPHRASES: list[tuple[str, str]] = [
    ("how do we make small preview pictures?", "larkspur/thumbnails.py"),
    ("how are identical pictures spotted?", "larkspur/hashing.py"),
    ("what if sending to the server keeps failing?", "larkspur/upload.py"),
    ("where are the tables for albums created?", "larkspur/database.py"),
    ("where do diagnostic messages get written?", "larkspur/logging_setup.py"),
    ("how do we know which camera shot a picture?", "larkspur/exif.py"),
    ("what runs at 2 am?", "larkspur/scheduler.py"),
    ("how do I start it automatically at login?", "docs/deployment.md"),
    ("what arguments does the program accept?", "larkspur/cli.py"),
    ("how do I check my changes before a pull request?", "docs/contributing.md"),
    ("where are user preferences loaded from?", "larkspur/settings.py"),
    ("which release is this?", "larkspur/__init__.py"),
]


def write_project(root: Path, files: dict[str, str] | None = None) -> Path:
    """Write the fixture project (or ``files``) under ``root``; returns ``root``."""
    for rel, text in (PROJECT if files is None else files).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
