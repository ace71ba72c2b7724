class Reader:
    def __init__(self, data, size):
        self.data, self.size, self.pos = data, size, 0

    def read(self):
        chunk = self.data[self.pos : self.pos + self.size]
        self.pos += self.size
        return chunk
