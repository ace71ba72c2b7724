# expect: output_limit
# technique: floods stderr (never stdout) with invalid UTF-8 and terminal escapes
import os

data = b"\x1b[2J\xff\xfe\x00" * 20000
while True:
    os.write(2, data)
