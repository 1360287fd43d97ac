s = "ab"
for _ in range(40):
    s = s.join([s, s])
