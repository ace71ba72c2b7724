"""The languages a program may be written in: the one home of their names, files, toolchains and
commands, read by both sides (the host picks the language and its image; the zygote compiles
and runs it; `program.py` asks for the compile step).

A language is SandboxFusion's name for it (`python`, `c`, `cpp`, `java`, `nodejs` (alias
`javascript`), `go`, `rust`, `bash`). Each has:

- `source`: the file the candidate's program is written to (under the candidate's directory);
- `compile`: the compiler's command (None: interpreted), run in that directory as the
  candidate's user; what it leaves under `build/` is the artifact every case runs;
- `run`: the command of one case (`{memory_mib}` is the case's memory limit, for runtimes that
  size their own heap);
- `packages`: its Debian packages: all languages share one image with all of them
  (`IMAGE_PACKAGES`, built like the sandbox image: verifier/sandbox/image.py), and the evidence
  names the versions of the language's own.

Java's class rule is the judges' (Codeforces'): the program's one top-level `public class`
names the file and the class run; without one, the class `Main` is run from `Main.java`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Where a compiled language's compiler writes what the cases run (relative to the source's directory).
BUILD_DIR = "build"


@dataclass(frozen=True)
class Language:
    name: str
    #: File extensions a candidate file of this language may carry (the first is its own).
    extensions: tuple[str, ...]
    #: The name the source is written under (Java: see `source_name`).
    source: str
    #: argv of the compiler (None: nothing is compiled); `{source}` is the source file.
    compile: tuple[str, ...] | None
    #: argv of one case; `{source}` the source file, `{memory_mib}` the case's memory limit,
    #: `{main_class}` Java's class.
    run: tuple[str, ...]
    #: Debian packages its image adds to the sandbox image's base (empty: the sandbox image).
    packages: tuple[str, ...] = ()
    #: Extra environment of the compiler and of each case.
    env: tuple[tuple[str, str], ...] = ()

    @property
    def compiled(self) -> bool:
        return self.compile is not None


LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in (
        Language("python", (".py",), "solution.py", None, ("python3", "{source}")),
        Language(
            "c",
            (".c",),
            "main.c",
            ("gcc", "-O2", "-std=gnu17", "-pipe", "-o", f"{BUILD_DIR}/main", "{source}", "-lm"),
            (f"./{BUILD_DIR}/main",),
            packages=("gcc", "g++", "libc6-dev"),
        ),
        Language(
            "cpp",
            (".cpp", ".cc", ".cxx", ".c++"),
            "main.cpp",
            ("g++", "-O2", "-std=gnu++17", "-pipe", "-o", f"{BUILD_DIR}/main", "{source}"),
            (f"./{BUILD_DIR}/main",),
            packages=("gcc", "g++", "libc6-dev"),
        ),
        Language(
            "java",
            (".java",),
            "Main.java",
            ("javac", "-encoding", "UTF-8", "-nowarn", "-proc:none", "-d", BUILD_DIR, "{source}"),
            (
                "java",
                "-Xmx{memory_mib}m",
                "-Xss64m",
                "-XX:+UseSerialGC",
                "-XX:-UsePerfData",
                "-cp",
                BUILD_DIR,
                "{main_class}",
            ),
            packages=("openjdk-17-jdk-headless",),
        ),
        Language(
            "nodejs",
            (".js",),
            "main.js",
            None,
            ("node", "--max-old-space-size={memory_mib}", "{source}"),
            packages=("nodejs",),
        ),
        Language(
            "go",
            (".go",),
            "main.go",
            ("go", "build", "-o", f"{BUILD_DIR}/main", "{source}"),
            (f"./{BUILD_DIR}/main",),
            packages=("golang-go",),
            env=(
                ("GO111MODULE", "off"),
                ("GOCACHE", "/tmp/go-cache"),
                ("GOPATH", "/tmp/go-path"),
                ("CGO_ENABLED", "0"),
            ),
        ),
        Language(
            "rust",
            (".rs",),
            "main.rs",
            ("rustc", "--edition=2021", "-O", "-o", f"{BUILD_DIR}/main", "{source}"),
            (f"./{BUILD_DIR}/main",),
            packages=("rustc", "gcc", "libc6-dev"),
        ),
        Language("bash", (".sh", ".bash"), "main.sh", None, ("bash", "{source}"), packages=("bash",)),
    )
}
#: The Debian packages of the one language image: every language's but Python's (which runs on
#: the sandbox image). One image: one build, one warm pool for every language (docs/programs.md).
IMAGE_PACKAGES = tuple(sorted({p for lang in LANGUAGES.values() for p in lang.packages}))
#: Other names for a language (SandboxFusion's `javascript`).
ALIASES = {"javascript": "nodejs", "js": "nodejs", "c++": "cpp", "golang": "go", "python3": "python", "sh": "bash"}
NAMES = tuple(LANGUAGES)

_PUBLIC_CLASS = re.compile(
    rb"^[ \t]*public\s+(?:(?:final|abstract|strictfp)\s+)*class\s+([A-Za-z_$][A-Za-z0-9_$]*)", re.M
)


def canonical(name: str) -> str | None:
    """The language `name` means (aliases and case folded), or None."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    return key if key in LANGUAGES else None


def by_extension(filename: str) -> str | None:
    """The language a file name's extension names, or None."""
    lower = filename.lower()
    for lang in LANGUAGES.values():
        if any(lower.endswith(ext) for ext in lang.extensions):
            return lang.name
    return None


def java_main_class(source: bytes) -> str:
    """The class a Java program runs: its top-level `public class` (the first at the start of
    a line), else `Main` (the judges' rule)."""
    found = _PUBLIC_CLASS.search(source)
    return found.group(1).decode() if found else "Main"


def source_name(language: str, source: bytes) -> str:
    """The file name the program is written under: Java's is its public class's."""
    lang = LANGUAGES[language]
    return f"{java_main_class(source)}.java" if lang.name == "java" else lang.source


def command(argv: tuple[str, ...], *, source: str, memory_mib: int = 256, main_class: str = "Main") -> list[str]:
    """An argv of the table with its placeholders filled."""
    return [a.format(source=source, memory_mib=memory_mib, main_class=main_class) for a in argv]
