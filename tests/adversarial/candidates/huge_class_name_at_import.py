# expect: error
# technique: a 12 MB exception class name raised at import, to exhaust the trusted side's decoder (denial of evidence)
raise type("A" * 12_000_000, (Exception,), {})("x")
