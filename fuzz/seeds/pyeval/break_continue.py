found = None
for x in [1, 2, 3]:
    if x > 1:
        found = x
        break
else:
    found = 0
assert found == 2
