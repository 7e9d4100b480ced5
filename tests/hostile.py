"""Hostile names for the escaping, JUnit and output tests (issue 14): one
string holding every class of character a terminal must not receive raw,
the escapes etcompare must print instead, and an ETDump writer that puts
them (invalid UTF-8 included) into flatc-built fixtures."""
import json
import os
import subprocess

# ESC (a clear-screen sequence), BEL, CR and LF that would forge a line, the
# C1 controls NEL and CSI, a bidi override, a zero-width space, DEL.
VALID = "h\x1b[2J\x07\r\nFAKE pass\u0085\u009b\u202eevil\u200b\x7f"
# The same with a byte that is not UTF-8 at the end (ETDump names only: the
# JSON of an ETRecord cannot hold one).
PLACEHOLDER = "@@INVALID@@"
FULL = VALID + PLACEHOLDER
FULL_BYTES = FULL.encode().replace(PLACEHOLDER.encode(), b"\xff")

ESCAPED_VALID = "h\\x1b[2J\\x07\\x0d\\x0aFAKE pass\\u0085\\u009b\\u202eevil\\u200b\\x7f"
ESCAPED = ESCAPED_VALID + "\\xff"

# Raw bytes that must never reach stdout or stderr from a name.
FORBIDDEN = [b"\x1b", b"\x07", b"\r", b"\x7f", b"\xc2\x85", b"\xc2\x9b", b"\xe2\x80\xae",
             b"\xe2\x80\x8b", b"\xff"]


def raw_bytes_found(data):
    """The forbidden byte sequences present in `data`."""
    return [b for b in FORBIDDEN if b in data]


def forged_line(data):
    """A line that starts with the forged text (the name's LF went through)."""
    return any(line.startswith(b"FAKE") for line in data.split(b"\n"))


def write_etdump(d, stem, runs, debug, flatc, fbs):
    """flatc -b of {"version": 0, "run_data": runs}, where PLACEHOLDER in any
    string becomes the byte 0xff; `debug` (bytes) is the debug buffer.
    Returns (etdump path, debug buffer path)."""
    os.makedirs(os.path.join(d, "flatc"), exist_ok=True)
    src = os.path.join(d, "flatc", stem + ".json")
    text = json.dumps({"version": 0, "run_data": runs}).replace(PLACEHOLDER, "\\xff")
    with open(src, "w") as f:
        f.write(text)
    subprocess.run([flatc, "-b", "--size-prefixed", "--allow-non-utf8", "-o", d, fbs, src],
                   check=True, capture_output=True)
    dbg = os.path.join(d, stem + "_debug.bin")
    with open(dbg, "wb") as f:
        f.write(bytes(debug) + b"\0" * 16)
    return os.path.join(d, stem + ".etdp"), dbg
