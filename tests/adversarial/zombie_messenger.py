# technique: a test leaves a named (PR_SET_NAME), exited orphan; a later test reads zombies' names in /proc
"""A candidate that tries to carry state from one test to the next in zombies (run by
test_neighbours under runc and gVisor): `leave` makes one, `look` lists what it can see."""

import ctypes
import os

NAME = b"verifier-note"


def leave(note):
    if os.fork() == 0:
        if os.fork() == 0:
            ctypes.CDLL(None).prctl(15, NAME + str(note).encode(), 0, 0, 0)  # PR_SET_NAME
            os._exit(0)
        os._exit(0)
    os.wait()
    return note


def look():
    """The zombies of this uid there are (but the caller's own): their names."""
    me, uid, found = os.getpid(), os.getuid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me:
            try:
                with open(f"/proc/{entry}/status") as fh:
                    fields = dict(line.split(":", 1) for line in fh if ":" in line)
            except OSError:
                continue
            if int(fields["Uid"].split()[0]) == uid and fields["State"].split()[0] == "Z":
                found.append(fields["Name"].strip())
    return found
