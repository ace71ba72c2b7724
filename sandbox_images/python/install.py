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
# What models type in the agent's sandbox (and what code may ask in any sandbox): `python`,
# not only `python3`; a name for each of the sandbox's users (verifier_runner/protocol.py:
# TRUSTED_UID 2000, also the agent's user; CANDIDATE_UID 2001; ZYGOTE_UID 2002), so
# getpass.getuser() and `whoami` answer; and git an identity, so `git commit` works offline.
# Nothing here gives a user a right: no setuid bit, no capability, no file it may write.
if shutil.which("python") is None:
    pathlib.Path("/usr/local/bin/python").symlink_to(shutil.which("python3") or sys.executable)
USERS = {2000: "sandbox", 2001: "candidate", 2002: "zygote"}
passwd, group = pathlib.Path("/etc/passwd"), pathlib.Path("/etc/group")
taken = {line.split(":")[2] for line in passwd.read_text().splitlines() if line.count(":") >= 6}
with passwd.open("a") as pw, group.open("a") as gr:
    for uid, name in USERS.items():
        if str(uid) not in taken:
            pw.write(f"{name}:x:{uid}:{uid}:{name}:/tmp:/bin/sh\n")
            gr.write(f"{name}:x:{uid}:\n")
if shutil.which("git") is not None:
    pathlib.Path("/etc/gitconfig").write_text(
        "[user]\n\tname = sandbox\n\temail = sandbox@localhost\n[init]\n\tdefaultBranch = main\n"
    )
if not compileall.compile_dir(str(target), quiet=1, workers=1):
    sys.exit("install.py: byte-compiling failed")
print(f"installed {len(wheels)} wheels and verifier_runner into {target}")
