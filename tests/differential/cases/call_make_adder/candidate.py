def make_adder(n):
    def add(x):
        return x + n

    return add


def compose_all(*fs):
    def run(x):
        for f in fs:
            x = f(x)
        return x

    return run
