total = 0
for i in range(2000):
    if i % 2:
        continue
    total += i
assert total == 999000
