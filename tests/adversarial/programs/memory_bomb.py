# expect: oom
# technique: allocates far past the case's memory limit, quickly
blocks = []
while True:
    blocks.append(bytearray(32 << 20))
