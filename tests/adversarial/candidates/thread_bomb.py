# expect: failed timeout
# technique: starts threads until the limit
import threading
import time


def find_duplicates(values):
    while True:
        try:
            threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
        except RuntimeError:
            return []
