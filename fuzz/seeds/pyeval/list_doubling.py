s = [1, 2]
for _ in range(60):
    s = s + s
