"""README.md stays true: every `$ ./build/etcompare ...` command in its code
blocks runs (in a scratch directory where the repository's paths resolve)
and every output line the README shows (trimmed with "...") is a line of
what the command prints; the README stays under 400 lines and links every
file in docs/."""
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ETC, SRC, check, summary  # noqa: E402


def recipes(text):
    """[(command, [shown output lines])] from the README's code blocks."""
    out, block, cmd = [], None, None
    for line in text.split("\n"):
        if line.startswith("```"):
            if block is not None and cmd:
                out.append((cmd, block))
            block, cmd = ([] if block is None else None), None
            continue
        if block is None:
            continue
        if line.startswith("$ ./build/etcompare"):
            if cmd:
                out.append((cmd, block))
            cmd, block = line[2:], []
        elif cmd and cmd.endswith("\\") and not block:
            cmd = cmd[:-1].rstrip() + " " + line.strip()
        elif cmd:
            block.append(line)
    return out


def main():
    with open(os.path.join(SRC, "README.md")) as f:
        text = f.read()
    n = text.count("\n")
    check(f"README.md has at most 400 lines ({n})", n <= 400)
    docs = sorted(f for f in os.listdir(os.path.join(SRC, "docs")) if f.endswith(".md"))
    unlinked = [d for d in docs if f"(docs/{d}" not in text]
    check("README.md links every docs/ file", docs and not unlinked, f"not linked: {unlinked}")
    found = recipes(text)
    check("README.md has etcompare recipes", len(found) >= 7, str(len(found)))
    codes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in os.listdir(SRC):  # repository paths resolve, written files land here
            if name not in ("build", ".git") and not name.startswith("build"):
                os.symlink(os.path.join(SRC, name), os.path.join(tmp, name))
        for cmd, shown in found:
            argv = [ETC] + cmd.split()[1:]
            p = subprocess.run(argv, capture_output=True, text=True, cwd=tmp)
            codes[cmd] = p.returncode
            got = set(line.rstrip() for line in (p.stdout + p.stderr).split("\n"))
            missing = [s for s in shown if s.strip() not in ("", "...") and s.rstrip() not in got]
            check(f"README: {cmd[:90]}", p.returncode in (0, 1) and not missing,
                  f"exit {p.returncode}; lines not in the output: {missing[:3]} {p.stderr[-300:]}")
    check("README: --example exits 0, the failing gates exit 1",
          codes.get("./build/etcompare --example") == 0 and
          sorted(set(codes.values())) == [0, 1], str(codes))
    sys.exit(summary())


if __name__ == "__main__":
    main()
