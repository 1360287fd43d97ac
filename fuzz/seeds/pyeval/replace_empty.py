s = "abcdefgh" * 1000
t = s.replace("", s)
