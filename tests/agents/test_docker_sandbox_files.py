"""Files in and out of DockerSandbox: confinement to the workspace (and /tmp), the protocol's
error values instead of exceptions, size limits, and byte-exact transfer."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from verifier.agents.sandbox.box import AGENT_UID, DockerSandbox
from verifier.agents.sandbox.commands import frames
from verifier.agents.sandbox.files import Place, download_results, folder_results, upload_results
from verifier.agents.sandbox.limits import AgentSandboxLimits
from verifier.sandbox.attach import HEADER, STDERR, STDOUT

PLACE = Place(workspace="/workspace", roots=("/workspace", "/tmp"))


# -- the host's judgement of a path (no engine) --------------------------------------------
@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/workspace/solution.py", ("/workspace/solution.py", None)),
        ("solution.py", ("/workspace/solution.py", None)),
        ("pkg/mod.py", ("/workspace/pkg/mod.py", None)),
        ("//workspace//pkg/./mod.py", ("/workspace/pkg/mod.py", None)),
        ("/tmp/scratch.txt", ("/tmp/scratch.txt", None)),
        ("/workspace/../etc/passwd", (None, "invalid_path")),
        ("../outside.py", (None, "invalid_path")),
        ("/workspace/pkg/../mod.py", (None, "invalid_path")),  # `..` is refused even when it stays inside
        ("/etc/passwd", (None, "permission_denied")),
        ("/workspacefoo/x.py", (None, "permission_denied")),  # a prefix is not a parent
        ("/", (None, "permission_denied")),
        ("/workspace", (None, "is_directory")),
        ("/workspace/pkg/", (None, "is_directory")),
        ("", (None, "invalid_path")),
        ("/workspace/a\x00b", (None, "invalid_path")),
        (None, (None, "invalid_path")),
    ],
)
def test_paths_are_confined_on_the_host(path: object, expected: tuple[str | None, str | None]) -> None:
    assert PLACE.confine(path) == expected


def test_transfer_records_cut_short_are_left_out() -> None:
    record = json.dumps({"i": 0, "error": None, "size": 5}).encode() + b"\n12345"
    missing = json.dumps({"i": 1, "error": "file_not_found", "size": 0}).encode() + b"\n"
    cut = json.dumps({"i": 2, "error": None, "size": 9}).encode() + b"\n1234"
    assert download_results(record + missing + cut) == {0: (None, 5, b"12345"), 1: ("file_not_found", 0, b"")}
    assert upload_results(b'{"i": 0, "error": null}\nnot json\n{"i": 1, "error": "no_space"}\n') == {
        0: None,
        1: "no_space",
    }


@pytest.mark.parametrize("header", [b"5", b"[1, 2]", b'"error"', b"null"])
def test_a_folder_record_whose_header_is_not_an_object_ends_the_folder_as_cut(header: bytes) -> None:
    # The FOLDER program's framing: a JSON object per record. Anything else is the output cut or
    # broken, never a TypeError or AttributeError out of the trusted side.
    one = json.dumps({"path": "a.txt", "size": 2}).encode() + b"\nhi"
    assert folder_results(one + header + b"\n") == ({"a.txt": b"hi"}, {"error": "cut", "path": ""})
    assert download_results(header + b"\n") == {}


def test_stream_frames_are_taken_whole_across_reads() -> None:
    stream = HEADER.pack(STDOUT, 5) + b"hello" + HEADER.pack(STDERR, 3) + b"err" + HEADER.pack(STDOUT, 4) + b"tail"
    buf, got = bytearray(), []
    for at in range(0, len(stream), 7):  # arriving in pieces that cut headers and payloads
        buf += stream[at : at + 7]
        got += frames(buf)
    assert got == [(STDOUT, b"hello"), (STDERR, b"err"), (STDOUT, b"tail")] and not buf


# -- against the engine --------------------------------------------------------------------
@pytest.fixture(scope="module")
def box(sandbox_image: str) -> Iterator[DockerSandbox]:
    limits = AgentSandboxLimits(file_size_bytes=64 * 1024, workspace_bytes=1024**2)
    with DockerSandbox(image=sandbox_image, limits=limits) as sandbox:
        yield sandbox


@pytest.mark.docker
def test_bytes_round_trip_exactly_and_belong_to_the_agent(box: DockerSandbox) -> None:
    blob = bytes(range(256)) * 8 + b"\r\n\x00 end"
    ups = box.upload_files([("/workspace/deep/er/blob.bin", blob), ("notes.txt", b"relative\n"), ("/tmp/t", b"t")])
    assert [u.error for u in ups] == [None, None, None]
    downs = box.download_files(["/workspace/deep/er/blob.bin", "/workspace/notes.txt", "/tmp/t"])
    assert [d.content for d in downs] == [blob, b"relative\n", b"t"]
    owner = box.execute("stat -c '%u %a' /workspace/deep/er/blob.bin").output.split()
    assert owner == [str(AGENT_UID), "644"]


@pytest.mark.docker
def test_refusals_are_the_protocols_error_values_in_order(box: DockerSandbox) -> None:
    box.execute(
        "cd /workspace && mkdir -p dir && ln -sf /etc/passwd out_link && ln -sfn /etc out_dir "
        "&& echo inside > target.txt && ln -sf target.txt in_link && mkfifo fifo && echo secret > private "
        "&& chmod 600 private"
    )
    paths = [
        "/workspace/target.txt",
        "/workspace/../etc/passwd",
        "/etc/passwd",
        "/workspace/out_link",
        "/workspace/out_dir/passwd",
        "/workspace/in_link",
        "/workspace/dir",
        "/workspace/missing.py",
        "/workspace/fifo",
        "/workspace/private",
    ]
    got = [(d.content, d.error) for d in box.download_files(paths)]
    assert got == [
        (b"inside\n", None),
        (None, "invalid_path"),
        (None, "permission_denied"),
        (None, "permission_denied"),  # a symlink that leaves the workspace
        (None, "permission_denied"),  # a directory symlink that leaves it
        (b"inside\n", None),  # a symlink that stays inside is followed
        (None, "is_directory"),
        (None, "file_not_found"),
        (None, "invalid_path"),  # a FIFO: refused without waiting for a writer
        (None, "permission_denied"),  # the grader's reader is not the agent's user
    ]
    ups = box.upload_files(
        [
            ("/workspace/out_link", b"x"),
            ("/workspace/out_dir/evil", b"x"),
            ("/workspace/dir", b"x"),
            ("/etc/evil", b"x"),
            ("/workspace/../x", b"x"),
            ("/workspace/in_link", b"through the link\n"),
        ]
    )
    assert [u.error for u in ups] == [
        "permission_denied",
        "permission_denied",
        "is_directory",
        "permission_denied",
        "invalid_path",
        None,
    ]
    assert box.download_files(["/workspace/target.txt"])[0].content == b"through the link\n"
    assert box.execute("cat /etc/passwd | head -1").output.startswith("root:")  # untouched


@pytest.mark.docker
def test_size_limits_are_errors_not_exceptions(box: DockerSandbox) -> None:
    limit = box.limits.file_size_bytes
    [up] = box.upload_files([("/workspace/big.bin", b"x" * (limit + 1))])
    assert up.error is not None and f"{limit + 1} bytes" in up.error and f"limit is {limit}" in up.error
    made = box.execute(f"head -c {limit + 10} /dev/zero > /workspace/grown.bin; echo $?")
    assert made.output.strip() != "0"  # RLIMIT_FSIZE: the agent cannot write past the limit either
    box.execute(f"head -c {limit} /dev/zero > /workspace/edge.bin")
    [edge] = box.download_files(["/workspace/edge.bin"])
    assert edge.content == b"\0" * limit
    many = [(f"/workspace/fill/{i}.bin", b"y" * limit) for i in range(20)]  # more than the 1 MiB workspace
    errors = [u.error for u in box.upload_files(many)]
    assert errors[0] is None and any(e is not None and "no space left" in e for e in errors)
    box.execute("rm -rf /workspace/fill")


@pytest.mark.docker
def test_files_the_agent_plants_cannot_stand_in_for_the_transfer_programs(box: DockerSandbox) -> None:
    """The programs run with python -I -S from /: a json.py or os.py in the workspace is not imported."""
    evil = b"raise SystemExit('hijacked')\n"
    box.upload_files([("/workspace/json.py", evil), ("/workspace/os.py", evil), ("/tmp/json.py", evil)])
    box.upload_files([("/workspace/plain.txt", b"plain")])
    assert box.download_files(["/workspace/plain.txt"])[0].content == b"plain"
    box.execute("rm -f /workspace/json.py /workspace/os.py /tmp/json.py")


@pytest.mark.docker
def test_a_folder_comes_whole_without_caches_and_within_limits(box: DockerSandbox) -> None:
    box.upload_files(
        [
            ("/workspace/tree/pkg/__init__.py", b"from .a import f\n"),
            ("/workspace/tree/pkg/a.py", b"def f():\n    return 1\n"),
            ("/workspace/tree/data.txt", b"data\n"),
            ("/workspace/tree/pkg/__pycache__/a.cpython-311.pyc", b"\x00cache"),
            ("/workspace/tree/pkg/b.pyc", b"\x00cache"),
        ]
    )
    whole = box.download_folder("/workspace/tree/")
    assert whole.error is None and whole.files == {
        "data.txt": b"data\n",
        "pkg/__init__.py": b"from .a import f\n",
        "pkg/a.py": b"def f():\n    return 1\n",
    }
    assert box.download_folder("tree").files == whole.files  # relative to the workspace
    assert "over the limit of 2 files" in str(box.download_folder("/workspace/tree", max_files=2).error)
    assert box.download_folder("/workspace/nowhere").error == "file_not_found"
    assert box.download_folder("/etc").error == "permission_denied"
    assert box.download_folder("/workspace/../etc").error == "invalid_path"
    box.execute("ln -sfn /etc /workspace/etc_link && ln -sf ../data.txt /workspace/tree/pkg/data_link")
    assert box.download_folder("/workspace/etc_link").error == "permission_denied"
    linked = box.download_folder("/workspace/tree")
    assert linked.files is None and "symbolic link" in str(linked.error)
    assert "pkg/data_link" not in str(linked.error) and "pkg/data_link" in linked.detail  # the agent's name
    box.execute("rm -rf /workspace/tree /workspace/etc_link")
