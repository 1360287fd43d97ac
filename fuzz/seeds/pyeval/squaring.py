x = 2 ** 64
for _ in range(30):
    x = x * x
