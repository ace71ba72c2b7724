# expect: timeout
# technique: never reads its (1 MB) input and sleeps: the feeder must not block on a full pipe
import time

time.sleep(3600)
