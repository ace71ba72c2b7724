# expect: error failed
# technique: the name the suite imports is not a function
find_duplicates = object()
