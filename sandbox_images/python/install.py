"""Install pinned wheels (pure, or built for this interpreter) and the in-container runner into site-packages.

Runs inside `docker build` with the base's python3 and the standard library only
(no pip in a debootstrapped base, no network anywhere). Then byte-compiles
everything, because the root file system is read-only at run time.
"""

import compileall
import pathlib
import shutil
import site
import sys
import zipfile

build = pathlib.Path(sys.argv[1])
target = pathlib.Path(site.getsitepackages()[0])
target.mkdir(parents=True, exist_ok=True)
wheels = sorted((build / "wheels").glob("*.whl"))
if not wheels:
    sys.exit("install.py: no wheels in the build context")
cp = f"cp{sys.version_info[0]}{sys.version_info[1]}"
for wheel in wheels:
    python_tag, abi_tag = wheel.name[:-4].split("-")[-3:-1]
    pure = abi_tag == "none" and "py3" in python_tag.split(".")
    if not pure and cp not in python_tag.split("."):
        sys.exit(f"install.py: {wheel.name} is not built for this interpreter ({cp})")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(target)
    for data in target.glob("*.data"):  # purelib/platlib parts of a wheel's .data dir
        for part in ("purelib", "platlib"):
            if (data / part).is_dir():
                shutil.copytree(data / part, target, dirs_exist_ok=True)
        shutil.rmtree(data)
shutil.copytree(build / "verifier_runner", target / "verifier_runner", dirs_exist_ok=True)
if not compileall.compile_dir(str(target), quiet=1, workers=1):
    sys.exit("install.py: byte-compiling failed")
print(f"installed {len(wheels)} wheels and verifier_runner into {target}")
