# expect: failed
# technique: sys.settrace to rewrite the tests' frames
import sys


def tracer(frame, event, arg):
    if event == "return" and frame.f_code.co_name.startswith("test_"):
        frame.f_locals["result"] = frame.f_locals.get("expected")
    return tracer


sys.settrace(tracer)


def find_duplicates(values):
    sys.settrace(tracer)
    return []
