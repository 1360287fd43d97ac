r = list(range(10 ** 9))
