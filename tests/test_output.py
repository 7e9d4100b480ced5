"""Output files are replaced atomically and never clobber what is not a
regular file: FIFOs and devices are written in place, symlinks keep
pointing at their (new) file, directories are refused with exit 4, and no
temporary file is left behind."""
import os
import stat
import subprocess
import sys
import tempfile
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DATA, ETC, check, summary  # noqa: E402

ETDUMP = os.path.join(DATA, "tutorial.etdp")


def run(*args):
    return subprocess.run([ETC, "--etdump", ETDUMP, "--no-table", *args], capture_output=True)


with tempfile.TemporaryDirectory() as tmp:
    # A FIFO stays a FIFO and receives the TSV.
    fifo = os.path.join(tmp, "pipe")
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    p = run("--tsv", fifo)
    reader.join(10)
    check("fifo written in place", p.returncode == 0 and got and got[0].startswith(b"\tevent_block_name"),
          p.stderr.decode())
    check("fifo still a fifo", stat.S_ISFIFO(os.lstat(fifo).st_mode))

    # A symlink keeps pointing at the file, which gets the new content.
    target = os.path.join(tmp, "real.tsv")
    link = os.path.join(tmp, "link.tsv")
    open(target, "w").write("old\n")
    os.chmod(target, 0o640)
    os.symlink(target, link)
    p = run("--tsv", link)
    check("symlink kept", p.returncode == 0 and os.path.islink(link))
    check("symlink target replaced", open(target, "rb").read().startswith(b"\tevent_block_name"))
    check("mode of replaced file kept", stat.S_IMODE(os.stat(target).st_mode) == 0o640)

    # A directory is refused with exit 4 and is left alone.
    d = os.path.join(tmp, "adir")
    os.mkdir(d)
    p = run("--json", d)
    check("directory refused", p.returncode == 4 and b"directory" in p.stderr, p.stderr.decode())
    check("directory intact", os.path.isdir(d))

    # A failing run (invalid input) leaves an existing report untouched.
    keep = os.path.join(tmp, "keep.json")
    open(keep, "w").write("precious\n")
    bad = os.path.join(tmp, "bad.etdp")
    open(bad, "wb").write(b"\x00" * 16)
    p = subprocess.run([ETC, "--etdump", bad, "--json", keep], capture_output=True)
    check("failed run exits 3", p.returncode == 3)
    check("existing report untouched", open(keep).read() == "precious\n")

    # New files get the usual 0644, and no temporary file is left.
    new = os.path.join(tmp, "new.csv")
    p = run("--csv", new)
    check("new file mode 0644", p.returncode == 0 and stat.S_IMODE(os.stat(new).st_mode) == 0o644)
    leftovers = [f for f in os.listdir(tmp) if f.startswith(".")]
    check("no temporary files left", not leftovers, str(leftovers))

sys.exit(summary())
