#!/usr/bin/env python3
"""JUnit carries every gate that can fail the run (issues 13 and 14).

1. Every gate, passing and failing: the accuracy comparison (one testcase
   per output), the numeric gap (one per compared row, named by node and
   debug handle, the failing ones with the reason, the first divergence
   marked) and the performance gate (one per gated event). For each, the
   exit code and the JUnit verdict agree: exit 1 exactly when the report
   has failures. A failing numeric-gap run's JUnit names the node of the
   failing testcase.
2. Hostile names: a block name with control characters and a byte that is
   not UTF-8, an ETDump path with one too, a 300-character name of
   two-byte characters (a fixed buffer would cut one in half and drop the
   run suffix) over two runs. The XML stays well-formed and names stay
   unique per run and output.
Every JUnit written here goes through strict_junit: strict UTF-8, no
character XML 1.0 forbids, a strict XML parser (expat), unique testcase
names within a suite. The suite's other --junit scenarios (test_accuracy:
pass, fail, missing rows, --block NAME) are the gates of part 1.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

SRC = os.environ["ETC_SRC"]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, os.path.join(SRC, "tests", "data", "npz"))
import hostile as H  # noqa: E402
import common  # noqa: E402
from common import FBS, FLATC  # noqa: E402
import test_accuracy as A  # noqa: E402
import test_escape as E  # noqa: E402
from test_accuracy import OUT_CHAIN, check  # noqa: E402

FORBIDDEN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def strict_junit(label, path):
    """The parsed root, or None after a failed check."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        check(f"{label}: JUnit written", False, str(e))
        return None
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        check(f"{label}: JUnit is UTF-8", False, str(e))
        return None
    bad = FORBIDDEN_XML.search(text)
    check(f"{label}: no character XML 1.0 forbids", not bad, repr(bad and bad.group()))
    try:
        root = ET.fromstring(data)  # expat: strict well-formedness
    except ET.ParseError as e:
        check(f"{label}: JUnit is well-formed XML", False, f"{e}: {data[:400]!r}")
        return None
    check(f"{label}: JUnit is well-formed XML", root.tag == "testsuites", root.tag)
    for suite in root.iter("testsuite"):
        names = [(c.get("classname"), c.get("name")) for c in suite.iter("testcase")]
        check(f"{label}: testcase names unique in {suite.get('name')!r}",
              len(names) == len(set(names)), repr(names[:6]))
        check(f"{label}: suite counts match its testcases",
              int(suite.get("tests")) == len(names) and
              int(suite.get("failures")) == len(suite.findall("testcase/failure")))
    return root


def failures(root):
    return int(root.get("failures")) if root is not None else -1


def agree(label, rc, root):
    """Exit 1 exactly when the JUnit verdict has failures; 0 exactly when none."""
    n = failures(root)
    check(f"{label}: exit code and JUnit verdict agree (exit {rc}, {n} failures)",
          (rc == 1 and n > 0) or (rc == 0 and n == 0), f"rc={rc} failures={n}")


def case_accuracy(d):
    for label, a1 in (("accuracy pass", A.A1), ("accuracy fail", [v * 3 for v in A.A1])):
        etdp, dbg, rec = A.two_run_fixture(d, label.replace(" ", "_"), A.A0, a1)
        ju = os.path.join(d, label.replace(" ", "_") + ".xml")
        rc, out, err = A.run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                             "--min-snr", "60", "--junit", ju, "--no-table")
        root = strict_junit(label, ju)
        agree(label, rc, root)
        if root is not None:
            cases = root.findall(".//testsuite/testcase")
            check(f"{label}: one testcase per output", len(cases) == 2, repr(cases))
    # missing rows (a reference without an output) fail in JUnit and in the exit code
    etdp, dbg, rec = A.two_run_fixture(d, "missing", A.A0, A.A1)
    rec3 = A.etrecord(d, "missing3", [[A.T(A.R0, [2, 3])], [A.T(A.R1, [2, 3]), A.T(A.R1, [2, 3])]])
    ju = os.path.join(d, "missing.xml")
    rc, out, err = A.run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec3,
                         "--junit", ju, "--no-table")
    root = strict_junit("accuracy missing output", ju)
    agree("accuracy missing output", rc, root)


def case_numgap(d):
    rec, (ref, ref_dbg), (dev, dev_dbg) = E.numgap_fixture(d)
    for label, snr, want in (("numeric gap pass", "1", 0), ("numeric gap fail", "100", 1)):
        ju = os.path.join(d, label.replace(" ", "_") + ".xml")
        rc, out, err = A.run("--etdump", dev, "--debug_buffer", dev_dbg, "--etrecord", rec,
                             "--reference-etdump", ref, "--reference-debug-buffer", ref_dbg,
                             "--min-snr", snr, "--junit", ju, "--no-table")
        check(f"{label}: exit {want}", rc == want, err)
        root = strict_junit(label, ju)
        agree(label, rc, root)
        if root is None:
            continue
        suite = [s for s in root.iter("testsuite") if "numeric gap" in s.get("name")]
        check(f"{label}: a numeric-gap testsuite", len(suite) == 1)
        cases = suite[0].findall("testcase") if suite else []
        check(f"{label}: one testcase per compared row", len(cases) == 2, repr(cases))
        if want == 1 and len(cases) == 2:
            bad = [c for c in cases if c.find("failure") is not None]
            check("numeric gap fail: one failing testcase", len(bad) == 1)
            if bad:
                name, fail = bad[0].get("name"), bad[0].find("failure")
                check("numeric gap fail: the failing testcase names the node and its handle",
                      "aten.add.Tensor" in name and "debug handle 2" in name, name)
                check("numeric gap fail: marked as the first divergence",
                      fail.get("message").startswith("first divergence: ") and
                      "SNR" in fail.get("message"), fail.get("message"))
                check("numeric gap fail: the failure carries the reason and the source",
                      "source: " in (fail.text or ""), fail.text)


