# expect: output_limit
# technique: prints forever to stdout, one long line after another
while True:
    print("1" * 1000)
