class Row:
    def __init__(self, *cells):
        self._cells = list(cells)

    def __len__(self):
        return len(self._cells)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._cells[i]
        return self._cells[i]
