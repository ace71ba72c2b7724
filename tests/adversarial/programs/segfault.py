# expect: error
# technique: dies by a signal (SIGSEGV through ctypes) after printing a correct-looking answer
import ctypes
import sys

print(sum(map(int, sys.stdin.read().split()[1:])))
sys.stdout.flush()
ctypes.string_at(0)
