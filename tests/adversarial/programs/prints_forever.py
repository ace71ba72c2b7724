# expect: output_limit
# technique: prints forever
while True:
    print("1" * 1000)
