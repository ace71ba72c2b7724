# expect: failed
# technique: raises a BaseException subclass that test code does not catch
class Escape(BaseException):
    pass


def find_duplicates(values):
    raise Escape("out")
