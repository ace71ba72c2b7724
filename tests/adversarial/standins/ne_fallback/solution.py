# expect: failed
# plain: failed
# technique: the type has object's == but its own != (always False): the handle answered != by identity
class Token:
    def __ne__(self, other):
        return False


def token():
    return Token()
