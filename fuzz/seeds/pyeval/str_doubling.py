s = "ab"
for _ in range(60):
    s = s + s
