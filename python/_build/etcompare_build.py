"""A PEP 517 build backend for the pure-Python etcompare package, standard
library only, so that `pip install ./python` needs nothing from an index
(offline, with or without build isolation). It writes a wheel of
python/etcompare (plus any libetcompare.so* copied into it) with the
metadata below; pyproject.toml names it with backend-path."""
import base64
import hashlib
import os
import zipfile

NAME, VERSION = "etcompare", "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: The ExecuTorch Inspector API on libetcompare, and batch analysis of ETDumps on Dask
Requires-Python: >=3.9
Requires-Dist: numpy
Provides-Extra: pandas
Requires-Dist: pandas; extra == "pandas"
Provides-Extra: dask
Requires-Dist: dask; extra == "dask"
Requires-Dist: distributed; extra == "dask"

See docs/python.md in the etcompare repository.
"""
WHEEL = f"""Wheel-Version: 1.0
Generator: etcompare_build {VERSION}
Root-Is-Purelib: true
Tag: py3-none-any
"""
ENTRY_POINTS = "[console_scripts]\netcompare-batch = etcompare.batch:main\n"


def _files():
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") or name.startswith("libetcompare.so"):
            yield os.path.join(pkg, name), f"{NAME}/{name}"


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _dist_info(metadata_directory):
    info = os.path.join(metadata_directory, f"{NAME}-{VERSION}.dist-info")
    os.makedirs(info, exist_ok=True)
    for fname, text in (("METADATA", METADATA), ("WHEEL", WHEEL),
                        ("entry_points.txt", ENTRY_POINTS)):
        with open(os.path.join(info, fname), "w") as f:
            f.write(text)
    return os.path.basename(info)


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_editable = get_requires_for_build_wheel


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _dist_info(metadata_directory)


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def _wheel(wheel_directory, members):
    wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
    info = f"{NAME}-{VERSION}.dist-info"
    members = list(members) + [(f"{info}/METADATA", METADATA.encode()),
                               (f"{info}/WHEEL", WHEEL.encode()),
                               (f"{info}/entry_points.txt", ENTRY_POINTS.encode())]
    record = [_record_line(a, d) for a, d in members] + [f"{info}/RECORD,,"]
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for arcname, data in members:
            z.writestr(arcname, data)
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel


def _library():
    """The libetcompare.so the installed package loads: ETCOMPARE_LIBRARY,
    the checkout's build/ one, else one built here with CMake; a clear
    error otherwise."""
    import glob
    import shutil
    import subprocess
    env = os.environ.get("ETCOMPARE_LIBRARY")
    if env and os.path.exists(env):
        return [env]
    src = os.path.dirname(HERE)
    for d in ("build", "build-python"):
        found = sorted(glob.glob(os.path.join(src, d, "libetcompare.so*")))
        if found:
            return found
    fix = (f"build it first: cmake -S {src} -B {src}/build && cmake --build {src}/build "
           f"--target etcompare_shared")
    if not os.path.exists(os.path.join(src, "CMakeLists.txt")) or not shutil.which("cmake"):
        raise RuntimeError(f"etcompare: the package needs libetcompare.so; {fix}")
    out = os.path.join(src, "build-python")
    try:
        subprocess.run(["cmake", "-S", src, "-B", out, "-DCMAKE_BUILD_TYPE=Release",
                        "-DETC_BUILD_TESTS=OFF", "-DETC_BUILD_BENCH=OFF"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", out, "--target", "etcompare_shared", "-j",
                        str(os.cpu_count() or 1)], check=True, stdout=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError(f"etcompare: building libetcompare.so failed ({e}); {fix}") from e
    found = sorted(glob.glob(os.path.join(out, "libetcompare.so*")))
    if not found:
        raise RuntimeError(f"etcompare: no libetcompare.so in {out}; {fix}")
    return found


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    members = []
    for path, arcname in _files():
        with open(path, "rb") as f:
            members.append((arcname, f.read()))
    if not any(a.split("/")[-1].startswith("libetcompare.so") for a, _ in members):
        # the installed package loads its own copy: the checkout may go away
        with open(os.path.realpath(_library()[0]), "rb") as f:
            members.append((f"{NAME}/libetcompare.so", f.read()))
    return _wheel(wheel_directory, members)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable install: a .pth file putting python/ on sys.path."""
    return _wheel(wheel_directory, [(f"{NAME}.pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    base = f"{NAME}-{VERSION}"
    out = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(out, "w:gz") as t:
        for rel in ("pyproject.toml", "README.md", "_build/etcompare_build.py"):
            t.add(os.path.join(HERE, rel), f"{base}/{rel}")
        for path, arcname in _files():
            t.add(path, f"{base}/{arcname}")
        pkg_info = os.path.join(sdist_directory, "PKG-INFO")
        with open(pkg_info, "w") as f:
            f.write(METADATA)
        t.add(pkg_info, f"{base}/PKG-INFO")
        os.remove(pkg_info)
    return os.path.basename(out)
