x = 3
for _ in range(12):
    x = x ** 64
