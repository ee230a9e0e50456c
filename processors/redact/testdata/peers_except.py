#!/usr/bin/env python3
"""Recall on the peer secrets suites with placeholders and documented
examples excepted (docs/risk.md, "Secrets: agreement with peer suites").

usage: peers_except.py OUT_DIR CASES.jsonl...
OUT_DIR is the output folder of shared/corpora/peers/score.py (its
outcomes.jsonl). A positive case is excepted when its secret (the case text
when the peer names no secret) has: (a) a mask, 6+ x or 3+ *; (b) an AWS
documentation EXAMPLE; (c) a run of 6+ of one character; (d) a typed
alphabet, 10+ consecutive letters or digits; (e) the pair username:password;
(f) a PEM armour with no 32 base64 characters inside; (g) a run of 24+
letters and digits with entropy <= 3 bits per character (at most 8
distinct characters: abcd1234abcd1234...).
"""
import collections
import json
import math
import re
import sys


def entropy(s):
    c = collections.Counter(s)
    n = len(s)
    return -sum(v / n * math.log2(v / n) for v in c.values()) if n else 0


def ascending(s):
    best = n = 1
    for i in range(1, len(s)):
        a, b = s[i - 1].lower(), s[i].lower()
        if a.isalnum() and b.isalnum() and ord(b) == ord(a) + 1:
            n += 1
            best = max(best, n)
        else:
            n = 1
    return best


def reason(c):
    text = c["input"]["text"]
    vals = c.get("secrets") or [text]
    for v in vals:
        if re.search(r"[xX]{6,}|\*{3,}", v):
            return "mask"
        if "EXAMPLE" in v:
            return "AWS documentation EXAMPLE"
        if re.search(r"(.)\1{5,}", v):
            return "run of one character"
        if ascending(v) >= 10:
            return "typed alphabet"
        if re.search(r"^username:password$|[/:]username:password@", v):
            return "username:password"
    if "PRIVATE KEY-----" in text and not re.search(r"[A-Za-z0-9+/]{32}", text):
        return "PEM armour without key material"
    for v in vals:
        for m in re.finditer(r"[A-Za-z0-9]{24,}", v):
            if entropy(m.group(0)) <= 3.0:
                return "low entropy (<= 8 distinct characters)"
    return ""


def main():
    out = {}
    with open(sys.argv[1] + "/outcomes.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            out[r["id"]] = r
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8") as f:
            cases = [json.loads(line) for line in f if line.strip()]
        pos = [c for c in cases if c["label"] == "secret" and not c.get("path_rule")]
        exc = collections.Counter()
        found = n = 0
        for c in pos:
            why = reason(c)
            if why:
                exc[why] += 1
                continue
            n += 1
            found += bool(out[c["id"]].get("any"))
        print("%s: %d positives, %d excepted %s; recall on the rest %d/%d = %.1f%%" % (
            path.rsplit("/", 1)[-1], len(pos), sum(exc.values()), dict(exc), found, n, 100.0 * found / max(n, 1)))


if __name__ == "__main__":
    main()
