# expect: failed
# technique: the suite expects TypeError for a non-number argument; the verifier's refusal to send the test's object was itself a TypeError
def double(x):
    return x * 2
