# expect: error failed
find_duplicates = object()