def case_regression(d):
    def dump(stem, dt):
        runs = [{"name": "Execute", "events": [E.prof("native_call_add.out", 0, 1000, 1000 + dt),
                                                E.prof("Method::execute", 0, 0, 2000 + dt,
                                                       chain=-1)]}]
        return H.write_etdump(d, stem, runs, b"", FLATC, FBS)[0]
    base, cur = dump("rg_base", 1000), dump("rg_cur", 3000)
    for label, pct, want in (("regression pass", "1000", 0), ("regression fail", "1", 1)):
        ju = os.path.join(d, label.replace(" ", "_") + ".xml")
        rc, out, err = A.run("--etdump", cur, "--baseline-etdump", base, "--max-regression", pct,
                             "--junit", ju, "--no-table")
        check(f"{label}: exit {want}", rc == want, err)
        root = strict_junit(label, ju)
        agree(label, rc, root)
        if root is None:
            continue
        cases = root.findall(".//testsuite/testcase")
        check(f"{label}: one testcase per gated event", len(cases) == 2,
              repr([c.get("name") for c in cases]))
        if want:
            check("regression fail: both events fail, with the change",
                  all(c.find("failure") is not None and "%" in c.find("failure").get("message")
                      for c in cases), repr([c.get("name") for c in cases]))


def case_combined(d):
    """Accuracy passes, numeric gap fails: one report, exit 1, failures from the gap."""
    rec, (ref, ref_dbg), (dev, dev_dbg) = E.numgap_fixture(d)
    ju = os.path.join(d, "combined.xml")
    rc, out, err = A.run("--etdump", dev, "--debug_buffer", dev_dbg, "--etrecord", rec,
                         "--reference-etdump", ref, "--reference-debug-buffer", ref_dbg,
                         "--min-snr", "100", "--baseline-etdump", ref, "--max-regression", "1000",
                         "--junit", ju, "--no-table")
    root = strict_junit("numeric gap and regression gate", ju)
    agree("numeric gap and regression gate", rc, root)
    if root is not None:
        check("numeric gap and regression gate: two suites",
              len(root.findall("testsuite")) == 2, ET.tostring(root)[:300])


def case_hostile(d):
    dm = A.Dump()
    runs = []
    long_name = "é" * 300  # 600 bytes: a 128-byte buffer cuts a character in half
    for name in (H.FULL, long_name):
        for vals in ([1.0, 2.0, 3.0], [1.0, 2.0, 3.5]):
            t = dm.tensor("FLOAT", vals, [3])
            runs.append({"name": name, "events": [E.dbg_event(t, 0, OUT_CHAIN, output=True),
                                                   E.prof("Method::execute", 0, 1, 9, chain=-1)]})
    etdp, dbg = H.write_etdump(d, "hostile", runs, dm.buf, FLATC, FBS)
    weird = os.path.join(d.encode(), b"dump" + H.FULL_BYTES + b".etdp")
    os.rename(etdp, weird)
    refs = os.path.join(d, "hostile_refs.npz")
    A.NPZ.write_npz(refs, [("0.0", A.npy32([1.0, 2.0, 3.0], [3])),
                           ("1.0", A.npy32([1.0, 2.0, 3.0], [3]))])
    for block, label in ((H.FULL_BYTES, "hostile block and path"),
                         (long_name.encode(), "long two-byte block name")):
        ju = os.path.join(d, "hostile.xml")
        rc, out, err = E.run(b"--etdump", weird, b"--debug_buffer", dbg.encode(),
                             b"--reference-outputs", refs.encode(), b"--block", block,
                             b"--min-snr", b"200", b"--junit", ju.encode(), b"--no-table")
        check(f"{label}: the gate fails (exit 1)", rc == 1, err.decode(errors="replace"))
        root = strict_junit(label, ju)
        agree(label, rc, root)
        if root is None:
            continue
        cls = sorted(c.get("classname") for c in root.iter("testcase"))
        check(f"{label}: one testcase per run, the runs kept apart",
              len(cls) == 2 and cls[0] != cls[1] and
              all(re.search(r"\.run\d+$", c) for c in cls), repr(cls))
        if block == H.FULL_BYTES:
            suite = root.find("testsuite").get("name")
            check("hostile path: the invalid byte is U+FFFD in the suite name",
                  "\ufffd" in suite and "\x1b" not in suite, repr(suite))
            check("hostile block: the invalid byte is U+FFFD in the testcase",
                  all("\ufffd" in c and "\x1b" not in c for c in cls), repr(cls))
        else:
            check("long name: no character cut in half",
                  all(re.sub(r"\.run\d+$", "", c).strip("é") == "" for c in cls),
                  repr(cls[0][-20:]))


def main():
    common.run_cases("junit", case_accuracy, case_numgap, case_regression,
                     case_combined, case_hostile)


if __name__ == "__main__":
    main()
