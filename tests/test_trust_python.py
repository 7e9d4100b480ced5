"""Python right after set-up (issue 22): the README's Python recipe,
verbatim, works (1) with PYTHONPATH=python on the build that
scripts/run-example.sh leaves (it builds libetcompare.so too), and (2) after
`pip install ./python` in a fresh venv (offline), from another directory,
loading the package's own copy of the library; missing numpy is said at
import."""
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

PY = "/usr/bin/python3"


def recipe():
    with open(os.path.join(C.SRC, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"```python\n(# PYTHONPATH=python python3.*?)```", text, re.S)
    return m.group(1) if m else ""


def main():
    d = C.work_dir("trust-python")
    code = recipe()
    C.check("the README has the Python recipe", "from etcompare import Inspector" in code)
    with open(os.path.join(C.SRC, "scripts", "run-example.sh")) as f:
        C.check("run-example.sh builds the shared library the recipe loads",
                re.search(r"--target[^\n]*etcompare_shared", f.read()))
    # other directory with the example files: the recipe's relative paths
    other = os.path.join(d, "elsewhere")
    shutil.copytree(os.path.join(C.SRC, "examples"), os.path.join(other, "examples"))
    lib = os.path.join(C.SRC, "build", "libetcompare.so")
    env = {k: v for k, v in os.environ.items() if k not in ("ETCOMPARE_LIBRARY",
                                                           "PYTHONPATH")}
    if os.path.exists(lib) and os.path.abspath(os.path.dirname(C.ETC)) == \
            os.path.join(C.SRC, "build"):
        p = subprocess.run([PY, "-c", code], cwd=C.SRC, capture_output=True, text=True,
                           env=dict(env, PYTHONPATH=os.path.join(C.SRC, "python")))
        C.check("PYTHONPATH=python: the recipe runs verbatim on the checkout's build/",
                p.returncode == 0, p.stderr[-500:])
    venv = os.path.join(d, "venv")
    p = subprocess.run([PY, "-m", "venv", "--system-site-packages", venv], capture_output=True,
                       text=True)
    pip = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation",
                          "--no-index", os.path.join(C.SRC, "python")], capture_output=True,
                         text=True, env=env)
    C.check("pip install ./python in a fresh venv, offline", pip.returncode == 0,
            (pip.stdout + pip.stderr)[-800:])
    vpy = os.path.join(venv, "bin", "python")
    p = subprocess.run([vpy, "-c", code], cwd=other, capture_output=True, text=True, env=env)
    C.check("installed: the recipe runs verbatim from another directory", p.returncode == 0,
            p.stderr[-800:])
    p = subprocess.run([vpy, "-c", "import etcompare, etcompare._lib as L; "
                        "from etcompare import Inspector; "
                        "print([v.path for v in vars(L).values() if hasattr(v, 'found_in')])"],
                       cwd=other, capture_output=True, text=True, env=env)
    C.check("installed: the package loads its own libetcompare (in site-packages)",
            p.returncode == 0 and "site-packages/etcompare/libetcompare.so" in p.stdout,
            p.stdout + p.stderr[-400:])
    # numpy missing: said at import
    p = subprocess.run([vpy, "-c", "import sys; sys.modules['numpy'] = None; import etcompare"],
                       cwd=other, capture_output=True, text=True, env=env)
    C.check("without numpy: import etcompare says so in one line",
            p.returncode != 0 and "etcompare needs numpy" in p.stderr, p.stderr[-400:])
    C.finish(d)


main()
