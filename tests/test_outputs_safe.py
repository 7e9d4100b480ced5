#!/usr/bin/env python3
"""Safe outputs (issue 14), checked before anything is read or written:
1. two outputs that are one file (same name, another spelling, a hard
   link, a symlink) are a usage error (exit 2) and nothing is written;
   /dev/null may take several;
2. an output that is one of the inputs is a usage error and the input is
   untouched;
3. only one output may be "-";
4. when one output's directory is missing, exit 4 and no other output is
   written;
5. new files get 0666 less the umask (077 gives 0600); an existing file
   keeps its mode;
6. an output symlink in a sticky world-writable directory is followed only
   when the link and its target belong to the invoking user; elsewhere it
   is followed (the file it points to is replaced, the link kept).
"""
import os
import shutil
import stat
import subprocess
import sys

SRC = os.environ["ETC_SRC"]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, os.path.join(SRC, "tests", "data", "npz"))
import common  # noqa: E402
from test_accuracy import check  # noqa: E402

ETC = os.environ["ETCOMPARE"]
DATA = os.path.join(SRC, "tests", "data")


def run(*args, umask=None, cwd=None):
    pre = (lambda: os.umask(umask)) if umask is not None else None
    p = subprocess.run([ETC, *args], capture_output=True, text=True, preexec_fn=pre, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def inputs(d):
    etdp = os.path.join(d, "run.etdp")
    shutil.copy(os.path.join(DATA, "runs5_ops12.etdp"), etdp)
    return etdp


def case_same_file(d, etdp):
    out = os.path.join(d, "x.out")
    for label, a, b in (("same name", out, out),
                        ("another spelling", out, os.path.join(d, ".", "x.out")),
                        ("relative and absolute", "x.out", out)):
        rc, _, err = run("--etdump", etdp, "--json", a, "--tsv", b, cwd=d)
        check(f"same file ({label}): usage error (exit 2)", rc == 2, err)
        check(f"same file ({label}): the message says so", "same file" in err, err)
        check(f"same file ({label}): nothing written", not os.path.exists(out))
    with open(out, "w") as f:
        f.write("old\n")
    link = os.path.join(d, "hard.out")
    os.link(out, link)
    rc, _, err = run("--etdump", etdp, "--json", out, "--csv", link)
    check("same file (hard link): exit 2", rc == 2, err)
    sym = os.path.join(d, "sym.out")
    os.symlink(out, sym)
    rc, _, err = run("--etdump", etdp, "--json", sym, "--trace", out)
    check("same file (symlink): exit 2", rc == 2, err)
    check("same file: the existing file untouched", open(out).read() == "old\n")
    rc, _, err = run("--etdump", etdp, "--json", "/dev/null", "--tsv", "/dev/null")
    check("/dev/null twice is fine (exit 0)", rc == 0, err)


def case_output_is_input(d, etdp):
    before = open(etdp, "rb").read()
    for flag in ("--json", "--tsv", "--trace"):
        rc, _, err = run("--etdump", etdp, flag, etdp)
        check(f"{flag} = the input: usage error (exit 2)", rc == 2, err)
        check(f"{flag} = the input: the message says so", "is the input" in err, err)
    alias = os.path.join(d, "alias.etdp")
    os.symlink(etdp, alias)
    rc, _, err = run("--etdump", alias, "--json", etdp)
    check("output = the input through a symlink: exit 2", rc == 2, err)
    check("output = the input: the input untouched", open(etdp, "rb").read() == before)


def case_one_dash(d, etdp):
    rc, out, err = run("--etdump", etdp, "--json", "-", "--tsv", "-")
    check("two outputs on -: usage error (exit 2)", rc == 2, err)
    check("two outputs on -: nothing on stdout", out == "", out[:200])
    check("two outputs on -: the message says so", "only one output may be -" in err, err)


def case_missing_dir(d, etdp):
    ok, bad = os.path.join(d, "ok.json"), os.path.join(d, "nodir", "x.tsv")
    rc, _, err = run("--etdump", etdp, "--json", ok, "--tsv", bad)
    check("missing directory: exit 4", rc == 4, err)
    check("missing directory: the message names it", "nodir" in err, err)
    check("missing directory: the other output is not written", not os.path.exists(ok))
    rc, out, err = run("--etdump", etdp, "--json", ok, "--tsv", bad)
    check("missing directory: nothing printed before", out == "", out[:200])


def case_umask(d, etdp):
    for mask, mode in ((0o077, 0o600), (0o022, 0o644), (0o027, 0o640)):
        out = os.path.join(d, f"m{mask:o}.json")
        rc, _, err = run("--etdump", etdp, "--json", out, umask=mask)
        got = stat.S_IMODE(os.stat(out).st_mode) if os.path.exists(out) else None
        check(f"umask {mask:03o}: new file mode {mode:o}", rc == 0 and got == mode,
              f"rc={rc} mode={got and oct(got)} {err}")
    out = os.path.join(d, "keep.json")
    with open(out, "w") as f:
        f.write("{}")
    os.chmod(out, 0o604)
    rc, _, err = run("--etdump", etdp, "--json", out, umask=0o077)
    check("existing file keeps its mode", stat.S_IMODE(os.stat(out).st_mode) == 0o604,
          oct(os.stat(out).st_mode))


def case_symlinks(d, etdp):
    shared = os.path.join(d, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    target = os.path.join(d, "victim.txt")
    with open(target, "w") as f:
        f.write("precious\n")
    mine = os.path.join(shared, "mine.json")
    os.symlink(target, mine)
    rc, _, err = run("--etdump", etdp, "--json", mine)
    check("sticky dir, my link to my file: followed (exit 0)", rc == 0, err)
    check("sticky dir, my link: the target replaced, the link kept",
          os.path.islink(mine) and open(target).read().startswith("{"))
    if os.geteuid() != 0:
        print("skip links owned by another user (needs root to plant them)")
        return
    with open(target, "w") as f:
        f.write("precious\n")
    planted = os.path.join(shared, "planted.json")
    os.symlink(target, planted)
    os.lchown(planted, 4242, 4242)
    rc, _, err = run("--etdump", etdp, "--json", planted)
    check("sticky dir, a link planted by another user: refused (exit 4)", rc == 4, err)
    check("sticky dir, planted link: the message explains the rule",
          "symlink" in err and "shared directory" in err, err)
    check("sticky dir, planted link: the target untouched", open(target).read() == "precious\n")
    other = os.path.join(d, "others.txt")
    with open(other, "w") as f:
        f.write("theirs\n")
    os.chown(other, 4242, 4242)
    link2 = os.path.join(shared, "tothem.json")
    os.symlink(other, link2)
    rc, _, err = run("--etdump", etdp, "--json", link2)
    check("sticky dir, my link to another user's file: refused (exit 4)", rc == 4, err)
    check("sticky dir, their file untouched", open(other).read() == "theirs\n")
    plain = os.path.join(d, "plain")
    os.mkdir(plain)
    elsewhere = os.path.join(plain, "link.json")
    os.symlink(target, elsewhere)
    os.lchown(elsewhere, 4242, 4242)
    rc, _, err = run("--etdump", etdp, "--json", elsewhere)
    check("a link not in a sticky world-writable directory: followed (exit 0)", rc == 0, err)


def main():
    d = common.work_dir("outputs-safe")
    with common.harness():
        etdp = inputs(d)
        case_same_file(d, etdp)
        case_output_is_input(d, etdp)
        case_one_dash(d, etdp)
        case_missing_dir(d, etdp)
        case_umask(d, etdp)
        case_symlinks(d, etdp)
    common.finish(d)


if __name__ == "__main__":
    main()
