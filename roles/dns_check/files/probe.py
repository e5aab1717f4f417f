"""Usage: python3 probe.py URL N -- N GETs with urllib (a new connection each); prints how many got 200."""

import sys
import urllib.request

url, n = sys.argv[1], int(sys.argv[2])
ok = 0
for _ in range(n):
    with urllib.request.urlopen(url, timeout=5) as resp:
        ok += resp.status == 200
print(ok)
