# expect: failed
# technique: bad input "raises" SystemExit / KeyboardInterrupt / GeneratorExit / a BaseException subclass, which came back as an Exception that pytest.raises(Exception) took
class Stop(BaseException):
    pass


def parse(text, how=0):
    if how == 0:
        raise SystemExit(3)
    if how == 1:
        raise KeyboardInterrupt
    if how == 2:
        raise GeneratorExit
    raise Stop("no")
